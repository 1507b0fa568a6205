"""``evaluator=recognised``: how many of a sampler's draws a digit classifier recognises, and how
many classes they spread over (pmp Sec 5.5: "able to train an RBM and sample recognizable
MNIST-like digits from it").

A multinomial logistic regression on the pixels (scikit-learn, L2 strength 1/``C``, lbfgs) is
fitted on the training set's images and labels. ``n_samples`` draws (``sweeps`` steps of
``sampler`` from fresh uniform states, as ``evaluator=mmd``) are classified; for each of
``splits``:

- ``<split>_recognised``: the percentage of draws whose top class probability is at least
  ``confidence``;
- ``<split>_classes``: the effective number of classes among the recognised draws, exp of the
  entropy of their predicted classes (1 when every one is the same digit, 10 when all ten are
  equally frequent; 0 when none is recognised);
- ``<split>_data_recognised``: the first as measured on the split's own examples, the yardstick
  (in-sample for the train split: the classifier was fitted on it).

A proxy of "recognisable", chosen here (the paper shows the samples and says it in words); it
makes a gallery's claim a number per seed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.backend import to_numpy
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.feature_classifier import fit_classifiers, labels_of
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.evaluators.sampling import SamplingConfig, SamplingEvaluator, as_binary
from rbmlab.limits import EVALUATION_STEPS
from rbmlab.validation import option


@dataclass
class RecognisedConfig(SamplingConfig):
    name: str = option("recognised", "evaluator")
    confidence: float = option(0.9, "a draw is recognised when its top class probability is at "
                                    "least this", lo=0.0, hi=1.0, open_lo=True)
    C: float = option(1.0, "inverse L2 strength of the pixel classifier", lo=0.0, open_lo=True)
    max_iter: int = option(1000, "lbfgs iterations of the classifier's fit", lo=1, hi=EVALUATION_STEPS)


def class_probabilities(fit, x: np.ndarray) -> np.ndarray:
    """Softmax of the fitted classifier's scores, (N, classes)."""
    coef, intercept, _ = fit
    scores = x @ coef.T + intercept
    if scores.shape[1] == 1:                       # scikit-learn's two-class form: one score column
        scores = np.hstack([np.zeros_like(scores), scores])
    scores -= scores.max(axis=1, keepdims=True)
    p = np.exp(scores)
    return p / p.sum(axis=1, keepdims=True)


def recognised_percent(p: np.ndarray, confidence: float) -> float:
    """Percentage of rows of ``p`` whose largest probability is ≥ ``confidence``."""
    return float(100.0 * np.mean(p.max(axis=1) >= confidence))


def effective_classes(p: np.ndarray, confidence: float) -> float:
    """exp(entropy) of the predicted classes of the rows recognised at ``confidence``; 0 if none."""
    kept = p[p.max(axis=1) >= confidence]
    if kept.shape[0] == 0:
        return 0.0
    counts = np.bincount(kept.argmax(axis=1), minlength=p.shape[1])
    share = counts[counts > 0] / kept.shape[0]
    return float(np.exp(-(share * np.log(share)).sum()))


class Recognised(SamplingEvaluator):
    config_class = RecognisedConfig
    metrics = (MetricSpec("recognised", "%", True, label="draws recognised",
                          description="percentage of model draws that a logistic regression on the "
                                      "training images classifies with top probability ≥ confidence"),
               MetricSpec("classes", "classes", True, label="effective classes of the recognised draws",
                          description="exp of the entropy of the recognised draws' predicted classes"),
               MetricSpec("data_recognised", "%", True, label="examples recognised",
                          description="the recognised percentage of the split's own examples (the "
                                      "yardstick; in-sample for train)"))

    def evaluate(self, model, splits, context):
        if context.train is None:
            raise RbmlabError("evaluator=recognised: needs the training set (its labels)")
        cfg, units = self.config, model.visible_units
        pixels = lambda x: to_numpy(as_binary(units, x)).astype(np.float64)   # noqa: E731
        fit = fit_classifiers(pixels(context.train.inputs), labels_of(context.train, "train"),
                              [cfg.C], cfg.max_iter)[cfg.C]
        metrics = {}
        for name, batch in splits.items():
            labels_of(batch, name)                                   # a split without labels: refused
            drawn = class_probabilities(fit, pixels(self.samples(model, self.n_drawn(batch.inputs.shape[-2]),
                                                                 context.rng)))
            metrics[f"{name}_recognised"] = recognised_percent(drawn, cfg.confidence)
            metrics[f"{name}_classes"] = effective_classes(drawn, cfg.confidence)
            metrics[f"{name}_data_recognised"] = recognised_percent(
                class_probabilities(fit, pixels(batch.inputs)), cfg.confidence)
        return metrics

    def headline(self, metrics, split):
        return (f"{split} draws recognised: {metrics[f'{split}_recognised']:.1f} % (top class "
                f"probability ≥ {self.config.confidence:g}), {metrics[f'{split}_classes']:.2f} effective "
                f"classes; the split's examples {metrics[f'{split}_data_recognised']:.1f} %")
