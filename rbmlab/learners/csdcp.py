"""Centered S-DCP, CS-DCP (Upadhya & Sastry 2017, dcp Alg. 4).

S-DCP on the centered RBM (:mod:`rbmlab.models.centered`). Per mini-batch, with ∇g frozen at θ(t):
the data's hidden probabilities H_p and the batch means μ_batch = ⟨v⟩, λ_batch = ⟨H_p⟩ are taken
once; then d times: K' sampler steps continue the chain; the offsets slide towards the batch means
(μ ← (1−ν_μ)μ + ν_μ μ_batch, same for λ) with the biases re-parameterised so the distribution is
unchanged; the centered gradient

    ∇W = ⟨(v − μ)(h − λ)ᵀ⟩_data − ⟨(v − μ)(h − λ)ᵀ⟩_chain,  ∇b = ⟨v⟩_d − ⟨v⟩_c,  ∇c = ⟨h⟩_d − ⟨h⟩_c

(hidden probabilities for h) makes one SGD step, its data term fixed at the first inner step
(Alg. 4 literally: after the first offset move). The model the runner sees, evaluates and saves
is the equivalent plain RBM; the offsets live in the learner state.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.learners.base import Learner, LearnerConfig, total
from rbmlab.limits import UPDATE_STEPS, exceeds
from rbmlab.models.base import Bipartite
from rbmlab.models.centered import CenteredRBM
from rbmlab.models.rbm import BinaryLayers
from rbmlab.units.requirements import DISCRETE
from rbmlab.validation import invalid, option


@dataclass
class CenteringConfig(LearnerConfig):
    """Offsets of the centered learners (CS-DCP, CG)."""

    nu_mu: float = option(
        0.01, "sliding factor of the visible offsets", lo=0, hi=1, label="visible offset sliding factor"
    )
    nu_lam: float = option(
        0.01, "sliding factor of the hidden offsets", lo=0, hi=1, label="hidden offset sliding factor"
    )
    lam0: float = option(
        0.5, "initial hidden offsets (visible: the training mean)", lo=0, hi=1, label="initial hidden offsets"
    )


@dataclass
class CSDCPConfig(CenteringConfig):
    name: str = option("csdcp", "learner", label="learner")
    d: int = option(
        6, "inner SGD steps per mini-batch", lo=1, hi=UPDATE_STEPS, label="inner steps per mini-batch (d)"
    )
    k: int = option(
        4, "K': sampler steps per inner step", lo=1, hi=UPDATE_STEPS, label="sampler steps per update (k)"
    )

    def check(self) -> None:
        if problem := exceeds(UPDATE_STEPS, self.d * self.k, "d x k (sampler sweeps an update)"):
            raise invalid("k", problem)


class CenteredLearner(Learner):
    units = {"visible": DISCRETE, "hidden": DISCRETE}  # centred statistics of any discrete layer (dcp Alg. 4)
    """Alg. 4's mini-batch step on the centered RBM (shared by CS-DCP and CG)."""

    requires = (Bipartite,)
    packs = True

    def init_state(self, model, train, rng):
        """μ = training mean, λ = lam0, with the model's trial axes (dcp §4.1)."""
        xp = model.xp
        mu = xp.broadcast_to(train.inputs.mean(axis=0).astype(model.W.dtype), model.b_v.shape)
        return {
            "mu": xp.array(mu, copy=True),
            "lam": xp.full(model.b_h.shape, self.config.lam0, dtype=model.W.dtype),
        }

    def centered_step(self, rbm, state, batch, rng, d: int, k: int):
        """One mini-batch with d inner steps of K' = k sampler steps; returns (plain RBM, state)."""
        cfg = self.config
        batch = batch.inputs
        centered = CenteredRBM.from_plain(rbm, state["mu"], state["lam"])
        h_data = rbm.hidden_probs(batch)  # H_p at θ(t)
        mu_batch, lam_batch = batch.mean(axis=-2), h_data.mean(axis=-2)  # also ⟨v⟩_data, ⟨h⟩_data
        n = batch.shape[-2]
        chain = batch
        pos_W = None
        for _ in range(d):
            plain = centered.to_plain()
            chain = self.sample(plain, chain, rng, k)
            h_chain = plain.hidden_probs(chain)
            centered = centered.move_offsets(
                (1.0 - cfg.nu_mu) * centered.mu + cfg.nu_mu * mu_batch,
                (1.0 - cfg.nu_lam) * centered.lam + cfg.nu_lam * lam_batch,
            )
            mu, lam = centered.mu[..., None, :], centered.lam[..., None, :]
            if pos_W is None:  # ∇_W g: once, after the first offset move
                pos_W = (batch - mu).swapaxes(-1, -2) @ (h_data - lam) / n
            grad = {
                "W": pos_W - (chain - mu).swapaxes(-1, -2) @ (h_chain - lam) / n,
                "b_v": mu_batch - chain.mean(axis=-2),
                "b_h": lam_batch - h_chain.mean(axis=-2),
            }
            params, state = self.update(centered.params, grad, state)
            centered = CenteredRBM(params, centered.mu, centered.lam)
        return centered.to_plain(), {**state, "mu": centered.mu, "lam": centered.lam}

    def centered_cost(self, model, rows: int, d: int, k: int) -> float | None:
        """MACs of :meth:`centered_step`: block Gibbs, n_v·n_h·(rows·(2 + d·(2k + 2)) + 4d + 4):
        the data's E[h|v] and centered W statistic once; per inner step k sweeps, the chain's
        E[h|v] and W statistic, and the offset moves' matrix-vector products (from_plain and the
        last to_plain 2 each, to_plain and move_offsets 2 each per inner step); d updates."""
        if not isinstance(model, BinaryLayers):
            return None
        unit = model.n_visible * model.n_hidden
        products = (rows * (2 + 2 * d) + 4 * d + 4) * unit
        return total(
            *(self.sampler_cost(model, rows, k) for _ in range(d)), products, self.update_cost(model, d)
        )


class CSDCP(CenteredLearner):
    """Centered S-DCP, CS-DCP (Upadhya & Sastry 2017, dcp Alg. 4): S-DCP on the centered RBM, ``d``
    inner steps of ``k`` (K') sampler steps each, the offsets sliding towards the batch means at rates
    ``nu_mu`` and ``nu_lam``.

    Registered as ``csdcp``; options in :class:`CSDCPConfig`.
    """

    config_class = CSDCPConfig
    generative = True  # an entrant of the cross-paper leaderboard

    @property
    def updates_per_step(self) -> int:
        return self.config.d

    def step(self, model, state, batch, rng):
        return self.centered_step(model, state, batch, rng, self.config.d, self.config.k)

    def step_cost(self, model, rows, state):
        return self.centered_cost(model, rows, self.config.d, self.config.k)
