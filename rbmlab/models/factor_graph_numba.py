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
jit = numba.njit(
    cache=True,
    nogil=True,
    boundscheck=False,
    error_model="numpy",
    fastmath={"nsz", "arcp", "contract", "reassoc"},
)


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
    into_h = np.empty(n_h, dtype=W.dtype)  # a local row: no aliasing with the messages
    for b in range(B):
        bh = beliefs[b, n_v:]
        into_h[:] = zero
        for i in range(n_v):
            bv = beliefs[b, i]
            v_row, h_row, w_row = to_v[b, i], to_h[b, i], W[i]
            total = zero
            for j in range(n_h):
                old_v, old_h = v_row[j], h_row[j]
                new_h = _message(w_row[j], bv - old_v, zero)  # from v_i's cavity
                new_v = _message(w_row[j], bh[j] - old_h, zero)  # from h_j's cavity
                m_v = old_v + alpha * (new_v - old_v)
                m_h = old_h + alpha * (new_h - old_h)
                v_row[j] = m_v
                h_row[j] = m_h
                total += m_v
                into_h[j] += m_h
            incoming[b, i] = total
        incoming[b, n_v:] = into_h


@jit
def dense_pairwise_sweep_(W, beliefs, messages, alpha, incoming):
    """DensePairwise: ``messages`` (B, 2, P) over the pairs i < j in row-major order, [:, 0] the
    factor → x_j and [:, 1] the factor → x_i direction, updated together (each from the other's
    previous value), row i by row i; ``incoming`` (B, d) ← their sums into each variable.

    Each row is a run of unit-stride slices indexed from 0, and the sums into the x_j take a
    second pass, so the main loop stores to two arrays only: LLVM vectorises both loops, and the
    sweep runs at the message read + write floor (without this shape, 3–5× slower)."""
    B = messages.shape[0]
    d = W.shape[0]
    zero = alpha - alpha
    into = np.empty(d, dtype=W.dtype)
    for b in range(B):
        into[:] = zero
        bel = beliefs[b]
        p = 0
        for i in range(d):
            n = d - i - 1
            to_j, to_i = messages[b, 0, p : p + n], messages[b, 1, p : p + n]
            w_row, bel_j = W[i, i + 1 :], bel[i + 1 :]
            bi = bel[i]
            into_i = zero
            for k in range(n):
                n_j, n_i = to_j[k], to_i[k]
                new_j = _message(w_row[k], bi - n_i, zero)  # from x_i's cavity
                new_i = _message(w_row[k], bel_j[k] - n_j, zero)  # from x_j's cavity (W symmetric)
                to_j[k] = n_j + alpha * (new_j - n_j)
                n_i = n_i + alpha * (new_i - n_i)
                to_i[k] = n_i
                into_i += n_i
            into[i] += into_i
            into_j = into[i + 1 :]
            for k in range(n):
                into_j[k] += to_j[k]
            p += n
        incoming[b, :] = into
