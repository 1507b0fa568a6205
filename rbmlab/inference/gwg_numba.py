"""numba kernel for :mod:`rbmlab.inference.gwg` (the optional ``fast`` extra): Gibbs-with-gradients
steps, chain by chain, with each chain's local fields and proposal distribution carried from step
to step.

The numpy path of gwg forms about fifteen (chains, n) temporaries per proposal and recomputes the
proposal distribution q(· | x) every step. Here a chain keeps δ/t, the exponentials of δ/t less a
shift, their block sums and log Σ exp(δ/t) for its current state: the reverse move's distribution
q(· | x') has to be formed anyway for the acceptance (2), and on acceptance it *is* the next step's
proposal, so a step is one pass over the n sites (fields, δ/t, exponentials, sums; each loop
vectorises) plus a walk over the block sums and one block.

Two choices keep that pass free of reductions other than a sum, which is what lets it vectorise:
- the shift is an upper bound of max δ(x')/t, not the maximum: log Σ exp(δ(x)/t) bounds max δ(x)/t
  from above, and one flip moves δ_j/t by at most max_j |J_ij| |x̄ − x|² / t (site i itself by
  its sign change on top), so the exponentials do not overflow; when the bound is loose by more
  than 60 nats (Σ below e^-60), or Σ is not finite, the pass is redone with the exact maximum, so
  the bound decides the speed, never the result;
- in float32 the exponential is computed here, exp(y) = 2^k p(y − k ln 2) with k = round(y / ln 2),
  p a degree-7 Taylor polynomial (|y − k ln 2| ≤ ln 2 / 2: truncation < 6e-9) and 2^k built from its
  bits (relative error ≤ 3e-7, against numpy's float32 exp within 3 units in the last place;
  arguments below −87 are taken at −87: at most n · e^-27 of a sum ≥ e^-60). float64 uses
  numpy's exp.
The acceptance (2) uses log q(i | ·) = δ_i/t − log Σ exp(δ/t) from δ itself, not from the
exponentials. The uniforms are the numpy path's counter-based bits (one key per step for the
proposals, one for the acceptances, element c for chain c), so the two paths make the same moves up
to rounding: the CDF here is the block sums' running sum, then the block's, against u·Σ, there the
cumulative sum of the normalised probabilities against u·cdf[-1], so a uniform within rounding of a
CDF boundary can pick the neighbouring site (rare; tests/test_ising.py checks agreement and the
exact moments on both paths). Importing this module fails with ImportError when numba is not
installed.
"""

from __future__ import annotations

import numba
import numpy as np

from rbmlab.backend.random_bits_numba import uniform_at

_FAST = {"reassoc", "contract", "nsz", "arcp"}  # sums in any order; inf and nan kept (the checks below)
jit = numba.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy", fastmath=_FAST)

BLOCK = 32  # sites per block sum of the inverse-CDF walk
LOOSEST = np.exp(-60.0)  # Σ exp(δ/t − shift) below this: the shift was too loose; redo with the max

_LOG2E = np.float32(1.4426950408889634)
_LN2_HI = np.float32(0.693145751953125)  # ln 2 in two parts (Cody & Waite): k ln 2 is exact
_LN2_LO = np.float32(1.428606765330187e-06)  # in the high part for |k| ≤ 126
_FLOOR = np.float32(-87.0)


@jit
def _exponentials_(e, blocks, bits, scaled, shift, float32):
    """e_j = exp(scaled_j − shift) (scaled_j ≤ shift up to rounding), the sums of e over blocks of
    BLOCK sites into ``blocks``; returns Σ e."""
    n = scaled.size
    if float32:
        s = np.float32(shift)
        for j in range(n):
            y = max(scaled[j] - s, _FLOOR)
            k = min(np.floor(y * _LOG2E + np.float32(0.5)), np.float32(128.0))  # 2^128: inf, refused below
            r = (y - k * _LN2_HI) - k * _LN2_LO
            e[j] = np.float32(1.0) + r * (
                np.float32(1.0)
                + r
                * (
                    np.float32(0.5)
                    + r
                    * (
                        np.float32(1 / 6)
                        + r
                        * (
                            np.float32(1 / 24)
                            + r * (np.float32(1 / 120) + r * (np.float32(1 / 720) + r * np.float32(1 / 5040)))
                        )
                    )
                )
            )
            bits[j] = (np.int32(k) + np.int32(127)) << np.int32(23)  # 2^k's float32 bits
        scale = bits.view(np.float32)
        for j in range(n):
            e[j] *= scale[j]
    else:
        for j in range(n):
            e[j] = np.exp(scaled[j] - shift)
    total = e[0] - e[0]
    for b in range(blocks.size):
        part = e[0] - e[0]
        for j in range(b * BLOCK, min(n, b * BLOCK + BLOCK)):
            part += e[j]
        blocks[b] = part
        total += part
    return total


@jit
def _distribution_(scaled, e, blocks, bits, shift, float32):
    """The exponentials of ``scaled`` less ``shift`` (an upper bound of its maximum), or less the
    maximum where the bound is too loose; returns (log Σ exp(scaled), Σ e)."""
    if float32:
        shift = float(np.float32(shift))  # the shift the float32 exponentials subtract
    total = _exponentials_(e, blocks, bits, scaled, shift, float32)
    if not (LOOSEST <= total < np.inf):  # too loose, or (a bound that failed) overflowed
        shift = scaled[0]
        for j in range(1, scaled.size):
            shift = max(shift, scaled[j])
        total = _exponentials_(e, blocks, bits, scaled, shift, float32)
    return shift + np.log(total), total


@jit
def _walk_(e, blocks, threshold):
    """The first site i with e_0 + ... + e_i > threshold (the last when none): the blocks' running
    sum, then the block's."""
    b, running = 0, blocks[0]
    while running <= threshold and b < blocks.size - 1:
        b += 1
        running += blocks[b]
    running -= blocks[b]
    i = b * BLOCK
    running += e[i]
    while running <= threshold and i < e.size - 1:
        i += 1
        running += e[i]
    return i


@jit
def flip_steps_(x, a, J, offset, temperature, keys, chains_per_group, float32):
    """``keys.size // 2`` steps of gwg eq. (1)–(2) on every chain, in place: states ``x`` (C, n),
    their local fields ``a`` (C, n), couplings ``J`` (G, n, n) (chain c uses J[c // chains_per_group]),
    all of one dtype; ``offset`` and ``temperature`` scalars of it (the units' flip(x) = offset −
    x); step s draws its proposals from keys[2s] and its acceptances from keys[2s + 1], as
    float32 (``float32``) or float64 uniforms."""
    C, n = x.shape
    G = J.shape[0]
    dtype = x.dtype
    inverse_t = 1 / temperature  # exact for the default t = 2
    reach = np.empty((G, n), dtype=np.float64)  # max_j |J_ij|: how far one flip moves δ_j / |x̄_j − x_j|²
    for g in range(G):
        for i in range(n):
            top = 0.0
            for j in range(n):
                top = max(top, abs(J[g, i, j]))
            reach[g, i] = top
    nb = (n + BLOCK - 1) // BLOCK
    scaled, e, blocks = np.empty(n, dtype), np.empty(n, dtype), np.empty(nb, dtype)  # q(· | x)
    scaled_r, e_r, blocks_r = np.empty(n, dtype), np.empty(n, dtype), np.empty(nb, dtype)  # q(· | x')
    fields, fields_r = np.empty(n, dtype), np.empty(n, dtype)
    d, bits = np.empty(n, dtype), np.empty(n, np.int32)
    u = np.empty(1, dtype=dtype)  # a uniform rounded to the dtype, as numpy's
    for c in range(C):
        g = c // chains_per_group
        xc = x[c]
        spread = 0.0  # max_j |x̄_j − x_j|² (1 for {0, 1} units, 4 for ±1)
        for j in range(n):
            d[j] = (offset - xc[j]) - xc[j]  # x̄_j − x_j
            fields[j] = a[c, j]
            scaled[j] = fields[j] * d[j] * inverse_t  # δ_j / t, (1)
            spread = max(spread, float(d[j]) * float(d[j]))
        log_norm, total = _distribution_(scaled, e, blocks, bits, np.inf, float32)
        for s in range(keys.size // 2):
            u[0] = uniform_at(keys[2 * s], c, float32)
            i = _walk_(e, blocks, u[0] * total)  # i ~ q(· | x)
            change = d[i]
            d[i] = -change
            for j in range(n):
                fields_r[j] = fields[j] + J[g, i, j] * change
                scaled_r[j] = fields_r[j] * d[j] * inverse_t
            bound = max(log_norm, -float(scaled[i])) + reach[g, i] * spread * inverse_t
            log_norm_r, total_r = _distribution_(scaled_r, e_r, blocks_r, bits, bound, float32)
            log_accept = fields[i] * change + (scaled_r[i] - log_norm_r) - (scaled[i] - log_norm)  # (2)
            u[0] = uniform_at(keys[2 * s + 1], c, float32)
            if np.log(u[0]) < log_accept:
                xc[i] += change
                fields, fields_r = fields_r, fields
                scaled, scaled_r, e, e_r, blocks, blocks_r = scaled_r, scaled, e_r, e, blocks_r, blocks
                log_norm, total = log_norm_r, total_r
            else:
                d[i] = change
        for j in range(n):
            a[c, j] = fields[j]
