"""evaluator=variety: the pairwise spread, the distinct share and the near-data rule against
hand-computed values, and the whole evaluator on models whose draws are known."""

from __future__ import annotations

import numpy as np
import pytest

from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.base import Context
from rbmlab.evaluators.variety import distinct_share, mean_pair_distance, pair_distance_sum
from rbmlab.models.rbm import RBM


def test_the_pair_distances_in_closed_form_are_the_brute_force_ones():
    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, (9, 7)).astype(np.float64)
    brute = sum(((x[i] - x[k]) ** 2).sum() for i in range(9) for k in range(9) if i != k)
    total, pairs = pair_distance_sum(x)
    assert total == pytest.approx(brute, rel=1e-12) and pairs == 72
    assert mean_pair_distance(np.array([[0.0, 0.0], [1.0, 1.0], [1.0, 0.0]])) == pytest.approx(
        (2 + 1 + 1) / 3
    )
    assert np.isnan(mean_pair_distance(x[:1]))


def test_distinct_share_counts_rows_no_earlier_row_repeats():
    assert distinct_share(np.array([[0, 1], [0, 1], [1, 1], [0, 1]])) == 50.0
    assert distinct_share(np.zeros((0, 2))) == 0.0


def _digits(n=40, width=12):
    """Two 'digits' on ``width`` pixels: the left half on or the right half."""
    left = np.r_[np.ones(width // 2), np.zeros(width // 2)]
    return Batch(np.stack([left, 1 - left] * (n // 2)), np.tile([0, 1], n // 2))


def _model(visible_bias):
    visible_bias = np.asarray(visible_bias, dtype=np.float64)
    return RBM(np.zeros((visible_bias.size, 2)), visible_bias, np.zeros(2))


def _evaluate(model, test=None, **options):
    node = {"name": "variety", "sampler": "block_gibbs", "sweeps": 3, "n_samples": 50, **options}
    evaluator = EVALUATORS.build(EVALUATORS.parse(node))
    train = _digits(width=model.n_visible)
    return evaluator.evaluate(
        model, {"test": test or train}, Context(rng=np.random.default_rng(1), final=True, train=train)
    )


def test_one_shape_repeated_has_no_spread_and_noise_is_scattered_far_from_the_data():
    one = _evaluate(_model(np.r_[np.full(6, 30.0), np.full(6, -30.0)]))  # every draw the left digit
    assert one == {"test_spread": 0.0, "test_near": 100.0, "test_distinct": 2.0, "test_copies": 100.0}
    noise = _evaluate(_model(np.zeros(40)))  # fair coins on 40 pixels
    # the examples: half the pairs 40 apart (left vs right), so their mean ≈ 20.5; coins: 20 expected
    examples = mean_pair_distance(_digits(width=40).inputs)
    assert examples == pytest.approx(40 * 20 * 40 / (40 * 39))
    assert noise["test_spread"] == pytest.approx(20 / examples, rel=0.1)
    assert noise["test_near"] == 0.0 and noise["test_copies"] == 0.0 and noise["test_distinct"] == 100.0


@pytest.mark.parametrize("quantile, near", [(0.5, 100.0), (0.25, 0.0)])
def test_the_near_radius_is_the_quantile_of_the_examples_distances(quantile, near):
    """Held-out examples at distances 0 and 2 from the training images: the median radius is 1,
    which a draw one pixel off passes; the lower quartile's (0.5) it does not."""
    left = _digits().inputs[0]
    test = Batch(np.stack([left, np.r_[1 - left[:2], left[2:]]]), np.array([0, 0]))
    one_off = _model(np.where(np.r_[1 - left[:1], left[1:]] > 0, 30.0, -30.0))
    m = _evaluate(one_off, test, n_samples=20, quantile=quantile)
    assert m["test_near"] == near and m["test_copies"] == 0.0 and m["test_spread"] == 0.0


def test_refusals_are_one_line():
    evaluator = EVALUATORS.build(
        EVALUATORS.parse({"name": "variety", "sampler": "block_gibbs", "n_samples": 5})
    )
    model = _model(np.zeros(12))
    with pytest.raises(RbmlabError, match="^evaluator=variety: needs the training set"):
        evaluator.evaluate(model, {"test": _digits()}, Context(rng=np.random.default_rng(1), final=True))
    with pytest.raises(RbmlabError, match="^evaluator=variety: the test split has 1 example"):
        evaluator.evaluate(
            model,
            {"test": Batch(np.zeros((1, 12)), np.zeros(1))},
            Context(rng=np.random.default_rng(1), final=True, train=_digits()),
        )
    with pytest.raises(RbmlabError, match="^evaluator=variety: the test split's examples are all one image"):
        evaluator.evaluate(
            model,
            {"test": Batch(np.zeros((3, 12)), np.zeros(3))},
            Context(rng=np.random.default_rng(1), final=True, train=_digits()),
        )
    single = EVALUATORS.build(EVALUATORS.parse({"name": "variety", "sampler": "block_gibbs", "n_samples": 1}))
    with pytest.raises(RbmlabError, match="and 1 draw"):
        single.evaluate(
            model, {"test": _digits()}, Context(rng=np.random.default_rng(1), final=True, train=_digits())
        )
    for key, value in (("quantile", 1.5), ("quantile", -0.1), ("splits", ["train"])):
        with pytest.raises(RbmlabError, match=f"evaluator.{key}"):
            EVALUATORS.parse({"name": "variety", key: value})
