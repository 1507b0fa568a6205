"""``evaluator=variety``: are a sampler's draws as varied as the data, and near it? (pmp App. B.3:
the PMP-trained RBM on the MNIST 2s "produces a rich variety of samples, with different shapes as
in the MNIST dataset".) A proxy chosen here: the paper shows ten samples and says it in words.

``n_samples`` draws (``sweeps`` steps of ``sampler`` from fresh uniform states, as ``evaluator=mmd``;
fresh draws for each of ``splits``) against each held-out split. Written per split:

- ``<split>_spread``: the mean squared distance (Hamming, for {0, 1} pixels) between two draws over
  that between two of the split's examples — 1: as varied as the data; near 0: a few shapes
  repeated; far above 1: scattered beyond the data (noise);
- ``<split>_near``: % of draws whose nearest training image is within the ``quantile`` of the
  split's examples' distances to theirs (as ``evaluator=recognised``: varied noise is not variety);
- ``<split>_distinct``: % of draws that no earlier draw repeats exactly;
- ``<split>_copies``: % of draws equal to a training image.

Unlike ``evaluator=recognised`` it needs no labels, so it scores a model of one digit class."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.backend import to_numpy
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.evaluators.recognised import NearDataConfig, near_data, percent
from rbmlab.evaluators.sampling import SamplingEvaluator, as_binary
from rbmlab.validation import option


@dataclass
class VarietyConfig(NearDataConfig):
    name: str = option("variety", "evaluator")


def pair_distance_sum(x: np.ndarray) -> tuple[float, int]:
    """(sum over ordered pairs of distinct rows of ``x`` of their squared distance, number of such
    pairs), in closed form: sum_{i,k} ||x_i - x_k||² = 2 n sum_i ||x_i||² - 2 ||sum_i x_i||²."""
    x = np.asarray(x, dtype=np.float64)
    n = x.shape[0]
    total = 2.0 * n * float(np.einsum("ij,ij->", x, x)) - 2.0 * float(np.square(x.sum(axis=0)).sum())
    return total, n * (n - 1)


def mean_pair_distance(x: np.ndarray) -> float:
    """Mean squared distance between two distinct rows of ``x`` (nan for fewer than two rows)."""
    total, pairs = pair_distance_sum(x)
    return total / pairs if pairs else float("nan")


def distinct_share(x: np.ndarray) -> float:
    """% of the rows of ``x`` that no earlier row repeats exactly."""
    return 100.0 * len(np.unique(x, axis=0)) / len(x) if len(x) else 0.0


class Variety(SamplingEvaluator):
    """Sample variety (pmp App. B.3, a proxy chosen here): the spread of a sampler's draws against the
    data's, the share near the data, distinct and copied from the training set.

    Registered as ``variety``; options in :class:`VarietyConfig`.
    """

    config_class = VarietyConfig
    metrics = (
        MetricSpec(
            "spread",
            "ratio",
            True,
            label="spread of the draws over the data's",
            description="mean squared distance between two draws over that between two "
            "of the split's examples (1: as varied as the data)",
            best_at=1.0,
        ),
        MetricSpec(
            "near",
            "%",
            True,
            label="draws near the data",
            description="percentage of draws whose nearest training image is within "
            "the split's quantile of distances",
        ),
        MetricSpec(
            "distinct",
            "%",
            True,
            label="distinct draws",
            description="percentage of draws that no earlier draw repeats exactly",
        ),
        MetricSpec(
            "copies",
            "%",
            False,
            label="draws that copy a training image",
            description="percentage of draws equal to a training image",
        ),
    )

    def evaluate(self, model, splits, context):
        if context.train is None:
            raise RbmlabError("evaluator=variety: needs the training set (its nearest images)")
        cfg, units = self.config, model.visible_units
        pixels = lambda x: to_numpy(as_binary(units, x)).astype(np.float64)  # noqa: E731
        train = pixels(context.train.inputs)
        metrics = {}
        for name, batch in splits.items():
            examples = pixels(batch.inputs)
            if examples.shape[0] < 2 or self.n_drawn(examples.shape[0]) < 2:
                raise RbmlabError(
                    f"evaluator=variety: the {name} split has {examples.shape[0]} "
                    f"example(s) and {self.n_drawn(examples.shape[0])} draw(s); a spread "
                    "needs at least two of each"
                )
            if mean_pair_distance(examples) == 0:
                raise RbmlabError(
                    f"evaluator=variety: the {name} split's examples are all one image; "
                    "their spread, the yardstick, is 0"
                )
            drawn = pixels(self.samples(model, self.n_drawn(examples.shape[0]), context.rng))
            radius, _, d_drawn = near_data(examples, drawn, train, cfg.quantile)
            metrics[f"{name}_spread"] = mean_pair_distance(drawn) / mean_pair_distance(examples)
            metrics[f"{name}_near"] = percent(d_drawn <= radius)
            metrics[f"{name}_distinct"] = distinct_share(drawn)
            metrics[f"{name}_copies"] = percent(d_drawn == 0)
        return metrics

    def headline(self, metrics, split):
        return (
            f"{split} draws: spread {metrics[f'{split}_spread']:.3f} of the data's, near the data "
            f"{metrics[f'{split}_near']:.1f} %, distinct {metrics[f'{split}_distinct']:.1f} %"
        )
