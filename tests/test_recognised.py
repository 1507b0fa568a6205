"""evaluator=recognised: the classifier's probabilities, the nearest-image distances, the
recognised share and the effective number of classes against hand-computed values, and the
whole evaluator on models whose draws are known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.base import Context
from rbmlab.evaluators.feature_classifier import fit_classifiers
from rbmlab.evaluators.recognised import (
    class_probabilities,
    effective_classes,
    nearest_distances,
    percent,
    recognised,
)
from rbmlab.models.rbm import RBM

P = np.array([[0.95, 0.05, 0.0], [0.5, 0.5, 0.0], [0.0, 0.1, 0.9], [0.0, 0.0, 1.0]])


def test_recognised_share_and_effective_classes_by_hand():
    near = np.array([0, 0, 0, 5])
    assert percent(recognised(P, near, 0.9, 5)) == 75.0  # rows 0, 2, 3 (0.9 counts: at least)
    assert percent(recognised(P, near, 0.9, 4)) == 50.0  # row 3 too far
    assert percent(recognised(P, near, 0.5, 5)) == 100.0 and percent(recognised(P, near, 0.99, 5)) == 25.0
    third = 1 / 3
    assert effective_classes(P[[0, 2, 3]]) == pytest.approx(
        math.exp(-(third * math.log(third) + 2 * third * math.log(2 * third)))
    )
    assert effective_classes(P) == pytest.approx(2.0) and effective_classes(P[:0]) == 0.0
    assert effective_classes(np.eye(10)) == pytest.approx(10.0)


def test_nearest_distances_are_the_hamming_distance_to_the_closest_row_in_any_block():
    rng = np.random.default_rng(0)
    x, ref = rng.integers(0, 2, (37, 11)), rng.integers(0, 2, (23, 11))
    brute = np.abs(x[:, None, :] - ref[None, :, :]).sum(axis=2).min(axis=1)
    for block in (1, 5, 1024):
        np.testing.assert_array_equal(nearest_distances(x, ref, block), brute)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_the_probabilities_are_scikit_learns(n_classes):
    """class_probabilities of the kept coefficients equals the fitted classifier's predict_proba,
    in the multinomial form and in scikit-learn's two-class form (one score column)."""
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(0)
    x = rng.integers(0, 2, (60, 7)).astype(np.float64)
    y = rng.integers(0, n_classes, 60)
    fit = fit_classifiers(x, y, [0.5], 1000)[0.5]
    clf = LogisticRegression(C=0.5, max_iter=1000).fit(x, y)
    np.testing.assert_allclose(class_probabilities(fit, x), clf.predict_proba(x), atol=1e-6)


def _digits(n=40, width=12):
    """Two 'digits' on ``width`` pixels: the left half on (label 0) or the right half (label 1)."""
    left = np.r_[np.ones(width // 2), np.zeros(width // 2)]
    x = np.stack([left, 1 - left] * (n // 2))
    return Batch(x, np.tile([0, 1], n // 2))


def _evaluate(model, **options):
    node = {"name": "recognised", "sampler": "block_gibbs", "sweeps": 3, "n_samples": 50, **options}
    evaluator = EVALUATORS.build(EVALUATORS.parse(node))
    data = _digits(width=model.n_visible)
    return evaluator.evaluate(
        model, {"test": data}, Context(rng=np.random.default_rng(1), final=True, train=data)
    )


def _model(visible_bias):
    visible_bias = np.asarray(visible_bias, dtype=np.float64)
    return RBM(np.zeros((visible_bias.size, 2)), visible_bias, np.zeros(2))


def test_draws_of_one_digit_are_all_recognised_as_one_class():
    m = _evaluate(_model(np.r_[np.full(6, 30.0), np.full(6, -30.0)]))  # every draw is the left digit
    assert m == {
        "test_recognised": 100.0,
        "test_near": 100.0,
        "test_copies": 100.0,
        "test_classes": pytest.approx(1.0),
        "test_data_recognised": 100.0,
    }


def test_confident_noise_is_not_recognised_and_the_options_are_read():
    """Fair coins on 40 pixels: the classifier is sure of most draws (a linear score of noise is
    large), but no draw is as near a training image as the examples are (distance 0 here)."""
    noise = _model(np.zeros(40))
    loose = _evaluate(noise, confidence=0.6)
    assert loose["test_near"] == 0.0 and loose["test_recognised"] == 0.0 and loose["test_classes"] == 0.0
    assert loose["test_copies"] == 0.0 and loose["test_data_recognised"] == 100.0
    far = _model(np.r_[np.full(20, 30.0), np.full(19, -30.0), 30.0])  # the left digit, one pixel wrong
    assert _evaluate(far)["test_near"] == 0.0
    evaluator = EVALUATORS.build(
        EVALUATORS.parse({"name": "recognised", "sampler": "block_gibbs", "n_samples": 50, "quantile": 1.0})
    )
    digits = _digits(width=40)
    mixed = Batch(
        np.vstack([digits.inputs, far_row := np.r_[np.ones(20), np.zeros(19), 1.0]]), np.r_[digits.targets, 0]
    )  # an example one pixel off
    wide = evaluator.evaluate(
        far, {"test": mixed}, Context(rng=np.random.default_rng(1), final=True, train=digits)
    )
    assert far_row.sum() == 21 and wide["test_near"] == 100.0  # quantile 1: the farthest example's distance
    assert wide["test_copies"] == 0.0
    assert wide["test_recognised"] == 100.0 and wide["test_classes"] == pytest.approx(1.0)
    strong = _evaluate(_model(np.r_[np.full(6, 30.0), np.full(6, -30.0)]), C=1e-4)  # shrunk to the prior
    assert (
        strong["test_recognised"] == 0.0
        and strong["test_near"] == 100.0
        and strong["test_data_recognised"] == 0.0
    )


def test_refusals_are_one_line():
    evaluator = EVALUATORS.build(EVALUATORS.parse({"name": "recognised", "sampler": "block_gibbs"}))
    model = _model(np.zeros(12))
    with pytest.raises(RbmlabError, match="^evaluator=recognised: needs the training set"):
        evaluator.evaluate(model, {"test": _digits()}, Context(rng=np.random.default_rng(1), final=True))
    for key, value in (
        ("confidence", 0.0),
        ("confidence", 1.5),
        ("C", 0.0),
        ("quantile", 1.5),
        ("splits", ["train"]),
    ):
        with pytest.raises(RbmlabError, match=f"evaluator.{key}"):
            EVALUATORS.parse({"name": "recognised", key: value})


@pytest.mark.parametrize("quantile, near", [(0.5, 100.0), (0.25, 0.0)])
def test_the_radius_interpolates_between_the_examples_distances(quantile, near):
    """Held-out examples at distances 0 and 2 from the training images: the median radius is 1,
    which a draw one pixel off passes; the lower quartile's (0.5) it does not."""
    train = _digits()
    left = train.inputs[0]
    test = Batch(np.stack([left, np.r_[1 - left[:2], left[2:]]]), np.array([0, 0]))
    one_off = _model(np.where(np.r_[1 - left[:1], left[1:]] > 0, 30.0, -30.0))
    evaluator = EVALUATORS.build(
        EVALUATORS.parse(
            {"name": "recognised", "sampler": "block_gibbs", "n_samples": 20, "quantile": quantile}
        )
    )
    m = evaluator.evaluate(
        one_off, {"test": test}, Context(rng=np.random.default_rng(1), final=True, train=train)
    )
    assert m["test_near"] == near and m["test_copies"] == 0.0


def test_an_empty_split_is_refused():
    evaluator = EVALUATORS.build(
        EVALUATORS.parse({"name": "recognised", "sampler": "block_gibbs", "n_samples": 5})
    )
    empty = Batch(np.zeros((0, 12)), np.zeros(0))
    with pytest.raises(RbmlabError, match="^evaluator=recognised: the test split is empty"):
        evaluator.evaluate(
            _model(np.zeros(12)),
            {"test": empty},
            Context(rng=np.random.default_rng(1), final=True, train=_digits()),
        )
