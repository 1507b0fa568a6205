"""Categorical (Potts) units: q states per unit, one-hot inside the model.

A Potts unit x ∈ {0, …, q − 1} is held as q columns, the one-hot vector e_x, so that every
formula of a binary layer that is linear in the states — the products vW, the statistics vᵀE[h|v],
the field term b_vᵀv — holds unchanged; only the per-unit maths differs, and that lives here.
Unit i occupies columns i·q … i·q + q − 1 of its layer (site-major). For a field a (its q columns)

    p(x = s | a) = e^{a_s} / Σ_t e^{a_t}          (softmax)
    log Σ_x e^{aᵀe_x} = logsumexp_s a_s          (one value per unit, not per column)

Data are integer-coded (one column per unit, values 0 … q − 1); ``encode`` makes the one-hot
columns, ``decode`` reads them back. ``Potts.with_states(q)`` is the type for one q (a class, like
Bernoulli and Spin: every method is a classmethod reading ``q``); a layer of n Potts units has
q^n states, enumerated in base q (digit j → unit j), as a binary layer's in base 2.
"""

from __future__ import annotations

import functools
import math

from rbmlab.backend import namespace
from rbmlab.backend.ops import logsumexp, uniform
from rbmlab.units.discrete import UnitType
from rbmlab.units.values import ValueSet


class Potts(UnitType):
    """x ∈ {0, …, q − 1}, one-hot over q columns; p(x = s | a) = softmax(a)_s."""

    name = "potts"
    values = (0.0, 1.0)  # of a column: one-hot entries
    q = 0  # states per unit; set by :meth:`with_states`

    @classmethod
    @functools.cache
    def with_states(cls, q: int) -> type[Potts]:
        """The Potts type of ``q`` states (one class per q, so types compare by identity)."""
        if q < 2:
            raise ValueError(f"a Potts unit needs at least 2 states, got {q}")
        return type(f"Potts{q}", (cls,), {"q": int(q), "__doc__": f"Potts units of {q} states."})

    # ------------------------------------------------ layout
    @classmethod
    def width(cls) -> int:
        """Columns per unit."""
        return cls.q

    @classmethod
    def _groups(cls, a):
        """``a`` (..., n·q) viewed as (..., n, q)."""
        return a.reshape(a.shape[:-1] + (a.shape[-1] // cls.q, cls.q))

    @classmethod
    def data_value_set(cls) -> ValueSet:
        """The values of integer-coded data: 0 … q − 1."""
        return ValueSet.of_points(*range(cls.q))

    @classmethod
    def encode(cls, x, dtype=None):
        """Integer-coded rows (..., n) → one-hot rows (..., n·q)."""
        xp = namespace(x)
        codes = xp.asarray(x).astype(xp.int64)
        onehot = (codes[..., None] == xp.arange(cls.q, dtype=xp.int64)).astype(dtype or xp.float32)
        return onehot.reshape(codes.shape[:-1] + (codes.shape[-1] * cls.q,))

    @classmethod
    def decode(cls, x):
        """One-hot rows (..., n·q) → integer codes (..., n) (the largest column of each unit)."""
        return namespace(x).argmax(cls._groups(x), axis=-1)

    # ------------------------------------------------ conditionals
    @classmethod
    def mean(cls, a, out=None):
        """E[e_x | a]: the softmax of each unit's q columns."""
        xp = namespace(a)
        g = cls._groups(a)
        e = xp.exp(g - g.max(axis=-1, keepdims=True))
        e /= e.sum(axis=-1, keepdims=True)
        e = e.reshape(a.shape)
        if out is None:
            return e
        out[...] = e
        return out

    @classmethod
    def log_partition(cls, a):
        """logsumexp of each unit's columns, (..., n)."""
        return logsumexp(cls._groups(a), axis=-1)

    @classmethod
    def log_partition_sum_(cls, x):
        """Σ over units of :meth:`log_partition`, per row."""
        return namespace(x).sum(cls.log_partition(x), axis=-1)

    @classmethod
    def sample_(cls, a, rng, bias=None):
        """In place: the fields a (+ bias) become one-hot draws, one uniform per unit (inverse CDF
        of the softmax)."""
        xp = namespace(a)
        if bias is not None:
            a += bias
        g = cls._groups(a)
        p = xp.exp(g - g.max(axis=-1, keepdims=True))
        cdf = xp.cumsum(p, axis=-1)
        u = uniform(rng, cdf.shape[:-1] + (1,), cdf.dtype) * cdf[..., -1:]
        chosen = xp.minimum(xp.sum(cdf <= u, axis=-1), cls.q - 1)  # the first s with cdf_s > u
        a[...] = (chosen[..., None] == xp.arange(cls.q)).reshape(a.shape)
        return a

    @classmethod
    def field_for_mean(cls, m, clip: float = 1e-3):
        """Fields whose softmax is m (each unit's columns renormalised after clipping to
        [clip, 1]), centred to sum 0 over each unit (the softmax ignores a shift)."""
        xp = namespace(m)
        g = xp.log(xp.clip(cls._groups(m), clip, 1.0))
        g = g - xp.log(xp.exp(g).sum(axis=-1, keepdims=True))
        g = g - g.mean(axis=-1, keepdims=True)
        return g.reshape(m.shape)

    # ------------------------------------------------ states
    @classmethod
    def state_count(cls, columns: int) -> int:
        """States of a layer of ``columns`` // q units: q^n."""
        return cls.q ** (columns // cls.q)

    @classmethod
    def state_bits(cls, columns: int) -> float:
        """log₂ of :meth:`state_count` (what enumeration limits count)."""
        return (columns // cls.q) * math.log2(cls.q)

    @classmethod
    def states_of(cls, xp, ints, n: int, dtype):
        """States number ``ints`` of a layer of ``n`` columns: base-q digit j → unit j, one-hot."""
        units = n // cls.q
        digits = (ints[..., None] // cls.q ** xp.arange(units, dtype=xp.int64)) % cls.q
        return cls.encode(digits, dtype)

    @classmethod
    def uniform_states(cls, rng, shape, dtype):
        """One-hot states, each unit uniform over its q values, of ``shape`` (..., n·q)."""
        u = uniform(rng, shape[:-1] + (shape[-1] // cls.q,), dtype)
        xp = namespace(u)
        return cls.encode(xp.minimum((u * cls.q).astype(xp.int64), cls.q - 1), dtype)

    # ------------------------------------------------ no TAP prior
    @classmethod
    def log_z(cls, B, A):
        raise NotImplementedError("Potts units have no TAP prior here")

    @classmethod
    def moments(cls, B, A):
        raise NotImplementedError("Potts units have no TAP prior here")
