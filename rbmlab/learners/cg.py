"""Centered gradient CG with CD-K (Melchior et al. 2016, Alg. 1, variant dd_s^b; dcp §4.1).

Offsets: data mean (visible) and data-driven hidden mean, both sliding averages with factor ν;
the chain restarts at the data every mini-batch. This is CS-DCP with one inner step of K sweeps
(dcp notes §2.7), so the two share one implementation.
"""
from __future__ import annotations

from dataclasses import dataclass

from rbmlab.config import LearnerConfig, _check
from rbmlab.learners.base import State
from rbmlab.learners.csdcp import centered_sdcp_step, init_offsets
from rbmlab.models.rbm import RBM


@dataclass
class CGConfig(LearnerConfig):
    name: str = "cg"
    k: int = 1             # Gibbs sweeps from the data
    nu_mu: float = 0.01    # sliding factor of the visible offsets
    nu_lam: float = 0.01   # sliding factor of the hidden offsets
    lam0: float = 0.5      # initial hidden offsets (the visible ones start at the training mean)

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.k >= 1, "learner.k", f"must be >= 1, got {self.k}")
        for key in ("nu_mu", "nu_lam", "lam0"):
            value = getattr(self, key)
            _check(0.0 <= value <= 1.0, f"learner.{key}", f"must be in [0, 1], got {value}")


class CG:
    config_class = CGConfig
    updates_per_step = 1

    def __init__(self, config: CGConfig):
        self.config = config

    def init_state(self, rbm: RBM, train, rng) -> State:
        return init_offsets(rbm, train, self.config.lam0)

    def step(self, rbm: RBM, state: State, batch, rng) -> tuple[RBM, State]:
        return centered_sdcp_step(rbm, state, batch, rng, self.config, 1, self.config.k)
