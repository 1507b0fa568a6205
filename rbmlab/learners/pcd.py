"""Persistent contrastive divergence PCD-k (Tieleman 2008): the negative chains never restart.

With a sampler whose systematic scan continues where it stopped (single-site Gibbs with
``step=site``: k single-site updates per update, pmp Figure 2's persistent panels), the scan
position persists with the chains (in the learner state, so a resumed run goes on from it)."""
from __future__ import annotations

from dataclasses import dataclass

from rbmlab.learners.base import Learner, LearnerConfig, total
from rbmlab.limits import CHAINS, UPDATE_STEPS
from rbmlab.validation import option


@dataclass
class PCDConfig(LearnerConfig):
    name: str = option("pcd", "learner", label="learner")
    k: int = option(1, "sampler steps per update", lo=1, hi=UPDATE_STEPS,
                    label="sampler steps per update (k)")
    n_chains: int = option(0, "persistent chains; 0 = one per batch element", lo=0, hi=CHAINS,
                           label="negative-phase chains")
    chain_init: str = option("data", "chains start at the first training examples (tiled), or at "
                                      "uniform random states (pmp and GWG's code)", choices=("data", "uniform"),
                             neutral="data", label="chain start")


class PCD(Learner):
    config_class = PCDConfig
    generative = True   # an entrant of the cross-paper leaderboard

    def init_state(self, model, train, rng):
        """Chains start at the first training examples (our choice; dcp does not say), tiled if
        needed, or (``chain_init=uniform``) at uniform random states (as in the pmp authors' code;
        the paper does not say)."""
        xp, data = model.xp, train.inputs
        bs = self.config.batch_size
        n = self.config.n_chains or (data.shape[0] if bs == "full" else min(bs, data.shape[0]))
        if self.config.chain_init == "uniform":
            chains = model.visible_units.uniform_states(rng, data.shape[:-2] + (n, data.shape[-1]), data.dtype)
        else:
            reps = -(-n // data.shape[0])
            chains = xp.concatenate([data] * reps, axis=0)[:n] if reps > 1 else data[:n]
        state = {"chains": xp.array(chains, copy=True)}
        if self.sampler_for(type(model)).continues_scan:
            state["scan_position"] = 0
        return state

    def step(self, model, state, batch, rng):
        k, state = self.config.k, dict(state)
        scan = {"position": int(state["scan_position"])} if "scan_position" in state else {}
        grad, state["chains"] = self.contrastive_gradient(model, batch.inputs, state["chains"], rng, k, **scan)
        if scan:
            state["scan_position"] = (scan["position"] + k) % state["chains"].shape[-1]
        return self.update(model, grad, state)

    def step_cost(self, model, rows, state):
        """Block Gibbs, c chains: n_v·n_h·(2·rows + c·(2k + 2)) ([x; chains]W, 2k − 1 more sweep
        products, E[h|end], the joint W statistic), plus one optimizer update."""
        chains = state["chains"].shape[-2]
        return total(self.contrastive_cost(model, rows, chains, self.config.k), self.update_cost(model))
