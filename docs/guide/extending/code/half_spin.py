"""Half-spin units, x in {-1/2, +1/2} (the unit type of docs/guide/extending/unit-type.md).

In rbmlab this class would sit in ``rbmlab/units/discrete.py`` beside Bernoulli and Spin. The
spin-1/2 convention of physics (S = +-1/2): a unit with pre-activation a has
p(x | a) ∝ e^{a x}, so

    p(x = +1/2 | a) = σ(a),   E[x | a] = tanh(a/2)/2,   log Σ_x e^{a x} = log 2cosh(a/2).

An RBM with these units is the {0, 1} one under x = v − 1/2 (its energy shifted by linear terms),
and the spin one under x = s/2 (its couplings scaled by 1/4): the same family of distributions,
parametrised differently. As a prior (rbmlab.units.prior), x² = 1/4 makes TAP's quadratic tilt a
constant: Z̃(B, A) = 2cosh(B/2) e^{−A/8} (tap Eq. 32).
"""

from __future__ import annotations

from rbmlab.backend import namespace
from rbmlab.backend.ops import bernoulli_logits_, softplus
from rbmlab.units.discrete import Bernoulli, UnitType


class HalfSpin(UnitType):
    """x ∈ {−½, +½}, p(x = +½ | a) = σ(a)."""

    name = "half_spin"
    values = (-0.5, 0.5)
    support = (-0.5, 0.5)

    @staticmethod
    def mean(a, out=None):
        xp = namespace(a)
        out = xp.multiply(a, 0.5, out=out)
        xp.tanh(out, out=out)
        out *= 0.5
        return out

    @staticmethod
    def log_partition(a):
        return softplus(a) - 0.5 * a  # log(e^{a/2} + e^{−a/2}), stable

    @staticmethod
    def log_partition_sum_(x):
        """Σ_j log 2cosh(x_j / 2) over the last axis; overwrites ``x``."""
        return namespace(x).sum(HalfSpin.log_partition(x), axis=-1)

    @staticmethod
    def sample_(a, rng, bias=None):
        bernoulli_logits_(a, rng, bias=bias)  # {0, 1} with P(1) = σ(a + b)
        a -= 0.5
        return a

    @staticmethod
    def flip(x):
        """The other value of each unit: −x."""
        return -x

    @staticmethod
    def states_of(xp, ints, n: int, dtype):
        """Bit b of the index → value b − ½."""
        return Bernoulli.states_of(xp, ints, n, dtype) - 0.5

    @staticmethod
    def field_for_mean(m, clip: float = 1e-3):
        xp = namespace(m)
        return 2.0 * xp.arctanh(xp.clip(2.0 * m, -1.0 + 2 * clip, 1.0 - 2 * clip))

    # ------------------------------------------------ prior (x² = ¼: Z̃ = 2cosh(B/2) e^{−A/8}, tap Eq. 32)
    @staticmethod
    def log_z(B, A):
        return HalfSpin.log_partition(B) - 0.125 * A

    @staticmethod
    def moments(B, A):
        m = HalfSpin.mean(B + 0.0 * A)
        return m, 0.25 - m * m

    @classmethod
    def init_params(cls, x, clip: float = 1e-3):
        return (cls.field_for_mean(x.mean(axis=0), clip),)
