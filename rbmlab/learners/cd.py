"""Contrastive divergence CD-k (Hinton 2002; dcp Alg. 1 in mini-batch form)."""
from __future__ import annotations

from dataclasses import dataclass

from rbmlab.config import LearnerConfig, _check
from rbmlab.inference.gibbs import gibbs_chain
from rbmlab.learners.base import State, sgd_update, sufficient_statistics
from rbmlab.models.rbm import RBM


@dataclass
class CDConfig(LearnerConfig):
    name: str = "cd"
    k: int = 1   # Gibbs sweeps from the data

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.k >= 1, "learner.k", f"must be >= 1, got {self.k}")


class CD:
    config_class = CDConfig
    updates_per_step = 1

    def __init__(self, config: CDConfig):
        self.config = config

    def init_state(self, rbm: RBM, train, rng) -> State:
        return {}

    def step(self, rbm: RBM, state: State, batch, rng) -> tuple[RBM, State]:
        positive = sufficient_statistics(rbm, batch)
        negative = sufficient_statistics(rbm, gibbs_chain(rbm, batch, rng, self.config.k))
        return sgd_update(rbm, positive - negative, state, self.config)
