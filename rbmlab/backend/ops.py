"""Elementwise and reduction helpers written once against the array namespace of their input."""

from __future__ import annotations

import contextlib

from rbmlab.backend import namespace, random_bits
from rbmlab.backend.run_streams import RunStreams, run_slice


def sigmoid(x, out=None):
    """Logistic function σ(x) = 1 / (1 + e^{−x}); ``out=x`` works in place.

    e^{−x} overflows to inf for x ≪ 0, which correctly gives 0 (the warning is silenced); exp is
    about twice as fast as the tanh form (1 + tanh(x/2)) / 2 in numpy.
    """
    xp = namespace(x)
    if out is None and x.dtype.kind not in "fc":  # integer or boolean input
        x = x.astype(xp.float64)
    out = xp.negative(x, out=out)
    with ignore_overflow(xp):
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
    return (uniform(rng, p.shape, p.dtype) < p).astype(p.dtype)


def is_numpy_generator(rng) -> bool:
    return type(getattr(rng, "bit_generator", None)).__module__.startswith("numpy.")


def uniform(rng, shape, dtype):
    """Uniform [0, 1) floats. A numpy Generator gives one key to the counter-based stream of
    :mod:`rbmlab.backend.random_bits` (faster than ``Generator.random``, and the bits the fused sampler
    uses); cupy draws from its own generator. Packed runs' :class:`RunStreams`: slice r from run
    r's Generator, as run r alone draws it."""
    if isinstance(rng, RunStreams):
        parts = [uniform(g, shape[1:], dtype) for _, g in rng.runs_of(tuple(shape))]
        return namespace(parts[0]).stack(parts)
    if not is_numpy_generator(rng):
        return rng.random(shape, dtype=dtype)
    return random_bits.uniforms(random_bits.draw_key(rng), shape, dtype)


def ignore_overflow(xp):
    """A context in which overflow (e.g. e^{−x} = inf) and invalid results pass silently."""
    errstate = getattr(xp, "errstate", None)
    return errstate(over="ignore", invalid="ignore") if errstate else contextlib.nullcontext()


def bernoulli_logits_(x, rng, bias=None, scale=None, offset=None):
    """In place: logits become a {0, 1} sample with P(1) = σ(a), a = scale·(x + bias) + offset
    (each of ``bias``, ``scale``, ``offset`` optional; bias and offset broadcast against x).

    u < σ(a)  ⇔  u (1 + e^{−a}) < 1, so no σ is formed: −a is written in as few passes as the
    terms allow, then e^{−a}. e^{−a} = inf for a ≪ 0 correctly gives 0 (0·inf = NaN compares
    False too). With a numpy Generator the draw and the comparison are one fused pass
    (:func:`rbmlab.backend.random_bits.accept_`); on cupy, with a :meth:`Backend.rng`, the whole step is
    one kernel keyed from the host (:mod:`rbmlab.backend.cupy_kernels`). Packed runs'
    :class:`RunStreams`: each run's slice drawn from its own Generator, as that run alone draws it.
    """
    if isinstance(rng, RunStreams):
        if namespace(x).__name__ == "cupy" and rng.keyed_on_host:  # one launch for every run
            from rbmlab.backend import cupy_kernels  # noqa: PLC0415

            rng.runs_of(x.shape)  # the run axis checked
            return cupy_kernels.bernoulli_logits_runs_(x, *rng.next_keys(namespace(x)), bias, scale, offset)
        for r, g in rng.runs_of(x.shape):
            bernoulli_logits_(x[r], g, run_slice(bias, r, x), run_slice(scale, r, x), run_slice(offset, r, x))
        return x
    xp = namespace(x)
    if xp.__name__ == "cupy" and hasattr(rng, "host_keys"):  # a Backend.rng: fused kernel
        from rbmlab.backend import cupy_kernels  # noqa: PLC0415

        return cupy_kernels.bernoulli_logits_(x, random_bits.draw_key(rng.host_keys), bias, scale, offset)
    if scale is None and offset is None:
        if bias is None:
            xp.negative(x, out=x)
        else:
            xp.subtract(-bias, x, out=x)
    else:
        if bias is not None:
            x += bias
        xp.multiply(x, -1.0 if scale is None else -scale, out=x)
        if offset is not None:
            x -= offset
    with ignore_overflow(xp):
        xp.exp(x, out=x)
    if is_numpy_generator(rng) and x.dtype in random_bits.SCALE:
        return random_bits.accept_(x, random_bits.draw_key(rng))
    return random_bits.accept_given_(x, rng.random(x.shape, dtype=x.dtype))
