"""The truncated Gauss–Bernoulli prior of the tap paper (App. C.2): a spike at 0 and a truncated
Gaussian slab, for sparse real data (the real-MNIST visible units).

    base(x; V, r) = (1 − ρ) δ(x) + ρ e^{−½Vx²} 1[α ≤ x ≤ ω],   ρ = σ(r),  0 ∈ [α, ω]

(tap App. C.2, Eq. 94 with the slab unnormalised throughout, its sign slips corrected). With Z̃_TG,
m_TG, v_TG the truncated Gaussian's tilted partition function, mean and variance
(rbmlab.units.truncated_gaussian):

    ln Z̃  = logaddexp(ln(1 − ρ), ln ρ + ln Z̃_TG)                   (Eq. 96)
    P_nz  = P_Q[x ≠ 0] = σ(r + ln Z̃_TG)                             (Eq. 95)
    f_a   = P_nz m_TG                                                (Eq. 97)
    f_c   = P_nz (m_TG² + v_TG) − f_a² = P_nz v_TG + P_nz(1 − P_nz) m_TG²    (Eq. 98, corrected)
    ∂ ln Z̃/∂V = −½ P_nz E_TG[x²],   ∂ ln Z̃/∂r = P_nz − ρ
    ln base = ln(1 − ρ) at x = 0, ln ρ − ½Vx² elsewhere;  ∂_r ln base = 1[x ≠ 0] − ρ   (Eq. 108 with
              the non-zero indicator for δ, which we read as an erratum)

All in log space (logaddexp, σ(r) = e^{−softplus(−r)}): extreme r and ln Z̃_TG are fine.
"""

from __future__ import annotations

from rbmlab.backend.ops import softplus
from rbmlab.units.prior import Prior
from rbmlab.units.truncated_gaussian import as_float64, truncated_gaussian_stats
from rbmlab.units.values import ValueSet


class TruncatedGaussBernoulli(Prior):
    """x = 0 with weight 1 − ρ, else x ∈ [α, ω] with base ρ e^{−½Vx²} (r = logit ρ)."""

    name = "gauss_bernoulli"
    params = ("precision", "logit_rho")
    support = (0.0, 1.0)

    @classmethod
    def value_set(cls) -> ValueSet:
        """The spike at 0 and the slab [α, ω] (one interval while 0 ∈ [α, ω])."""
        return ValueSet.of_points(0.0) | ValueSet.between(*cls.support)

    @classmethod
    def _stats(cls, B, A, V, r):
        """(dtype, ln Z̃, P_nz, 1 − P_nz, m_TG, v_TG, ρ), all but dtype float64."""
        xp, dtype, (B, A, V, r) = as_float64(B, A, V, r)
        log_slab, mean, var = truncated_gaussian_stats(B, A + V, *cls.support)
        logit = r + log_slab
        log_z = xp.logaddexp(-softplus(r), log_slab - softplus(-r))
        return (
            dtype,
            log_z,
            xp.exp(-softplus(-logit)),
            xp.exp(-softplus(logit)),
            mean,
            var,
            xp.exp(-softplus(-r)),
        )

    @classmethod
    def log_z(cls, B, A, V, r):
        dtype, log_z, *_ = cls._stats(B, A, V, r)
        return log_z.astype(dtype)

    @classmethod
    def moments(cls, B, A, V, r):
        dtype, _, p, q, mean, var, _ = cls._stats(B, A, V, r)
        return (p * mean).astype(dtype), (p * var + p * q * mean * mean).astype(dtype)

    @classmethod
    def grad_log_z(cls, B, A, V, r):
        dtype, _, p, _, mean, var, rho = cls._stats(B, A, V, r)
        return (-0.5 * p * (var + mean * mean)).astype(dtype), (p - rho).astype(dtype)

    @classmethod
    def log_base(cls, x, V, r):
        xp, dtype, (x, V, r) = as_float64(x, V, r)
        return xp.where(x == 0, -softplus(r), -softplus(-r) - 0.5 * V * x * x).astype(dtype)

    @classmethod
    def grad_log_base(cls, x, V, r):
        xp, dtype, (x, V, r) = as_float64(x, V, r)
        rho = xp.exp(-softplus(-r))
        return (-0.5 * x * x + 0.0 * V).astype(dtype), ((x != 0) - rho).astype(dtype)

    @classmethod
    def init_params(cls, x, clip: float = 1e-3, min_var: float = 1e-2):
        """(U, V, r) per column (our choice: the paper gives no initialisation for this prior): V =
        1/max(var, 1e-2), U = mean·V from the non-zero values (a column with fewer than two
        gets the uniform distribution's mean (α + ω)/2 and variance (ω − α)²/12 on the
        support); ρ̂ = the fraction of non-zero values, clipped to [1e-3, 1 − 1e-3], and r
        = logit ρ̂ − ln Z̃_TG(U, 0; V), so that the prior's own P[x ≠ 0] = σ(r + ln Z̃_TG)
        is ρ̂ (r = logit ρ̂, the plain choice, would hold only for a normalised slab)."""
        xp, dtype, (x,) = as_float64(x)
        lo, hi = cls.support
        nonzero = x != 0
        count = nonzero.sum(axis=0)
        rho = xp.clip(count / x.shape[0], clip, 1.0 - clip)
        n = xp.maximum(count, 1)
        mean = x.sum(axis=0) / n
        var = xp.where(nonzero, (x - mean) ** 2, 0.0).sum(axis=0) / n
        few = count < 2
        mean = xp.where(few, 0.5 * (lo + hi), mean)
        precision = 1.0 / xp.maximum(xp.where(few, (hi - lo) ** 2 / 12.0, var), min_var)
        U = mean * precision
        r = xp.log(rho) - xp.log1p(-rho) - truncated_gaussian_stats(U, precision, lo, hi)[0]
        return U.astype(dtype), precision.astype(dtype), r.astype(dtype)
