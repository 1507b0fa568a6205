"""Elementwise and reduction helpers written once against the array namespace of their input."""
from __future__ import annotations

from rbmlab.backend import namespace


def sigmoid(x, out=None):
    """Logistic function in the overflow-free form σ(x) = (1 + tanh(x/2)) / 2."""
    xp = namespace(x)
    out = xp.multiply(x, 0.5, out=out)
    xp.tanh(out, out=out)
    out += 1.0
    out *= 0.5
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


def logmeanexp(x, axis=None):
    """log of the mean of exp(x)."""
    n = x.size if axis is None else x.shape[axis]
    return logsumexp(x, axis=axis) - namespace(x).log(float(n))


def bernoulli(p, rng, out=None):
    """Binary sample with P(1) = p, same dtype as ``p`` (one uniform draw per element)."""
    xp = namespace(p)
    u = rng.random(p.shape, dtype=p.dtype)
    if out is None:
        return (u < p).astype(p.dtype)
    xp.less(u, p, out=out)
    return out
