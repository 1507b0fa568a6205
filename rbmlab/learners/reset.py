"""Moment matching with chains that restart every update: Gibbs-reset, GWG-reset, PMP learning.

Each update draws its negative phase afresh: ``n_chains`` states uniform over the unit values,
``k`` steps of ``learner.sampler`` from them, and the log-likelihood direction
statistics(data) − statistics(samples) (pmp Sec. 5.3: "-reset" samplers, truncated and
biased; with ``learner.sampler=pmp`` the start is ignored and this is PMP learning, Alg. 1, the
gradient of its perturb-and-MAP surrogate likelihood, Eq. 3). For an RBM the statistics are
Rao-Blackwellised, E[h | v] in both phases, as the authors' code does.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.learners.base import Learner, LearnerConfig, difference, total
from rbmlab.limits import CHAINS, UPDATE_STEPS
from rbmlab.units.requirements import DISCRETE
from rbmlab.validation import option


@dataclass
class ResetConfig(LearnerConfig):
    name: str = option("reset", "learner", label="learner")
    k: int = option(
        100,
        "sampler steps (sweeps) from the fresh start, every update",
        lo=0,
        hi=UPDATE_STEPS,
        label="sampler steps per update (k)",
    )
    n_chains: int = option(
        0, "negative samples per update; 0 = the batch size", lo=0, hi=CHAINS, label="negative-phase chains"
    )


class Reset(Learner):
    """Moment matching with chains restarted every update (pmp Sec. 5.3: Gibbs-reset, GWG-reset; with
    ``learner.sampler=pmp``, PMP learning, pmp Alg. 1): ``n_chains`` uniform starts, ``k`` steps of
    ``learner.sampler``, then statistics(data) − statistics(samples).

    Registered as ``reset``; options in :class:`ResetConfig`.
    """

    config_class = ResetConfig
    units = {"visible": DISCRETE, "hidden": DISCRETE}  # dcp eq. 6: statistics of any discrete layer
    generative = True  # an entrant of the cross-paper leaderboard
    entrants = {"pmp_reset": ("learner.sampler=pmp",)}  # PMP learning (pmp Alg. 1)

    def step(self, model, state, batch, rng):
        x = batch.inputs
        n = self.config.n_chains or x.shape[-2]
        start = model.visible_units.uniform_states(rng, x.shape[:-2] + (n, x.shape[-1]), x.dtype)
        end = self.sample(model, start, rng, self.config.k)
        return self.update(model, difference(model.statistics(x), model.statistics(end)), state)

    def step_cost(self, model, rows, state):
        """The sampler's k steps on c chains (block Gibbs: 2k·c·n_v·n_h; pmp: see
        PMP.step_cost) plus both phases' statistics, 2·(rows + c)·n_v·n_h, and one update."""
        from rbmlab.models.rbm import BinaryLayers  # noqa: PLC0415 - a learner of other families imports no RBM code

        if not isinstance(model, BinaryLayers):
            return None
        n = self.config.n_chains or rows
        statistics = 2 * (rows + n) * model.n_visible * model.n_hidden
        return total(self.sampler_cost(model, n, self.config.k), statistics, self.update_cost(model))
