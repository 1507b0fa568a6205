"""Spectral steps: stochastic spectral descent SSD (Carlson, Cevher & Carin, AISTATS 2015),
the dcp paper's Fig. 5 baseline, as an optimizer (learner=ssd is CD-K with this optimizer).

A steepest-ascent step in a non-Euclidean norm, with the CD-K estimate G of the log-likelihood
gradient: the Schatten-∞ (spectral) norm for W and ℓ∞ for the biases. Its step direction is the
"sharp" of G in that norm:

    W ← W + lr · ‖G_W‖_S1 · U Vᵀ          (G_W = U S Vᵀ, reduced SVD over the nonzero singular values)
    b ← b + lr · ‖g_b‖₁ · sign(g_b),  c likewise.

The dcp paper restates none of this (it says only: "exactly the same settings as Carlson et al.",
an SVD per update, CD with K = 25). The sharp operators above are those restated by Bernstein &
Newhouse 2024 ("Old optimizer, new norm", arXiv 2409.20325, Table 1 and Prop. 2, citing Carlson
et al. 2015); each block gets its own scale, which is the steepest step for the combined norm
√(‖W‖²_S∞ + ‖b‖²_∞ + ‖c‖²_∞). Carlson et al.'s own constants could not be checked here: the step
sizes stand for their inverse Lipschitz constants, ``lr`` for W and ``bias_lr`` for the biases.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.backend import macs, namespace
from rbmlab.optimizers.base import Optimizer, rate_for
from rbmlab.validation import Config, option


def polar_factor(G, rtol: float = 1e-6):
    """(U Vᵀ, ‖G‖_S1) of G = U S Vᵀ (leading axes batch), through the eigendecomposition of GᵀG or
    GGᵀ, whichever is smaller: G (GᵀG)^(−1/2) on the span of the singular values above
    ``rtol`` times the largest (computed in float64; the others contribute nothing). A matrix
    with a non-finite entry (a diverged trial) gives NaN without stopping the others."""
    xp = namespace(G)
    G64 = G.astype(xp.float64)
    finite = xp.all(xp.isfinite(G64), axis=(-2, -1))
    G64 = xp.where(finite[..., None, None], G64, 0.0)  # eigh would raise on NaN
    tall = G.shape[-2] >= G.shape[-1]
    A = G64 if tall else G64.swapaxes(-1, -2)
    evals, evecs = xp.linalg.eigh(A.swapaxes(-1, -2) @ A)  # AᵀA = V S² Vᵀ
    s = xp.sqrt(xp.clip(evals, 0.0, None))
    keep = s > rtol * s.max(axis=-1, keepdims=True)
    inv_s = xp.where(keep, 1.0 / xp.where(keep, s, 1.0), 0.0)
    polar = A @ ((evecs * inv_s[..., None, :]) @ evecs.swapaxes(-1, -2))  # A V S⁻¹ Vᵀ = U Vᵀ
    polar = polar if tall else polar.swapaxes(-1, -2)
    nuclear = xp.sum(xp.where(keep, s, 0.0), axis=-1)
    polar = xp.where(finite[..., None, None], polar, xp.nan)
    nuclear = xp.where(finite, nuclear, xp.nan)
    return polar.astype(G.dtype), nuclear.astype(G.dtype)


def l1_sharp(g):
    """‖g‖₁ · sign(g): the steepest-ascent direction of g in the ℓ∞ norm (leading axes batch)."""
    xp = namespace(g)
    return xp.sum(xp.abs(g), axis=-1, keepdims=True) * xp.sign(g)


@dataclass
class SpectralConfig(Config):
    name: str = option("spectral", "optimizer")
    bias_lr: float = option(
        0.0,
        "step size of the vector parameters (biases); 0: the learner's lr",
        lo=0,
        label="spectral step of the biases",
    )


class Spectral(Optimizer):
    """Matrix parameters (W, J) take lr · ‖G‖_S1 · UVᵀ, vectors bias_lr · ‖g‖₁ · sign(g); no state."""

    config_class = SpectralConfig

    def update_cost(self, model) -> float:
        """Per matrix parameter (m, s), s ≤ m, in :func:`polar_factor`: AᵀA (m·s²), the
        eigendecomposition of that (s, s) (declared: rbmlab.backend.macs.eigh), V S⁻¹ Vᵀ (s³) and
        A · that (m·s²); the biases' sharps are elementwise."""
        total = 0.0
        for name, axes in model.PARAMS.items():
            shape = getattr(model, name).shape[-axes:]
            if axes == 2 and min(shape):
                m, s = max(shape), min(shape)
                total += 2 * m * s * s + s**3 + macs.eigh(s)
        return total

    def update(self, model, grad: dict, state: dict, lr: float):
        bias_lr = self.config.bias_lr or lr
        new = {}
        for name, g in grad.items():
            theta = getattr(model, name)
            if not theta.size:  # e.g. a binary prior's empty parameter rows
                new[name] = theta
            elif model.PARAMS[name] == 2:
                polar, nuclear = polar_factor(g)
                new[name] = theta + rate_for(lr, theta) * nuclear[..., None, None] * polar
            else:
                new[name] = theta + rate_for(bias_lr, theta) * l1_sharp(g)
        return model.replace(**new), state
