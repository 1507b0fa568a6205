"""``evaluator=spectrum``: the k largest singular values of the weights W at each evaluation
point, the spectrum whose growth shows which modes a run has learned (Decelle, Fissore & Furtlehner
2017, "Spectral dynamics of learning in restricted Boltzmann machines"; the `rbms` library plots
it over training).

Model-level metrics sv_1 ≥ sv_2 ≥ … ≥ sv_m, m = min(k, n_visible, n_hidden); the SVD runs on the
model's backend (numpy or cupy) in float64. No data split is read.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.backend import namespace, to_numpy
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.base import Evaluator, EvaluatorConfig
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.units.requirements import ANY_UNITS
from rbmlab.validation import option

K_MAX = 64  # the most singular values one evaluation writes (each its own metrics.csv column)


@dataclass
class SpectrumConfig(EvaluatorConfig):
    name: str = option("spectrum", "evaluator")
    k: int = option(
        10,
        "largest singular values of W written (sv_1 … sv_k; fewer when W has fewer)",
        lo=1,
        hi=K_MAX,
        label="singular values",
    )


def singular_values(W, k: int) -> np.ndarray:
    """The ``k`` largest singular values of the 2-D ``W``, descending, host float64."""
    xp = namespace(W)
    s = xp.linalg.svd(xp.asarray(W, dtype=xp.float64), compute_uv=False)
    return to_numpy(s[:k]).astype(np.float64)


def _spec(i: int) -> MetricSpec:
    return MetricSpec(
        f"sv_{i}",
        "",
        True,
        per_split=False,
        description=f"the {i}-th largest singular value of W (no better direction)",
        label=f"singular value {i} of the weights",
    )


class Spectrum(Evaluator):
    """The ``k`` largest singular values of the weights W at each evaluation point (Decelle, Fissore &
    Furtlehner 2017, spectral dynamics of RBM learning); no data split is read.

    Registered as ``spectrum``; options in :class:`SpectrumConfig`.
    """

    units = {"visible": ANY_UNITS, "hidden": ANY_UNITS}  # reads W only
    config_class = SpectrumConfig
    metrics = tuple(_spec(i) for i in range(1, K_MAX + 1))  # every column any k writes

    def __init__(self, config):
        super().__init__(config)
        self.metrics = type(self).metrics[: config.k]

    def check(self, model_class, sizes):
        super().check(model_class, sizes)
        if "W" not in getattr(model_class, "PARAMS", {}):
            raise RbmlabError(f"evaluator=spectrum: reads the weights W; model {model_class.family} has none")

    def evaluate(self, model, splits, context):
        return {f"sv_{i}": float(s) for i, s in enumerate(singular_values(model.W, self.config.k), start=1)}

    def headline(self, metrics, split):
        return f"largest singular value of W: {metrics['sv_1']:.4f}"
