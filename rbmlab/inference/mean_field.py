"""Naive mean field on a batch of binary RBMs sharing W (crbm_bp Secs. 2 and 6 name it; the
equations are the standard ones): alternate

    τ^h ← σ(b² + Wᵀ τ^v),    τ^v ← σ(b¹ + W τ^h)

from τ^v = σ(b¹) (the logistic-regression output; our choice, the paper gives no start), for every
instance at once (two matmuls per iteration). ``tol``: an instance has converged when no τ^v moved
by more than tol. The MF value of log Z is a lower bound on the exact one:

    log Z_MF = b¹·τ^v + b²·τ^h + τ^vᵀ W τ^h + H(τ^v) + H(τ^h).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rbmlab.backend import namespace, reads_are_free
from rbmlab.backend.ops import sigmoid


@dataclass(frozen=True)
class MeanFieldResult:
    """Marginals after mean field on a batch of B instances (packed runs: R batches, every array
    with the run axis in front)."""

    tau_v: Any  # (B, |v|)
    tau_h: Any  # (B, |h|)
    converged: Any  # (B,) bool
    iterations: Any  # an int; on a device, a 0-d array (read it when the result is reported); packed: (R,)


def mean_field(W, b_v, b_h, *, max_iter: int = 50, tol: float = 1e-3) -> MeanFieldResult:
    """Mean-field marginals of the RBMs (W, b_v[n], b_h[n]); b_v (B, |v|), b_h (B, |h|). The batch
    stops at the first iteration after which every instance has converged. On a device (where a
    host read waits for it) the test is not read back: the iterations after that one leave
    everything as it was, the same result, and ``iterations`` is a 0-d device array.

    Packed runs (rbmlab.run.packed): W (R, |v|, |h|), b_v (R, B, |v|), b_h (R, B, |h|), each run's
    batch stopping where it stops alone (the runs still iterating leave it as it was); the
    result's arrays carry the run axis, ``iterations`` (R,) an array."""
    xp = namespace(W)
    tau_v = sigmoid(b_v.astype(W.dtype, copy=True))
    converged = xp.zeros(b_v.shape[:-1], dtype=bool)
    if W.ndim > 2 or not reads_are_free(W):
        return _masked(W, b_v, b_h, tau_v, converged, max_iter, tol)
    t = 0
    for t in range(1, max_iter + 1):  # noqa: B007 - t is read after the loop
        tau_h = sigmoid(tau_v @ W + b_h)
        new_v = sigmoid(tau_h @ W.T + b_v)
        converged = xp.abs(new_v - tau_v).max(axis=1) <= tol
        tau_v = new_v
        if bool(converged.all()):
            break
    tau_h = sigmoid(tau_v @ W + b_h)  # consistent with the returned τ^v
    return MeanFieldResult(tau_v, tau_h, converged, t)


def _masked(W, b_v, b_h, tau_v, converged, max_iter: int, tol: float) -> MeanFieldResult:
    """:func:`mean_field`'s iterations with ``done`` (on the device) freezing τ^v and the flags of
    a batch once every instance of it has converged: one batch, or one per packed run (``done``
    (R,)). No host read on a device; on the host (packed runs) the loop ends once every batch is
    done."""
    xp = namespace(W)
    lead = W.shape[:-2]  # () or the packed runs' (R,)
    done, iterations = xp.zeros(lead, dtype=bool), xp.zeros(lead, dtype=xp.int64)
    stops = reads_are_free(W)
    W_t = W.swapaxes(-1, -2)
    for _ in range(max_iter):
        tau_h = sigmoid(tau_v @ W + b_h)
        new_v = sigmoid(tau_h @ W_t + b_v)
        iterations += ~done
        converged = xp.where(done[..., None], converged, xp.abs(new_v - tau_v).max(axis=-1) <= tol)
        tau_v = xp.where(done[..., None, None], tau_v, new_v)
        done = converged.all(axis=-1)
        if stops and bool(done.all()):
            break
    tau_h = sigmoid(tau_v @ W + b_h)
    return MeanFieldResult(tau_v, tau_h, converged, iterations)


def mean_field_log_z(W, b_v, b_h, result: MeanFieldResult):
    """(B,) the mean-field lower bound on log Z at ``result``'s marginals."""
    tv, th = result.tau_v, result.tau_h
    energy = (b_v * tv).sum(axis=1) + (b_h * th).sum(axis=1) + ((tv @ W) * th).sum(axis=1)
    return energy + _entropy(tv) + _entropy(th)


def _entropy(p):
    xp = namespace(p)
    tiny = xp.finfo(p.dtype).tiny
    return -(p * xp.log(xp.maximum(p, tiny)) + (1 - p) * xp.log(xp.maximum(1 - p, tiny))).sum(axis=-1)
