"""The temperature α of Frank-Wolfe for infinite RBMs: α_t ← t or learned (frank_wolfe Alg. 1
line 6, Sec. 3.3, Appendix).

The model α q(w) with q = Σ_i γ_i δ(w_i) is the fractional RBM with coefficients c_i = α γ_i
(Eq. 11; rbmlab.models.fractional_rbm), α = Σ_i c_i. The step q_t = (1 − 1/t) q_{t−1} + (1/t) δ(w_t)
(β_t = 1/t) at temperature α_t makes

    c_i ← c_i (1 − 1/t) α_t / α_{t−1}   (the t − 1 old units),     c_t = α_t / t   (the new one).

``t``        α_t = t (Alg. 1; the paper's choice): from all c_i = 1 the model stays the RBM of its
             units (Prop. 3.1), the form ``alpha=t`` keeps for ``model=rbm`` with no c at all.
``learned``  "(optional: gradient descent)": α_t starts at α_{t−1} t / (t − 1), which leaves every
             c_i as it was and gives the new unit their mean (α_1 = 1 = t for the first unit;
             from all c_i = 1 this is α_t = t), then ascends L along α with q held, one step per
             step of the visible-bias loop on the same model samples (Alg. 1 lines 6–10, a joint
             ascent in (b, α); L is concave in α, Prop. 3.1):

                 α ← α + η_α ∇_α L,   ∇_α L = (1/N) Σ_n E_q[softplus(wᵀv_n)] − E_p E_q[softplus(wᵀv)]

             (Appendix; E_q[f] = Σ_i (c_i/α) f(w_i), the penalty (λ/2) E_q‖w‖² has no α), and
             every c_i scales with α. A step at most halves α (α > 0). η_α = 0 leaves α_t = t
             where it started there: exactly the ``t`` model (tests/test_frank_wolfe_alpha.py).

The data term of ∇_α depends on the units only, so it is formed once per unit (N·t·(n_v + 1)
multiply-adds); the model term costs the M bias chains' product with W (and q) per bias step.
"""

from __future__ import annotations

from rbmlab.backend import namespace
from rbmlab.backend.ops import softplus

CHUNK = 4096  # data rows per product when forming the data term


def next_coefficients(c, alpha: str):
    """The coefficients after one Frank-Wolfe step with β_t = 1/t under the rule ``alpha`` (t or
    learned), the new unit's last; ``c`` those of the t − 1 units before it (module docstring)."""
    xp = namespace(c)
    t = c.shape[-1] + 1
    old = float(c.sum(dtype=xp.float64))  # α_{t−1}
    if alpha == "t":
        c = c * (t - 1) / old if t > 1 else c  # (1 − 1/t) t / α_{t−1}; exactly 1 from all 1
        new = 1.0  # t / t
    else:
        new = old / (t - 1) if t > 1 else 1.0  # α_{t−1} t/(t − 1) / t: the old units' mean
    return xp.concatenate([c, xp.full(c.shape[:-1] + (1,), new, dtype=c.dtype)], axis=-1)


def mean_unit_softplus(model, v, weights=None, chunk: int = CHUNK) -> float:
    """E_q[softplus(wᵀv)] = Σ_i (c_i/α) softplus(x_i) averaged over the rows ``v`` (uniformly, or
    with ``weights`` summing to one: every state with its probability in tests), float64."""
    xp = model.xp
    q = model.c / model.c.sum(dtype=xp.float64).astype(model.dtype)
    total = 0.0
    for i in range(0, v.shape[0], chunk):
        per_row = softplus(model.hidden_inputs(v[i : i + chunk])) @ q
        total += float(
            (per_row if weights is None else per_row * weights[i : i + chunk]).sum(dtype=xp.float64)
        )
    return total / v.shape[0] if weights is None else total


class TemperatureAscent:
    """α ← α + lr ∇_α L with q held, for the units of ``model`` and the training rows ``data``."""

    def __init__(self, model, data, lr: float):
        self.lr = lr
        self.data_term = mean_unit_softplus(model, data)

    def gradient(self, model, chains, weights=None) -> float:
        """∇_α L with E_p over the model samples ``chains`` (or states with ``weights``)."""
        return self.data_term - mean_unit_softplus(model, chains, weights)

    def step(self, model, chains, weights=None):
        """The model with every c_i scaled by α' / α, α' = max(α + lr ∇_α L, α / 2)."""
        alpha = float(model.c.sum(dtype=model.xp.float64))
        new = max(alpha + self.lr * self.gradient(model, chains, weights), alpha / 2)
        return model.replace(c=model.c * (new / alpha))

    @staticmethod
    def cost(n_rows: int, model) -> float:
        """Multiply-adds of :func:`mean_unit_softplus` on ``n_rows`` rows: their product with W
        and the softplus values' with q, n_rows·n_h·(n_v + 1)."""
        return float(n_rows * model.n_hidden * (model.n_visible + 1))
