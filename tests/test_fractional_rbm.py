"""The fractional RBM (frank_wolfe Sec. 3.3, Eq. 11) against enumeration, and Prop. 3.2.

References are written out here by brute force over every visible state, sharing no code with
rbmlab.models.fractional_rbm: log p(v) = Σ_i c_i softplus(w_iᵀv + b_h,i) + bᵀv − log Z.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from rbmlab.backend import get_backend
from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.ais import temperature_schedule
from rbmlab.evaluators.ais_fractional import fractional_ais_log_partition, softplus_increments
from rbmlab.evaluators.base import Context
from rbmlab.models import MODELS
from rbmlab.models.fractional_rbm import FractionalRBM
from rbmlab.models.rbm import log_likelihood, log_partition
from tests.conftest import all_binary

D, H = 8, 5
STATES = all_binary(D)
LOG2 = math.log(2.0)


def instance(seed: int, c=None, scale: float = 1.5, d: int = D, h: int = H) -> FractionalRBM:
    """A random fractional RBM (float64) with coefficients ``c`` (default: uniform on (0, 1])."""
    rng = np.random.default_rng(seed)
    c = rng.uniform(0.0, 1.0, h) if c is None else np.asarray(c, dtype=np.float64)
    c = np.where(c == 0.0, 1.0, c)  # (0, 1]
    return FractionalRBM(
        scale * rng.standard_normal((d, h)), 0.5 * rng.standard_normal(d), scale * rng.standard_normal(h), c
    )


def brute_log_unnormalized(m: FractionalRBM, v):
    """Eq. 11 written out."""
    x = v @ m.W + m.b_h
    return np.logaddexp(0.0, x) @ m.c + v @ m.b_v


def brute_log_p(m, v):
    return brute_log_unnormalized(m, v) - np.logaddexp.reduce(brute_log_unnormalized(m, STATES))


def test_eq_11_and_its_enumerated_log_z():
    m = instance(0, c=[0.3, 2.5, 1.0, 0.7, -0.4])  # any real coefficients (Sec. 3.3)
    np.testing.assert_allclose(m.log_unnormalized(STATES), brute_log_unnormalized(m, STATES), rtol=1e-12)
    assert m.exact_log_partition(chunk_size=37) == pytest.approx(
        np.logaddexp.reduce(brute_log_unnormalized(m, STATES)), rel=1e-12
    )
    assert float(m.alpha) == pytest.approx(0.3 + 2.5 + 1.0 + 0.7 - 0.4)


def test_with_every_coefficient_one_it_is_the_rbm_of_its_units():
    """Prop. 3.1: c_i = 1 is the standard RBM (Eq. 3); Eq. 12's RBM is then the same model."""
    m = instance(1, c=np.ones(H))
    assert m.exact_log_partition() == pytest.approx(log_partition(m.rbm()), rel=1e-12)
    np.testing.assert_allclose(brute_log_p(m, STATES), log_likelihood(m.standard(), STATES), rtol=1e-10)
    other = instance(1, c=np.full(H, 0.5))
    assert other.exact_log_partition() != pytest.approx(log_partition(other.rbm()), rel=1e-3)


def test_the_coefficient_option_sets_every_initial_c():
    """model.coefficient (a new numeric option) at a non-default value."""
    backend = get_backend("numpy", "float32")
    config = MODELS.parse({"name": "fractional_rbm", "n_hidden": 3, "coefficient": 0.25})
    m = FractionalRBM.initialize(
        config, xp=np, rng=backend.rng(0), data_mean=np.full(D, 0.3), dtype="float32"
    )
    assert m.c.dtype == np.float32 and m.c.tolist() == [0.25] * 3 and m.W.shape == (D, 3)
    assert MODELS.parse({"name": "fractional_rbm"}).coefficient == 1.0


# ---------------------------------------------------------------- Prop. 3.2
def prop_3_2_terms(c, x):
    """The three terms of Prop. 3.2 in log space, float64: (log[2^{c−1}(1 + e^{cx})],
    log[(1 + e^x)^c], log[1 + e^{cx}]). The Proposition reads
    (1 / 2^{1−c}) (1 + exp(c·x)) ≤ (1 + exp(x))^c ≤ 1 + exp(c·x),   0 < c ≤ 1."""
    sp_cx = np.logaddexp(0.0, c * x)
    return (c - 1.0) * LOG2 + sp_cx, c * np.logaddexp(0.0, x), sp_cx


def test_prop_3_2_holds_per_unit_for_0_lt_c_le_1_and_fails_above_1():
    """The appendix's proof ("Proof of Proposition 4.2", the Proposition is 3.2) takes x_1 = 1,
    x_2 = e^x in two classical inequalities for 0 < c ≤ 1. The extraction reads the first one,
    (1/2) Σ_k x_k ≤ ((1/2) Σ_k x_k^c)^{1/c}, which is the power-mean inequality the wrong way
    round: the mean of order c ≤ 1 is at most the arithmetic one, ((1/2) Σ x_k^c)^{1/c} ≤
    (1/2) Σ x_k, i.e. (1/2) Σ x_k^c ≤ ((1/2) Σ x_k)^c; that (correct) form gives the left bound,
    and subadditivity of t ↦ t^c, Σ x_k ≤ (Σ x_k^c)^{1/c}, the right one."""
    rng = np.random.default_rng(0)
    c = np.concatenate([rng.uniform(0.0, 1.0, 20000), [1.0, 1e-6]])
    c[c == 0.0] = 0.5
    x = np.concatenate([rng.normal(0.0, 8.0, 20000), [3.0, -2.0]])
    low, mid, high = prop_3_2_terms(c, x)
    assert np.all(low <= mid + 1e-12) and np.all(mid <= high + 1e-12)
    # the power mean read literally (wrong way round) fails wherever x ≠ 0 and c < 1
    a, b = np.ones_like(x), np.exp(np.clip(x, -30, 30))
    literal = 0.5 * (a + b) <= (0.5 * (a**c + b**c)) ** (1.0 / c) * (1 + 1e-12)
    assert not literal[(c < 0.99) & (np.abs(x) > 0.5)].any()
    # the control: the hypothesis c ≤ 1 broken, both bounds fail (the left one wherever x ≠ 0).
    # Differences in the form c·log1p(e^{−|x|}) − log1p(e^{−c|x|}) (= c softplus(x) − softplus(cx)
    # for c > 0, as max(cx, 0) = c max(x, 0)): exact to the last bit where the plain logs round
    c_big, x = rng.uniform(1.05, 3.0, 20000), x[:20000]
    mid_minus_high = c_big * np.log1p(np.exp(-np.abs(x))) - np.log1p(np.exp(-c_big * np.abs(x)))
    assert np.all(mid_minus_high > 0)  # right bound broken
    assert np.all((mid_minus_high < (c_big - 1.0) * LOG2) | (np.abs(x) < 1e-6))  # left bound broken


def test_prop_3_2_bounds_the_fractional_rbm_by_its_standard_rbm_exactly():
    """On enumerable models: per state, Σ_i (c_i − 1) log 2 ≤ log p̃(v) − log p̃_12(v) ≤ 0 with
    p̃ Eq. 11 and p̃_12 Eq. 12 (Prop. 3.2 summed over units); so Z_12 2^{Σ(c_i − 1)} ≤ Z ≤ Z_12 and
    |log p(v) − log p_12(v)| ≤ Σ_i (1 − c_i) log 2. Checked over random instances. The control:
    with every c_i in (1, 2] (the hypothesis broken) the upper bound fails at every state, and Z
    exceeds Z_12."""
    for seed in range(20):
        m = instance(seed, scale=[0.3, 1.5, 4.0][seed % 3])
        std = m.standard()
        gap = brute_log_unnormalized(m, STATES) - (std.log_unnormalized(STATES))
        lower = (m.c - 1.0).sum() * LOG2
        assert np.all(gap <= 1e-10) and np.all(gap >= lower - 1e-10)
        log_z, log_z_12 = m.exact_log_partition(), log_partition(std)
        assert lower - 1e-10 <= log_z - log_z_12 <= 1e-10
        assert np.all(np.abs(brute_log_p(m, STATES) - log_likelihood(std, STATES)) <= -lower + 1e-10)
    broken = instance(3, c=[1.5, 1.2, 2.0, 1.1, 1.7])
    gap = brute_log_unnormalized(broken, STATES) - broken.standard().log_unnormalized(STATES)
    assert np.all(gap > 0) and broken.exact_log_partition() > log_partition(broken.standard())


def test_above_1_the_bound_applies_to_the_fractional_remainder():
    """Sec. 3.3: for c_i > 1 split c_i = n_i + f_i and apply the bound to f_i: n_i softplus(x) +
    softplus(f_i x) approximates c_i softplus(x) within (1 − f_i) log 2, from below."""
    rng = np.random.default_rng(2)
    c = rng.uniform(1.0, 5.0, 10000)
    x = rng.normal(0.0, 6.0, 10000)
    n, f = np.floor(c), c - np.floor(c)
    f = np.where(f == 0.0, 1.0, f)
    n = c - f
    split = n * np.logaddexp(0.0, x) + np.logaddexp(0.0, f * x)
    diff = c * np.logaddexp(0.0, x) - split
    assert np.all(diff <= 1e-10) and np.all(diff >= (f - 1.0) * LOG2 - 1e-10)


# ---------------------------------------------------------------- AIS on Eq. 11
def test_fractional_ais_agrees_with_enumeration():
    """Forward AIS along the base-rate path with Sec. 3.3's MH step at each β: the exact log Z
    inside its ±3σ interval, in float32, for coefficients below, above and at 1."""
    backend = get_backend("numpy", "float32")
    m = instance(5, c=[0.3, 1.8, 1.0, 0.6, 2.4], scale=1.2, d=12).astype("float32")
    exact = m.astype("float64").exact_log_partition()
    result = fractional_ais_log_partition(
        m,
        backend.rng(3),
        base_bias=np.zeros(12, np.float32),
        betas=temperature_schedule("linear", 1000),
        n_chains=200,
    )
    assert result.log_z_lower <= exact <= result.log_z_upper
    assert abs(result.log_z - exact) < 0.05
    # the control: the same AIS with one coefficient wrong (1.8 read as 1) misses the exact log Z
    wrong = m.replace(c=np.array([0.3, 1.0, 1.0, 0.6, 2.4], np.float32))
    off = fractional_ais_log_partition(
        wrong,
        backend.rng(3),
        base_bias=np.zeros(12, np.float32),
        betas=temperature_schedule("linear", 1000),
        n_chains=200,
    )
    assert not off.log_z_lower <= exact <= off.log_z_upper


def test_the_ais_evaluator_scores_a_fractional_rbm_and_refuses_reverse_ais():
    evaluator = EVALUATORS.build(
        EVALUATORS.parse(
            {"name": "ais", "n_chains": 200, "schedule": "linear", "n_temperatures": 1000, "splits": ["test"]}
        )
    )
    evaluator.check(FractionalRBM, {"n_visible": D, "n_hidden": H})
    m = instance(7, c=[0.4, 1.6, 1.0, 0.8, 0.2]).astype("float32")
    backend = get_backend("numpy", "float32")
    x = STATES[np.random.default_rng(0).integers(0, 2**D, 50)].astype(np.float32)
    metrics = evaluator.evaluate(
        m, {"test": Batch(x)}, Context(rng=backend.rng(1), final=True, data_mean=np.full(D, 0.5, np.float32))
    )
    exact = brute_log_p(m.astype("float64"), x.astype(np.float64)).mean()
    assert metrics["test_log_likelihood_lower"] <= exact <= metrics["test_log_likelihood_upper"]
    reverse = EVALUATORS.build(EVALUATORS.parse({"name": "ais", "reverse": True}))
    with pytest.raises(
        RbmlabError, match=r"^evaluator.reverse: reverse AIS is not written for model fractional_rbm"
    ):
        reverse.check(FractionalRBM, {"n_visible": D, "n_hidden": H})


# ---------------------------------------------------------------- Prop. 3.1 (concavity)
def _mean_log_likelihood(W, b, bh, c, data) -> float:
    m = FractionalRBM(W, b, bh, c)
    return float(np.mean(m.log_unnormalized(data)) - m.exact_log_partition())


def _concavity_gap(f, x0, x1) -> float:
    """min over t of f(x_t) − [(1 − t) f(x0) + t f(x1)] on the segment: ≥ 0 where f is concave."""
    f0, f1 = f(x0), f(x1)
    return min(f((1 - t) * x0 + t * x1) - ((1 - t) * f0 + t * f1) for t in (0.25, 0.5, 0.75))


def test_prop_3_1_the_log_likelihood_is_jointly_concave_in_the_unit_weights_and_the_bias():
    """frank_wolfe Prop. 3.1: log p(v | q, ϑ) is concave in q(w), in α and in b, and jointly in
    (q(w), b). With the atoms w_i fixed, α q(w) is the coefficient vector c = α q: the exact mean
    log-likelihood along random segments of (c, b) (which holds segments of q at fixed α, and of α
    at fixed q) lies above its chords. Control: along segments of the weights W it does not."""
    rng = np.random.default_rng(3)
    W, bh = 1.5 * rng.standard_normal((D, H)), 0.5 * rng.standard_normal(H)
    data = STATES[rng.choice(len(STATES), 40)]
    split = lambda x: (x[:H], x[H:])  # noqa: E731
    f = lambda x: _mean_log_likelihood(W, split(x)[1], bh, split(x)[0], data)  # noqa: E731
    for _ in range(20):
        x0 = np.concatenate([rng.uniform(0.0, 3.0, H), rng.standard_normal(D)])
        x1 = np.concatenate([rng.uniform(0.0, 3.0, H), rng.standard_normal(D)])
        assert _concavity_gap(f, x0, x1) >= -1e-9
    b, c = rng.standard_normal(D), rng.uniform(0.5, 1.0, H)
    g = lambda w: _mean_log_likelihood(w.reshape(D, H), b, bh, c, data)  # noqa: E731
    gaps = [
        _concavity_gap(g, 3 * rng.standard_normal(D * H), 3 * rng.standard_normal(D * H)) for _ in range(20)
    ]
    assert min(gaps) < -1e-3  # the weights themselves: not concave, and the check sees it


@pytest.mark.parametrize("beta_0, beta_1", [(0.0, 0.1), (0.3, 0.31), (0.9, 1.0)])
def test_a_softplus_increment_is_the_difference_of_two_softpluses(beta_0, beta_1):
    """AIS's weight increment per hidden unit, softplus(β_1 x) − softplus(β_0 x), against the plain
    difference in float64 where it loses nothing (|x| ≤ 30)."""
    x = np.linspace(-30.0, 30.0, 61)
    want = np.logaddexp(0.0, beta_1 * x) - np.logaddexp(0.0, beta_0 * x)
    np.testing.assert_allclose(softplus_increments(x, beta_0, beta_1), want, rtol=1e-10, atol=1e-13)


def test_fractional_ais_is_unbiased_on_a_coarse_schedule_from_a_non_zero_base():
    """Neal (2001): E[w] = Z / Z_A on any schedule when each MH step leaves its p_β invariant. On
    5 temperatures from a base-rate model with non-zero fields (the other test's base is 0, where
    the base's part of the path vanishes), 200,000 weights meet the enumerated log Z within 4
    standard errors of their mean."""
    m = instance(21, d=6, h=4, scale=1.0)
    base = np.random.default_rng(22).uniform(-1.5, 1.5, 6)
    n = 200_000
    res = fractional_ais_log_partition(
        m, np.random.default_rng(23), base_bias=base, betas=temperature_schedule("linear", 4), n_chains=n
    )
    w = np.exp(res.log_w - res.log_w.max())
    se = w.std(ddof=1) / np.sqrt(n) / w.mean()
    assert w.std() / w.mean() > 0.3  # the weights vary: the schedule is coarse
    assert abs(res.log_z - m.exact_log_partition()) < 4 * se, (res.log_z, m.exact_log_partition(), se)
