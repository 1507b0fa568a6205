"""What evaluators that score a sampler's draws share: the sampler of a config (null: the model
family's default) and ``n`` draws of ``sweeps`` steps from fresh uniform states, by chunks."""
from __future__ import annotations

from typing import Any

from rbmlab.errors import RbmlabError
from rbmlab.inference import INFERENCE
from rbmlab.models.base import supports


# an evaluator's ``sampler`` option: an inference config, or None (the family's default)
parse_sampler = INFERENCE.parse_optional


def sampler_for(config, model_class: type, evaluator: str):
    """The inference method ``config`` names (None: ``model_class``'s default sampler), checked
    against the family's capabilities; one-line errors naming ``evaluator``."""
    if config is None:
        default = getattr(model_class, "default_sampler", None)
        if default is None:
            raise RbmlabError(f"evaluator={evaluator}: model {model_class.family} has no default "
                              "sampler; set evaluator.sampler")
        config = INFERENCE.parse(default, "evaluator.sampler")
    sampler = INFERENCE.build(config)
    for capability in sampler.requires:
        if not supports(model_class, capability):
            raise RbmlabError(f"evaluator={evaluator}: model {model_class.family} lacks "
                              f"{capability.__name__} (needed by its sampler {sampler.config.name})")
    return sampler


def draw(model, sampler, n: int, sweeps: int, chunk: int, rng):
    """``n`` draws from ``model``: ``sweeps`` steps of ``sampler`` from uniform states, ``chunk``
    chains at a time; (n, n_visible) in the model's unit values."""
    xp, units = model.xp, model.visible_units
    parts = []
    for start in range(0, n, chunk):
        rows = min(chunk, n - start)
        begin = units.uniform_states(rng, (rows, model.n_visible), model.dtype)
        parts.append(sampler.run(model, begin, rng, sweeps))
    return xp.concatenate(parts, axis=-2)
