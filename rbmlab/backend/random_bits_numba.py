"""numba kernels for :mod:`rbmlab.backend.random_bits` (the optional ``fast`` extra): the counter-based
uniforms drawn and compared in one single-threaded pass. Importing this module fails with
ImportError when numba is not installed; the numpy fallback gives the same bits."""

from __future__ import annotations

import numba
import numpy as np

from rbmlab.backend.splitmix import GAMMA, LOW_24, MIX_1, MIX_2

jit = numba.njit(cache=True, nogil=True, boundscheck=False)


@jit
def mix(key, j):
    """splitmix64(key + (j + 1)γ), as :func:`rbmlab.backend.splitmix.mixed_counter`."""
    z = key + np.uint64(j + 1) * GAMMA
    z = (z ^ (z >> np.uint64(30))) * MIX_1
    z = (z ^ (z >> np.uint64(27))) * MIX_2
    return z ^ (z >> np.uint64(31))


@jit
def uniform_at(key, c, float32):
    """Element c of ``rbmlab.backend.random_bits.uniforms(key, ...)``: float32 (24 bits, two per z) or
    float64 (53 bits, one per z), as a float64 (exact either way); for kernels that draw one
    element at a time."""
    if float32:
        z = mix(key, c // 2)
        bits = (z >> np.uint64(8)) & LOW_24 if c % 2 == 0 else z >> np.uint64(40)
        return np.float64(bits) * 2.0**-24
    return np.float64(mix(key, c) >> np.uint64(11)) * 2.0**-53


@jit
def accept_f32(e, key):
    """e (1-D float32, e^{−a}) ← [u (1 + e) < 1], two 24-bit uniforms per z (bits 8–31, 40–63)."""
    one, zero, scale = np.float32(1.0), np.float32(0.0), np.float32(2.0**-24)
    pairs = e.size // 2
    for j in range(pairs):
        z = mix(key, j)
        u0 = np.float32((z >> np.uint64(8)) & LOW_24) * scale
        u1 = np.float32(z >> np.uint64(40)) * scale
        e[2 * j] = one if u0 * (one + e[2 * j]) < one else zero
        e[2 * j + 1] = one if u1 * (one + e[2 * j + 1]) < one else zero
    if e.size % 2:
        u0 = np.float32((mix(key, pairs) >> np.uint64(8)) & LOW_24) * scale
        e[e.size - 1] = one if u0 * (one + e[e.size - 1]) < one else zero


@jit
def accept_f64(e, key):
    """e (1-D float64, e^{−a}) ← [u (1 + e) < 1], one 53-bit uniform per z."""
    scale = 2.0**-53
    for j in range(e.size):
        u = np.float64(mix(key, j) >> np.uint64(11)) * scale
        e[j] = 1.0 if u * (1.0 + e[j]) < 1.0 else 0.0
