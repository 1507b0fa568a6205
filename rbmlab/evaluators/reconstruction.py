"""Mean-field reconstruction error.

The reconstruction of v is r = p(v = 1 | h = p(h = 1 | v)): hidden probabilities (not samples)
are propagated back, so the error is deterministic. Error per row: Σ_i (v_i − r_i)².
Not a likelihood; reported for comparison with the RBM literature (Hinton 2010, practical guide).
"""
from __future__ import annotations

from rbmlab.models.rbm import RBM, hidden_probs, visible_probs


def reconstruction_error(rbm: RBM, v):
    """Per-row squared error Σ_i (v_i − p(v_i=1 | h = p(h=1|v)))², float64."""
    xp = rbm.xp
    v = xp.asarray(v, dtype=rbm.W.dtype)
    r = visible_probs(rbm, hidden_probs(rbm, v))
    d = v - r
    return xp.sum(d * d, axis=-1, dtype=xp.float64)
