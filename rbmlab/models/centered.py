"""The centered binary RBM (Montavon & Müller 2012; Melchior et al. 2016; dcp Alg. 4).

With offsets μ (visible) and λ (hidden), W of shape (n_visible, n_hidden):

    E(v, h) = −(v − μ)ᵀW(h − λ) − bᵀ(v − μ) − cᵀ(h − λ)

Expanding, this is the plain RBM energy of (W, b − Wλ, c − Wᵀμ) plus a constant μᵀWλ − bᵀμ − cᵀλ,
so the two define the same distribution: :meth:`CenteredRBM.to_plain` and
:meth:`CenteredRBM.from_plain` convert exactly (derived above; dcp does not give it), and
conditionals, samplers and evaluators work on the plain form. Leading trial axes broadcast as in
:mod:`rbmlab.models.rbm`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rbmlab.models.rbm import RBM


def _matvec(W, x):
    """W x over the last axis of x, with leading (trial) axes: (..., m, n) · (..., n) → (..., m)."""
    return (W @ x[..., :, None])[..., 0]


@dataclass(frozen=True)
class CenteredRBM:
    params: RBM  # (W, b, c) in centered coordinates: W, b = params.b_v, c = params.b_h
    mu: Any  # (..., n_visible) visible offsets
    lam: Any  # (..., n_hidden) hidden offsets

    @property
    def W(self):
        return self.params.W

    def to_plain(self) -> RBM:
        """(W, b − Wλ, c − Wᵀμ): the plain RBM with the same distribution."""
        W = self.params.W
        return self.params.replace(
            b_v=self.params.b_v - _matvec(W, self.lam),
            b_h=self.params.b_h - _matvec(W.swapaxes(-1, -2), self.mu),
        )

    @classmethod
    def from_plain(cls, rbm: RBM, mu, lam) -> CenteredRBM:
        """The centered parameters with offsets (μ, λ) of the plain ``rbm``: b = b_v + Wλ, c = b_h + Wᵀμ."""
        W = rbm.W
        return cls(
            rbm.replace(b_v=rbm.b_v + _matvec(W, lam), b_h=rbm.b_h + _matvec(W.swapaxes(-1, -2), mu)), mu, lam
        )

    def move_offsets(self, mu_new, lam_new) -> CenteredRBM:
        """New offsets with the biases re-parameterised so the distribution is unchanged (Alg. 4):
        b ← b + W(λ' − λ), c ← c + Wᵀ(μ' − μ)."""
        W = self.params.W
        params = self.params.replace(
            b_v=self.params.b_v + _matvec(W, lam_new - self.lam),
            b_h=self.params.b_h + _matvec(W.swapaxes(-1, -2), mu_new - self.mu),
        )
        return CenteredRBM(params, mu_new, lam_new)

    def energy(self, v, h):
        """E(v, h) per row, in the centered form."""
        xp = self.params.xp
        vc, hc = v - self.mu[..., None, :], h - self.lam[..., None, :]
        return -(
            xp.sum((vc @ self.params.W) * hc, axis=-1)
            + xp.sum(vc * self.params.b_v[..., None, :], axis=-1)
            + xp.sum(hc * self.params.b_h[..., None, :], axis=-1)
        )
