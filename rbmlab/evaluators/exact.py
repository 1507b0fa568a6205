"""Exact partition function, log-likelihood and sampling for RBMs with one small layer.

The smaller layer (``s`` units) is enumerated over all 2^s states in chunks; the other layer is
summed out analytically. For enumerated hidden states h,

    log Z = logsumexp_h [ b_hᵀh + Σ_i softplus((hWᵀ + b_v)_i) ]

and symmetrically when the visible layer is the smaller one. Matmuls run in the model dtype;
everything after them (softplus, sums, logsumexp) is accumulated in float64.
"""
from __future__ import annotations

from rbmlab.backend import namespace
from rbmlab.models.rbm import RBM, visible_logits
from rbmlab.ops import bernoulli, logsumexp, sigmoid


def _check_single(rbm: RBM) -> None:
    if rbm.W.ndim != 2:
        raise ValueError(f"expected a single RBM with 2-D W, got W of shape {tuple(rbm.W.shape)}")


def _bits(xp, ints, n: int, dtype):
    """Rows of the binary expansions of the integers ``ints`` (bit j -> column j)."""
    shifts = xp.arange(n, dtype=xp.int64)
    return ((ints[:, None] >> shifts[None, :]) & 1).astype(dtype)


def binary_states(xp, n: int, start: int, stop: int, dtype):
    """(stop − start, n) array whose rows are the binary expansions of start..stop−1."""
    if n > 62:
        raise ValueError(f"binary_states: n={n} bits do not fit in int64")
    return _bits(xp, xp.arange(start, stop, dtype=xp.int64), n, dtype)


def _layers(rbm: RBM):
    """(W_ab, bias_a, bias_b) with ``a`` the smaller layer, which gets enumerated."""
    if rbm.n_hidden <= rbm.n_visible:
        return rbm.W.T, rbm.b_h, rbm.b_v
    return rbm.W, rbm.b_v, rbm.b_h


def _neg_free_energy(W_ab, bias_a, bias_b, s):
    """−F(s) = bias_aᵀs + Σ softplus(s W_ab + bias_b) per row, float64 (matmul in model dtype)."""
    xp = namespace(W_ab)
    x = (s @ W_ab).astype(xp.float64)
    x += bias_b.astype(xp.float64)
    return s.astype(xp.float64) @ bias_a.astype(xp.float64) + _softplus_rowsum(xp, x)


def _softplus_rowsum(xp, x):
    """Σ_j softplus(x_j) per row as Σ max(x, 0) + Σ log(1 + e^{−|x|}); overwrites ``x``.

    Same float64 accuracy as logaddexp (the log term is bounded by log 2) at about half the cost.
    """
    pos = xp.sum(xp.maximum(x, 0.0), axis=-1)
    xp.abs(x, out=x)
    xp.negative(x, out=x)
    xp.exp(x, out=x)
    x += 1.0
    xp.log(x, out=x)
    return pos + xp.sum(x, axis=-1)


def _enumerated_neg_free_energies(rbm: RBM, chunk_size: int):
    """Yield (start, −F(s)) per chunk over all states s of the smaller layer."""
    xp = rbm.xp
    W_ab, bias_a, bias_b = _layers(rbm)
    n = W_ab.shape[0]
    total = 1 << n
    for start in range(0, total, chunk_size):
        stop = min(start + chunk_size, total)
        s = binary_states(xp, n, start, stop, rbm.W.dtype)
        yield start, _neg_free_energy(W_ab, bias_a, bias_b, s)


def log_partition(rbm: RBM, chunk_size: int = 4096, max_units: int = 25) -> float:
    """Exact log Z by enumerating the smaller layer (raises ValueError above ``max_units``)."""
    _check_single(rbm)
    n = min(rbm.n_visible, rbm.n_hidden)
    if n > max_units:
        raise ValueError(f"log_partition: smaller layer has {n} units > max_units={max_units}; "
                         "use AIS (rbmlab.evaluators.ais) instead")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    xp = rbm.xp
    parts = [logsumexp(neg_f) for _, neg_f in _enumerated_neg_free_energies(rbm, chunk_size)]
    return float(logsumexp(xp.stack(parts)))


def log_likelihood(rbm: RBM, v, log_z: float | None = None):
    """Per-row log p(v) = −F(v) − log Z in float64 (log Z computed exactly when not given)."""
    _check_single(rbm)
    xp = rbm.xp
    v = xp.asarray(v, dtype=rbm.W.dtype)
    if log_z is None:
        log_z = log_partition(rbm)
    return _neg_free_energy(rbm.W, rbm.b_v, rbm.b_h, v) - float(log_z)


def sample_exact(rbm: RBM, rng, n_samples: int, max_units: int = 20):
    """``n_samples`` exact samples from p(v), (n_samples, n_visible) in the model dtype.

    The smaller layer s is drawn from its marginal p(s) ∝ exp(−F(s)) by inverse CDF over all
    2^|s| states; if s is the hidden layer, v ~ p(v | h) follows. Needs |s| ≤ ``max_units``.
    """
    _check_single(rbm)
    n = min(rbm.n_visible, rbm.n_hidden)
    if n > max_units:
        raise ValueError(f"sample_exact: smaller layer has {n} units > max_units={max_units}")
    xp = rbm.xp
    neg_f = xp.concatenate([nf for _, nf in _enumerated_neg_free_energies(rbm, 1 << 14)])
    p = xp.exp(neg_f - logsumexp(neg_f))
    cdf = xp.cumsum(p)
    cdf /= cdf[-1]
    u = rng.random((n_samples,), dtype=xp.float64)
    idx = xp.minimum(xp.searchsorted(cdf, u, side="right"), cdf.shape[0] - 1).astype(xp.int64)
    s = _bits(xp, idx, n, rbm.W.dtype)
    if rbm.n_hidden <= rbm.n_visible:  # s = h; v ~ p(v | h)
        return bernoulli(sigmoid(visible_logits(rbm, s)), rng)
    return s

