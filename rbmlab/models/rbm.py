"""The binary restricted Boltzmann machine.

Units are in {0, 1}. With W of shape (n_visible, n_hidden):

    E(v, h) = −vᵀWh − b_vᵀv − b_hᵀh                      (dcp eq. 1, W transposed)
    F(v)    = −b_vᵀv − Σ_j softplus((vW + b_h)_j)           free energy, p(v) = e^{−F(v)} / Z
    p(h_j = 1 | v) = σ((vW + b_h)_j),   p(v_i = 1 | h) = σ((Whᵀ + b_v)_i)

Batches are rows: v has shape (batch, n_visible). Parameters may carry leading axes (one RBM
per trial); the functions broadcast over them.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from rbmlab.backend import namespace
from rbmlab.ops import sigmoid, softplus


@dataclass(frozen=True)
class RBM:
    W: Any    # (..., n_visible, n_hidden)
    b_v: Any  # (..., n_visible)
    b_h: Any  # (..., n_hidden)

    @property
    def n_visible(self) -> int:
        return self.W.shape[-2]

    @property
    def n_hidden(self) -> int:
        return self.W.shape[-1]

    @property
    def xp(self):
        return namespace(self.W)

    def map(self, fn) -> "RBM":
        """The RBM with ``fn`` applied to each parameter array (dtype casts, host/device moves)."""
        return RBM(fn(self.W), fn(self.b_v), fn(self.b_h))

    def astype(self, dtype) -> "RBM":
        return self.map(lambda a: a.astype(dtype))

    def replace(self, **changes) -> "RBM":
        return replace(self, **changes)

    @property
    def n_trials(self) -> int:
        """Models along the leading axis; 0 for a single model without one."""
        return self.W.shape[0] if self.W.ndim == 3 else 0

    def trial(self, t: int) -> "RBM":
        return self.map(lambda a: a[t])

    def is_finite(self) -> bool:
        return all(self.finite_trials())

    def finite_trials(self) -> list[bool]:
        """Per trial: are all its parameters finite? (One entry for a single model.)"""
        xp = self.xp
        ok = (xp.isfinite(self.W).all(axis=(-2, -1)) & xp.isfinite(self.b_v).all(axis=-1)
              & xp.isfinite(self.b_h).all(axis=-1))
        return [bool(x) for x in xp.reshape(ok, (-1,)).tolist()]


def _row(x):
    """A bias vector (..., n) as a row (..., 1, n) that broadcasts against a batch (..., B, n)."""
    return x[..., None, :]


def base_rate_bias(data_mean, clip: float = 1e-3):
    """Visible biases of the base-rate model: logit(clip(mean, clip, 1 − clip)) (Hinton 2010)."""
    xp = namespace(data_mean)
    p = xp.clip(xp.asarray(data_mean), clip, 1.0 - clip)
    return xp.log(p) - xp.log1p(-p)


def init_rbm(xp, rng, n_visible: int, n_hidden: int, *, weight_std: float = 0.01,
             visible_bias: str = "base_rate", data_mean=None, dtype="float32",
             clip: float = 1e-3, trials: int = 0) -> RBM:
    """W ~ N(0, weight_std²), b_h = 0, b_v = logit(clip(data_mean)) ("base_rate") or 0 ("zero").

    ``trials`` > 0 gives that many independent models along a leading axis (one draw of W each).
    """
    lead = (trials,) if trials else ()
    W = weight_std * rng.standard_normal(lead + (n_visible, n_hidden), dtype=xp.dtype(dtype))
    b_h = xp.zeros(lead + (n_hidden,), dtype=dtype)
    if visible_bias == "base_rate":
        if data_mean is None:
            raise ValueError("visible_bias='base_rate' needs data_mean")
        b_v = base_rate_bias(xp.asarray(data_mean, dtype=dtype), clip)
    elif visible_bias == "zero":
        b_v = xp.zeros(n_visible, dtype=dtype)
    else:
        raise ValueError(f"visible_bias must be 'base_rate' or 'zero', got {visible_bias!r}")
    return RBM(W, xp.array(xp.broadcast_to(b_v.astype(dtype), lead + (n_visible,))), b_h)


def hidden_logits(rbm: RBM, v):
    """Pre-activations vW + b_h of the hidden units, (..., B, n_hidden)."""
    out, bias = v @ rbm.W, _row(rbm.b_h)
    if out.ndim < bias.ndim or out.dtype != bias.dtype:   # a single row, or mixed precision
        return out + bias
    out += bias   # in place: saves a (B, n) pass and allocation per call
    return out


def visible_logits(rbm: RBM, h):
    """Pre-activations hWᵀ + b_v of the visible units, (..., B, n_visible)."""
    return h @ rbm.W.swapaxes(-1, -2) + _row(rbm.b_v)


def hidden_probs(rbm: RBM, v):
    logits = hidden_logits(rbm, v)   # a fresh array: σ is taken in place
    return sigmoid(logits, out=logits)


def visible_probs(rbm: RBM, h):
    logits = visible_logits(rbm, h)
    return sigmoid(logits, out=logits)


def energy(rbm: RBM, v, h):
    """E(v, h) per row."""
    xp = rbm.xp
    return -(xp.sum((v @ rbm.W) * h, axis=-1)
             + xp.sum(v * _row(rbm.b_v), axis=-1)
             + xp.sum(h * _row(rbm.b_h), axis=-1))


def free_energy(rbm: RBM, v):
    """F(v) = −b_vᵀv − Σ_j softplus((vW + b_h)_j) per row; p(v) ∝ exp(−F(v))."""
    xp = rbm.xp
    return -xp.sum(v * _row(rbm.b_v), axis=-1) - xp.sum(softplus(hidden_logits(rbm, v)), axis=-1)
