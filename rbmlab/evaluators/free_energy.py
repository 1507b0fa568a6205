"""Unnormalised log-likelihoods −F(v) and the train − valid gap, without log Z.

log p(v) = −F(v) − log Z, so the gap between the mean log-likelihoods of two samples is the gap
between their mean −F(v): log Z cancels (Hinton 2010, practical guide §6; frank_wolfe §4 monitors
it for early stopping). The gap compares equal-sized samples: the first n_valid training rows
against the n_valid rows of the valid split. Cheap (one pass of −F per row), and exact.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.evaluators.base import Evaluator, EvaluatorConfig, check_marginal, mean_log_unnormalized
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.models.base import LogProbability
from rbmlab.validation import option


def train_valid_gap(model, train, valid) -> float:
    """mean −F over the first len(valid) rows of ``train`` − mean −F over ``valid``."""
    return mean_log_unnormalized(model, train[: valid.shape[0]]) - mean_log_unnormalized(model, valid)


@dataclass
class FreeEnergyConfig(EvaluatorConfig):
    name: str = option("free_energy", "evaluator")
    splits: list[str] = option(
        ["train", "valid"],
        "splits scored at every evaluation point (train and valid: their gap too)",
        choices=("train", "valid", "test"),
        label="splits scored",
    )


class FreeEnergy(Evaluator):
    """Unnormalised log-likelihoods −F(v) and the train − valid gap, in which log Z cancels (Hinton
    2010, practical guide Sec. 6; monitored in frank_wolfe Sec. 4 for early stopping).

    Registered as ``free_energy``; options in :class:`FreeEnergyConfig`.
    """

    config_class = FreeEnergyConfig
    requires = (LogProbability,)
    metrics = (
        MetricSpec(
            "train_valid_gap",
            "nats",
            False,
            per_split=False,
            description="mean −F(v) over the first n_valid training rows − over the "
            "valid split: the log-likelihood gap, log Z cancelled",
            label="training − validation log-likelihood gap",
        ),
        MetricSpec(
            "log_likelihood_unnormalised",
            "nats",
            True,
            description="mean −F(v) = log p̃(v) over the split (log Z not subtracted)",
            label="unnormalised log-likelihood",
        ),
    )

    def check(self, model_class, sizes):
        super().check(model_class, sizes)
        check_marginal("free_energy", model_class, sizes)

    def evaluate(self, model, splits, context):
        metrics = {
            f"{name}_log_likelihood_unnormalised": mean_log_unnormalized(model, batch.inputs)
            for name, batch in splits.items()
        }
        if "train" in splits and "valid" in splits:
            metrics["train_valid_gap"] = train_valid_gap(
                model, splits["train"].inputs, splits["valid"].inputs
            )
        return metrics

    def headline(self, metrics, split):
        own = metrics.get(f"{split}_log_likelihood_unnormalised")
        value = f"{own:.4f} nats" if own is not None else "not scored"
        text = f"{split} unnormalised log-likelihood −F: {value}"
        gap = metrics.get("train_valid_gap")
        return text + (f"; train − valid gap: {gap:.4f} nats" if gap is not None else "")
