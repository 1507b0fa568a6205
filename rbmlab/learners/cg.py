"""Centered gradient CG with CD-K (Melchior et al. 2016, Alg. 1, variant dd_s^b; dcp §4.1).

Offsets: data mean (visible) and data-driven hidden mean, both sliding averages with factor ν;
the chain restarts at the data every mini-batch. This is CS-DCP with one inner step of K sweeps
(d = 1, as S-DCP with d = 1 is CD, dcp Sec. 3; K = 24, dcp Sec. 4.1), so the two share one
implementation.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.learners.csdcp import CenteredLearner, CenteringConfig
from rbmlab.limits import UPDATE_STEPS
from rbmlab.validation import option


@dataclass
class CGConfig(CenteringConfig):
    name: str = option("cg", "learner", label="learner")
    k: int = option(
        1, "sampler steps from the data", lo=1, hi=UPDATE_STEPS, label="sampler steps per update (k)"
    )


class CG(CenteredLearner):
    """Centered gradient, CG with CD-K (Melchior et al. 2016, Alg. 1, variant dd_s^b; dcp Sec. 4.1):
    CS-DCP with one inner step of ``k`` sweeps, the chain restarting at the data every mini-batch.

    Registered as ``cg``; options in :class:`CGConfig`.
    """

    config_class = CGConfig
    generative = True  # an entrant of the cross-paper leaderboard

    def step(self, model, state, batch, rng):
        return self.centered_step(model, state, batch, rng, 1, self.config.k)

    def step_cost(self, model, rows, state):
        """CS-DCP's with d = 1: n_v·n_h·(rows·(2k + 4) + 8) with block Gibbs."""
        return self.centered_cost(model, rows, 1, self.config.k)
