"""evaluator=recognised: the classifier's probabilities, the recognised share and the effective
number of classes against hand-computed values, and the whole evaluator on a model whose draws
are known."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.base import Context
from rbmlab.evaluators.feature_classifier import fit_classifiers
from rbmlab.evaluators.recognised import class_probabilities, effective_classes, recognised_percent
from rbmlab.models.rbm import RBM

P = np.array([[0.95, 0.05, 0.0], [0.5, 0.5, 0.0], [0.0, 0.1, 0.9], [0.0, 0.0, 1.0]])


def test_recognised_share_and_effective_classes_by_hand():
    assert recognised_percent(P, 0.9) == 75.0          # rows 0, 2, 3 (0.9 counts: at least)
    third = 1 / 3
    assert effective_classes(P, 0.9) == pytest.approx(math.exp(-(third * math.log(third)
                                                                 + 2 * third * math.log(2 * third))))
    assert recognised_percent(P, 0.5) == 100.0 and effective_classes(P, 0.5) == pytest.approx(2.0)
    assert recognised_percent(P, 0.99) == 25.0 and effective_classes(P, 0.99) == pytest.approx(1.0)
    assert effective_classes(P[1:2], 0.9) == 0.0        # none recognised
    uniform = np.eye(10)
    assert effective_classes(uniform, 0.9) == pytest.approx(10.0)


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


def _digits(n=40):
    """Two 'digits' on 12 pixels: the left half on (label 0) or the right half (label 1)."""
    left = np.r_[np.ones(6), np.zeros(6)]
    x = np.stack([left, 1 - left] * (n // 2))
    return Batch(x, np.tile([0, 1], n // 2))


def _evaluate(model, **options):
    node = {"name": "recognised", "sampler": "block_gibbs", "sweeps": 3, "n_samples": 50, **options}
    evaluator = EVALUATORS.build(EVALUATORS.parse(node))
    data = _digits()
    return evaluator.evaluate(model, {"test": data}, Context(rng=np.random.default_rng(1), final=True, train=data))


def _model(visible_bias):
    return RBM(np.zeros((12, 2)), np.asarray(visible_bias, dtype=np.float64), np.zeros(2))


def test_draws_of_one_digit_are_all_recognised_as_one_class():
    m = _evaluate(_model(np.r_[np.full(6, 30.0), np.full(6, -30.0)]))     # every draw is the left digit
    assert m == {"test_recognised": 100.0, "test_classes": pytest.approx(1.0), "test_data_recognised": 100.0}


def test_noise_is_not_recognised_and_the_confidence_option_is_read():
    noise = _model(np.zeros(12))                          # independent fair coins: mostly ambiguous
    default = _evaluate(noise)
    loose = _evaluate(noise, confidence=0.5)             # every draw passes a 0.5 threshold of two classes
    assert default["test_recognised"] < 50.0 and default["test_data_recognised"] == 100.0
    assert loose["test_recognised"] == 100.0 and 1.5 < loose["test_classes"] <= 2.0   # both classes drawn
    strong = _evaluate(noise, C=1e-4)                    # a classifier shrunk to the prior: nothing confident
    assert strong["test_recognised"] == 0.0 and strong["test_data_recognised"] == 0.0


def test_refusals_are_one_line():
    evaluator = EVALUATORS.build(EVALUATORS.parse({"name": "recognised", "sampler": "block_gibbs"}))
    model = _model(np.zeros(12))
    with pytest.raises(RbmlabError, match="^evaluator=recognised: needs the training set"):
        evaluator.evaluate(model, {"test": _digits()}, Context(rng=np.random.default_rng(1), final=True))
    for key, value in (("confidence", 0.0), ("confidence", 1.5), ("C", 0.0)):
        with pytest.raises(RbmlabError, match=f"evaluator.{key}"):
            EVALUATORS.parse({"name": "recognised", key: value})
