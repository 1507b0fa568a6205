"""A layer of units as TAP inference and the general RBM see it (tap paper Sec. III): every unit's
prior (rbmlab.units.prior) with its field U and parameters θ, and the layer's cumulants — the
tilted log-normaliser ln Z̃(U + B, A), its moments f_a, f_c and their gradients. The families build
their layers from these (rbm, grbm, dbm) and TAP (rbmlab.inference.tap) iterates over them."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from rbmlab.backend import namespace


@dataclass(frozen=True)
class Layer:
    """One layer's prior, fields U (..., n) and prior parameters θ (..., k, n) or None; ``offset``
    (..., K, n): a field of each row of a batch added to U (an observation's likelihood, as the
    channel of denoising: the posterior is the model with U + D_k for image k)."""

    prior: Any
    field: Any
    theta: Any = None
    offset: Any = None

    def _total(self, B):
        B = B + self.field[..., None, :]
        return B if self.offset is None else B + self.offset

    def rows(self, keep) -> Layer:
        """The layer for the rows ``keep`` of its batch (the offset's rows)."""
        return self if self.offset is None else replace(self, offset=self.offset[keep])

    def run(self, r: int) -> Layer:
        """Run ``r``'s layer of packed runs (rbmlab.run.packed), whose every array has a leading
        run axis: its fields, parameters and offsets at r (views)."""
        part = lambda t: None if t is None else t[r]  # noqa: E731
        return replace(self, field=self.field[r], theta=part(self.theta), offset=part(self.offset))

    @property
    def theta_rows(self) -> tuple:
        """The prior parameters, each as a row (..., 1, n) that broadcasts against a batch."""
        if self.theta is None:
            return ()
        return tuple(self.theta[..., i, None, :] for i in range(self.theta.shape[-2]))

    def moments(self, B, A):
        """(f_a, f_c) at total field U + B and quadratic tilt A."""
        return self.prior.moments(self._total(B), A, *self.theta_rows)

    def log_z(self, B, A):
        return self.prior.log_z(self._total(B), A, *self.theta_rows)

    def grad_log_z(self, B, A) -> tuple:
        return self.prior.grad_log_z(self._total(B), A, *self.theta_rows)

    def log_prior(self, x):
        """ln P̃(x) = Ux + ln base(x; θ) summed over units, per row."""
        return namespace(x).sum(
            x * self.field[..., None, :] + self.prior.log_base(x, *self.theta_rows), axis=-1
        )


def clamped_log_density(W, visible: Layer, hidden: Layer, x):
    """ln P̃(x) with the hidden units summed out, per row, float64: the exact data term of Eq. 39,
    Σ_i ln P̃_i^v(x_i) + Σ_j ln Z̃_j^h(U_j + (xW)_j, 0)."""
    xp = namespace(W)
    product = x @ W
    return visible.log_prior(x.astype(xp.float64)) + xp.sum(
        hidden.log_z(product, 0.0 * product).astype(xp.float64), axis=-1
    )
