"""Counter-based uniforms for the numpy backend, and the fused Bernoulli acceptance step.

Each draw takes one 64-bit key from the caller's numpy Generator (so seeding, keyed streams and
resume go through the Generator as before) and forms its uniforms from a counter: element pair j
gets z_j = splitmix64(key + (j + 1)·γ) (:mod:`rbmlab.backend.splitmix`). A float32 uniform is 24 bits of
z (two per z: bits 8–31, then 40–63); a float64 uniform is the top 53 bits (one per z). The bits
are a pure function of (key, index), so the numba kernel and the numpy fallback below produce the
same sample, bit for bit.

The Bernoulli step on a logit a is written on e = e^{−a}: accept ⇔ u (1 + e) < 1 ⇔ u < σ(a)
(no reciprocal; e = inf gives 0). numpy forms e in one vectorised pass; the optional numba kernel
(``pip install rbmlab[fast]``) then draws and compares in one single-threaded pass, about 7× the
speed of the numpy fallback (itself a little faster than ``Generator.random_raw``).
``RBMLAB_NUMBA=0`` selects the fallback.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator

import numpy as np

from rbmlab.backend import namespace, numba_kernels
from rbmlab.backend.splitmix import mixed_counter

SCALE = {np.dtype(np.float32): np.float32(2.0**-24), np.dtype(np.float64): 2.0**-53}


def draw_key(rng: np.random.Generator) -> np.uint64:
    """One 64-bit key from the Generator: everything a draw needs from it."""
    return np.uint64(rng.bit_generator.random_raw())


def uniforms(key: np.uint64, shape, dtype) -> np.ndarray:
    """Uniform [0, 1) floats of ``dtype`` (float32 or float64) for ``key``: the bits the fused
    kernel uses, element for element in C order."""
    dtype = np.dtype(dtype)
    count = int(np.prod(shape))
    if dtype == np.float64:
        u = (mixed_counter(key, count) >> np.uint64(11)).astype(np.float64)
    elif dtype == np.float32:
        halves = mixed_counter(key, (count + 1) // 2).astype("<u8", copy=False).view("<u4")[:count]
        halves >>= 8  # z's bits 8–31, then 40–63
        u = halves.view("<i4").astype(np.float32)  # < 2^24: exact
    else:
        raise TypeError(f"uniforms: float32 or float64 expected, got {dtype}")
    u *= SCALE[dtype]
    return u.reshape(shape)


def accept_given_(e, u):
    """In place: e = e^{−a} becomes the {0, 1} sample [u (1 + e) < 1] for the uniforms ``u``
    (any backend)."""
    e += 1.0
    e *= u
    namespace(e).less(e, 1.0, out=e)
    return e


def accept_numpy_(e, key: np.uint64):
    """In place: e = e^{−a} becomes the {0, 1} sample [u (1 + e) < 1], u from ``key``."""
    return accept_given_(e, uniforms(key, e.shape, e.dtype))


@functools.cache
def _numba_kernels():
    """The jit-compiled acceptance kernels by dtype, or None when numba is missing or switched off."""
    kernels = numba_kernels.load("rbmlab.backend.random_bits_numba")
    if kernels is None:
        return None
    return {np.dtype(np.float32): kernels.accept_f32, np.dtype(np.float64): kernels.accept_f64}


_fallback_forced = False


def numba_available() -> bool:
    return _numba_kernels() is not None


def sampler() -> str:
    """Which implementation draws: 'numba <version> (fused draw and compare)' or 'numpy fallback
    (<why>)'."""
    status = numba_kernels.status()
    if numba_available():
        return f"{status} (fused draw and compare)"
    return f"numpy fallback ({status.removeprefix('off (').removesuffix(')')})"


@contextlib.contextmanager
def numpy_fallback() -> Iterator[None]:
    """Within the block every draw takes the numpy fallback (the benchmark's comparison)."""
    global _fallback_forced
    before, _fallback_forced = _fallback_forced, True
    try:
        yield
    finally:
        _fallback_forced = before


def accept_(e, key: np.uint64):
    """In place: e = e^{−a} becomes a {0, 1} sample with P(1) = σ(a) (one pass with numba)."""
    kernels = None if _fallback_forced else _numba_kernels()
    kernel = kernels and kernels.get(e.dtype)
    if kernel is None or not e.flags.c_contiguous:
        return accept_numpy_(e, key)
    kernel(e.reshape(-1), key)
    return e
