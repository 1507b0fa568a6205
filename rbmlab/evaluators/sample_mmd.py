"""``evaluator=mmd``: how close a sampler's draws from the model are to a data split (pmp §5).

Draws ``n_samples`` states (0: as many as the split has) from fresh uniform starts with
``sweeps`` steps of ``sampler`` (any inference method: pmp, gibbs, gwg, block_gibbs; null: the
model family's default), ``chunk`` at a time, and reports for each of ``splits`` (pmp compares
with the training data: splits=[train]) the natural log of the V-statistic MMD² between the
draws and the split's examples (rbmlab.evaluators.mmd, kernel exp(−Hamming/D); ±1 units are
compared as {0, 1}). Lower is better; two samples of one distribution sit near (2/N)(1 − E k),
not at −inf.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.evaluators.mmd import log_mmd2
from rbmlab.evaluators.sampling import SamplingConfig, SamplingEvaluator, as_binary
from rbmlab.validation import option


@dataclass
class SampleMMDConfig(SamplingConfig):
    name: str = option("mmd", "evaluator")


class SampleMMD(SamplingEvaluator):
    """Sample quality by maximum mean discrepancy (pmp Sec. 5): log MMD² (V-statistic, kernel
    exp(−Hamming/D)) between a sampler's draws from the model and a data split; lower is better.

    Registered as ``mmd``; options (``sampler``, ``sweeps``, ``n_samples``, ``chunk``) in
    :class:`SampleMMDConfig`.
    """

    config_class = SampleMMDConfig
    metrics = (
        MetricSpec(
            "log_mmd2",
            "log MMD²",
            False,
            description="natural log of the V-statistic MMD² (kernel exp(−Hamming/D)) "
            "between model samples and the split",
            label="log MMD²",
        ),
    )

    def evaluate(self, model, splits, context):
        metrics = {}
        units = model.visible_units
        for name, batch in splits.items():
            data = batch.inputs
            drawn = self.samples(model, self.n_drawn(data.shape[-2]), context.rng)
            metrics[f"{name}_log_mmd2"] = log_mmd2(as_binary(units, data), as_binary(units, drawn))
        return metrics
