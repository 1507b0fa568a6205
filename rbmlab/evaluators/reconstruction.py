"""Mean-field reconstruction error.

The reconstruction of v is r = E[v | h = E[h | v]]: hidden means (not samples) are propagated
back, so the error is deterministic. Error per row: Σ_i (v_i − r_i)². Not a likelihood; reported
for comparison with the RBM literature (Hinton 2010, practical guide), and recorded beside every
other evaluator for models that can reconstruct.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.errors import RbmlabError
from rbmlab.evaluators.base import Evaluator, EvaluatorConfig, mean
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.validation import option


def reconstruction_error(model, v):
    """Per-row squared error Σ_i (v_i − r_i)², float64."""
    xp = model.xp
    v = xp.asarray(v, dtype=model.W.dtype)
    d = v - model.reconstruct(v)
    return xp.sum(d * d, axis=-1, dtype=xp.float64)


def can_reconstruct(model_class: type) -> bool:
    return hasattr(model_class, "reconstruct")


@dataclass
class ReconstructionConfig(EvaluatorConfig):
    name: str = option("reconstruction", "evaluator")


class Reconstruction(Evaluator):
    """Mean-field reconstruction error Σ_i (v_i − r_i)², r = E[v | h = E[h | v]]: deterministic, not a
    likelihood, reported for comparison with the RBM literature (Hinton 2010, practical guide).

    Registered as ``reconstruction``; no options of its own (:class:`ReconstructionConfig`).
    """

    config_class = ReconstructionConfig
    metrics = (
        MetricSpec(
            "reconstruction_error",
            "squared error",
            False,
            description="mean Σ_i (v_i − r_i)² of the mean-field reconstruction",
            label="reconstruction error",
        ),
    )

    def check(self, model_class, sizes):
        if not can_reconstruct(model_class):
            raise RbmlabError(
                f"evaluator=reconstruction: model {model_class.family} cannot reconstruct its inputs"
            )

    def evaluate(self, model, splits, context):
        return {
            f"{name}_reconstruction_error": mean(reconstruction_error(model, batch.inputs))
            for name, batch in splits.items()
        }
