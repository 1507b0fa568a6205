"""The truncated Gaussian and Gauss–Bernoulli priors (tap App. C.1–C.2) against adaptive quadrature,
from ordinary points to the extremes where the paper's erf/erfi forms break down (|λ|, |s| up to
1e4, s = 0 and ±1e-12): ln Z̃, mean, variance, gradients, float32, initialisation."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.special import dawsn, erf, erfcx, erfi

from rbmlab.units import prior
from rbmlab.units import truncated_gaussian as tg
from rbmlab.units.gauss_bernoulli import TruncatedGaussBernoulli as TGB
from rbmlab.units.truncated_gaussian import TruncatedGaussian as TG

pytestmark = pytest.mark.filterwarnings("error")

# test points (B, A, U, V), our choice, both signs of s: s = A + V = 2.5, −2, −4, −0.7
TEST_POINTS = [(0.3, 0.5, 0.2, 2.0), (0.3, -3.0, 0.2, 1.0), (1.5, -6.0, -0.4, 2.0), (-2.0, -1.0, 0.5, 0.3)]
EXTREMES = [0.0, 1e-12, -1e-12, 1e-3, -1e-3, 0.5, -0.5, 3.0, -3.0, 30.0, -30.0, 1e3, -1e3, 1e4, -1e4]
# (λ, s): the four points above, a product grid of extremes, and peaks/troughs placed at t = λ/s
GRID = (
    [(B + U, A + V) for B, A, U, V in TEST_POINTS]
    + list(itertools.product(EXTREMES[::2] + EXTREMES[1::2], EXTREMES))
    + [
        (s * t, s)
        for s in (1.0, -1.0, 100.0, -100.0, 1e4, -1e4)
        for t in (-0.5, 0.0, 0.3, 0.5, 0.9, 1.0, 1.5)
    ]
)


def quad_stats(lam, s, lo=0.0, hi=1.0):
    """(ln Z, mean, var) of e^{λx − ½sx²} on [lo, hi] by scipy's adaptive quadrature, relative to
    the maximum of the exponent, on pieces split at the peak and at the scales of the ends."""

    def f(x):
        return lam * x - 0.5 * s * x * x

    pts = [lo, hi] + ([lam / s] if s != 0 and lo < lam / s < hi else [])
    for end in (lo, hi):
        for scale in (abs(lam - s * end), np.sqrt(abs(s))):
            if scale > 0:
                pts += [end + sign * k / scale for k in (1, 4, 16, 64) for sign in (1, -1)]
    pts = sorted({p for p in pts if lo <= p <= hi})
    top = max(f(p) for p in pts)

    def integral(g):
        return sum(
            quad(lambda x: g(x) * np.exp(f(x) - top), a, b, epsabs=0, epsrel=1e-13, limit=200)[0]
            for a, b in zip(pts[:-1], pts[1:])
        )

    z = integral(lambda x: 1.0)
    mean = integral(lambda x: x) / z
    return top + np.log(z), mean, integral(lambda x: (x - mean) ** 2) / z


def assert_stats(got, want, width=1.0, tol=1e-8):
    """ln Z relative (absolute near 0); mean relative (absolute 1e-12·width near 0); variance
    relative or absolute 1e-10·width²."""
    (log_z, mean, var), (ref_log_z, ref_mean, ref_var) = got, want
    assert abs(log_z - ref_log_z) <= tol * max(abs(ref_log_z), 1.0)
    assert abs(mean - ref_mean) <= tol * abs(ref_mean) + 1e-12 * width
    assert abs(var - ref_var) <= max(tol * ref_var, 1e-10 * width * width)


@pytest.mark.parametrize("lam, s", GRID)
def test_truncated_gaussian_matches_quadrature(lam, s):
    V = 0.7  # s = A + V, B = λ (the field already in B)
    got = (float(TG.log_z(lam, s - V, V)), *map(float, TG.moments(lam, s - V, V)))
    assert_stats(got, quad_stats(lam, s))


def test_dawson_fallback(monkeypatch):
    """Where cupyx.scipy.special has no dawsn, Rybicki's sum stands in: it matches scipy's dawsn,
    and the statistics computed with it match those computed with scipy's."""
    x = np.concatenate([np.linspace(0.0, 12.0, 2001), np.logspace(-300, 0, 61)])
    np.testing.assert_allclose(tg._dawson(x, np), dawsn(x), rtol=5e-14, atol=0)
    lam, s = (np.array(v) for v in zip(*GRID))
    want = tg.truncated_gaussian_stats(lam, s, 0.0, 1.0)
    monkeypatch.setattr(tg, "special", lambda _: SimpleNamespace(erf=erf, erfcx=erfcx))
    for got, ref in zip(tg.truncated_gaussian_stats(lam, s, 0.0, 1.0), want):
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    "lam, s", [(0.5, 2.5), (-3.0, -0.1), (40.0, 30.0), (0.0, 0.0), (-1e4, 1e-12), (5e3, -1e4), (2.0, 4.0)]
)
def test_other_supports(lam, s):
    class Wide(TG):
        support = (-1.0, 2.5)

    got = (float(Wide.log_z(lam, s, 0.0)), *map(float, Wide.moments(lam, s, 0.0)))
    assert_stats(got, quad_stats(lam, s, -1.0, 2.5), width=3.5)


def test_closed_forms_eqs_75_78_81_and_the_s_negative_erratum():
    """At those four points Eq. 75/78/81 (s < 0 mean sign-corrected) agree with ours; the paper's
    printed s < 0 mean (e^{h_α²} − e^{h_ω²}) leaves [0, 1] at (B, A, V) = (0.5, −3, 1)."""

    def eq78(lam, s, corrected=True):
        m, k = lam / s, np.sqrt(abs(s) / 2)
        ha, ho = -k * m, k * (1 - m)
        if s > 0:
            num = np.exp(-(ha**2)) - np.exp(-(ho**2))
            return m + np.sqrt(2 / (np.pi * s)) * num / (erf(ho) - erf(ha))
        num = np.exp(ho**2) - np.exp(ha**2)
        return m + np.sqrt(2 / (np.pi * -s)) * (num if corrected else -num) / (erfi(ho) - erfi(ha))

    for B, A, U, V in TEST_POINTS:
        assert abs(float(TG.moments(B + U, A, V)[0]) - eq78(B + U, A + V)) < 1e-12
    paper, ours = eq78(0.5, -2.0, corrected=False), float(TG.moments(0.5, -3.0, 1.0)[0])
    assert not 0.0 <= paper <= 1.0
    assert 0.0 <= ours <= 1.0 and abs(ours - eq78(0.5, -2.0)) < 1e-12


@pytest.mark.parametrize("r", [-40.0, -3.0, 0.0, 2.0, 40.0])
@pytest.mark.parametrize("lam, s", GRID[::5])
def test_gauss_bernoulli_matches_quadrature(lam, s, r):
    """Q = (1 − ρ)δ(x) + ρ e^{λx − ½sx²}: the slab by quadrature, the spike added by hand."""
    log_slab, slab_mean, slab_var = quad_stats(lam, s)
    log_rho, log_1m_rho = -np.logaddexp(0.0, -r), -np.logaddexp(0.0, r)
    log_z = np.logaddexp(log_1m_rho, log_rho + log_slab)
    p = np.exp(log_rho + log_slab - log_z)
    mean = p * slab_mean
    var = p * (slab_var + (slab_mean - mean) ** 2) + (1 - p) * mean**2
    V = -0.2
    got = (float(TGB.log_z(lam, s - V, V, r)), *map(float, TGB.moments(lam, s - V, V, r)))
    assert_stats(got, (log_z, mean, var))


def test_gauss_bernoulli_limits():
    lam, s = np.array([0.5, -3.0, 8.0, -1e3]), np.array([2.5, -2.0, 30.0, 1e4])
    for got, want in zip(
        (TGB.log_z(lam, s, 0.0, 40.0), *TGB.moments(lam, s, 0.0, 40.0)),
        (TG.log_z(lam, s, 0.0), *TG.moments(lam, s, 0.0)),
    ):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    mean, var = TGB.moments(lam, s, 0.0, -40.0)
    assert np.all(np.abs(mean) < 1e-12) and np.all(var < 1e-12)


ORDINARY = [
    (0.5, 0.5, 2.0),
    (0.5, -3.0, 1.0),
    (1.1, -6.0, 2.0),
    (-1.5, -1.0, 0.3),
    (4.0, 0.0, -1.0),
    (-2.0, 0.0, 0.1),
]


@pytest.mark.parametrize("B, A, V", ORDINARY)
def test_gradients_by_finite_differences(B, A, V):
    h = 1e-5

    def fd(f, i, *args):
        up, down = list(args), list(args)
        up[i], down[i] = args[i] + h, args[i] - h
        return (float(f(*up)) - float(f(*down))) / (2 * h)

    mean, var = map(float, TG.moments(B, A, V))
    assert fd(TG.log_z, 0, B, A, V) == pytest.approx(mean, rel=1e-7)
    assert fd(lambda *a: TG.moments(*a)[0], 0, B, A, V) == pytest.approx(var, rel=1e-6)
    assert fd(TG.log_z, 2, B, A, V) == pytest.approx(float(TG.grad_log_z(B, A, V)[0]), rel=1e-7)
    for r in (-2.0, 0.5):
        mean, var = map(float, TGB.moments(B, A, V, r))
        g_v, g_r = map(float, TGB.grad_log_z(B, A, V, r))
        assert fd(TGB.log_z, 0, B, A, V, r) == pytest.approx(mean, rel=1e-7)
        assert fd(lambda *a: TGB.moments(*a)[0], 0, B, A, V, r) == pytest.approx(var, rel=1e-6)
        assert fd(TGB.log_z, 2, B, A, V, r) == pytest.approx(g_v, rel=1e-7)
        assert fd(TGB.log_z, 3, B, A, V, r) == pytest.approx(g_r, rel=1e-7)


def test_log_base_and_its_gradient():
    x, V, r = np.array([0.0, 0.25, 1.0]), 3.0, 0.4
    np.testing.assert_allclose(TG.log_base(x, V), -0.5 * V * x * x)
    np.testing.assert_allclose(TG.grad_log_base(x, V)[0], -0.5 * x * x)
    rho = 1 / (1 + np.exp(-r))
    np.testing.assert_allclose(
        TGB.log_base(x, V, r), np.where(x == 0, np.log1p(-rho), np.log(rho) - 0.5 * V * x * x)
    )
    g_v, g_r = TGB.grad_log_base(x, V, r)
    np.testing.assert_allclose(g_v, -0.5 * x * x)
    np.testing.assert_allclose(g_r, (x != 0) - rho)
    h = 1e-6  # ∂_r ln base by finite differences
    np.testing.assert_allclose(
        (TGB.log_base(x, V, r + h) - TGB.log_base(x, V, r - h)) / (2 * h), g_r, rtol=1e-7
    )


def test_float32_and_broadcasting():
    lam, s = (np.array(v, dtype=np.float32) for v in zip(*GRID))
    for cls, theta in ((TG, (np.float32(0.0),)), (TGB, (np.float32(0.0), np.float32(1.5)))):

        def outputs(*args):
            return cls.log_z(*args), *cls.moments(*args), *cls.grad_log_z(*args)  # noqa: B023 - called in this iteration

        out32 = outputs(lam, s, *theta)
        out64 = outputs(lam.astype(np.float64), s.astype(np.float64), *map(float, theta))
        for a, b in zip(out32, out64):
            assert a.dtype == np.float32 and b.dtype == np.float64 and np.all(np.isfinite(a))
            np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-30)
    B, A, V = np.zeros((3, 1, 4)), np.full((5, 1), -2.0), np.linspace(-1, 3, 4)
    assert TG.moments(B, A, V)[1].shape == (3, 5, 4)
    assert TGB.grad_log_z(B, A, V, 0.3)[1].shape == (3, 5, 4)
    assert prior("truncated_gaussian") is TG and prior("gauss_bernoulli") is TGB


def truncated_sample(rng, mu, sigma, shape):
    """Rejection sampling from N(μ, σ²) restricted to [0, 1]."""
    x = rng.normal(mu, sigma, (4 * int(np.prod(shape)),))
    return x[(x >= 0) & (x <= 1)][: int(np.prod(shape))].reshape(shape)


def test_init_params_truncated_gaussian():
    """Moment matching recovers μ = U/V and σ² = 1/V while the truncation is mild (≥ 3σ here)."""
    rng = np.random.default_rng(0)
    sd = np.array([0.1, 0.15])
    x = np.stack([truncated_sample(rng, 0.55, v, (20000,)) for v in sd], axis=1)
    U, V = TG.init_params(x)
    np.testing.assert_allclose(U / V, 0.55, rtol=0.02)
    np.testing.assert_allclose(V, 1 / sd**2, rtol=0.05)
    mean, var = TG.moments(U, 0.0, V)
    np.testing.assert_allclose(mean, x.mean(axis=0), rtol=0.02)
    np.testing.assert_allclose(var, x.var(axis=0), rtol=0.05)
    assert TG.init_params(x[:1])[1] == pytest.approx(100.0)  # one row: the variance floor


def test_init_params_gauss_bernoulli():
    rng = np.random.default_rng(1)
    slab = truncated_sample(rng, 0.6, 0.15, (20000, 3))
    x = np.where(rng.random((20000, 3)) < [0.3, 0.9, 1.0], slab, 0.0)
    x[:, 2] = 0.0
    x[0, 2] = 0.7  # one non-zero value: the default
    U, V, r = TGB.init_params(x)
    mean, var = TGB.moments(U, 0.0, V, r)
    p_nonzero = 1 / (1 + np.exp(-(r + TG.log_z(U, 0.0, V))))
    np.testing.assert_allclose(p_nonzero[:2], (x != 0).mean(axis=0)[:2], rtol=1e-9)
    np.testing.assert_allclose(mean[:2], x.mean(axis=0)[:2], rtol=0.02)
    np.testing.assert_allclose(var[:2], x.var(axis=0)[:2], rtol=0.05)
    assert U[2] / V[2] == pytest.approx(0.5) and V[2] == pytest.approx(12.0)
    assert p_nonzero[2] == pytest.approx(1e-3)


@pytest.mark.parametrize("prior_class, theta", [(TG, [[2.0]]), (TG, [[-3.0]]), (TGB, [[2.0], [0.4]])])
def test_a_layers_log_prior_integrates_to_its_log_normaliser(prior_class, theta):
    """One unit with field U = 0.7: ∫ exp(ln P̃(x)) dx over the support (quadrature, plus the point
    mass at 0 of the Gauss-Bernoulli prior) is exp(ln Z̃(U, 0)) of the same layer: the base
    measure enters ln P̃ as it enters Z̃."""
    from rbmlab.units.layer import Layer

    layer = Layer(prior_class, np.array([0.7]), np.array(theta))
    density = lambda x: np.exp(layer.log_prior(np.array([[x]]))[0])  # noqa: E731
    mass = quad(density, 0.0, 1.0, points=[0.0])[0]
    if prior_class is TGB:  # the spike: x = 0 exactly, weight exp(log_base(0))
        mass += density(0.0)
    log_z = layer.log_z(np.zeros((1, 1)), np.zeros((1, 1)))[0, 0]
    assert np.log(mass) == pytest.approx(log_z, abs=1e-9)
