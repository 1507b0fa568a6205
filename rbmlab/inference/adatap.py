"""Adaptive TAP (adaTAP, Opper & Winther 2001) solved by VAMP: tap paper App. D, Algorithm 3, for
RBMs with binary {0, 1} units on both layers.

The model is ∝ exp(½xᵀJx + Hᵀx) on x = [v; h] ∈ {0, 1}^N, N = n_v + n_h, J = [[0, W], [Wᵀ, 0]],
H = [U^v; U^h] (the layers' fields). VAMP splits it into a factorised prior part, tilted by the
Gaussian message (A_1, B_1), and a Gaussian interaction part, tilted by (A_2, B_2). Per batch
element (vectorised over the batch and any leading trial axis):

    prior step        a_1 = σ(B_1 + H − A_1/2),   c_1 = a_1(1 − a_1)      (Layer.moments: x² = x)
                      A_2 = 1/c_1 − A_1,           B_2 = a_1/c_1 − B_1    (= 1/(1 − a_1) − B_1)
    interaction step  C_2 = (diag(A_2) − J)⁻¹,     a_2 = C_2 B_2,   c_2 = diag(C_2)
                      A_1 = 1/c_2 − A_2,           B_1 = a_2/c_2 − B_2

H enters the prior step, so (A_1, B_1) are the same kind of quantity as tap.py's (A, B) (the
field U excluded). Alg. 3 puts H in the interaction step instead (a_2 = C_2(B_2 + H)): the same
iteration with its B_1 = our B_1 + H and its B_2 = our B_2 − H, hence the same magnetisations.
At W = 0 one iteration gives A_1 = B_1 = 0 and a_1 = σ(H), the exact marginals. At a fixed point
a_1 = a_2 and c_1 = c_2; the messages differ (we read App. D's A_1 = A_2, B_1 = B_2 as an erratum).

Choices of the authors' group's Julia code (Boltzmann.jl), not in the paper:
  - damping d on the messages: A_1, B_1, A_2, B_2 ← d·new + (1 − d)·old (A_2, B_2 from the
    second iteration on);
  - start: A_1 = 1e-3 and B_1 such that the first prior step gives about σ((2x − 1)·logit 0.75)
    on the visible layer and the clamped hidden means σ(U^h + xW) (from ``start``: its
    magnetisations);
  - a_1 clipped to [CLIP, 1 − CLIP], so that 1/c_1 stays finite;
  - A_2 ≥ (1 + 1e-3)·λ_max(J) = (1 + 1e-3)·‖W‖₂, so that diag(A_2) − J is positive definite.
    Since c_1 ≤ ¼ and A_1 ≤ 0 (≤ 1e-3 at the start), the floor is inactive while ‖W‖₂ < 3.99;
    where it acts it moves the fixed point.
Converged: the mean-square change of a_1 over the units below ``tol``, per batch element.

C_2 is never formed: with D_v = diag(A_2^v), D_h = diag(A_2^h), diag(A_2) − J is
[[D_v, −W], [−Wᵀ, D_h]], inverted through the Schur complement of the larger layer's block (here
the visible one), S = D_h − Wᵀ D_v⁻¹ W (n_h × n_h per batch element):

    a_2^h = S⁻¹ (B_2^h + Wᵀ D_v⁻¹ B_2^v),     c_2^h = diag(S⁻¹)
    a_2^v = D_v⁻¹ (B_2^v + W a_2^h),           c_2^v = 1/A_2^v + diag(W S⁻¹ Wᵀ)/(A_2^v)²

at a cost O(K(n_v n_h² + n_h³)) per iteration for K batch elements (n_v and n_h swapped when the
hidden layer is the larger), against O(K(n_v + n_h)³) with the dense inverse and O(K n_v n_h) for
TAP.
"""

from __future__ import annotations

import math

import numpy as np

from rbmlab.backend import macs, namespace, reads_are_free
from rbmlab.inference.tap import Solution, clamped_hidden
from rbmlab.units import Bernoulli
from rbmlab.units.layer import Layer

CLIP = 1e-6  # a_1 ∈ [CLIP, 1 − CLIP] (the Julia code uses 1e-5)
A1_START = 1e-3
LOGIT_START = math.log(3.0)  # logit 0.75: data x ∈ {0, 1} starts at a_1^v = 0.25 or 0.75


def gaussian_moments(W, d_v, d_h, r_v, r_h):
    """Mean C r and diagonal of C = [[diag(d_v), −W], [−Wᵀ, diag(d_h)]]⁻¹ (assumed positive
    definite), r = [r_v; r_h], per row (..., K, n), as (a_v, c_v, a_h, c_h); only the smaller
    layer's block is factorised (Schur complement)."""
    if W.shape[-1] > W.shape[-2]:
        a_h, c_h, a_v, c_v = _schur(W.swapaxes(-1, -2), d_h, d_v, r_h, r_v)
        return a_v, c_v, a_h, c_h
    return _schur(W, d_v, d_h, r_v, r_h)


def _schur(W, d_b, d_s, r_b, r_s):
    """gaussian_moments with the block b (..., K, n_b) eliminated and s (n_s ≤ n_b) factorised."""
    xp = namespace(W)
    Wk = W[..., None, :, :]  # (..., 1, n_b, n_s): shared by the batch
    Wd = Wk / d_b[..., None]  # D_b⁻¹ W per batch element
    S = -(Wk.swapaxes(-1, -2) @ Wd)
    i = xp.arange(W.shape[-1])
    S[..., i, i] += d_s  # S = D_s − Wᵀ D_b⁻¹ W
    S_inv = xp.linalg.inv(S)
    a_s = (S_inv @ (r_s + (r_b / d_b) @ W)[..., None])[..., 0]
    c_s = xp.diagonal(S_inv, axis1=-2, axis2=-1)
    a_b = (r_b + a_s @ W.swapaxes(-1, -2)) / d_b
    c_b = (1.0 + ((Wk @ S_inv) * Wd).sum(axis=-1)) / d_b  # 1/d + diag(W S⁻¹ Wᵀ)/d²
    return a_b, c_b, a_s, c_s


def solve_cost(n_v: int, n_h: int, rows: int, chain_iterations: int, from_states: bool) -> float:
    """Multiply-adds of :func:`solve` for ``rows`` chains that ran ``chain_iterations`` (rows ·
    iterations: every chain runs every iteration), with n_s ≤ n_b the layer sizes
    (:func:`_schur` factorises the smaller): the Gram matrix, n_s²·n_b, and its eigenvalues
    (declared: rbmlab.backend.macs.eigvalsh); the start's xW (``from_states``); per iteration
    and chain the Schur complement WᵀD⁻¹W (n_b·n_s²), its inverse (declared: macs.inverse),
    S⁻¹ times a vector (n_s²), two matrix-vector products with W (2·n_b·n_s) and diag(W S⁻¹ Wᵀ)
    through W S⁻¹ (n_b·n_s²)."""
    n_s, n_b = min(n_v, n_h), max(n_v, n_h)
    per_chain = 2 * n_b * n_s * n_s + n_s * n_s + 2 * n_b * n_s + macs.inverse(n_s)
    start = rows * n_v * n_h if from_states else 0
    return float(n_s * n_s * n_b + macs.eigvalsh(n_s) + start + chain_iterations * per_chain)


def solve(
    W,
    visible: Layer,
    hidden: Layer,
    a_v0,
    c_v0=None,
    *,
    damping: float = 0.5,
    tol: float = 1e-8,
    max_iter: int = 100,
    start: Solution | None = None,
    runs: bool = False,
) -> Solution:
    """adaTAP fixed points by damped VAMP (Alg. 3) from the visible initialisations ``a_v0``
    (..., K, n_v), or from the magnetisations of ``start``; tap.solve's signature and result,
    with a, c = a_1, c_1. ``c_v0`` is accepted for that signature and unused (a binary unit's
    variance is a(1 − a)). ``runs=True``: the leading axis is packed runs' (rbmlab.run.packed),
    each iterated until its own chains have converged, as alone (on the host each run is its own
    solve; the counts are one per run)."""
    for name, layer in (("visible", visible), ("hidden", hidden)):
        if layer.prior is not Bernoulli:
            prior = getattr(layer.prior, "name", layer.prior)
            raise ValueError(
                f"adatap.solve: the {name} prior is {prior!r}; adaTAP (Alg. 3) is "
                "implemented for Bernoulli units only"
            )
    xp = namespace(W)
    if runs and reads_are_free(W):
        options = {"damping": damping, "tol": tol, "max_iter": max_iter}
        parts = [
            solve(
                W[r],
                visible.run(r),
                hidden.run(r),
                None if a_v0 is None else a_v0[r],
                **options,
                start=None if start is None else start.run(r),
            )
            for r in range(W.shape[0])
        ]
        return Solution(
            *(xp.stack([getattr(p, name) for p in parts]) for name in ("a_v", "c_v", "a_h", "c_h")),
            xp.asarray([p.iterations for p in parts]),
            xp.stack([p.converged for p in parts]),
            xp.asarray([p.chain_iterations for p in parts]),
        )
    logit = lambda a: xp.log(a) - xp.log1p(-a)  # noqa: E731
    if start is not None:
        B1_v = logit(xp.clip(start.a_v, CLIP, 1.0 - CLIP)) - visible.field[..., None, :]
        B1_h = logit(xp.clip(start.a_h, CLIP, 1.0 - CLIP)) - hidden.field[..., None, :]
    else:
        x = xp.asarray(a_v0, dtype=W.dtype)
        B1_v = (2.0 * x - 1.0) * LOGIT_START - visible.field[..., None, :]
        B1_h = clamped_hidden(W, hidden, x)[1]  # xW: the first a_1^h is σ(U^h + xW)
    shape = np.broadcast_shapes(W.shape[:-2] + (1, 1), B1_v.shape)
    B1_v = xp.array(xp.broadcast_to(B1_v, shape), dtype=W.dtype)
    B1_h = xp.array(xp.broadcast_to(B1_h, shape[:-1] + W.shape[-1:]), dtype=W.dtype)
    A1_v, A1_h = xp.full_like(B1_v, A1_START), xp.full_like(B1_h, A1_START)
    gram = W.swapaxes(-1, -2) @ W if W.shape[-1] <= W.shape[-2] else W @ W.swapaxes(-1, -2)
    floor = (1.0 + 1e-3) * xp.sqrt(xp.abs(xp.linalg.eigvalsh(gram)[..., -1:]))[..., None]  # ‖W‖₂

    def prior_step(B_v, A_v, B_h, A_h):
        a_v = xp.clip(visible.moments(B_v, A_v)[0], CLIP, 1.0 - CLIP)
        a_h = xp.clip(hidden.moments(B_h, A_h)[0], CLIP, 1.0 - CLIP)
        return a_v, a_v * (1.0 - a_v), a_h, a_h * (1.0 - a_h)

    damp = lambda new, old: damping * new + (1.0 - damping) * old  # noqa: E731
    a_v, c_v, a_h, c_h = prior_step(B1_v, A1_v, B1_h, A1_h)
    n = a_v.shape[-1] + a_h.shape[-1]
    converged = xp.zeros(a_v.shape[:-1], dtype=bool)
    it, masked = 0, not reads_are_free(W)
    if masked:  # on a device the test is not read back: the returned moments freeze once it holds
        lead = a_v.shape[:-2] + (1,) if runs else ()  # packed runs: each run's on its own
        finished, iterations = xp.zeros(lead, dtype=bool), xp.zeros(lead, dtype=xp.int64)
    for it in range(1, max_iter + 1):
        # prior → interaction messages (extrinsic part of the prior step's moments)
        new = [
            xp.maximum(1.0 / c_v - A1_v, floor),
            a_v / c_v - B1_v,
            xp.maximum(1.0 / c_h - A1_h, floor),
            a_h / c_h - B1_h,
        ]
        A2_v, B2_v, A2_h, B2_h = new if it == 1 else map(damp, new, (A2_v, B2_v, A2_h, B2_h))  # noqa: F821 - bound at it == 1
        # interaction step: the Gaussian N(C_2 B_2, C_2), then its extrinsic messages
        a2_v, c2_v, a2_h, c2_h = gaussian_moments(W, A2_v, A2_h, B2_v, B2_h)
        A1_v, B1_v, A1_h, B1_h = map(
            damp,
            (1.0 / c2_v - A2_v, a2_v / c2_v - B2_v, 1.0 / c2_h - A2_h, a2_h / c2_h - B2_h),
            (A1_v, B1_v, A1_h, B1_h),
        )
        new_v, new_c_v, new_h, new_c_h = prior_step(B1_v, A1_v, B1_h, A1_h)
        change = (((new_v - a_v) ** 2).sum(axis=-1) + ((new_h - a_h) ** 2).sum(axis=-1)) / n
        if masked:
            iterations += ~finished
            held = finished[..., None] if runs else finished  # over the units of a run's chains
            a_v, c_v, a_h, c_h = (
                xp.where(held, old, now)
                for old, now in zip((a_v, c_v, a_h, c_h), (new_v, new_c_v, new_h, new_c_h))
            )
            converged = xp.where(finished, converged, change < tol)
            finished = converged.all(axis=-1, keepdims=True) if runs else converged.all()
            continue
        a_v, c_v, a_h, c_h = new_v, new_c_v, new_h, new_c_h
        converged = change < tol
        if bool(converged.all()):
            break
    if masked:
        iterations = iterations[..., 0] if runs else iterations
        return Solution(a_v, c_v, a_h, c_h, iterations, converged, a_v.shape[-2] * iterations)
    return Solution(a_v, c_v, a_h, c_h, it, converged, a_v.shape[-2] * it)
