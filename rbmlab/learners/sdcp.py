"""Stochastic DC programming S-DCP (Upadhya & Sastry 2017, dcp Alg. 2/3, mini-batch form).

log p(v) = g(θ, v) − f(θ) with g, f convex (dcp eq. 2–5). Each mini-batch takes ``d`` SGD steps
on the convex surrogate f(θ) − θᵀ∇g(θ(t)) (eq. 8): ∇g (the data term) is frozen at θ(t), and ∇f
is the CD-style estimate at the end of ``k`` (= K') Gibbs sweeps run with the current inner
parameters, the chain carried over from one inner step to the next. d = 1 is exactly CD-K'.
The gradient is fresh at each inner step (Alg. 3's never-reset Δθ is read as a typo; notes §8.1).
"""
from __future__ import annotations

from dataclasses import dataclass

from rbmlab.config import LearnerConfig, _check
from rbmlab.inference.gibbs import gibbs_chain
from rbmlab.learners.base import State, sgd_update, sufficient_statistics
from rbmlab.models.rbm import RBM


@dataclass
class SDCPConfig(LearnerConfig):
    name: str = "sdcp"
    d: int = 6   # inner SGD steps per mini-batch
    k: int = 4   # K': Gibbs sweeps per inner step (equal cost to CD-(d·K'))

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.d >= 1, "learner.d", f"must be >= 1, got {self.d}")
        _check(self.k >= 1, "learner.k", f"must be >= 1, got {self.k}")


class SDCP:
    config_class = SDCPConfig

    def __init__(self, config: SDCPConfig):
        self.config = config

    @property
    def updates_per_step(self) -> int:
        return self.config.d

    def init_state(self, rbm: RBM, train, rng) -> State:
        return {}

    def step(self, rbm: RBM, state: State, batch, rng) -> tuple[RBM, State]:
        positive = sufficient_statistics(rbm, batch)    # ∇g(θ(t)): once per mini-batch
        chain = batch
        for _ in range(self.config.d):
            chain = gibbs_chain(rbm, chain, rng, self.config.k)
            negative = sufficient_statistics(rbm, chain)   # f̂'(θ̃(l)), eq. 6
            rbm, state = sgd_update(rbm, positive - negative, state, self.config)
        return rbm, state
