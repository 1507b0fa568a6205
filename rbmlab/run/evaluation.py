"""The evaluation step: an evaluator's metrics for a model on data splits, as a flat dict.

Metric names are ``<split>_<metric>`` for per-example averages and bare names for model-level
quantities (``log_z``...). Every evaluation of a model that can reconstruct its inputs also
records the (cheap) reconstruction error, and every evaluation the model's named scalar
parameters (Model.scalar_parameters: a tied Ising model's θ).
"""

from __future__ import annotations

from typing import Any

from rbmlab.evaluators.base import Context
from rbmlab.evaluators.reconstruction import Reconstruction, can_reconstruct


def adds_reconstruction(model_class: type, evaluator) -> bool:
    """Whether an evaluation adds the reconstruction error to the evaluator's own metrics."""
    return can_reconstruct(model_class) and not isinstance(evaluator, Reconstruction)


def evaluate(model, splits: dict[str, Any], evaluator, context: Context) -> dict[str, float]:
    """Metrics of ``model`` on ``splits`` (name → Batch): the evaluator's, plus reconstruction
    error where the model can reconstruct (first ``max_examples`` rows of each split if set)."""
    cap = evaluator.config.max_examples
    if cap:
        splits = {k: b.take(slice(0, cap)) for k, b in splits.items()}
    metrics: dict[str, float] = {}
    if adds_reconstruction(type(model), evaluator):
        metrics.update(Reconstruction(evaluator.config).evaluate(model, splits, context))
    metrics.update(evaluator.evaluate(model, splits, context))
    metrics.update(model.scalar_parameters())
    return {k: float(v) for k, v in metrics.items()}
