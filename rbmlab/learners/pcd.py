"""Persistent contrastive divergence PCD-k (Tieleman 2008): the negative chains never restart."""
from __future__ import annotations

from dataclasses import dataclass

from rbmlab.config import LearnerConfig, _check
from rbmlab.inference.gibbs import gibbs_chain
from rbmlab.learners.base import State, sgd_update, sufficient_statistics
from rbmlab.models.rbm import RBM


@dataclass
class PCDConfig(LearnerConfig):
    name: str = "pcd"
    k: int = 1          # Gibbs sweeps per update
    n_chains: int = 0   # persistent chains; 0 = one per batch element

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.k >= 1, "learner.k", f"must be >= 1, got {self.k}")
        _check(self.n_chains >= 0, "learner.n_chains", f"must be >= 0, got {self.n_chains}")


class PCD:
    config_class = PCDConfig
    updates_per_step = 1

    def __init__(self, config: PCDConfig):
        self.config = config

    def init_state(self, rbm: RBM, train, rng) -> State:
        """Chains start at the first training examples (dcp notes §8 item 6), tiled if needed."""
        xp = rbm.xp
        bs = self.config.batch_size
        n = self.config.n_chains or (train.shape[0] if bs == "full" else min(bs, train.shape[0]))
        reps = -(-n // train.shape[0])
        chains = xp.concatenate([train] * reps, axis=0)[:n] if reps > 1 else train[:n]
        return {"chains": xp.array(chains, copy=True)}

    def step(self, rbm: RBM, state: State, batch, rng) -> tuple[RBM, State]:
        positive = sufficient_statistics(rbm, batch)
        chains = gibbs_chain(rbm, state["chains"], rng, self.config.k)
        state = {**state, "chains": chains}
        negative = sufficient_statistics(rbm, chains)
        return sgd_update(rbm, positive - negative, state, self.config)
