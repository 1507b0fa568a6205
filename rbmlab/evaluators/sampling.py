"""What evaluators that score a sampler's draws share: the sampler of a config (null: the model
family's default), ``n`` draws of ``sweeps`` steps from fresh uniform states, by chunks, and the
options and base class of such an evaluator (mmd, moments, overlap)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rbmlab.evaluators.base import Evaluator, EvaluatorConfig, sampler_for
from rbmlab.inference import INFERENCE
from rbmlab.limits import CHAINS, EVALUATION_STEPS, EXAMPLES
from rbmlab.validation import option

# an evaluator's ``sampler`` option: an inference config, or None (the family's default)
parse_sampler = INFERENCE.parse_optional


def draw(model, sampler, n: int, sweeps: int, chunk: int, rng):
    """``n`` draws from ``model``: ``sweeps`` steps of ``sampler`` from uniform states (a DBM's
    chains from uniform visible states widened by ``chain_start``), ``chunk`` chains at a time;
    (n, n_visible) in the model's unit values."""
    xp, units = model.xp, model.visible_units
    parts = []
    for start in range(0, n, chunk):
        rows = min(chunk, n - start)
        begin = model.chain_start(units.uniform_states(rng, (rows, model.n_visible), model.dtype), rng)
        parts.append(model.visible_part(sampler.run(model, begin, rng, sweeps)))
    return xp.concatenate(parts, axis=-2)


def as_binary(units, x):
    """States of ``units`` as {0, 1} (a ±1 spin s as (s + 1)/2)."""
    lo, hi = units.values
    return x if (lo, hi) == (0.0, 1.0) else (x - lo) / (hi - lo)


@dataclass
class SamplingConfig(EvaluatorConfig):
    """The options of an evaluator that draws from the model (its ``name`` set by each)."""

    sampler: Any = option(
        None,
        "inference method drawing the samples (pmp, gibbs, gwg, block_gibbs); null: the model family's",
        parse=parse_sampler,
        label="sampler",
    )
    sweeps: int = option(
        50, "sampler steps from fresh uniform states", lo=0, hi=EVALUATION_STEPS, label="sweeps"
    )
    n_samples: int = option(0, "samples per split; 0: as many as the split's examples", lo=0, hi=EXAMPLES)
    chunk: int = option(
        200,
        "samples drawn per sampler call (dense PMP holds ~5 (chunk, d, d) "
        "arrays: 3.2 GB each at d = 900, chunk 1000, float32)",
        lo=1,
        hi=CHAINS,
    )


class SamplingEvaluator(Evaluator):
    """An evaluator scoring ``n_samples`` draws of its ``sampler`` against data splits."""

    config_class = SamplingConfig

    def check(self, model_class, sizes):
        super().check(model_class, sizes)
        sampler_for(self.config.sampler, model_class, self.config.name)

    def samples(self, model, n: int, rng):
        """``n`` draws from the model: ``sweeps`` sampler steps from uniform states, by chunks."""
        sampler = sampler_for(self.config.sampler, type(model), self.config.name)
        return draw(model, sampler, n, self.config.sweeps, self.config.chunk, rng)

    def n_drawn(self, split_rows: int) -> int:
        """How many draws a split of ``split_rows`` examples is scored against."""
        return self.config.n_samples or split_rows
