"""Parallel tempering (replica exchange; Swendsen & Wang 1986, Geyer 1991) for bipartite models.

R replicas of every chain run at inverse temperatures 1 = β_0 > β_1 > … > β_{R−1} > 0 of the
tempered joint p_β(v, h) ∝ exp(−β E(v, h)) (every parameter scaled by β). A step is one block-Gibbs
half-sweep h ~ p_β(h | v) of all replicas in one product (replicas on a leading axis), then a
swap proposal between adjacent replicas on the joint (v, h), accepted with probability
min(1, exp((β_k − β_{k+1})(E_k − E_{k+1}))) — pairs (0,1), (2,3), … on even steps, (1,2), (3,4), …
on odd ones (the deterministic even-odd scheme) —, then v ~ p_β(v | h). The chain returned is the
β = 1 replica. −E = h·(vW + b_h) + b_v·v is read off the half-step's product and the drawn states,
so only the unit types' ``sample_`` is used (any unit type with p(x | a) ∝ exp(a·x)).

Ladders: ``geometric`` β_k = β_min^{k/(R−1)}; ``adaptive`` starts there and moves the log-gaps
ρ_k = log(log β_k − log β_{k+1}) by Robbins–Monro, ρ_k ← ρ_k + γ_n (α_k − α*) with γ_n =
adapt_rate · (n + 1)^{−0.6} at the sampler's n-th step, α_k the mean swap acceptance probability of
pair k at that step and α* = ``target_swap_rate`` (Miasojedow, Moulines & Vihola 2013);
ρ_k is kept in ``LOG_GAP_RANGE``, and the ladder above ``beta_min`` (a target no gap reaches — an
easy model — would otherwise drive β to 0: the gaps then widen to the floor and no further).

Persistent state (``init_state``; PCD keeps it, PT-PCD of Desjardins et al. 2010): ``replicas``
(the v of replicas 1…R−1), ``betas``, ``swap_rate`` (per adjacent pair: the mean acceptance
probability of its proposals, cumulative over the first ``SWAP_WINDOW``, then exponentially
averaged with weight 1/SWAP_WINDOW; 0 before the pair's first proposal) and ``steps`` (steps
taken: the even/odd phase and γ_n).
Called without a state (an evaluator's draws), the replicas start as copies of x.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.backend.ops import uniform
from rbmlab.inference.base import InferenceConfig, InferenceMethod, chain_rows
from rbmlab.inference.block_gibbs import BlockGibbs
from rbmlab.limits import CHAINS
from rbmlab.models.base import Bipartite, ParityLayers, supports
from rbmlab.models.layer_stack import EVEN, ODD
from rbmlab.validation import option

SWAP_WINDOW = 100  # proposals a pair's swap_rate averages over (exponential weight 1/SWAP_WINDOW)
RM_EXPONENT = 0.6  # γ_n ∝ (n + 1)^−0.6: Σγ = ∞, Σγ² < ∞
LOG_GAP_RANGE = (np.log(1e-4), np.log(10.0))  # ρ_k clipped: adjacent β ratios in [e^−10, e^−0.0001]


@dataclass
class ParallelTemperingConfig(InferenceConfig):
    name: str = option("parallel_tempering", "inference method")
    n_temperatures: int = option(
        10, "replicas R of each chain (β_0 = 1 is the model)", lo=2, hi=CHAINS, label="temperatures"
    )
    ladder: str = option(
        "geometric",
        "geometric: β_k = beta_min^(k/(R−1)); adaptive: from there, log-gaps moved toward target_swap_rate",
        choices=("geometric", "adaptive"),
        label="temperature ladder",
    )
    beta_min: float = option(
        0.1,
        "the hottest replica's inverse temperature (the adaptive ladder's start and floor)",
        lo=0,
        hi=1,
        open_lo=True,
        open_hi=True,
        label="smallest β",
    )
    target_swap_rate: float = option(
        0.234,
        "ladder=adaptive: the swap acceptance rate each adjacent pair is driven to",
        lo=0,
        hi=1,
        open_lo=True,
        open_hi=True,
        label="target swap rate",
    )
    adapt_rate: float = option(
        1.0,
        "ladder=adaptive: γ_n = adapt_rate·(n + 1)^−0.6 on the log-gaps",
        lo=0,
        open_lo=True,
        label="ladder adaptation rate",
    )

    def unread(self) -> dict[str, str]:
        if self.ladder == "geometric":  # a fixed ladder: nothing adapts
            return dict.fromkeys(("target_swap_rate", "adapt_rate"), "applies to ladder=adaptive only")
        return {}


def geometric_ladder(n: int, beta_min: float) -> np.ndarray:
    """β_k = beta_min^{k/(n−1)}, k = 0…n−1 (float64): equal ratios from 1 down to beta_min."""
    return beta_min ** (np.arange(n) / (n - 1))


def log_gaps(betas):
    """ρ_k = log(log β_k − log β_{k+1}) of a strictly decreasing positive ladder."""
    xp = _xp(betas)
    return xp.log(-xp.diff(xp.log(betas)))


def ladder_of(rho):
    """The ladder with log-gaps ρ: β_0 = 1, β_{k+1} = β_k exp(−e^{ρ_k})."""
    xp = _xp(rho)
    return xp.exp(-xp.concatenate([xp.zeros(1, dtype=rho.dtype), xp.cumsum(xp.exp(rho))]))


def floored(rho, beta_min: float):
    """Log-gaps ρ scaled by one factor where needed so that the ladder ends at or above
    ``beta_min`` (Σ e^{ρ_k} ≤ −log β_min): where every pair swaps more often than the target (an
    easy model), the adaptive ladder widens to the floor and no further."""
    xp = _xp(rho)
    spread, limit = xp.sum(xp.exp(rho)), -np.log(beta_min)
    return rho + xp.minimum(0.0, xp.log(limit / spread))


def swap_log_ratio(beta_a, beta_b, neg_energy_a, neg_energy_b):
    """log of the Metropolis ratio for exchanging the states of replicas at β_a and β_b, given
    their energies at β = 1 as −E: (β_a − β_b)(E_a − E_b)."""
    return (beta_a - beta_b) * (neg_energy_b - neg_energy_a)


def swap_probability(beta_a, beta_b, neg_energy_a, neg_energy_b):
    """min(1, exp(:func:`swap_log_ratio`)): the acceptance probability of the exchange."""
    xp = _xp(neg_energy_a)
    return xp.exp(xp.minimum(swap_log_ratio(beta_a, beta_b, neg_energy_a, neg_energy_b), 0.0))


def exchange_(states, neg_energy, betas, parity: int, rng):
    """Propose exchanging replicas k and k+1 for every k ≡ ``parity`` (mod 2), per chain; accepted
    exchanges swap the rows of each array of ``states`` (R, ..., n) in place. ``neg_energy``
    (R, ...): −E at β = 1 of each replica's joint state. Returns the acceptance probabilities
    (pairs, ...), or None when no pair has that parity."""
    xp, R = _xp(neg_energy), neg_energy.shape[0]
    if parity >= R - 1:
        return None
    lo, hi = slice(parity, R - 1, 2), slice(parity + 1, R, 2)
    shape = (-1,) + (1,) * (neg_energy.ndim - 1)
    e = neg_energy.astype(xp.float64)
    p = swap_probability(betas[lo].reshape(shape), betas[hi].reshape(shape), e[lo], e[hi])
    accept = (uniform(rng, p.shape, xp.float64) < p)[..., None]
    for s in states:
        moved = xp.where(accept, s[hi], s[lo])
        s[hi] = xp.where(accept, s[lo], s[hi])
        s[lo] = moved
    return p


def _xp(a):
    from rbmlab.backend import namespace  # noqa: PLC0415

    return namespace(a)


def bipartite(model):
    """``model`` as the two layers PT tempers: itself, or a DBM as the RBM between its even and odd
    layers (rbmlab.models.dbm.DBM.as_rbm: a chain state is the even layers, and that RBM's block
    Gibbs sweep is the DBM's sweep by parity, its free energy the DBM's with the odd layers
    summed out, so its tempered chains and swaps are the DBM's)."""
    return model if supports(type(model), Bipartite) else model.as_rbm()


class ParallelTempering(InferenceMethod):
    """``steps`` PT steps (module docstring) from ``x``; the β = 1 replica's states are returned."""

    config_class = ParallelTemperingConfig
    requires = (ParityLayers,)  # an RBM; a DBM as the RBM between its parities (bipartite())
    units = BlockGibbs.units  # the tempered conditionals are block Gibbs's, logits scaled by β
    persistent = True

    def settings_problem(self, settings, model_class: type) -> str | None:
        """A DBM is tempered as the RBM between its parities (:func:`bipartite`), one unit type to
        each of that RBM's layers: its even layers of one type (and q), its odd layers of one.
        ``settings["hidden"]``: one type per layer (rbmlab.units.requirements.written_per_layer)."""
        if supports(model_class, Bipartite):
            return None
        from rbmlab.models.dbm import settings_parity_problem  # noqa: PLC0415 (models import inference)

        problem = settings_parity_problem(settings)
        if problem is None:
            return None
        hidden, visible = str(settings.get("hidden", "bernoulli")), str(settings.get("visible", "bernoulli"))
        shown = hidden if len(set(hidden.split(","))) > 1 else hidden.split(",")[0]
        return (
            f"{shown} hidden units with {visible} visible ones; parallel_tempering tempers a DBM "
            f"as the RBM between its even and odd layers, one unit type and q on each ({problem})"
        )

    def init_state(self, model, chains, rng) -> dict:
        xp, c = model.xp, self.config
        rows = chain_rows(model, chains)
        replicas = xp.empty((c.n_temperatures - 1, *rows, chains.shape[-1]), dtype=chains.dtype)
        replicas[...] = chains
        return {
            "replicas": replicas,
            "betas": xp.asarray(geometric_ladder(c.n_temperatures, c.beta_min)),
            "swap_rate": xp.zeros(c.n_temperatures - 1),
            "steps": xp.asarray(0, dtype=xp.int64),
        }

    def run(self, model, x, rng, steps: int, state: dict | None = None):
        """x' (no ``state``), or (x', the new state) for a state of :meth:`init_state`'s keys."""
        model = bipartite(model)
        given = state is not None
        state = dict(state) if given else self.init_state(model, x, rng)
        xp, dtype = model.xp, x.dtype
        rows = chain_rows(model, x)
        v = xp.empty((self.config.n_temperatures, *rows, x.shape[-1]), dtype=dtype)
        v[0], v[1:] = x, state["replicas"]
        betas, rate = (
            xp.asarray(state["betas"], dtype=xp.float64),
            xp.array(state["swap_rate"], dtype=xp.float64),
        )
        start = int(state["steps"])
        v = self._steps(model, v, rng, steps, start, betas, rate)
        new = {
            "replicas": v[1:].copy(),
            "betas": betas,
            "swap_rate": rate,
            "steps": xp.asarray(start + steps, dtype=xp.int64),
        }
        return (v[0].copy(), new) if given else v[0].copy()

    def _steps(self, model, v, rng, steps: int, start: int, betas, rate):
        """``steps`` PT steps on the stacked replica states ``v`` (R, ..., B, n_v), in place;
        ``betas`` and ``rate`` are updated in place."""
        xp, R = model.xp, v.shape[0]
        Wt = model.W.swapaxes(-1, -2)
        b_h, b_v = model.b_h[..., None, :], model.b_v[..., None, :]
        field = xp.empty(v.shape[:-1] + (model.n_hidden,), dtype=v.dtype)
        h = xp.empty_like(field)
        column = (R,) + (1,) * (v.ndim - 1)
        for t in range(start, start + steps):
            beta = betas.astype(v.dtype).reshape(column)
            xp.matmul(v, model.W, out=field)
            field += b_h
            xp.multiply(field, beta, out=h)
            h = model.hidden_units.sample_(h, rng)
            neg_energy = xp.sum(h * field, axis=-1) + xp.sum(v * b_v, axis=-1)  # −E(v, h), β = 1
            self._swap(v, h, neg_energy, betas, rate, t, rng)
            xp.matmul(h, Wt, out=v)  # v's states are no longer needed once h is drawn and swapped
            v += b_v
            v *= beta
            v = model.visible_units.sample_(v, rng)
        return v

    def _swap(self, v, h, neg_energy, betas, rate, t: int, rng) -> None:
        """Step ``t``'s swap proposals (:func:`exchange_`); the pairs' swap rates and
        (ladder=adaptive) the log-gaps follow, in place."""
        parity = t % 2
        p = exchange_((v, h), neg_energy, betas, parity, rng)
        if p is None:
            return
        lo = slice(parity, v.shape[0] - 1, 2)
        alpha = p.reshape(p.shape[0], -1).mean(axis=1)
        rate[lo] += (alpha - rate[lo]) / min((t - parity) // 2 + 1, SWAP_WINDOW)  # proposals so far
        if self.config.ladder == "adaptive":  # Miasojedow, Moulines & Vihola 2013
            rho = log_gaps(betas)
            rho[lo] += (
                self.config.adapt_rate * (t + 1) ** -RM_EXPONENT * (alpha - self.config.target_swap_rate)
            )
            betas[...] = ladder_of(floored(_xp(rho).clip(rho, *LOG_GAP_RANGE), self.config.beta_min))

    def diagnostics(self, state: dict) -> dict[str, float]:
        """swap_rate_min, swap_rate_mean (over adjacent pairs) and beta_min of a state."""
        rate = state["swap_rate"]
        return {
            "swap_rate_min": float(rate.min()),
            "swap_rate_mean": float(rate.mean()),
            "beta_min": float(state["betas"][-1]),
        }

    def step_cost(self, model, rows: int, steps: int) -> float:
        """A block-Gibbs sweep of every replica: R·rows·n_v·n_h·2·steps (energies need no product);
        a DBM's n_v, n_h: its even and odd layers' widths (the RBM :func:`bipartite` makes, not
        built here)."""
        if supports(type(model), Bipartite):
            n_v, n_h = model.n_visible, model.n_hidden
        else:
            stack = model.layer_stack()
            n_v, n_h = stack.width(EVEN), stack.width(ODD)
        return float(self.config.n_temperatures * rows * n_v * n_h * 2 * steps)
