"""``evaluator=bethe``: how far the Bethe approximation's beliefs at the model's parameters are
from each split's marginals (pmp Sec. 5.1: a model is learnable by the Bethe approximation when
some parameters make the beliefs of the BP fixed point BP reaches equal the data's marginals).

Loopy sum-product BP (rbmlab.inference.bethe) from random messages N(0, ``init_std``²), to
``tol`` or ``max_iter``; per split ``<split>_bethe_mean_gap`` = max_i |E_b[x_i] − mean x_i| and
``<split>_bethe_pair_gap`` = max_{i≠j} |E_b[x_i x_j] − mean x_i x_j| over the split's examples (a
dense Ising model's every pair is an edge of BP's graph, as learner=bethe fits it), and
``bethe_converged`` (1 when BP met its tolerance). Both gaps are 0 exactly when the beliefs are
the split's marginals; a split's own sampling error sets the floor (≈ 1/√N)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.backend import to_numpy
from rbmlab.evaluators.base import Evaluator, EvaluatorConfig
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.inference.bethe import bethe_beliefs, random_messages
from rbmlab.limits import EVALUATION_STEPS
from rbmlab.models.base import PairwiseCouplings
from rbmlab.validation import option


@dataclass
class BetheEvalConfig(EvaluatorConfig):
    name: str = option("bethe", "evaluator")
    max_iter: int = option(10000, "BP iterations at most", lo=1, hi=EVALUATION_STEPS)
    tol: float = option(1e-7, "BP stops once no message moves by more (about float32's resolution)", lo=0)
    damping: float = option(0.5, "u ← d·u_old + (1 − d)·u_new", lo=0, hi=1, open_hi=True)
    init_std: float = option(0.1, "std of the random messages BP starts from (0: all zero)", lo=0)


def data_moments(x) -> tuple[np.ndarray, np.ndarray]:
    """(mean x_i, mean x_i x_j with a zero diagonal) of the rows of ``x`` (host, float64)."""
    x = np.asarray(to_numpy(x), dtype=np.float64)
    pair = x.T @ x / x.shape[0]
    np.fill_diagonal(pair, 0.0)
    return x.mean(axis=0), pair


class BetheEvaluator(Evaluator):
    """Bethe learnability gaps (pmp Sec. 5.1): the largest differences between loopy BP's beliefs at the
    model's parameters and a split's means and pair moments, and whether BP converged.

    Registered as ``bethe``; options in :class:`BetheEvalConfig`.
    """

    config_class = BetheEvalConfig
    requires = (PairwiseCouplings,)
    metrics = (
        MetricSpec(
            "bethe_mean_gap",
            "probability",
            False,
            label="largest gap of a Bethe mean",
            description="max_i |E_b[x_i] − the split's mean of x_i| at BP's fixed point",
        ),
        MetricSpec(
            "bethe_pair_gap",
            "probability",
            False,
            label="largest gap of a Bethe pair moment",
            description="max over the pairs i ≠ j of |E_b[x_i x_j] − the split's mean of x_i x_j|",
        ),
        MetricSpec(
            "bethe_converged",
            "fraction",
            True,
            per_split=False,
            label="BP converged",
            description="1 when BP met its tolerance",
        ),
    )

    def evaluate(self, model, splits, context):
        c = self.config
        b = bethe_beliefs(
            model,
            random_messages(model, context.rng, c.init_std),
            max_iter=c.max_iter,
            tol=c.tol,
            damping=c.damping,
        )
        mean = np.asarray(to_numpy(b.mean), dtype=np.float64)
        pair = np.asarray(to_numpy(b.pair), dtype=np.float64)
        pairs = ~np.eye(mean.shape[-1], dtype=bool)
        metrics = {"bethe_converged": float(b.converged)}
        for name, batch in splits.items():
            m, p = data_moments(batch.inputs)
            metrics[f"{name}_bethe_mean_gap"] = float(np.max(np.abs(mean - m)))
            metrics[f"{name}_bethe_pair_gap"] = float(np.max(np.abs(pair - p)[pairs], initial=0.0))
        return metrics
