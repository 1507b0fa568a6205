"""numba kernels for :mod:`rbmlab.models.factor_graph` (the optional ``fast`` extra): one damped
max-product sweep of a factor group in one pass over its messages, updated in place, with the
incoming sums formed on the way. The numpy path of each group computes the same update through
temporaries of the messages' size (about ten passes over them, and fresh allocations); here the
messages are read and written once, the floor of any sweep that keeps them. Importing this
module fails with ImportError when numba is not installed.

Both kernels use only the previous beliefs and each message's own previous value (flooding), so
updating in place is the same update; the sums into each variable run in a different order than
numpy's, so beliefs agree to float rounding, not bit for bit.
"""
from __future__ import annotations

import numba
import numpy as np

# reassociation and contraction for speed; no "finite-math" assumption: −inf unaries (clamped
# variables) must still compare as IEEE says
jit = numba.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy",
                fastmath={"nsz", "arcp", "contract", "reassoc"})


@jit
def _message(w, c, zero):
    """max(0, w + c) − max(0, c): factor e^{w x_a x_b}'s message from cavity c (factor_graph)."""
    a = w + c
    return (a if a > zero else zero) - (c if c > zero else zero)


@jit
def bipartite_sweep_(W, beliefs, to_v, to_h, alpha, incoming):
    """Bipartite: ``beliefs`` (B, n_v + n_h) of v then h; messages ``to_v``, ``to_h`` (B, n_v,
    n_h) ← m + α (m_new − m); ``incoming`` (B, n_v + n_h) ← their sums into each variable."""
    B, n_v, n_h = to_v.shape
    zero = alpha - alpha
    into_h = np.empty(n_h, dtype=W.dtype)      # a local row: no aliasing with the messages
    for b in range(B):
        bh = beliefs[b, n_v:]
        into_h[:] = zero
        for i in range(n_v):
            bv = beliefs[b, i]
            v_row, h_row, w_row = to_v[b, i], to_h[b, i], W[i]
            total = zero
            for j in range(n_h):
                old_v, old_h = v_row[j], h_row[j]
                new_h = _message(w_row[j], bv - old_v, zero)           # from v_i's cavity
                new_v = _message(w_row[j], bh[j] - old_h, zero)        # from h_j's cavity
                m_v = old_v + alpha * (new_v - old_v)
                m_h = old_h + alpha * (new_h - old_h)
                v_row[j] = m_v
                h_row[j] = m_h
                total += m_v
                into_h[j] += m_h
            incoming[b, i] = total
        incoming[b, n_v:] = into_h


TILE = 32   # pairs in tiles of TILE × TILE: N[b, i, j] and its transpose N[b, j, i] both in cache


@jit
def dense_pairwise_sweep_(W, beliefs, N, alpha, incoming):
    """DensePairwise: messages ``N`` (B, d, d), N[b, i, j] = factor {i, j} → x_j, both directions
    of each pair i < j updated together (each reads the other's previous value), tile by tile;
    ``incoming`` (B, d) ← Σ_i N[b, i, j]. The diagonal stays 0."""
    B, d, _ = N.shape
    zero = alpha - alpha
    into = np.empty(d, dtype=W.dtype)
    for b in range(B):
        into[:] = zero
        bel = beliefs[b]
        Nb = N[b]
        for i0 in range(0, d, TILE):
            for j0 in range(i0, d, TILE):
                for i in range(i0, min(i0 + TILE, d)):
                    bi = bel[i]
                    into_i = zero
                    for j in range(max(j0, i + 1), min(j0 + TILE, d)):
                        n_ij, n_ji = Nb[i, j], Nb[j, i]
                        new_ij = _message(W[i, j], bi - n_ji, zero)
                        new_ji = _message(W[j, i], bel[j] - n_ij, zero)
                        n_ij = n_ij + alpha * (new_ij - n_ij)
                        n_ji = n_ji + alpha * (new_ji - n_ji)
                        Nb[i, j] = n_ij
                        Nb[j, i] = n_ji
                        into[j] += n_ij
                        into_i += n_ji
                    into[i] += into_i
        incoming[b, :] = into
