"""Persistent contrastive divergence PCD-k (Tieleman 2008): the negative chains never restart."""
from __future__ import annotations

from dataclasses import dataclass

from rbmlab.learners.base import Learner, LearnerConfig
from rbmlab.validation import option


@dataclass
class PCDConfig(LearnerConfig):
    name: str = option("pcd", "learner")
    k: int = option(1, "sampler steps per update", lo=1)
    n_chains: int = option(0, "persistent chains; 0 = one per batch element", lo=0, hi=10**6)


class PCD(Learner):
    config_class = PCDConfig

    def init_state(self, model, train, rng):
        """Chains start at the first training examples (dcp notes §8 item 6), tiled if needed."""
        xp, data = model.xp, train.inputs
        bs = self.config.batch_size
        n = self.config.n_chains or (data.shape[0] if bs == "full" else min(bs, data.shape[0]))
        reps = -(-n // data.shape[0])
        chains = xp.concatenate([data] * reps, axis=0)[:n] if reps > 1 else data[:n]
        return {"chains": xp.array(chains, copy=True)}

    def step(self, model, state, batch, rng):
        grad, chains = self.contrastive_gradient(model, batch.inputs, state["chains"], rng, self.config.k)
        return self.update(model, grad, {**state, "chains": chains})
