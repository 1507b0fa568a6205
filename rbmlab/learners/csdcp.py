"""Centered S-DCP, CS-DCP (Upadhya & Sastry 2017, dcp Alg. 4).

S-DCP on the centered RBM (:mod:`rbmlab.models.centered`). Per mini-batch, with ∇g frozen at θ(t):
the data's hidden probabilities H_p and the batch means μ_batch = ⟨v⟩, λ_batch = ⟨H_p⟩ are taken
once; then d times: K' Gibbs sweeps continue the chain; the offsets slide towards the batch means
(μ ← (1−ν_μ)μ + ν_μ μ_batch, same for λ) with the biases re-parameterised so the distribution is
unchanged; the centered gradient

    ∇W = ⟨(v − μ)(h − λ)ᵀ⟩_data − ⟨(v − μ)(h − λ)ᵀ⟩_chain,  ∇b = ⟨v⟩_d − ⟨v⟩_c,  ∇c = ⟨h⟩_d − ⟨h⟩_c

(hidden probabilities for h) makes one SGD step, its data term fixed at the first inner step
(Alg. 4 literally: after the first offset move). The model the runner sees, evaluates and saves
is the equivalent plain RBM; the offsets live in the learner state.
"""
from __future__ import annotations

from dataclasses import dataclass

from rbmlab.config import LearnerConfig, _check
from rbmlab.inference.gibbs import gibbs_chain
from rbmlab.learners.base import State, Stats, sgd_update
from rbmlab.models.centered import CenteredRBM
from rbmlab.models.rbm import RBM, hidden_probs


@dataclass
class CenteringConfig(LearnerConfig):
    """Offsets of the centered learners (CS-DCP, CG)."""

    nu_mu: float = 0.01    # sliding factor of the visible offsets
    nu_lam: float = 0.01   # sliding factor of the hidden offsets
    lam0: float = 0.5      # initial hidden offsets (the visible ones start at the training mean)

    def __post_init__(self) -> None:
        super().__post_init__()
        for key in ("nu_mu", "nu_lam", "lam0"):
            value = getattr(self, key)
            _check(0.0 <= value <= 1.0, f"learner.{key}", f"must be in [0, 1], got {value}")


@dataclass
class CSDCPConfig(CenteringConfig):
    name: str = "csdcp"
    d: int = 6             # inner SGD steps per mini-batch
    k: int = 4             # K': Gibbs sweeps per inner step

    def __post_init__(self) -> None:
        super().__post_init__()
        _check(self.d >= 1, "learner.d", f"must be >= 1, got {self.d}")
        _check(self.k >= 1, "learner.k", f"must be >= 1, got {self.k}")


def init_offsets(rbm: RBM, train, lam0: float) -> State:
    """μ = training mean, λ = lam0, with the model's trial axes (dcp §4.1)."""
    xp = rbm.xp
    mu = xp.broadcast_to(train.mean(axis=0).astype(rbm.W.dtype), rbm.b_v.shape)
    return {"mu": xp.array(mu, copy=True), "lam": xp.full(rbm.b_h.shape, lam0, dtype=rbm.W.dtype)}


def centered_sdcp_step(rbm: RBM, state: State, batch, rng, cfg, d: int, k: int):
    """One mini-batch of Alg. 4 with d inner steps of K' = k sweeps; returns (plain RBM, state)."""
    centered = CenteredRBM.from_plain(rbm, state["mu"], state["lam"])
    h_data = hidden_probs(rbm, batch)                 # H_p at θ(t)
    mu_batch, lam_batch = batch.mean(axis=-2), h_data.mean(axis=-2)   # also ⟨v⟩_data, ⟨h⟩_data
    n = batch.shape[-2]
    chain = batch
    pos_W = None
    for _ in range(d):
        plain = centered.to_plain()
        chain = gibbs_chain(plain, chain, rng, k)
        h_chain = hidden_probs(plain, chain)
        centered = centered.move_offsets(
            (1.0 - cfg.nu_mu) * centered.mu + cfg.nu_mu * mu_batch,
            (1.0 - cfg.nu_lam) * centered.lam + cfg.nu_lam * lam_batch)
        mu, lam = centered.mu[..., None, :], centered.lam[..., None, :]
        if pos_W is None:                             # ∇_W g: once, after the first offset move
            pos_W = (batch - mu).swapaxes(-1, -2) @ (h_data - lam) / n
        grad = Stats(pos_W - (chain - mu).swapaxes(-1, -2) @ (h_chain - lam) / n,
                     mu_batch - chain.mean(axis=-2), lam_batch - h_chain.mean(axis=-2))
        params, state = sgd_update(centered.params, grad, state, cfg)
        centered = CenteredRBM(params, centered.mu, centered.lam)
    return centered.to_plain(), {**state, "mu": centered.mu, "lam": centered.lam}


class CSDCP:
    config_class = CSDCPConfig

    def __init__(self, config: CSDCPConfig):
        self.config = config

    @property
    def updates_per_step(self) -> int:
        return self.config.d

    def init_state(self, rbm: RBM, train, rng) -> State:
        return init_offsets(rbm, train, self.config.lam0)

    def step(self, rbm: RBM, state: State, batch, rng) -> tuple[RBM, State]:
        return centered_sdcp_step(rbm, state, batch, rng, self.config, self.config.d, self.config.k)
