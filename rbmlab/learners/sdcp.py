"""Stochastic DC programming S-DCP (Upadhya & Sastry 2017, dcp Alg. 2/3, mini-batch form).

log p(v) = g(θ, v) − f(θ) with g, f convex (dcp eq. 2–5). Each mini-batch takes ``d`` SGD steps
on the convex surrogate f(θ) − θᵀ∇g(θ(t)) (eq. 8): ∇g (the data term) is frozen at θ(t), and ∇f
is the CD-style estimate at the end of ``k`` (= K') sampler steps run with the current inner
parameters, the chain carried over from one inner step to the next. d = 1 is exactly CD-K'.
The gradient is fresh at each inner step (we read Alg. 3's never-reset Δθ as a typo: Algs. 2 and 4
take a fresh one).
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.learners.base import Learner, LearnerConfig, difference, total
from rbmlab.limits import UPDATE_STEPS, exceeds
from rbmlab.models.rbm import BinaryLayers
from rbmlab.units.requirements import DISCRETE
from rbmlab.validation import invalid, option


@dataclass
class SDCPConfig(LearnerConfig):
    name: str = option("sdcp", "learner", label="learner")
    d: int = option(
        6, "inner SGD steps per mini-batch", lo=1, hi=UPDATE_STEPS, label="inner steps per mini-batch (d)"
    )
    k: int = option(
        4,
        "K': sampler steps per inner step (same cost as CD-(d·K'))",
        lo=1,
        hi=UPDATE_STEPS,
        label="sampler steps per update (k)",
    )

    def check(self) -> None:
        if problem := exceeds(UPDATE_STEPS, self.d * self.k, "d x k (sampler sweeps an update)"):
            raise invalid("k", problem)


class SDCP(Learner):
    """Stochastic DC programming, S-DCP (Upadhya & Sastry 2017, dcp Alg. 2/3): per mini-batch, ``d`` SGD
    steps on the convex surrogate of eq. 8, each with a CD-style negative phase of ``k`` (K') sampler
    steps on a chain carried over between inner steps; d = 1 is CD-K'.

    Registered as ``sdcp``; options in :class:`SDCPConfig`.
    """

    config_class = SDCPConfig
    units = {"visible": DISCRETE, "hidden": DISCRETE}  # dcp eq. 6: statistics of any discrete layer
    generative = True  # an entrant of the cross-paper leaderboard
    packs = True

    @property
    def updates_per_step(self) -> int:
        return self.config.d

    def step(self, model, state, batch, rng):
        if self.config.d == 1:  # S-DCP with d = 1 is CD-K' (Alg. 2), and takes CD's path
            grad, _ = self.contrastive_gradient(model, batch.inputs, batch.inputs, rng, self.config.k)
            return self.update(model, grad, state)
        positive, first = self.positive_phase(model, batch.inputs)  # ∇g(θ(t)): once per mini-batch
        chain = batch.inputs
        for _ in range(self.config.d):
            chain = self.sample(model, chain, rng, self.config.k, first)  # first: xW at θ(t)
            first = None
            negative = model.statistics(chain)  # f̂'(θ̃(l)), eq. 6
            model, state = self.update(model, difference(positive, negative), state)
        return model, state

    def step_cost(self, model, rows, state):
        """d = 1: CD-k's. Otherwise, block Gibbs: rows·n_v·n_h·(2kd + 2d + 1) (the data's xW
        and W statistic once; per inner step k sweeps, the first sharing xW, and the chain's
        two statistics products), plus d optimizer updates."""
        cfg = self.config
        if cfg.d == 1:
            return total(self.contrastive_cost(model, rows, None, cfg.k), self.update_cost(model))
        if not isinstance(model, BinaryLayers):
            return None
        fused = self._fusable(model) and not model.n_trials
        unit = model.n_visible * model.n_hidden
        chains = [self.sampler_cost(model, rows, cfg.k, first_product=fused and i == 0) for i in range(cfg.d)]
        return total(*chains, 2 * rows * unit * (cfg.d + 1), self.update_cost(model, cfg.d))
