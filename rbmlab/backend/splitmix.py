"""SplitMix64 as a counter-based generator (Steele, Lea & Flood 2014), vectorised in numpy.

z_j = mix(key + (j + 1)·γ): SplitMix64's output function over its own Weyl sequence, so any
element of a stream is a pure function of (key, j). :mod:`rbmlab.backend.random_bits` turns z into
uniforms; :mod:`rbmlab.backend.random_bits_numba` computes the same z one element at a time.
"""

from __future__ import annotations

import numpy as np

GAMMA = np.uint64(0x9E3779B97F4A7C15)  # SplitMix64's Weyl increment (2^64 / golden ratio)
MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
MIX_2 = np.uint64(0x94D049BB133111EB)
SHIFTS = (np.uint64(30), np.uint64(27), np.uint64(31))
LOW_24 = np.uint64(0xFFFFFF)


_weyl = np.empty(0, dtype=np.uint64)


def weyl_sequence(n: int) -> np.ndarray:
    """(j + 1)γ mod 2^64 for j < n, read-only (kept and grown between calls)."""
    global _weyl
    if _weyl.size < n:
        table = np.arange(1, max(n, 2 * _weyl.size) + 1, dtype=np.uint64)
        table *= GAMMA
        table.flags.writeable = False
        _weyl = table
    return _weyl[:n]


def mixed_counter(key: np.uint64, n: int) -> np.ndarray:
    """z_j = splitmix64(key + (j + 1)γ) for j < n, as uint64 (wrapping arithmetic)."""
    z = weyl_sequence(n) + key
    t = np.empty_like(z)
    for shift, mix in zip(SHIFTS, (MIX_1, MIX_2, None)):
        np.right_shift(z, shift, out=t)
        z ^= t
        if mix is not None:
            z *= mix
    return z
