"""Elementwise and reduction helpers written once against the array namespace of their input."""
from __future__ import annotations

import contextlib
import math

from rbmlab.backend import namespace


def sigmoid(x, out=None):
    """Logistic function σ(x) = 1 / (1 + e^{−x}); ``out=x`` works in place.

    e^{−x} overflows to inf for x ≪ 0, which correctly gives 0 (the warning is silenced); exp is
    about twice as fast as the tanh form (1 + tanh(x/2)) / 2 in numpy.
    """
    xp = namespace(x)
    if out is None and x.dtype.kind not in "fc":   # integer or boolean input
        x = x.astype(xp.float64)
    out = xp.negative(x, out=out)
    with _ignore_overflow(xp):
        xp.exp(out, out=out)
    out += 1.0
    xp.reciprocal(out, out=out)
    return out


def softplus(x):
    """log(1 + e^x), stable for large |x|."""
    return namespace(x).logaddexp(0.0, x)


def logsumexp(x, axis=None):
    """log Σ exp(x) along ``axis`` (all elements when None), stable; -inf rows stay -inf."""
    xp = namespace(x)
    m = xp.max(x, axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0.0)
    s = xp.log(xp.sum(xp.exp(x - m), axis=axis, keepdims=True)) + m
    return xp.squeeze(s, axis=axis) if axis is not None else s.reshape(())


def bernoulli(p, rng):
    """Binary sample with P(1) = p, same dtype as ``p`` (one uniform draw per element)."""
    return (rng.random(p.shape, dtype=p.dtype) < p).astype(p.dtype)


def uniform(rng, shape, dtype):
    """Uniform [0, 1) floats. For numpy float32, 23-bit uniforms are cut from raw 64-bit draws
    (two per draw: about twice as fast as ``Generator.random(dtype=float32)``)."""
    bit_generator = getattr(rng, "bit_generator", None)
    numpy_bits = type(bit_generator).__module__.startswith("numpy.")
    if str(dtype) != "float32" or not numpy_bits:   # cupy: its own fast float32 generator
        return rng.random(shape, dtype=dtype)
    xp = namespace(bit_generator.random_raw(0))      # numpy, without importing it here
    count = math.prod(shape)
    bits = bit_generator.random_raw((count + 1) // 2).view(xp.uint32)[:count].reshape(shape)
    bits >>= 9                       # 23 random mantissa bits ...
    bits |= xp.uint32(0x3F800000)    # ... with the exponent of 1.0: a float in [1, 2)
    u = bits.view(xp.float32)
    u -= 1.0
    return u


def _ignore_overflow(xp):
    errstate = getattr(xp, "errstate", None)
    return errstate(over="ignore", invalid="ignore") if errstate else contextlib.nullcontext()


def bernoulli_logits_(x, rng, bias=None):
    """In place: logits ``x (+ bias)`` become a {0, 1} sample with P(1) = σ(x + bias).

    u < σ(a)  ⇔  u (1 + e^{−a}) < 1, so no σ is formed: −a = −bias − x is written in one pass,
    then e^{−a}. e^{−a} = inf for a ≪ 0 correctly gives 0 (0·inf = NaN compares False too).
    """
    xp = namespace(x)
    u = uniform(rng, x.shape, x.dtype)
    if bias is None:
        xp.negative(x, out=x)
    else:
        xp.subtract(-bias, x, out=x)
    with _ignore_overflow(xp):
        xp.exp(x, out=x)
    x += 1.0
    x *= u
    xp.less(x, 1.0, out=x)
    return x
