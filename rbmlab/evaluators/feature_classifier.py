"""Classification error of a linear classifier on the model's hidden features (frank_wolfe Fig. 2).

Features are E[h | v] (``LatentFeatures``). A multinomial logistic regression (scikit-learn,
L2, lbfgs) is fitted on the training set's features and labels for each C in ``C`` (warm-started
from the smallest); the C with the lowest error on the ``valid`` split is kept (our choice; the
paper does not say how C was set), and each requested split's error is written as ``<split>_error``
in percent, with the chosen C as ``classifier_c``. Labels come from the dataset (MNIST, Caltech-101
Silhouettes keep theirs).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from rbmlab.backend import to_numpy
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.base import Evaluator, EvaluatorConfig
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.limits import EVALUATION_STEPS
from rbmlab.models.base import LatentFeatures
from rbmlab.validation import invalid, option


@dataclass
class FeatureClassifierConfig(EvaluatorConfig):
    name: str = option("test_error", "evaluator")
    splits: list[str] = option(
        ["test", "valid"],
        "splits whose error is written (valid chooses C)",
        choices=("train", "valid", "test"),
        label="splits scored",
    )
    C: list[float] = option(
        [0.01, 0.1, 1.0, 10.0, 100.0], "inverse L2 strengths tried; the best on valid is kept"
    )
    max_iter: int = option(1000, "lbfgs iterations per fit", lo=1, hi=EVALUATION_STEPS)

    def check(self) -> None:
        super().check()
        if not self.C or not all(isinstance(c, (int, float)) and c > 0 for c in self.C):
            raise invalid("C", f"must be a non-empty list of positive numbers, got {self.C!r}")
        if len(self.C) > 1 and "valid" not in self.splits:
            raise invalid(
                "C",
                f"choosing among {len(self.C)} values needs 'valid' in "
                "evaluator.splits (or give one value, e.g. evaluator.C=[1.0])",
            )


def features(model, x, chunk: int = 8192) -> np.ndarray:
    """E[h | x] on the host, chunked over rows."""
    return np.concatenate(
        [to_numpy(model.hidden_probs(x[i : i + chunk])) for i in range(0, x.shape[0], chunk)]
        or [to_numpy(model.hidden_probs(x[:0]))]
    )


def labels_of(batch, split: str) -> np.ndarray:
    if batch is None or batch.targets is None:
        raise RbmlabError(
            f"evaluator=test_error: the {split} split has no labels (use a labelled "
            "dataset: mnist, caltech101, ...)"
        )
    return to_numpy(batch.targets).ravel()


def fit_classifiers(x: np.ndarray, y: np.ndarray, Cs, max_iter: int):
    """One fitted LogisticRegression per C (ascending), each warm-started from the previous."""
    from sklearn.exceptions import ConvergenceWarning  # noqa: PLC0415
    from sklearn.linear_model import LogisticRegression  # noqa: PLC0415

    clf = LogisticRegression(max_iter=max_iter, warm_start=True)
    fitted = {}
    for C in sorted(Cs):
        clf.set_params(C=C)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(x, y)
        fitted[C] = (clf.coef_.copy(), clf.intercept_.copy(), clf.classes_)
    return fitted


def error_percent(fit, x: np.ndarray, y: np.ndarray) -> float:
    coef, intercept, classes = fit
    return float(100.0 * np.mean(classes[np.argmax(x @ coef.T + intercept, axis=1)] != y))


def majority_error(train_labels: np.ndarray, y: np.ndarray) -> float:
    """Error (%) of the classifier without features: the most frequent training label, which is
    what logistic regression on zero features (an intercept alone) predicts."""
    classes, counts = np.unique(train_labels, return_counts=True)
    return float(100.0 * np.mean(y != classes[np.argmax(counts)]))


class FeatureClassifier(Evaluator):
    """Test error of a linear classifier on the model's hidden features E[h | v] (frank_wolfe Fig. 2):
    multinomial logistic regression fitted on the training set, its C chosen on the valid split.

    Registered as ``test_error``; options (``splits``, ``C``, ``max_iter``) in
    :class:`FeatureClassifierConfig`.
    """

    config_class = FeatureClassifierConfig
    requires = (LatentFeatures,)
    metrics = (
        MetricSpec(
            "error",
            "%",
            False,
            description="test error (%) of logistic regression on E[h|v], fitted on the training set",
            label="classification error",
        ),
        MetricSpec(
            "classifier_c",
            "",
            True,
            per_split=False,
            description="the inverse L2 strength chosen on the valid split",
            label="classifier's inverse L2 strength C",
        ),
    )

    def evaluate(self, model, splits, context):
        if context.train is None:
            raise RbmlabError("evaluator=test_error: needs the training set (its labels)")
        cfg = self.config
        train = context.train
        no_features = model.hidden_probs(train.inputs[:1]).shape[-1] == 0  # frank_wolfe's q_0
        if no_features:  # the intercept alone
            return {
                **{
                    f"{name}_error": majority_error(labels_of(train, "train"), labels_of(b, name))
                    for name, b in splits.items()
                },
                "classifier_c": float("nan"),
            }
        fitted = fit_classifiers(
            features(model, train.inputs), labels_of(train, "train"), cfg.C, cfg.max_iter
        )
        scored = {name: (features(model, b.inputs), labels_of(b, name)) for name, b in splits.items()}
        best = (
            min(fitted, key=lambda C: error_percent(fitted[C], *scored["valid"]))
            if len(fitted) > 1
            else next(iter(fitted))
        )
        return {
            **{f"{name}_error": error_percent(fitted[best], *xy) for name, xy in scored.items()},
            "classifier_c": float(best),
        }

    def headline(self, metrics, split):
        return (
            f"{split} error (logistic regression on E[h|v], C={metrics['classifier_c']:g}): "
            f"{metrics[f'{split}_error']:.2f} %"
        )
