"""Sec. 3.3's Metropolis–Hastings sampler for the fractional RBM against enumeration.

Its stationary distribution is Eq. 11's p(v), written out here by brute force over every visible
state: the states of CHAINS independent chains after STEPS steps are within the total variation a
multinomial sample of that size reaches (its 99.9th percentile, ×1.2), and two controls that
must fail do: the same sampler told a wrong coefficient, and Eq. 12's RBM sampled without the
Metropolis–Hastings correction.
"""

from __future__ import annotations

import numpy as np
import pytest

from rbmlab.backend import get_backend
from rbmlab.inference import INFERENCE
from rbmlab.inference.block_gibbs import gibbs_chain
from rbmlab.inference.fractional_mh import coefficient_gap, mh_chain
from rbmlab.models.fractional_rbm import FractionalRBM
from tests.conftest import all_binary

D, H = 6, 4
STATES = all_binary(D)
CHAINS, STEPS = 20_000, 40
BACKEND = get_backend("numpy", "float32")


def model(c) -> FractionalRBM:
    """A float32 fractional RBM with strong weights (a multimodal p) and coefficients ``c``."""
    rng = np.random.default_rng(4)
    return FractionalRBM(
        (1.5 * rng.standard_normal((D, H))).astype(np.float32),
        (0.5 * rng.standard_normal(D)).astype(np.float32),
        (0.5 * rng.standard_normal(H)).astype(np.float32),
        np.asarray(c, np.float32),
    )


def enumerated(m: FractionalRBM) -> np.ndarray:
    """Eq. 11's p(v) over STATES, float64, by brute force."""
    W, b_v, b_h, c = (a.astype(np.float64) for a in (m.W, m.b_v, m.b_h, m.c))
    log_p = np.logaddexp(0.0, STATES @ W + b_h) @ c + STATES @ b_v
    return np.exp(log_p - np.logaddexp.reduce(log_p))


def tv(p, v) -> float:
    q = np.bincount((v.astype(int) << np.arange(D)).sum(axis=1), minlength=2**D) / len(v)
    return 0.5 * float(np.abs(p - q).sum())


def tv_bound(p) -> float:
    """The 99.9th percentile of the TV of CHAINS exact draws (multinomial) from p, times 1.2."""
    draws = np.random.default_rng(0).multinomial(CHAINS, p, size=2000) / CHAINS
    return 1.2 * float(np.quantile(0.5 * np.abs(draws - p).sum(axis=1), 0.999))


def start() -> np.ndarray:
    return (BACKEND.rng(9).random((CHAINS, D)) < 0.5).astype(np.float32)


SAMPLER = INFERENCE.build(INFERENCE.parse("fractional_mh"))


@pytest.mark.parametrize(
    "c, steps",
    [
        ([0.3, 0.6, 2.2, 2.8], STEPS),
        ([0.5, 0.5, 0.5, 0.5], STEPS),
        ([1.0, -0.6, 0.4, 1.3], STEPS),
        ([5.5, 7.2, 12.0, 3.3], 200),
    ],  # peaked: slower to mix
    ids=["mixed", "half", "one-negative", "large"],
)
def test_the_stationary_distribution_is_the_enumerated_one(c, steps):
    """Coefficients below, at and above 1 (above: the n_i copies of the split proposal)."""
    m = model(c)
    p = enumerated(m)
    bound = tv_bound(p)
    v = SAMPLER.run(m, start(), BACKEND.rng(1), steps)
    assert v.dtype == np.float32 and v.shape == (CHAINS, D)
    assert tv(p, v) < bound
    assert 0.2 < SAMPLER.acceptance < 1.0  # it rejects, and it moves
    # control 1: the sampler told wrong coefficients (each 0.5 more) samples another p
    wrong = SAMPLER.run(m.replace(c=m.c + np.float32(0.5)), start(), BACKEND.rng(1), steps)
    assert tv(p, wrong) > 2 * bound
    # control 2: Eq. 12's RBM by block Gibbs, no Metropolis–Hastings correction
    uncorrected = gibbs_chain(m.standard(), start(), BACKEND.rng(1), steps)
    assert tv(p, uncorrected) > bound


def test_with_every_coefficient_one_it_is_block_gibbs_bit_for_bit():
    """Prop. 3.1: c_i = 1 is the RBM, A = 1, and the step is block Gibbs with the same draws."""
    m = model(np.ones(H))
    x = start()[:500]
    v, rate = mh_chain(m, x, BACKEND.rng(3), 7)
    np.testing.assert_array_equal(v, gibbs_chain(m.rbm(), x, BACKEND.rng(3), 7))
    assert rate == 1.0


def test_the_acceptance_ratio_is_eq_11_over_eq_12():
    """log A = G(x') − G(x) with G = log p̃ − log p̃_12 (Sec. 3.3): G against the two models'
    unnormalised log-probabilities written out, for any real coefficients."""
    m = model([0.3, 1.8, -0.7, 1.0]).astype("float64")
    x = STATES @ m.W + m.b_h
    eq_11 = np.logaddexp(0.0, x) @ m.c + STATES @ m.b_v
    eq_12 = np.logaddexp(0.0, x * m.c).sum(axis=1) + STATES @ m.b_v
    np.testing.assert_allclose(coefficient_gap(x, m.c[None, :]), eq_11 - eq_12, rtol=1e-12, atol=1e-12)


def test_chains_of_a_batch_step_independently():
    """One accept/reject per chain: a chain's path does not depend on the others' states."""
    m = model([0.3, 0.7, 1.8, 2.5])
    x = start()[:64]
    a = SAMPLER.run(m, x, BACKEND.rng(5), 5)
    b = SAMPLER.run(m, x, BACKEND.rng(5), 5)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, SAMPLER.run(m, x, BACKEND.rng(6), 5))
