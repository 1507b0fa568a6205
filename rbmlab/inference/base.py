"""The calling shape every inference method shares (samplers and fixed-point iterations alike).

An inference method is a class with ``config_class`` (a dataclass with at least ``name``),
``requires`` (the model capabilities it needs, see rbmlab.models.base) and

    run(model, x, rng, steps) -> x'

which applies ``steps`` transitions (sampler sweeps, or fixed-point iterations) to the batch of
states ``x`` (rows; leading trial axes as the model's) and returns a new array, never modifying
``x``. A method with ``takes_first_product = True`` (block Gibbs) also accepts
``first_product=xW``, the first half-step's product when a learner formed it together with its
positive phase (one matmul instead of two). A method with ``continues_scan`` (single-site Gibbs
with ``step=site``) takes ``position=p``, the site its scan goes on from. A ``persistent`` method
(parallel tempering) carries state of its own beside the chains: ``init_state(model, chains, rng)``
gives it (name → array, for a learner state and its checkpoint), and ``run(..., state=s)`` returns
``(x', s')``, the chains and the state to pass next time; without ``state=`` it starts afresh
from ``x`` and returns ``x'`` alone. ``diagnostics(s)`` gives scalars of a state to record.
Learners take their negative-phase sampler from the registry (``learner.sampler``; null: the
model family's ``default_sampler``) instead of naming one.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.validation import Config, option


@dataclass
class InferenceConfig(Config):
    name: str = option("", "inference method (rbmlab.inference.INFERENCE)")


class InferenceMethod:
    """Base class: holds the config (the class's default config when none is given)."""

    config_class: type = InferenceConfig
    requires: tuple[type, ...] = ()  # model capabilities (rbmlab.models.base) it needs
    units: dict[str, tuple[str, ...]] = {}  # unit types it is written for (rbmlab.units.requirements)
    takes_first_product = False  # run(..., first_product=xW) accepted
    continues_scan = False  # run(..., position=p) accepted: a systematic scan that goes
    # on where it stopped (the next is (p + steps) mod n)
    persistent = False  # run(..., state=s) accepted and returns (x', s')
    packs = False  # every draw of run has the model's leading run axis (rbmlab.run.packed)

    def __init__(self, config=None):
        self.config = config if config is not None else self.config_class()

    def run(self, model, x, rng, steps: int):
        raise NotImplementedError

    def settings_problem(self, settings, model_class: type) -> str | None:
        """Why this method cannot sample a model of ``model_class`` with these settings (unit types
        as Model.settings names them), in words, or None (rbmlab.units.requirements asks before any
        work)."""
        return None

    def init_state(self, model, chains, rng) -> dict:
        """A persistent method's state for the chains ``chains`` (none by default)."""
        return {}

    def diagnostics(self, state: dict) -> dict[str, float]:
        """Scalars of a persistent method's state, for a metrics row (none by default)."""
        return {}

    def step_cost(self, model, rows: int, steps: int) -> float | None:
        """Multiply-adds (rbmlab.backend.macs) of ``run`` on ``rows`` states for ``steps``
        transitions, per model (trial); None: not declared (the default)."""
        return None


def chain_rows(model, x) -> tuple[int, ...]:
    """The leading shape (..., B) of the chains run from the states ``x`` (..., B, n): a batch
    without the model's trial axis gets its own chains per trial, (trials, B); otherwise x's own."""
    trials = (model.n_trials,) if model.n_trials else ()
    return (trials if x.ndim == 2 else x.shape[:-2]) + x.shape[-2:-1]
