"""The MMD of pmp (rbmlab.evaluators.mmd) against the direct V-statistic and its known floor."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rbmlab.errors import RbmlabError
from rbmlab.evaluators.mmd import hamming_histogram, log_mmd2, mmd2, v_statistic_floor


def direct_mmd2(x: np.ndarray, y: np.ndarray) -> float:
    """Eq. (1) term by term in float64: every kernel value exp(−Hamming/D)."""
    d = x.shape[1]

    def mean_k(a, b):
        return float(np.exp(-(a[:, None, :] != b[None, :, :]).sum(-1) / d).mean())

    return mean_k(x, x) + mean_k(y, y) - 2 * mean_k(x, y)


def bernoulli(rng, n, p):
    return (rng.random((n, len(p))) < p).astype(np.float32)


def test_equals_the_direct_v_statistic_with_unequal_sizes_and_any_block():
    rng = np.random.default_rng(0)
    x, y = bernoulli(rng, 37, np.full(23, 0.3)), bernoulli(rng, 51, np.linspace(0.1, 0.9, 23))
    expected = direct_mmd2(x, y)
    assert expected > 0
    for block in (5, 16, 2048):
        assert mmd2(x, y, block=block) == pytest.approx(expected, rel=1e-12, abs=0)
    assert log_mmd2(x, y) == pytest.approx(math.log(expected), abs=1e-12)
    h = hamming_histogram(x, y, block=8)
    assert h.sum() == 37 * 51 and h.dtype == np.int64 and len(h) == 24


def test_a_sample_against_itself_or_its_permutation_is_zero():
    rng = np.random.default_rng(1)
    x = bernoulli(rng, 64, np.full(30, 0.4))
    assert mmd2(x, x) == 0.0 and log_mmd2(x, x) == -math.inf
    assert mmd2(x, x[rng.permutation(64)]) == 0.0


def test_two_samples_of_one_distribution_sit_at_the_v_statistic_floor():
    """E MMD² = (2/N)(1 − E k); for a product of Bernoulli(p), E k = (1 − q + q e^{−1/D})^D with
    q = 2p(1 − p), the chance two draws differ in a coordinate."""
    rng = np.random.default_rng(2)
    n, d, p = 200, 40, 0.3
    q = 2 * p * (1 - p)
    floor = v_statistic_floor((1 - q + q * math.exp(-1 / d)) ** d, n)
    values = [mmd2(bernoulli(rng, n, np.full(d, p)), bernoulli(rng, n, np.full(d, p))) for _ in range(40)]
    # the mean of 40 draws within 4 standard errors of the floor
    assert abs(np.mean(values) - floor) < 4 * np.std(values, ddof=1) / math.sqrt(40)


def test_grows_with_a_known_shift():
    rng = np.random.default_rng(3)
    data = bernoulli(rng, 300, np.full(50, 0.5))
    values = [
        log_mmd2(data, bernoulli(rng, 300, np.full(50, 0.5 + shift))) for shift in (0.0, 0.1, 0.2, 0.35)
    ]
    assert values == sorted(values) and values[-1] - values[0] > 3


@pytest.mark.parametrize(
    "x, message",
    [
        (np.array([[1, -1], [1, 1]], dtype=np.float32), "0/1 values"),
        (np.zeros((0, 2), dtype=np.float32), "non-empty"),
        (np.zeros((3, 3), dtype=np.float32), "differ in width"),
    ],
)
def test_bad_input_is_one_line(x, message):
    with pytest.raises(RbmlabError, match=message):
        mmd2(x, np.zeros((2, 2), dtype=np.float32))


def test_the_evaluator_scores_good_samplers_near_exact_samples_and_far_from_noise():
    """evaluator=mmd on a 10-site Ising model against exact samples of it: Gibbs after 30 sweeps
    scores like a second exact sample (both near the V-statistic floor); uniform noise (0
    sweeps) is far above."""
    from rbmlab.data.batch import Batch
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.evaluators.base import Context
    from rbmlab.models.ising import fully_connected, sample_exact

    model = fully_connected(
        10, rng=np.random.default_rng(0), coupling_std=0.6, field_std=0.5, spins="pm1", dtype="float64"
    )
    data = sample_exact(model, np.random.default_rng(1), 2000)
    reference = log_mmd2((data + 1) / 2, (sample_exact(model, np.random.default_rng(2), 2000) + 1) / 2)

    def score(sweeps):
        evaluator = EVALUATORS.build(
            EVALUATORS.parse({"name": "mmd", "sampler": "gibbs", "sweeps": sweeps, "chunk": 700})
        )
        return evaluator.evaluate(
            model, {"test": Batch(data)}, Context(rng=np.random.default_rng(3), final=True)
        )

    good, short, noise = (score(s)["test_log_mmd2"] for s in (30, 2, 0))
    # near the floor log MMD² varies by ~±0.7 between samples; 2 sweeps (about −6.3) do not pass
    assert good < reference + 1.0 and short > reference + 1.5 and noise > reference + 4
