"""Block Gibbs sampling in a binary RBM: h ~ p(h | v), then v ~ p(v | h)."""
from __future__ import annotations

from rbmlab.models.rbm import RBM
from rbmlab.ops import bernoulli_logits_


def gibbs_chain(rbm: RBM, v, rng, k: int):
    """Run ``k`` block-Gibbs sweeps v → h → v from the binary batch ``v``; returns the last v.

    Each sweep is two matmuls on the whole batch and two in-place Bernoulli draws from the
    logits, written into two fresh buffers (the input ``v`` is never modified).
    """
    if k < 1:
        return v
    xp = rbm.xp
    Wt = rbm.W.swapaxes(-1, -2)
    trials = rbm.W.shape[:-2]   # a batch shared by all trials gets its own chain per trial
    batch_shape = (trials if v.ndim == 2 else v.shape[:-2]) + v.shape[-2:-1]
    h = xp.empty(batch_shape + (rbm.n_hidden,), dtype=v.dtype)
    v_out = xp.empty(batch_shape + (rbm.n_visible,), dtype=v.dtype)
    b_h, b_v = rbm.b_h[..., None, :], rbm.b_v[..., None, :]
    for _ in range(k):
        xp.matmul(v, rbm.W, out=h)
        bernoulli_logits_(h, rng, bias=b_h)
        xp.matmul(h, Wt, out=v_out)   # v is no longer needed once h is drawn
        v = bernoulli_logits_(v_out, rng, bias=b_v)
    return v
