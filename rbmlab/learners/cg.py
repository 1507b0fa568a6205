"""Centered gradient CG with CD-K (Melchior et al. 2016, Alg. 1, variant dd_s^b; dcp §4.1).

Offsets: data mean (visible) and data-driven hidden mean, both sliding averages with factor ν;
the chain restarts at the data every mini-batch. This is CS-DCP with one inner step of K sweeps
(dcp notes §2.7), so the two share one implementation.
"""
from __future__ import annotations

from dataclasses import dataclass

from rbmlab.config import _check
from rbmlab.learners.base import State
from rbmlab.learners.csdcp import CenteringConfig, centered_sdcp_step, init_offsets
from rbmlab.models.rbm import RBM


@dataclass
class CGConfig(CenteringConfig):
    name: str = "cg"
    k: int = 1             # Gibbs sweeps from the data

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.k >= 1, "learner.k", f"must be >= 1, got {self.k}")


class CG:
    config_class = CGConfig
    updates_per_step = 1

    def __init__(self, config: CGConfig):
        self.config = config

    def init_state(self, rbm: RBM, train, rng) -> State:
        return init_offsets(rbm, train, self.config.lam0)

    def step(self, rbm: RBM, state: State, batch, rng) -> tuple[RBM, State]:
        return centered_sdcp_step(rbm, state, batch, rng, self.config, 1, self.config.k)
