"""Exact log Z and log-likelihood, for any model family that can enumerate (Enumerable).

log p(x) = log p̃(x) − log Z, with log Z from the family's enumeration (an RBM enumerates its
smaller layer and sums the other out; an Ising model enumerates all its variables).
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.errors import RbmlabError
from rbmlab.evaluators.base import Evaluator, EvaluatorConfig, check_marginal, mean_log_unnormalized
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.limits import ENUMERATION_UNITS
from rbmlab.models.base import Enumerable, LogProbability
from rbmlab.units.requirements import DISCRETE
from rbmlab.validation import option

MAX_EXACT_UNITS = ENUMERATION_UNITS  # rbmlab.limits


def log_partition(model, chunk_size: int = 4096) -> float:
    """Exact log Z of a single model (no trial axis)."""
    return model.exact_log_partition(chunk_size)


def enumeration_problem(model_class: type, sizes: dict[str, int]) -> str | None:
    """Why :func:`log_partition` cannot enumerate a ``model_class`` model of ``sizes``, or None."""
    n = model_class.enumeration_size(sizes)
    if n <= MAX_EXACT_UNITS:
        return None
    shape = "x".join(str(v) for v in sizes.values())
    return f"enumeration needs at most {MAX_EXACT_UNITS} enumerated units, this model ({shape}) has {n}"


@dataclass
class ExactConfig(EvaluatorConfig):
    name: str = option("exact", "evaluator")


class Exact(Evaluator):
    """Exact log-likelihood and log Z by enumeration, for any model family that can enumerate (an RBM its
    smaller layer, the other summed out; an Ising model all its variables).

    Registered as ``exact``; no options of its own (:class:`ExactConfig`).
    """

    config_class = ExactConfig
    requires = (Enumerable, LogProbability)
    without_data = "log Z only, by enumeration"
    units = {"visible": DISCRETE, "hidden": DISCRETE}  # enumeration of discrete states
    metrics = (
        MetricSpec(
            "log_likelihood",
            "nats",
            True,
            summary_name="mean_log_likelihood",
            description="mean log p(x) over the split",
            label="log-likelihood",
        ),
        MetricSpec(
            "log_z", "nats", True, per_split=False, description="log partition function", label="log Z"
        ),
    )

    def check(self, model_class, sizes):
        super().check(model_class, sizes)
        check_marginal("exact", model_class, sizes)
        if problem := enumeration_problem(model_class, sizes):
            raise RbmlabError(f"evaluator=exact: {problem}; use evaluator=ais ({MAX_EXACT_UNITS.why})")

    def evaluate(self, model, splits, context):
        log_z = log_partition(model)
        metrics = {"log_z": log_z}
        for name, batch in splits.items():
            metrics[f"{name}_log_likelihood"] = mean_log_unnormalized(model, batch.inputs) - log_z
        return metrics

    def headline(self, metrics, split):
        return f"{split} log-likelihood (exact): {metrics[f'{split}_log_likelihood']:.4f} nats"
