"""Persistent contrastive divergence PCD-k (Tieleman 2008): the negative chains never restart.

With a sampler whose systematic scan continues where it stopped (single-site Gibbs with
``step=site``: k single-site updates per update, pmp Figure 2's persistent panels), the scan
position persists with the chains (in the learner state, so a resumed run goes on from it). So
does a persistent sampler's own state (parallel tempering's replicas, ladder and swap rates:
PT-PCD, Desjardins et al. 2010), under ``sampler.<key>``, its diagnostics in every metrics row."""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.inference import INFERENCE
from rbmlab.learners.base import Learner, MeanFieldConfig, total
from rbmlab.limits import CHAINS, UPDATE_STEPS
from rbmlab.units.requirements import DISCRETE
from rbmlab.validation import option

SAMPLER_PREFIX = "sampler."  # a persistent sampler's state entries in the learner state


def sampler_state(state) -> dict | None:
    """The persistent sampler's entries of a learner state (prefix dropped), or None if none."""
    found = {k[len(SAMPLER_PREFIX) :]: v for k, v in state.items() if k.startswith(SAMPLER_PREFIX)}
    return found or None


@dataclass
class PCDConfig(MeanFieldConfig):
    name: str = option("pcd", "learner", label="learner")
    k: int = option(
        1, "sampler steps per update", lo=1, hi=UPDATE_STEPS, label="sampler steps per update (k)"
    )
    n_chains: int = option(
        0, "persistent chains; 0 = one per batch element", lo=0, hi=CHAINS, label="negative-phase chains"
    )
    chain_init: str = option(
        "data",
        "chains start at the first training examples (tiled), or at "
        "uniform random states (pmp and GWG's code)",
        choices=("data", "uniform"),
        neutral="data",
        label="chain start",
    )


class PCD(Learner):
    """Persistent contrastive divergence, PCD-k (Tieleman 2008): ``n_chains`` negative chains that never
    restart, advanced ``k`` sampler steps per update (a persistent sampler's state, e.g. parallel
    tempering's for PT-PCD, persists with them).

    Registered as ``pcd``; options (``k``, ``n_chains``, ``chain_init``) in :class:`PCDConfig`.
    """

    config_class = PCDConfig
    units = {"visible": DISCRETE, "hidden": DISCRETE}  # dcp eq. 6: statistics of any discrete layer
    generative = True  # an entrant of the cross-paper leaderboard
    packs = True
    mean_field_positive = True  # a DBM's data statistics (MeanFieldConfig)
    entrants = {"pt_pcd": ("learner.sampler=parallel_tempering",)}  # PT-PCD (Desjardins et al. 2010)

    def init_state(self, model, train, rng):
        """Chains start at the first training examples (our choice; dcp does not say), tiled if
        needed, or (``chain_init=uniform``) at uniform random states (as in the pmp authors' code;
        the paper does not say); a DBM's chains also hold layer 2, drawn by one upward pass
        (rbmlab.models.layer_stack.start_chains)."""
        xp, data = model.xp, train.inputs
        bs = self.config.batch_size
        n = self.config.n_chains or (data.shape[0] if bs == "full" else min(bs, data.shape[0]))
        if self.config.chain_init == "uniform":
            chains = model.visible_units.uniform_states(
                rng, data.shape[:-2] + (n, data.shape[-1]), data.dtype
            )
        else:
            reps = -(-n // data.shape[0])
            chains = xp.concatenate([data] * reps, axis=0)[:n] if reps > 1 else data[:n]
        state = {"chains": xp.array(model.chain_start(chains, rng), copy=True)}  # a DBM's: + layer 2
        sampler = self.sampler_for(type(model))
        if sampler.continues_scan:
            state["scan_position"] = 0
        if sampler.persistent:
            own = sampler.init_state(model, state["chains"], rng)
            state.update({SAMPLER_PREFIX + k: v for k, v in own.items()})
        return state

    def step(self, model, state, batch, rng):
        k, state = self.config.k, dict(state)
        scan = {"position": int(state["scan_position"])} if "scan_position" in state else {}
        own = sampler_state(state)
        if own is None:
            grad, state["chains"] = self.contrastive_gradient(
                model, batch.inputs, state["chains"], rng, k, **scan
            )
        else:
            grad, state["chains"], own = self.contrastive_gradient(
                model, batch.inputs, state["chains"], rng, k, sampler_state=own
            )
            state.update({SAMPLER_PREFIX + key: v for key, v in own.items()})
        if scan:
            state["scan_position"] = (scan["position"] + k) % state["chains"].shape[-1]
        return self.update(model, grad, state)

    def diagnostics(self, state):
        """The persistent sampler's (PT: swap_rate_min, swap_rate_mean, beta_min); none without."""
        own = sampler_state(state)
        return {} if own is None else INFERENCE.build(self.config.sampler).diagnostics(own)

    def step_cost(self, model, rows, state):
        """Block Gibbs, c chains: n_v·n_h·(2·rows + c·(2k + 2)) ([x; chains]W, 2k − 1 more sweep
        products, E[h|end], the joint W statistic), plus one optimizer update."""
        chains = state["chains"].shape[-2]
        return total(self.contrastive_cost(model, rows, chains, self.config.k), self.update_cost(model))
