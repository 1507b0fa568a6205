"""``evaluator=recognised``: how many of a sampler's draws look like a digit of the data and a
classifier names, and how many classes they spread over (pmp Sec 5.5: "able to train an RBM and
sample recognizable MNIST-like digits from it").

A multinomial logistic regression on the pixels (scikit-learn, L2 strength 1/``C``, lbfgs) is
fitted on the training set's images and labels. ``n_samples`` draws (``sweeps`` steps of
``sampler`` from fresh uniform states, as ``evaluator=mmd``; fresh draws for each of ``splits``)
are scored against each split (held-out examples: valid or test). A draw is *recognised* when

- it is MNIST-like: its Hamming distance to the nearest training image is at most the
  ``quantile`` of the split's examples' distances to theirs (a linear classifier alone is
  confident on noise: it scored half the draws of noise-making models ≥ 0.9), and
- the classifier names it: its top class probability is at least ``confidence``.

Written per split: ``<split>_recognised`` (% of draws), ``<split>_near`` (% of draws MNIST-like,
whatever the classifier says), ``<split>_copies`` (% of draws that are a training image exactly:
a model that memorised its data would pass the rule, this tells), ``<split>_classes`` (exp of the
entropy of the recognised draws' predicted classes: 1 when all are one digit, 10 when the ten are
equally frequent, 0 when none is recognised) and ``<split>_data_recognised`` (the split's own
examples under the same rule, the yardstick; the same examples set the radius, so at least
``quantile`` of them are near by construction, and it reads as ``quantile`` times the classifier's
confident share). The radius depends on the training set's size: compare within one tier.

A proxy chosen here (the paper shows samples and says it in words): it makes a gallery's claim a
number per seed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.backend import to_numpy
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.feature_classifier import fit_classifiers, labels_of
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.evaluators.mmd import squared_distances
from rbmlab.evaluators.sampling import SamplingConfig, SamplingEvaluator, as_binary
from rbmlab.limits import EVALUATION_STEPS
from rbmlab.validation import invalid, option


@dataclass
class NearDataConfig(SamplingConfig):
    """The options of an evaluator that holds draws to the data's own nearest-image distances
    (recognised, variety): ``quantile`` of the held-out split's distances sets the radius."""

    quantile: float = option(
        0.95,
        "a draw is near the data when its distance to the nearest "
        "training image is at most this quantile of the split's "
        "examples' distances",
        lo=0.0,
        hi=1.0,
    )

    def check(self) -> None:
        super().check()
        if "train" in self.splits:
            raise invalid(
                "splits",
                "the yardstick needs held-out examples (valid or test): a "
                "training image is at distance 0 from itself",
            )


@dataclass
class RecognisedConfig(NearDataConfig):
    name: str = option("recognised", "evaluator")
    confidence: float = option(
        0.9,
        "a draw is recognised when its top class probability is at least this",
        lo=0.0,
        hi=1.0,
        open_lo=True,
    )
    C: float = option(1.0, "inverse L2 strength of the pixel classifier", lo=0.0, open_lo=True)
    max_iter: int = option(1000, "lbfgs iterations of the classifier's fit", lo=1, hi=EVALUATION_STEPS)


def nearest_distances(x: np.ndarray, reference: np.ndarray, block: int = 1024) -> np.ndarray:
    """Hamming distance of each {0, 1} row of ``x`` to its nearest row of ``reference`` (one
    matmul per block of rows; exact in float32 below 2**24 pixels)."""
    ref = reference.astype(np.float32)
    return np.concatenate(
        [
            np.rint(squared_distances(x[i : i + block].astype(np.float32), ref).min(axis=1))
            for i in range(0, x.shape[0], block)
        ]
        or [np.zeros(0)]
    )


def near_data(examples: np.ndarray, drawn: np.ndarray, train: np.ndarray, quantile: float):
    """(radius, the examples' and the draws' nearest-training-image distances): the radius is the
    ``quantile`` of the held-out examples' own distances."""
    d_examples = nearest_distances(examples, train)
    return float(np.quantile(d_examples, quantile)), d_examples, nearest_distances(drawn, train)


def class_probabilities(fit, x: np.ndarray) -> np.ndarray:
    """Softmax of the fitted classifier's scores, (N, classes)."""
    coef, intercept, _ = fit
    scores = x @ coef.T + intercept
    if scores.shape[1] == 1:  # scikit-learn's two-class form: one score column
        scores = np.hstack([np.zeros_like(scores), scores])
    scores -= scores.max(axis=1, keepdims=True)
    p = np.exp(scores)
    return p / p.sum(axis=1, keepdims=True)


def recognised(p: np.ndarray, distance: np.ndarray, confidence: float, radius: float) -> np.ndarray:
    """Rows whose top class probability is ≥ ``confidence`` and whose nearest-image distance is
    ≤ ``radius`` (bool mask)."""
    return (p.max(axis=1) >= confidence) & (distance <= radius)


def percent(mask: np.ndarray) -> float:
    return float(100.0 * np.mean(mask)) if mask.size else 0.0


def effective_classes(p: np.ndarray) -> float:
    """exp(entropy) of the predicted classes of the rows of ``p``; 0 without rows."""
    if p.shape[0] == 0:
        return 0.0
    counts = np.bincount(p.argmax(axis=1), minlength=p.shape[1])
    share = counts[counts > 0] / p.shape[0]
    return float(np.exp(-(share * np.log(share)).sum()))


class Recognised(SamplingEvaluator):
    """Recognisable samples (pmp Sec. 5.5): the share of a sampler's draws that are near the data
    (Hamming distance to the nearest training image within a ``quantile``) and that a pixel logistic
    regression names with probability at least ``confidence``, and the classes they spread over.

    Registered as ``recognised``; options in :class:`RecognisedConfig`.
    """

    config_class = RecognisedConfig
    metrics = (
        MetricSpec(
            "recognised",
            "%",
            True,
            label="draws recognised",
            description="percentage of model draws both MNIST-like (nearest training "
            "image within the split's quantile) and classified with top "
            "probability ≥ confidence",
        ),
        MetricSpec(
            "near",
            "%",
            True,
            label="draws near the data",
            description="percentage of model draws whose nearest training image is "
            "within the split's quantile of distances",
        ),
        MetricSpec(
            "copies",
            "%",
            False,
            label="draws that copy a training image",
            description="percentage of model draws equal to a training image",
        ),
        MetricSpec(
            "classes",
            "classes",
            True,
            label="effective classes of the recognised draws",
            description="exp of the entropy of the recognised draws' predicted classes",
        ),
        MetricSpec(
            "data_recognised",
            "%",
            True,
            label="examples recognised",
            description="the recognised percentage of the split's own examples (the yardstick)",
        ),
    )

    def evaluate(self, model, splits, context):
        if context.train is None:
            raise RbmlabError("evaluator=recognised: needs the training set (its labels)")
        cfg, units = self.config, model.visible_units
        pixels = lambda x: to_numpy(as_binary(units, x)).astype(np.float64)  # noqa: E731
        train = pixels(context.train.inputs)
        fit = fit_classifiers(train, labels_of(context.train, "train"), [cfg.C], cfg.max_iter)[cfg.C]
        metrics = {}
        for name, batch in splits.items():
            examples = pixels(batch.inputs)
            if examples.shape[0] == 0:
                raise RbmlabError(
                    f"evaluator=recognised: the {name} split is empty (its examples set "
                    "the distance a draw must be within)"
                )
            drawn = pixels(self.samples(model, self.n_drawn(examples.shape[0]), context.rng))
            radius, d_examples, d_drawn = near_data(examples, drawn, train, cfg.quantile)
            p_drawn = class_probabilities(fit, drawn)
            kept = recognised(p_drawn, d_drawn, cfg.confidence, radius)
            metrics[f"{name}_recognised"] = percent(kept)
            metrics[f"{name}_near"] = percent(d_drawn <= radius)
            metrics[f"{name}_copies"] = percent(d_drawn == 0)
            metrics[f"{name}_classes"] = effective_classes(p_drawn[kept])
            metrics[f"{name}_data_recognised"] = percent(
                recognised(class_probabilities(fit, examples), d_examples, cfg.confidence, radius)
            )
        return metrics

    def headline(self, metrics, split):
        return (
            f"{split} draws recognised: {metrics[f'{split}_recognised']:.1f} % (near the data "
            f"{metrics[f'{split}_near']:.1f} %), {metrics[f'{split}_classes']:.2f} effective classes; "
            f"the split's examples {metrics[f'{split}_data_recognised']:.1f} %"
        )
