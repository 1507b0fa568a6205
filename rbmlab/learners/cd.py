"""Contrastive divergence CD-k (Hinton 2002; dcp Alg. 1 in mini-batch form)."""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.learners.base import Learner, MeanFieldConfig, total
from rbmlab.limits import UPDATE_STEPS
from rbmlab.units.requirements import DISCRETE
from rbmlab.validation import option


@dataclass
class CDConfig(MeanFieldConfig):
    name: str = option("cd", "learner", label="learner")
    k: int = option(
        1, "sampler steps from the data", lo=1, hi=UPDATE_STEPS, label="sampler steps per update (k)"
    )


class CD(Learner):
    """Contrastive divergence, CD-k (Hinton 2002; dcp Alg. 1 in mini-batch form): the negative phase is
    ``k`` sampler steps started at the mini-batch.

    Registered as ``cd`` and as ``ssd`` (CD-k with the spectral optimizer); options in :class:`CDConfig`.
    """

    config_class = CDConfig
    units = {"visible": DISCRETE, "hidden": DISCRETE}  # dcp eq. 6: statistics of any discrete layer
    generative = True  # an entrant of the cross-paper leaderboard
    packs = True
    mean_field_positive = True  # a DBM's data statistics (MeanFieldConfig)

    def step(self, model, state, batch, rng):
        grad, _ = self.contrastive_gradient(model, batch.inputs, batch.inputs, rng, self.config.k)
        return self.update(model, grad, state)

    def step_cost(self, model, rows, state):
        """Block Gibbs: rows·n_v·n_h·(2k + 3) (xW, 2k − 1 more sweep products, E[h|end], the
        joint W statistic over 2·rows), plus one optimizer update (spectral: its own)."""
        return total(self.contrastive_cost(model, rows, None, self.config.k), self.update_cost(model))
