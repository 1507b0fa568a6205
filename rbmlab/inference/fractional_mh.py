"""Metropolis–Hastings for the fractional RBM (Ping, Liu & Ihler 2016, Sec. 3.3).

The fractional RBM log p(v) = Σ_i c_i softplus(x_i) + b_vᵀv − log Z, x = vW + b_h (Eq. 11), has
no block sampler. Sec. 3.3 approximates it by a standard RBM p̃, which is Gibbs-sampled exactly:
Eq. 12 (softplus(c_i x_i)) for c_i ≤ 1, and for c_i > 1 the paper's split of c_i into its
integer part n_i and fractional remainder f_i ("we apply the bound when c_i > 1 by splitting c_i
... and apply the bound to the fractional part"): n_i copies of the unit plus one scaled by f_i,
n_i softplus(x_i) + softplus(f_i x_i). Below 1, n_i = 0 and f_i = c_i. One step, from v: one
block-Gibbs sweep of p̃, v → h → v' (the n_i copies' states drawn as their count, Binomial(n_i,
σ(x_i))), proposes v', accepted with probability min(1, A),

    A(v → v') = p(v') p̃(v) / (p(v) p̃(v')) = exp(G(x') − G(x)),
    G(x) = Σ_i f_i softplus(x_i) − softplus(f_i x_i)          (log p − log p̃, up to Z's)

because p̃'s Gibbs kernel T̃ is reversible for p̃ (p̃(v) T̃(v → v') = p̃(v') T̃(v' → v)), so the
T̃ terms of the general ratio cancel (the paper's last display of Sec. 3.3; b_vᵀv and the integer
parts cancel too). Each term, f·log1p(e^{−|x|}) − log1p(e^{−|f x|}) + min(f, 0)·|x|, is evaluated
without cancellation; for 0 ≤ f ≤ 1 it lies in [(f − 1) log 2, 0] (Prop. 3.2), so the acceptance
degrades with Σ_i (1 − f_i), not with the weights' size nor with how large c_i is (Eq. 12 read
literally for c_i > 1 would be off by up to (c_i − 1) log 2 per unit).

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
    """Σ_i c_i softplus(x_i) − softplus(c_i x_i) per row (x (..., B, n), c (..., 1, n)), each
    term without cancellation: log p − log p̃ of Eqs. 11 and 12 (with the remainders f_i for c_i:
    the module docstring's G)."""
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


def split(c):
    """(n, f) with c = n + f: n the integer part of each c_i ≥ 1 (0 below 1), f the remainder
    (Sec. 3.3's split; f = c where c < 1, negative c included)."""
    xp = namespace(c)
    n = xp.where(c >= 1, xp.floor(c), 0.0).astype(c.dtype)
    return n, c - n


def mh_step(model, v, x, rng, beta: float = 1.0, field=None):
    """One Sec. 3.3 step of every chain at inverse temperature ``beta`` (1: the model) and visible
    field ``field`` (None: b_v): the target ∝ exp(Σ c_i softplus(β x_i) + fieldᵀv), the proposal
    one Gibbs sweep of Σ n_i softplus(β x_i) + softplus(f_i β x_i) + fieldᵀv (module docstring).
    ``x`` = vW + b_h of the states ``v``. Returns (v, x, accepted), a boolean per chain."""
    xp = model.xp
    n, f = split(model.c[..., None, :])
    bx = x * beta
    h = Bernoulli.sample_(bx * f, rng)  # the remainder's unit | v
    h *= f
    if bool(xp.any(n > 0)):  # the n_i copies | v: a count
        p = 1.0 / (1.0 + xp.exp(-bx.astype(xp.float64)))
        h += rng.binomial(xp.broadcast_to(n, bx.shape).astype(xp.int64), p).astype(h.dtype)
    a_v = h @ model.W.swapaxes(-1, -2)
    if beta != 1.0:
        a_v *= beta
    field = model.b_v if field is None else field
    v_new = Bernoulli.sample_(a_v, rng, bias=field[..., None, :])  # v' ~ p̃_β(v | h)
    x_new = model.hidden_inputs(v_new)
    log_a = coefficient_gap(beta * x_new, f) - coefficient_gap(bx, f)
    accepted = uniform(rng, log_a.shape, log_a.dtype) < xp.exp(xp.minimum(log_a, 0.0))  # u < min(1, A)
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
    """The fractional RBM's sampler (Sec. 3.3): ``steps`` Metropolis–Hastings steps with a Gibbs
    sweep of the approximating standard RBM as the proposal (Eq. 12, with c_i > 1 split).
    ``acceptance``: the fraction accepted over the last run."""

    config_class = FractionalMHConfig
    requires = (FractionalUnits,)
    units = {"visible": BERNOULLI, "hidden": BERNOULLI}  # the softplus of Eq. 11

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
