"""The prior interface: what TAP inference and learning ask of a unit type (the tap paper).

A unit's prior is P̃(x; U, θ) = e^{Ux} · base(x; θ): a field U (the bias of a binary unit) times a
base measure with its own parameters θ (``params``, possibly none), left unnormalised — the
normalisations cancel in the TAP log-likelihood and in every gradient (tap App. B, C). TAP sees a
unit through its tilted partition function (tap Eq. 32, sign corrected):

    Z̃(B, A; θ) = ∫ dx base(x; θ) e^{Bx − ½Ax²},    B the total field (U already added)

and the moments of Q(x) ∝ base(x; θ) e^{Bx − ½Ax²}: f_a = ∂_B ln Z̃ (mean), f_c = ∂²_B ln Z̃
(variance). TAP's A = −Σ W² c is ≤ 0, so A can make the tilt e^{+|A|x²/2}: priors with unbounded
support would not normalise (tap App. B.3), hence the truncated priors.

Every prior provides, elementwise and broadcasting, for numpy or cupy arrays:

    log_z(B, A, *θ)           ln Z̃(B, A; θ)
    moments(B, A, *θ)         (f_a, f_c): mean and variance of Q
    grad_log_z(B, A, *θ)      (∂ ln Z̃/∂θ_k for θ_k in ``params``); ∂ ln Z̃/∂U is f_a
    log_base(x, *θ)           ln base(x; θ): the data term's log-density beside Ux
    grad_log_base(x, *θ)      (∂ ln base(x; θ)/∂θ_k for θ_k in ``params``); ∂/∂U of Ux is x
    init_params(x)            (U, *θ) per column of a data matrix x (B, n): tap Alg. 2's θ⁽⁰⁾ ← X
    support                   (lo, hi): the values a unit takes lie in [lo, hi]
    value_set()               the values a unit takes (rbmlab.units.values.ValueSet): the
                              interval ``support`` here; a discrete type's ``values``; data
                              outside it are refused before any work (rbmlab.data.domain)
"""

from __future__ import annotations

from rbmlab.units.values import ValueSet


class Prior:
    """Base of unit types with TAP maths; subclasses implement the methods listed above."""

    name = ""
    params: tuple[str, ...] = ()  # θ: the base measure's parameters, in call order
    support: tuple[float, float] = (0.0, 1.0)

    @classmethod
    def value_set(cls) -> ValueSet:
        """The values a unit of this prior takes: the interval [lo, hi] of ``support``."""
        return ValueSet.between(*cls.support)

    @classmethod
    def log_z(cls, B, A, *theta):
        raise NotImplementedError

    @classmethod
    def moments(cls, B, A, *theta):
        raise NotImplementedError

    @classmethod
    def grad_log_z(cls, B, A, *theta) -> tuple:
        return ()

    @classmethod
    def log_base(cls, x, *theta):
        return 0.0 * x

    @classmethod
    def grad_log_base(cls, x, *theta) -> tuple:
        return ()

    @classmethod
    def init_params(cls, x) -> tuple:
        raise NotImplementedError
