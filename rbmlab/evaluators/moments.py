"""``evaluator=moments``: the model's first and second moments against a data split's.

Draws ``n_samples`` states (0: as many as the split has) as evaluator=mmd does (rbmlab.evaluators.
sampling) and compares, in the model's unit values, the means m_i = ⟨v_i⟩ and the connected
correlations C_ij = ⟨v_i v_j⟩ − ⟨v_i⟩⟨v_j⟩ of the draws with the split's, over the pairs i < j:

    sample_mean  = mean_i m_i^model   (for {0, 1} units: the share of units on in the draws)
    mean_gap     = mean_i (m_i^model − m_i^data)
    moment1_rmse = √ mean_i (m_i^data − m_i^model)²
    moment2_rmse = √ mean_{i<j} (C_ij^data − C_ij^model)²
    moment2_corr = Pearson r of (C_ij^data, C_ij^model) over i < j,

the numbers behind the data-vs-model correlation scatter (the `rbms` library's correlation plots).
r is 0 where either side's C is constant (no linear relation to measure).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rbmlab.backend import namespace, to_numpy
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.evaluators.sampling import SamplingConfig, SamplingEvaluator
from rbmlab.units.requirements import DISCRETE
from rbmlab.validation import option


@dataclass
class MomentsConfig(SamplingConfig):
    name: str = option("moments", "evaluator")


def moments(x) -> tuple[np.ndarray, np.ndarray]:
    """(means (d,), connected correlations (d, d)) of the rows of ``x``, float64 on the host."""
    xp = namespace(x)
    x = xp.asarray(x, dtype=xp.float64)
    m = x.mean(axis=0)
    return to_numpy(m), to_numpy(x.T @ x / x.shape[0] - m[:, None] * m[None, :])


def compare(data, drawn) -> dict[str, float]:
    """sample_mean, mean_gap, moment1_rmse, moment2_rmse and moment2_corr of ``drawn`` against
    ``data`` (module docstring)."""
    if data.shape[-1] < 2:
        raise RbmlabError(
            f"evaluator=moments: second moments need at least 2 visible units, got {data.shape[-1]}"
        )
    (m_data, c_data), (m_model, c_model) = moments(data), moments(drawn)
    upper = np.triu_indices(c_data.shape[0], k=1)
    a, b = c_data[upper], c_model[upper]
    a0, b0 = a - a.mean(), b - b.mean()
    norm = math.sqrt(float(a0 @ a0) * float(b0 @ b0))
    return {
        "sample_mean": float(m_model.mean()),
        "mean_gap": float(m_model.mean() - m_data.mean()),
        "moment1_rmse": float(np.sqrt(np.mean((m_data - m_model) ** 2))),
        "moment2_rmse": float(np.sqrt(np.mean((a - b) ** 2))),
        "moment2_corr": float(a0 @ b0) / norm if norm > 0 else 0.0,
    }


class Moments(SamplingEvaluator):
    """First and second moments of a sampler's draws from the model against a data split's: mean gap,
    RMSE of the means and of the connected correlations, and their Pearson r.

    Registered as ``moments``; options (``sampler``, ``sweeps``, ``n_samples``) in
    :class:`MomentsConfig`.
    """

    units = {"visible": DISCRETE}  # moments of the layer's columns (Potts: one-hot frequencies)
    config_class = MomentsConfig
    metrics = (
        MetricSpec(
            "sample_mean",
            "",
            False,
            description="mean unit value of the model samples (for {0, 1} units the share "
            "of units on; a description, not a quality)",
            label="mean of the samples",
        ),
        MetricSpec(
            "mean_gap",
            "",
            False,
            best_at=0.0,
            description="mean unit value of the model samples minus the split's",
            label="mean, samples − split",
        ),
        MetricSpec(
            "moment1_rmse",
            "",
            False,
            description="root mean squared difference of the means ⟨v_i⟩, model samples against the split",
            label="first-moment RMSE",
        ),
        MetricSpec(
            "moment2_rmse",
            "",
            False,
            description="root mean squared difference of the connected correlations "
            "⟨v_i v_j⟩ − ⟨v_i⟩⟨v_j⟩ over i < j, model samples against the split",
            label="second-moment RMSE",
        ),
        MetricSpec(
            "moment2_corr",
            "",
            True,
            description="Pearson correlation of the split's and the samples' connected "
            "correlations over i < j",
            label="correlation of second moments",
        ),
    )

    def evaluate(self, model, splits, context):
        metrics = {}
        for name, batch in splits.items():
            data = batch.inputs
            drawn = self.samples(model, self.n_drawn(data.shape[-2]), context.rng)
            metrics.update({f"{name}_{k}": v for k, v in compare(data, drawn).items()})
        return metrics

    def headline(self, metrics, split):
        mean, gap = metrics[f"{split}_sample_mean"], metrics[f"{split}_mean_gap"]
        return (
            f"{split} mean of the samples {mean:.4f} (the split's {mean - gap:.4f}); moment RMSE: first "
            f"{metrics[f'{split}_moment1_rmse']:.4f}, second "
            f"{metrics[f'{split}_moment2_rmse']:.4f}; correlation of second moments "
            f"{metrics[f'{split}_moment2_corr']:.4f}"
        )
