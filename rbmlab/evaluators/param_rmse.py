"""``evaluator=param_rmse``: how far a learned Ising model's couplings are from the ground truth's
(pmp Sec 5.4, App. B.1):

    log RMSE = ½ log mean_{ij} (W_truth − Ŵ)²,                                              (1)

over all d² entries, diagonal included, in the paper's scale: the truth's spin convention, and for
±1 spins the E2 weights W = J/2 (each pair counted twice, −E2 = sᵀWs + bᵀs; rbmlab.models.ising),
for {0, 1} the E1 weights W = J. Fields are ignored, as in the paper. A model in the other spin
convention is converted first (rbmlab.models.ising.to_spins: the same distribution). The data
splits are not read; the ground truth comes in Context.truth (``dataset=ising_samples``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rbmlab.backend import to_numpy
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.base import Evaluator, EvaluatorConfig
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.models.ising import to_spins
from rbmlab.validation import option


@dataclass
class ParamRMSEConfig(EvaluatorConfig):
    reads_examples = False  # the parameters against the ground truth's
    name: str = option("param_rmse", "evaluator")


def paper_weights(model) -> np.ndarray:
    """The couplings as the paper writes them: J/2 for ±1 spins (E2), J for {0, 1} (E1), float64."""
    J = to_numpy(model.J).astype(np.float64)
    return J / 2.0 if model.spins == "pm1" else J


class ParamRMSE(Evaluator):
    """Log RMSE of a learned Ising model's couplings against the ground truth's (pmp Sec. 5.4, App. B.1),
    over all d² entries in the paper's scale, fields ignored.

    Registered as ``param_rmse``; no options of its own (:class:`ParamRMSEConfig`).
    """

    config_class = ParamRMSEConfig
    needs_truth = True
    metrics = (
        MetricSpec(
            "log_rmse",
            "log",
            False,
            per_split=False,
            description="½ log of the mean squared coupling error against the ground "
            "truth, all d² entries, the paper's weight scale (1)",
            label="log RMSE of the couplings",
        ),
    )

    def check(self, model_class, sizes):
        super().check(model_class, sizes)
        if "J" not in getattr(model_class, "PARAMS", {}):
            raise RbmlabError(
                f"evaluator=param_rmse: compares Ising couplings J; model {model_class.family} has none"
            )

    def evaluate(self, model, splits, context):
        truth = context.truth
        if truth is None or getattr(truth, "family", None) != "ising":
            raise RbmlabError(
                "evaluator=param_rmse: needs the dataset's ground-truth Ising model (dataset=ising_samples)"
            )
        if truth.n != model.n:
            raise RbmlabError(
                f"evaluator=param_rmse: the ground truth has {truth.n} units, the model {model.n}"
            )
        same = model if model.spins == truth.spins else to_spins(model, truth.spins)[0]
        error = paper_weights(truth) - paper_weights(same)
        mse = float(np.mean(error**2))
        return {"log_rmse": 0.5 * math.log(mse) if mse > 0 else -math.inf}  # (1)

    def headline(self, metrics, split):
        return f"log RMSE of the couplings: {metrics['log_rmse']:.4f}"
