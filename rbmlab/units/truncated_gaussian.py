"""The truncated Gaussian prior of the tap paper (App. C.1): real units on a bounded support [α, ω].

Prior P̃(x; U, V) = e^{Ux} · base(x; V), base(x; V) = e^{−½Vx²} · 1[α ≤ x ≤ ω] (unnormalised,
Eq. 71; V may be negative since the support is bounded). With s = A + V and λ = B (U already in B):

    Z̃(B, A; V) = ∫_α^ω e^{λx − ½sx²} dx                                       (Eq. 74–75)

and f_a, f_c are the mean and variance of the density ∝ e^{λx − ½sx²} on [α, ω] (Eq. 78, 81, the
s < 0 branch of Eq. 78 sign corrected: tap App. C.1); ∂ ln Z̃/∂V = −½ E[x²] (Eq. 86).

The closed forms of Eq. 75–81 (erf for s > 0, erfi for s < 0) lose every digit when the mass
sits at an end (erf(h_ω) − erf(h_α) → 0, the case of Eq. 91–92), when s ≈ 0 (0/0), or when
e^{±h²} overflows. Here instead, with t = (x − α)/(ω − α) ∈ [0, 1], the log-density is
f(t) = bt − ½at² (a = s(ω − α)²), oriented so that f(0) ≥ f(1), and Z, E t, E t² are built from
pieces that never cancel badly:

    flat     |a| < ¼, |b| < 1: 8-node Gauss–Legendre quadrature (the integrand is nearly constant);
    peak     a > 0, peak t* = b/a inside: Gaussian about the peak, erf(h₁) + erf(|h₀|), no
             cancellation;
    ends     otherwise f falls from t = 0: Z = Q(β₀) ∓ e^{f(1) − f(0)} Q(β₁), where
             Q_k(β, a) = ∫₀^{v*} v^k e^{−βv − ½av²} dv is the mass falling away from an end with
             slope β (out to ∞ if a ≥ 0, to the trough v* = β/|a| if a < 0): erfcx (a > 0) or
             Dawson's function (a < 0) with the recurrence βQ_k + aQ_{k+1} = kQ_{k−1} + …, and,
             once the slope dominates (β²/2|a| ≥ 64), the continued fraction
             Q_k/Q_{k−1} = k/(β + a Q_{k+1}/Q_k), which is exact at a = 0 (the exponential tilt).

Each piece is evaluated only on the elements that select it (gathered, then scattered back), so
numpy and cupy arrays take the same path; all work is in float64 and results come back in the
inputs' float dtype.
"""

from __future__ import annotations

import math

from numpy.polynomial.legendre import leggauss

from rbmlab.backend import namespace
from rbmlab.units.prior import Prior
from rbmlab.units.special import special

_FLAT_A, _FLAT_B = 0.25, 1.0  # the flat branch: |a| < _FLAT_A and |b| < _FLAT_B
# 8-point Gauss–Legendre on [0, 1]: exact to degree 15, error ~1e-20 for |f| ≤ 1.125
_NODES = [(0.5 + 0.5 * float(t), 0.5 * float(w)) for t, w in zip(*leggauss(8))]
# Q's continued fraction from β²/(2|a|) ≥ 64, where 14 terms reach 1e-16 (for a < 0 it is
# asymptotic, exact up to ~e^{−β²/2|a|}); below, the closed forms lose at most (β²/2|a|)² ≈ 4e3 ulp
_STEEP_H2 = 64.0
_FRACTION_TERMS = 14


def as_float64(*args):
    """(xp, dtype, arrays): the namespace (cupy if any argument is a cupy array), the float dtype
    of the result (float64 for integer or Python-number inputs), and the arguments in float64."""
    spaces = [namespace(x) for x in args]
    xp = next((s for s in spaces if s.__name__ == "cupy"), spaces[0])
    dtype = xp.result_type(*args)
    if dtype.kind != "f":
        dtype = xp.float64
    return xp, dtype, [xp.asarray(x, dtype=xp.float64) for x in args]


def _piecewise(cases, *args):
    """Each (mask, fn) of ``cases`` (masks partitioning the elements of ``args``) evaluated on its
    own elements only — fn(*args[mask]) → a tuple of arrays — and the results assembled."""
    xp = namespace(args[0])
    outs = None
    for mask, fn in cases:
        where = xp.nonzero(mask)
        if where[0].size == 0:
            continue
        results = fn(*(x[where] for x in args))
        if outs is None:
            outs = [xp.empty(mask.shape, dtype=xp.float64) for _ in results]
        for out, r in zip(outs, results):
            out[where] = r
    return outs if outs is not None else [xp.empty(args[0].shape, dtype=xp.float64)] * 3


def _flat(b, a, xp):
    """∫₀¹ t^k e^{bt − ½at²} dt for k = 0, 1, 2 by Gauss–Legendre (a nearly constant integrand)."""
    moments = [0.0, 0.0, 0.0]
    for t, w in _NODES:
        weight = w * xp.exp(t * (b - 0.5 * a * t))
        moments = [moments[0] + weight, moments[1] + t * weight, moments[2] + t * t * weight]
    return moments


def _dawson(x, xp):
    """Dawson's function e^{−x²}∫₀ˣ e^{u²} du where the special module lacks ``dawsn`` (cupyx):
    Rybicki's sum π^{−½} Σ_{n odd} e^{−(x − nh)²}/n about n ≈ x/h (h = ¼: error ~e^{−(π/2h)²}),
    and the Taylor series Σ (−2x²)ⁿ x/(2n+1)!! below x = 0.1, where the sum cancels."""
    h, center = 0.25, 2.0 * xp.round(2.0 * x)  # the even n nearest x/h
    rybicki = 0.0 * x
    for j in range(-12, 12):
        n = center + (2 * j + 1)
        rybicki = rybicki + xp.exp(-((x - h * n) ** 2)) / n
    taylor = term = x
    for n in range(1, 6):
        term = term * (-2.0 * x * x) / (2 * n + 1)
        taylor = taylor + term
    return xp.where(xp.abs(x) < 0.1, taylor, rybicki / math.sqrt(math.pi))


def _fraction(beta, a):
    """(Q₀, Q₁, Q₂) by the continued fraction ρ_k = Q_k/Q_{k−1} = k/(β + aρ_{k+1}), ρ_{N+1} = 0."""
    rho1 = rho2 = 0.0 * beta
    for k in range(_FRACTION_TERMS, 0, -1):
        rho1, rho2 = k / (beta + a * rho1), rho1
    q0 = 1.0 / (beta + a * rho1)
    return q0, rho1 * q0, rho2 * rho1 * q0


def _closed(beta, a):
    """(Q₀, Q₁, Q₂) in closed form: Q₀ = √(2/|a|)·(√π/2 erfcx(h) or dawsn(h)), h = β/√(2|a|); then
    the recurrence βQ_k + aQ_{k+1} = kQ_{k−1} + [k = 0] − v*^k e^{−h²} (the last term for a < 0)."""
    xp, sp = namespace(beta), special(beta)
    scale = xp.sqrt(2.0 / xp.abs(a))
    h = beta * (0.5 * scale)
    pos = a > 0
    dawson = sp.dawsn(h) if hasattr(sp, "dawsn") else _dawson(h, xp)
    q0 = scale * xp.where(pos, 0.5 * math.sqrt(math.pi) * sp.erfcx(h), dawson)
    trough = xp.where(pos, 0.0, xp.exp(-h * h))
    q1 = (1.0 - trough - beta * q0) / a
    q2 = (q0 - beta / xp.abs(a) * trough - beta * q1) / a
    return q0, q1, q2


def _tail(beta, a, xp):
    """(Q₀, Q₁, Q₂): Q_k = ∫₀^{v*} v^k e^{−βv − ½av²} dv for β ≥ 0 (v* = ∞ if a ≥ 0, else β/|a|):
    the continued fraction once the slope dominates (β²/2|a| ≥ 64), else the closed form."""
    steep = beta * beta >= (2.0 * _STEEP_H2) * xp.abs(a)
    return _piecewise(((steep, _fraction), (~steep, _closed)), beta, a)


def _peak(b, a):
    """(ln Z, E t, Var t) on [0, 1] for a > 0 with the peak t* = b/a inside: in u = √(a/2)(t − t*),
    ∫ u^k e^{−u²} over [h₀, h₁] ∋ 0 (Eq. 75, 78, 81 about the peak)."""
    xp, sp = namespace(b), special(b)
    k = xp.sqrt(0.5 * a)
    peak = b / a
    h0, h1 = -k * peak, k * (1.0 - peak)
    g0, g1 = xp.exp(-h0 * h0), xp.exp(-h1 * h1)
    m0 = 0.5 * math.sqrt(math.pi) * (sp.erf(h1) + sp.erf(-h0))
    m1 = -0.5 * g0 * xp.expm1(h0 * h0 - h1 * h1)
    m2 = 0.5 * (m0 + h0 * g0 - h1 * g1)
    mean_u = m1 / m0
    return 0.5 * b * peak + xp.log(m0 / k), peak + mean_u / k, (m2 / m0 - mean_u * mean_u) / (k * k)


def _ends(b, a):
    """(ln Z, E t, Var t) on [0, 1] for f falling from t = 0, from moments relative to e^{f(0)}:
    the piece from 0, less the piece beyond 1 (peak or trough beyond 1), or plus the piece from 1
    back to an inner trough."""
    xp = namespace(b)
    sign = xp.where((a < 0) & (b > a), 1.0, -1.0)
    q0, q1, q2 = _tail(xp.stack([-b, xp.abs(a - b)]), xp.stack([a, a]), xp)
    w = sign * xp.exp(b - 0.5 * a)  # ± e^{f(1) − f(0)}
    z = q0[0] + w * q0[1]
    mean = (q1[0] + w * (q0[1] - sign * q1[1])) / z  # t = 1 ∓ v about the far end
    return xp.log(z), mean, (q2[0] + w * (q0[1] - 2.0 * sign * q1[1] + q2[1])) / z - mean * mean


def _flat_stats(b, a):
    """(ln Z, E t, Var t) on [0, 1] by quadrature (the flat branch)."""
    z, t1, t2 = _flat(b, a, namespace(b))
    mean = t1 / z
    return namespace(b).log(z), mean, t2 / z - mean * mean


def _unit_interval(b, a, xp):
    """(ln Z, E t, Var t) of e^{bt − ½at²} on [0, 1], for b ≤ a/2 (so f(0) ≥ f(1)); each branch
    computed on its own elements only."""
    flat = (xp.abs(a) < _FLAT_A) & (b > -_FLAT_B)
    peak = ~flat & (b > 0)  # b ≤ a/2 makes a > 0 and b/a ≤ ½ there
    return _piecewise(((flat, _flat_stats), (peak, _peak), (~flat & ~peak, _ends)), b, a)


def truncated_gaussian_stats(lam, s, lo: float, hi: float):
    """(ln Z, mean, variance) of e^{λx − ½sx²} on [lo, hi] (lo < hi), elementwise over float64
    arrays λ and s of one namespace."""
    xp = namespace(lam)
    lam, s = xp.broadcast_arrays(lam, s)
    shape = lam.shape
    lam, s = lam.reshape(-1), s.reshape(-1)  # the branches gather elements by index
    width = hi - lo
    b, a = (lam - s * lo) * width, s * width * width
    flip = b > 0.5 * a  # t = 1 − t' puts the higher end at t = 0
    b = xp.where(flip, a - b, b)
    log_z, mean, var = _unit_interval(b, a, xp)
    start = xp.where(flip, hi, lo)
    log_z = log_z + lam * start - 0.5 * s * start * start + math.log(width)
    mean = xp.clip(mean, 0.0, 1.0) * width
    return (
        log_z.reshape(shape),
        xp.where(flip, hi - mean, lo + mean).reshape(shape),
        (xp.maximum(var, 0.0) * width * width).reshape(shape),
    )


class TruncatedGaussian(Prior):
    """x ∈ [α, ω] with base e^{−½Vx²}: the tap paper's Tr. Gauss. unit (V = 1/σ², U = μ/σ²)."""

    name = "truncated_gaussian"
    params = ("precision",)
    support = (0.0, 1.0)

    @classmethod
    def _stats(cls, B, A, V):
        _, dtype, (B, A, V) = as_float64(B, A, V)
        return dtype, truncated_gaussian_stats(B, A + V, *cls.support)

    @classmethod
    def log_z(cls, B, A, V):
        dtype, (log_z, _, _) = cls._stats(B, A, V)
        return log_z.astype(dtype)

    @classmethod
    def moments(cls, B, A, V):
        dtype, (_, mean, var) = cls._stats(B, A, V)
        return mean.astype(dtype), var.astype(dtype)

    @classmethod
    def grad_log_z(cls, B, A, V):
        dtype, (_, mean, var) = cls._stats(B, A, V)
        return ((-0.5 * (var + mean * mean)).astype(dtype),)

    @classmethod
    def log_base(cls, x, V):
        return -0.5 * V * x * x

    @classmethod
    def grad_log_base(cls, x, V):
        return (-0.5 * x * x + 0.0 * V,)

    @classmethod
    def init_params(cls, x, min_var: float = 1e-2):
        """Moment matching per column (our choice: the paper gives no initialisation for this
        prior): V = 1/max(var, 1e-2), U = mean·V."""
        precision = 1.0 / namespace(x).maximum(x.var(axis=0), min_var)
        return x.mean(axis=0) * precision, precision
