"""Metropolis–Hastings for the fractional RBM (Ping, Liu & Ihler 2016, Sec. 3.3).

The fractional RBM log p(v) = Σ_i c_i softplus(x_i) + b_vᵀv − log Z, x = vW + b_h (Eq. 11), has
no block sampler; Eq. 12's standard RBM p̃ (softplus(c_i x_i), rbmlab.models.fractional_rbm)
approximates it (Prop. 3.2) and is Gibbs-sampled exactly. Sec. 3.3's step: from v, one
block-Gibbs sweep of p̃, v → h → v', proposes v', accepted with probability min(1, A),

    A(v → v') = p(v') p̃(v) / (p(v) p̃(v')) = exp(G(x') − G(x)),
    G(x) = Σ_i c_i softplus(x_i) − softplus(c_i x_i)                      (log p − log p̃, up to Z's)

because p̃'s Gibbs kernel T̃ is reversible for p̃ (p̃(v) T̃(v → v') = p̃(v') T̃(v' → v)), so the
T̃ terms of the general ratio cancel (the paper's last display of Sec. 3.3; b_vᵀv cancels too).
Each term, c·log1p(e^{−|x|}) − log1p(e^{−|c x|}) + min(c, 0)·|x|, is evaluated without
cancellation; for 0 ≤ c it lies between 0 and (1 − c) log 2 (c ≤ 1) or (c − 1) log 2 (c ≥ 1),
so the acceptance degrades with Σ_i |1 − c_i|, not with the weights' size.

Every chain accepts or rejects on its own (one uniform per chain and step); the proposal's
vW serves the next step's x, so a step is the two products of a Gibbs sweep (one more to start).
With every c_i = 1 the model is the RBM (Prop. 3.1), p̃ = p and A = 1: the step is then exactly
block Gibbs (:func:`rbmlab.inference.block_gibbs.gibbs_chain`, the same draws). Runs in the
model's dtype (float32 by default). The same step at inverse temperature β, with the visible
field of AIS's path, is AIS's transition for this model (rbmlab.evaluators.ais_fractional).
"""
from __future__ import annotations

from dataclasses import dataclass

from rbmlab.backend import namespace
from rbmlab.backend.ops import ignore_overflow, uniform
from rbmlab.inference.base import InferenceConfig, InferenceMethod
from rbmlab.inference.block_gibbs import gibbs_chain
from rbmlab.models.base import FractionalUnits
from rbmlab.units import Bernoulli
from rbmlab.units.requirements import BERNOULLI
from rbmlab.validation import option


def coefficient_gap(x, c):
    """G(x) = Σ_i c_i softplus(x_i) − softplus(c_i x_i) per row (x (..., B, n), c (..., 1, n)):
    log p − log p̃ of Eqs. 11 and 12, each term without cancellation (module docstring)."""
    xp = namespace(x)
    a = xp.abs(x)
    with ignore_overflow(xp):
        g = c * xp.log1p(xp.exp(-a))
        g -= xp.log1p(xp.exp(-xp.abs(c) * a))
    g += xp.minimum(c, 0.0) * a
    return g.sum(axis=-1)


def all_whole(model) -> bool:
    """Every c_i = 1: the model is the RBM of its units (Prop. 3.1)."""
    return bool(model.xp.all(model.c == 1))


def mh_step(model, v, x, rng, beta: float = 1.0, field=None):
    """One Sec. 3.3 step of every chain at inverse temperature ``beta`` (1: the model) and visible
    field ``field`` (None: b_v): the target ∝ exp(Σ c_i softplus(β x_i) + fieldᵀv), the proposal
    one Gibbs sweep of softplus(c_i β x_i) + fieldᵀv. ``x`` = vW + b_h of the states ``v``.
    Returns (v, x, accepted) with ``accepted`` a boolean per chain."""
    xp = model.xp
    c = model.c[..., None, :]
    h = Bernoulli.sample_(x * (c * beta), rng)                      # h ~ p̃_β(h | v)
    a_v = (h * c) @ model.W.swapaxes(-1, -2)
    if beta != 1.0:
        a_v *= beta
    field = model.b_v if field is None else field
    v_new = Bernoulli.sample_(a_v, rng, bias=field[..., None, :])   # v' ~ p̃_β(v | h)
    x_new = model.hidden_inputs(v_new)
    log_a = coefficient_gap(beta * x_new, c) - coefficient_gap(beta * x, c)
    accepted = uniform(rng, log_a.shape, log_a.dtype) < xp.exp(xp.minimum(log_a, 0.0))   # u < min(1, A)
    keep = accepted[..., None]
    return xp.where(keep, v_new, v), xp.where(keep, x_new, x), accepted


def mh_chain(model, v, rng, steps: int):
    """``steps`` Sec. 3.3 steps from the states ``v`` (never modified); (last states, fraction of
    proposals accepted). Exactly block Gibbs (acceptance 1) when every c_i = 1."""
    if steps < 1:
        return v, float("nan")
    if all_whole(model):
        return gibbs_chain(model.rbm(), v, rng, steps), 1.0
    x = model.hidden_inputs(v)
    accepted = 0
    for _ in range(steps):
        v, x, ok = mh_step(model, v, x, rng)
        accepted += int(ok.sum())
    return v, accepted / (steps * ok.size)


@dataclass
class FractionalMHConfig(InferenceConfig):
    name: str = option("fractional_mh", "inference method")


class FractionalMH(InferenceMethod):
    """The fractional RBM's sampler (Sec. 3.3): ``steps`` Metropolis–Hastings steps with Eq. 12's
    Gibbs sweep as the proposal. ``acceptance``: the fraction accepted over the last run."""

    config_class = FractionalMHConfig
    requires = (FractionalUnits,)
    units = {"visible": BERNOULLI, "hidden": BERNOULLI}   # the softplus of Eq. 11

    def __init__(self, config=None):
        super().__init__(config)
        self.acceptance = float("nan")

    def run(self, model, x, rng, steps: int):
        out, self.acceptance = mh_chain(model, x, rng, steps)
        return out

    def step_cost(self, model, rows: int, steps: int) -> float:
        """Per step the Gibbs sweep's products with W (hWᵀ, v'W; v'W is the next step's x) and
        one more for the first x: rows·n_v·n_h·(2·steps + 1); block Gibbs's 2·steps when every
        c_i = 1."""
        products = 2 * steps + (0 if all_whole(model) or steps == 0 else 1)
        return float(rows * model.n_visible * model.n_hidden * products)
