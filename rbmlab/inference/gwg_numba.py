"""numba kernel for :mod:`rbmlab.inference.gwg` (the optional ``fast`` extra): Gibbs-with-gradients
steps, chain by chain, with each chain's local fields and proposal distribution carried from step
to step.

The numpy path of gwg forms about fifteen (chains, n) temporaries per proposal and recomputes the
proposal distribution q(· | x) every step, so on the small shapes of pmp Sec 5.4 (20 chains × 200
spins) a step costs ~0.3 ms of numpy overhead. Here a chain keeps δ/t, its exponentials and their
sum for its current state: the reverse move's distribution q(· | x') has to be formed anyway for
the acceptance (2), and on acceptance it *is* the next step's proposal, so a step is one pass of
exponentials over the n sites (the numpy path's three) plus the inverse-CDF walk, and δ/t is
formed as δ·(1/t) (exact for the default t = 2). The uniforms are the numpy path's counter-based bits (one key per step for the proposals, one for the
acceptances, element c for chain c), so the two paths make the same moves up to rounding: the CDF
here is the running sum of the exponentials against u·Σ, there the cumulative sum of the
normalised probabilities against u·cdf[-1], so a uniform within rounding of a CDF boundary can
pick the neighbouring site (rare; tests/test_ising.py checks agreement and the exact moments
on both paths). Importing this module fails with ImportError when numba is not installed.
"""
from __future__ import annotations

import numba
import numpy as np

from rbmlab.backend.random_bits_numba import uniform_at

jit = numba.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy")


@jit
def _proposal_(scaled, e, a, x, offset, inverse_t):
    """δ_j / t = a_j (flip(x_j) − x_j) / t into ``scaled``, e_j = exp(δ_j / t − max) into ``e``;
    returns (max, Σ e)."""
    n = scaled.size
    for j in range(n):
        scaled[j] = a[j] * ((offset - x[j]) - x[j]) * inverse_t
    top = scaled[0]
    for j in range(1, n):
        top = max(top, scaled[j])
    total = top - top
    for j in range(n):
        e[j] = np.exp(scaled[j] - top)
        total += e[j]
    return top, total


@jit
def flip_steps_(x, a, J, offset, temperature, keys, chains_per_group, float32):
    """``keys.size // 2`` steps of gwg eq. (1)–(2) on every chain, in place: states ``x`` (C, n),
    their local fields ``a`` (C, n), couplings ``J`` (G, n, n) (chain c uses J[c // chains_per_group]),
    all of one dtype; ``offset`` and ``temperature`` scalars of it (the units' flip(x) = offset −
    x); step s draws its proposals from keys[2s] and its acceptances from keys[2s + 1], as
    float32 (``float32``) or float64 uniforms."""
    C, n = x.shape
    inverse_t = 1 / temperature          # exact for the default t = 2
    scaled, e = np.empty(n, dtype=x.dtype), np.empty(n, dtype=x.dtype)       # q(· | x)
    scaled_r, e_r = np.empty(n, dtype=x.dtype), np.empty(n, dtype=x.dtype)   # q(· | x')
    a_r, x_r = np.empty(n, dtype=x.dtype), np.empty(n, dtype=x.dtype)
    u = np.empty(1, dtype=x.dtype)       # a uniform rounded to the dtype, as numpy's
    for c in range(C):
        g = c // chains_per_group
        xc, ac = x[c], a[c]
        top, total = _proposal_(scaled, e, ac, xc, offset, inverse_t)     # (1)
        for s in range(keys.size // 2):
            u[0] = uniform_at(keys[2 * s], c, float32)
            threshold = u[0] * total
            i, running = 0, e[0]
            while running <= threshold and i < n - 1:                  # i ~ q(· | x)
                i += 1
                running += e[i]
            change = (offset - xc[i]) - xc[i]
            for j in range(n):
                a_r[j] = ac[j] + J[g, i, j] * change
                x_r[j] = xc[j]
            x_r[i] += change
            top_r, total_r = _proposal_(scaled_r, e_r, a_r, x_r, offset, inverse_t)
            log_accept = (ac[i] * change + ((scaled_r[i] - top_r) - np.log(total_r))
                          - ((scaled[i] - top) - np.log(total)))                       # (2)
            u[0] = uniform_at(keys[2 * s + 1], c, float32)
            if np.log(u[0]) < log_accept:
                xc[i] += change
                ac[:] = a_r
                scaled, scaled_r, e, e_r = scaled_r, scaled, e_r, e
                top, total = top_r, total_r
