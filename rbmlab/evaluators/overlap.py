"""``evaluator=overlap``: train/test nearest-neighbour overlap of model samples, the memorisation
check (Yale et al. 2020, "Generation and evaluation of privacy preserving synthetic health data",
Neurocomputing; used for RBMs by Decelle et al.'s `rbms` library).

For a data set T and samples S of equal size n, with d_XY(i) the distance from row i of X to its
nearest row of Y (d_XX(i): nearest other row), the nearest-neighbour adversarial accuracy is

    AA_TS = ½ [ mean_i 1(d_TS(i) > d_TT(i)) + mean_i 1(d_ST(i) > d_SS(i)) ],

0.5 when samples and data are indistinguishable by nearest neighbours, → 0 when the samples copy
T (memorisation: each sample's nearest row is its original), → 1 when they sit apart from T.
Scored against the training set (train_aa) and each split (test_aa): the privacy loss is
test_aa − train_aa (> 0: closer to the training rows than to unseen ones). Distances are squared
Euclidean on {0, 1} coded units (the Hamming distance; ±1 spins are mapped to {0, 1} first) and
in unit values otherwise. The sets are the draws and the first n rows of train and of each split.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.backend import namespace, to_numpy
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.evaluators.mmd import BLOCK, squared_distances
from rbmlab.evaluators.sampling import SamplingConfig, SamplingEvaluator, as_binary
from rbmlab.limits import EXAMPLES
from rbmlab.units.requirements import DISCRETE
from rbmlab.validation import option


@dataclass
class OverlapConfig(SamplingConfig):
    name: str = option("overlap", "evaluator")
    n_samples: int = option(
        1000,
        "size of every compared set (draws, first rows of train and of "
        "each split), capped at the smallest; 0: the smallest",
        lo=0,
        hi=EXAMPLES,
    )


def nearest(x, y=None, block: int = BLOCK):
    """(d_xy, d_yx): for each row of ``x`` its squared distance to the nearest row of ``y``, and
    for each row of ``y`` to the nearest row of ``x`` (float64, host); one matmul per block pair.
    ``y`` None: within ``x``, each row's nearest *other* row (the diagonal left out), twice."""
    xp = namespace(x)
    same = y is None
    x = xp.asarray(x, dtype=xp.float64)
    y = x if same else xp.asarray(y, dtype=xp.float64)
    to_y = xp.full(x.shape[0], xp.inf)
    to_x = xp.full(y.shape[0], xp.inf)
    for i in range(0, x.shape[0], block):
        for j in range(0, y.shape[0], block):
            d = squared_distances(x[i : i + block], y[j : j + block])
            if same and i == j:
                d[xp.arange(d.shape[0]), xp.arange(d.shape[0])] = xp.inf
            to_y[i : i + block] = xp.minimum(to_y[i : i + block], d.min(axis=1))
            to_x[j : j + block] = xp.minimum(to_x[j : j + block], d.min(axis=0))
    return to_numpy(to_y), to_numpy(to_x)


def adversarial_accuracy(d_ts, d_tt, d_st, d_ss) -> float:
    """AA_TS of Yale et al. 2020 (module docstring) from the four nearest-neighbour distances."""
    return 0.5 * (float(np.mean(d_ts > d_tt)) + float(np.mean(d_st > d_ss)))


class Overlap(SamplingEvaluator):
    """Nearest-neighbour adversarial accuracy of model samples against the training set and each split
    (Yale et al. 2020), the memorisation check: 0.5 when samples and data are indistinguishable.

    Registered as ``overlap``; options in :class:`OverlapConfig`.
    """

    units = {"visible": DISCRETE}  # Hamming distances of the layer's columns (Potts: twice the codes')
    config_class = OverlapConfig
    metrics = (
        MetricSpec(
            "aa",
            "",
            True,
            best_at=0.5,
            description="nearest-neighbour adversarial accuracy of model samples against "
            "the set (Yale et al. 2020): 0.5 indistinguishable, near 0 copies",
            label="adversarial accuracy of samples",
        ),
        MetricSpec(
            "privacy_loss",
            "",
            False,
            best_at=0.0,
            description="adversarial accuracy against the split − against the training "
            "set: > 0 when samples sit closer to the training rows",
            label="privacy loss",
        ),
        MetricSpec(
            "nn_distance",
            "Hamming",
            False,
            description="mean distance from a sample to its nearest row of the set",
            label="sample-to-data nearest-neighbour distance",
        ),
        MetricSpec(
            "data_nn_distance",
            "Hamming",
            False,
            description="mean distance from a row of the split to its nearest training "
            "row (the reference for nn_distance)",
            label="split-to-training nearest-neighbour distance",
        ),
    )

    def evaluate(self, model, splits, context):
        train = context.train if context.train is not None else splits.get("train")
        if train is None:
            raise RbmlabError("evaluator=overlap: needs the training set")
        sets = {"train": train.inputs, **{k: b.inputs for k, b in splits.items() if k != "train"}}
        n = min(a.shape[-2] for a in sets.values())
        n = min(self.config.n_samples or n, n)
        units = model.visible_units
        coded = lambda a: as_binary(units, a) if len(getattr(units, "values", ())) == 2 else a  # noqa: E731
        drawn = coded(self.samples(model, n, context.rng))
        sets = {k: coded(a[:n]) for k, a in sets.items()}
        d_ss, _ = nearest(drawn)
        metrics = {}
        for name, data in sets.items():
            d_tt, _ = nearest(data)
            d_ts, d_st = nearest(data, drawn)
            metrics[f"{name}_aa"] = adversarial_accuracy(d_ts, d_tt, d_st, d_ss)
            metrics[f"{name}_nn_distance"] = float(np.mean(d_st))
            if name != "train":
                metrics[f"{name}_privacy_loss"] = metrics[f"{name}_aa"] - metrics["train_aa"]
                metrics[f"{name}_data_nn_distance"] = float(np.mean(nearest(data, sets["train"])[0]))
        return metrics

    def headline(self, metrics, split):
        text = f"{split} adversarial accuracy: {metrics[f'{split}_aa']:.4f}"
        loss = metrics.get(f"{split}_privacy_loss")
        return text + (
            f"; train {metrics['train_aa']:.4f}, privacy loss {loss:.4f}" if loss is not None else ""
        )
