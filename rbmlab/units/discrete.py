"""Discrete unit types: the values a unit takes and the maths that depends only on that.

A unit type owns, for a vector of pre-activations (logits) a:
    mean(a)             E[x | a]                      (Bernoulli: σ(a); spin: tanh(a))
    log_partition(a)    log Σ_x e^{a x}               (Bernoulli: softplus(a); spin: log 2cosh a)
    sample_(a, rng, b)  in place: a (+ b) becomes a draw of x ~ p(x | a + b) ∝ e^{(a + b) x}
    states_of(ints, n)  configurations number ``ints`` of n units in enumeration order (bit j of
                        the index → unit j); ``states(n, start, stop)`` is a contiguous range
    field_for_mean(m)   the bias whose mean is m (base-rate initialisation)
Models (RBM layers, Ising variables) ask their units for these instead of assuming {0, 1}.
Both are also priors (rbmlab.units.prior) with the tilted partition function TAP asks for;
x² = x for {0, 1} and x² = 1 for ±1, so the quadratic tilt A only shifts the field or adds a
constant. The real-valued priors live beside them (truncated Gaussian, Gauss-Bernoulli).
"""

from __future__ import annotations

from rbmlab.backend import namespace
from rbmlab.backend.ops import bernoulli_logits_, sigmoid, softplus, uniform
from rbmlab.units.prior import Prior
from rbmlab.units.values import ValueSet


class UnitType(Prior):
    """What every discrete unit type derives from its own ``states_of`` and ``values``."""

    values: tuple[float, ...] = ()  # the values a unit takes, in increasing order

    @classmethod
    def value_set(cls) -> ValueSet:
        """Exactly ``values`` (a Bernoulli unit takes 0 or 1, never a level between)."""
        return ValueSet.of_points(*cls.values)

    # ------------------------------------------------ layout (a categorical type overrides these)
    @classmethod
    def width(cls) -> int:
        """Columns of a layer per unit (1: a binary unit is one column)."""
        return 1

    @classmethod
    def data_value_set(cls) -> ValueSet:
        """The values data for these units hold (before :meth:`encode`)."""
        return cls.value_set()

    @staticmethod
    def encode(x, dtype=None):
        """Data rows → the layer's columns (the identity for binary units)."""
        return x

    @staticmethod
    def decode(x):
        """The layer's columns → data rows (the identity for binary units)."""
        return x

    @classmethod
    def state_count(cls, columns: int) -> int:
        """States of a layer of ``columns`` columns: 2^columns."""
        return 1 << columns

    @classmethod
    def state_bits(cls, columns: int) -> float:
        """log₂ of :meth:`state_count`."""
        return float(columns)

    @classmethod
    def states(cls, xp, n: int, start: int, stop: int, dtype):
        """Rows: the states numbered start..stop−1."""
        return cls.states_of(xp, xp.arange(start, stop, dtype=xp.int64), n, dtype)

    @classmethod
    def uniform_states(cls, rng, shape, dtype):
        """States drawn uniformly (each unit either value with probability ½), of ``shape``."""
        lo, hi = cls.values
        bits = uniform(rng, shape, dtype) < 0.5
        return lo + (hi - lo) * bits.astype(dtype)


class Bernoulli(UnitType):
    """x ∈ {0, 1}, p(x = 1 | a) = σ(a)."""

    name = "bernoulli"
    values = (0.0, 1.0)

    @staticmethod
    def mean(a, out=None):
        return sigmoid(a, out=out)

    @staticmethod
    def log_partition(a):
        return softplus(a)

    @staticmethod
    def log_partition_sum_(x):
        """Σ_j softplus(x_j) over the last axis as Σ max(x, 0) + Σ log(1 + e^{−|x|}); overwrites
        ``x`` (float64 accuracy of logaddexp at about half the cost)."""
        xp = namespace(x)
        pos = xp.sum(xp.maximum(x, 0.0), axis=-1)
        xp.abs(x, out=x)
        xp.negative(x, out=x)
        xp.exp(x, out=x)
        x += 1.0
        xp.log(x, out=x)
        return pos + xp.sum(x, axis=-1)

    @staticmethod
    def sample_(a, rng, bias=None):
        return bernoulli_logits_(a, rng, bias=bias)

    @staticmethod
    def flip(x):
        """The other value of each unit: 1 − x."""
        return 1.0 - x

    @staticmethod
    def states_of(xp, ints, n: int, dtype):
        """Binary expansions of the integer array ``ints`` (bit j → last-axis column j)."""
        return ((ints[..., None] >> xp.arange(n, dtype=xp.int64)) & 1).astype(dtype)

    @staticmethod
    def field_for_mean(m, clip: float = 1e-3):
        xp = namespace(m)
        p = xp.clip(m, clip, 1.0 - clip)
        return xp.log(p) - xp.log1p(-p)

    # ------------------------------------------------ prior (x² = x: Z̃ = 1 + e^{B − A/2}, tap App. C.3)
    @staticmethod
    def log_z(B, A):
        return softplus(B - 0.5 * A)

    @staticmethod
    def moments(B, A):
        m = sigmoid(B - 0.5 * A)
        return m, m * (1.0 - m)

    @classmethod
    def init_params(cls, x, clip: float = 1e-3):
        return (cls.field_for_mean(x.mean(axis=0), clip),)


class Spin(UnitType):
    """x ∈ {−1, +1}, p(x = +1 | a) = σ(2a)."""

    name = "spin"
    values = (-1.0, 1.0)
    support = (-1.0, 1.0)

    @staticmethod
    def mean(a, out=None):
        return namespace(a).tanh(a, out=out)

    @staticmethod
    def log_partition(a):
        return softplus(2.0 * a) - a  # log(e^a + e^{−a}), stable

    @staticmethod
    def log_partition_sum_(x):
        """Σ_j log(2 cosh x_j) over the last axis; overwrites ``x``."""
        xp = namespace(x)
        return xp.sum(Spin.log_partition(x), axis=-1)

    @staticmethod
    def sample_(a, rng, bias=None):
        bernoulli_logits_(a, rng, bias=bias, scale=2.0)  # {0, 1} with P(1) = σ(2(a + b))
        a *= 2.0
        a -= 1.0
        return a

    @staticmethod
    def flip(x):
        """The other value of each unit: −x."""
        return -x

    @staticmethod
    def states_of(xp, ints, n: int, dtype):
        """Bit b of the index → value 2b − 1."""
        bits = Bernoulli.states_of(xp, ints, n, dtype)
        return 2.0 * bits - 1.0

    @staticmethod
    def field_for_mean(m, clip: float = 1e-3):
        xp = namespace(m)
        return xp.arctanh(xp.clip(m, -1.0 + 2 * clip, 1.0 - 2 * clip))

    # ------------------------------------------------ prior (x² = 1: Z̃ = 2 cosh(B) e^{−A/2})
    @staticmethod
    def log_z(B, A):
        return Spin.log_partition(B) - 0.5 * A

    @staticmethod
    def moments(B, A):
        m = namespace(B).tanh(B + 0.0 * A)
        return m, 1.0 - m * m

    @classmethod
    def init_params(cls, x, clip: float = 1e-3):
        return (cls.field_for_mean(x.mean(axis=0), clip),)


UNIT_TYPES = {u.name: u for u in (Bernoulli, Spin)}
