"""Second-order TAP for a deep Boltzmann machine: layers 0 … L, each coupled only to its
neighbours (tap paper App. E).

The DBM (Eq. 119) is the pairwise model of §V with the block-tridiagonal coupling matrix of
Eq. 125: layer l (n_l units; prior and fields U_l as a units.layer.Layer) meets layer l − 1 through W_l
(n_{l−1}, n_l) and layer l + 1 through W_{l+1}. Alg. 1 with that matrix reads, per layer,

    A_l = −(c_{l−1} W_l² + c_{l+1} W_{l+1}²ᵀ),    B_l = A_l ⊙ a_l + a_{l−1} W_l + a_{l+1} W_{l+1}ᵀ,
    (a_l, c_l) = f_{a,c}^l(U_l + B_l, A_l)                               (Eqs. 33–35 on Eq. 125)

(an absent neighbour's terms dropped). A layer sees only the other parity, so the odd positions
of the stack are updated together, then the even ones (tap.solve's hidden-then-visible; the
authors' Julia code does even then odd; a clamped stack starts at layer 1: layer 2 first, then 1
and 3), with tap.solve's damping, until every chain's mean-square change is below ``tol``. Free
solutions start at the data, a_0 = x, c_0 = 0 (Eqs. 37–38), the layers above from a bottom-up
pass a_l = f_a(a_{l−1} W_l, 0). At a fixed point

    −F = Σ_l Σ_i [ln Z̃(U_l + B_l, A_l) − B_l a_l + ½ A_l (a_l² + c_l)]
         + Σ_l [a_{l−1}ᵀ W_l a_l + ½ c_{l−1}ᵀ W_l² c_l]                       (Eq. 36 on Eq. 125)

estimates ln Z. **Clamped** solutions ā(x), c̄(x) (App. E.1) hold layer 0 at x: the hidden layers
are a DBM of their own with the extra field xW_1 on layer 1 (Layer.offset), solved alike.
Written on the whole stack (a_0 = x, c_0 = 0), their −F is the formula above with layer 0's term
replaced by its exact log-prior U_0·x (B_1 then holds xW_1, whose −xW_1·a_1 the coupling term
x W_1 a_1 cancels), and estimates ln Σ_h P̃(x, h), the last term of Eq. 121. The TAP
log-likelihood is ln P(x) ≈ −F_clamped(x) + ⟨F⟩ over the unique free solutions.

Gradients (Eqs. 126–129; envelope theorem): per coupling and field, the clamped solutions' average
of ∂(−F)/∂θ over the batch minus the free solutions' over K,

    ΔW_l = ⟨a_{l−1}ᵀ a_l + W_l ⊙ c_{l−1}ᵀ c_l⟩_clamped − ⟨…⟩_free,   ΔU_l = ⟨a_l⟩_clamped − ⟨a_l⟩_free

(c̄_0 = 0 leaves x ā_1 for W_1: Eq. 128). Prior parameters θ are not learned here (binary units
have none). Arrays may carry the model's leading trial axis; solutions are rows (..., K, n_l).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rbmlab.backend import namespace, to_numpy
from rbmlab.inference.tap import fixed_points, layer_fields, solve_stack
from rbmlab.units.layer import Layer


@dataclass(frozen=True)
class Solution:
    """TAP fixed points a[l], c[l] (..., K, n_l) of every layer of a stack, the iterations run and
    per-chain convergence; ``clamped``: layer 0 is held at the data (c[0] = 0)."""

    a: list
    c: list
    iterations: int
    converged: Any  # (..., K) bool
    clamped: bool = False


def _t(x):
    return x.swapaxes(-1, -2)


def solve(
    couplings,
    layers: list[Layer],
    a0,
    c0=None,
    *,
    damping: float = 0.5,
    tol: float = 1e-8,
    max_iter: int = 1000,
) -> Solution:
    """Free TAP fixed points of the stack ``layers`` coupled by ``couplings`` (W_1 … W_L), from
    layer 0 at ``a0`` (..., K, n_0) (variances ``c0``, default 0) and a bottom-up pass above: damped
    Alg. 1, at most ``max_iter`` iterations, until every chain's mean-square change is below
    ``tol`` (tap.solve_stack: the odd layers, then the even ones; converged chains set aside)."""
    xp = namespace(a0)
    field = layers[0].field
    shape = np.broadcast_shapes(field.shape[:-1] + (1, 1), a0.shape)  # with the trial axis
    a = [xp.array(xp.broadcast_to(a0, shape), dtype=field.dtype)]
    c = [xp.zeros_like(a[0]) if c0 is None else xp.array(xp.broadcast_to(c0, shape), dtype=field.dtype)]
    for W, layer in zip(couplings, layers[1:]):  # bottom-up, A = 0
        product = a[-1] @ W
        for out, moment in zip((a, c), layer.moments(product, 0.0 * product)):
            out.append(moment)
    a, c, it, converged, _ = solve_stack(couplings, layers, a, c, damping=damping, tol=tol, max_iter=max_iter)
    return Solution(a, c, it, converged)


def clamped(couplings, layers: list[Layer], x, **options) -> Solution:
    """Clamped TAP solutions: layer 0 held at the rows of ``x``, the hidden layers solved as their
    own stack with the field xW_1 added on layer 1 (``options``: those of :func:`solve`). Returned
    on the whole stack, with a[0] = x and c[0] = 0."""
    first = replace(layers[1], offset=x @ couplings[0])
    zero = 0.0 * first.offset
    a1, c1 = first.moments(zero, zero)
    s = solve(couplings[1:], [first, *layers[2:]], a1, c1, **options)
    xp = namespace(x)
    x = xp.broadcast_to(x, s.a[0].shape[:-1] + x.shape[-1:])
    return Solution([x, *s.a], [xp.zeros_like(x), *s.c], s.iterations, s.converged, clamped=True)


def free_energy(couplings, layers: list[Layer], s: Solution):
    """F per solution (..., K), float64 (Eq. 36 on Eq. 125). Free solutions: −F estimates ln Z;
    clamped ones: layer 0 contributes its log-prior and −F estimates ln Σ_h P̃(x, h)."""
    xp = namespace(s.a[0])
    f64 = xp.float64
    couplings = [W.astype(f64) for W in couplings]
    squares = [W * W for W in couplings]
    a, c = [t.astype(f64) for t in s.a], [t.astype(f64) for t in s.c]
    neg_f = 0.0
    for l, layer in enumerate(layers):
        layer = replace(layer, field=layer.field.astype(f64))
        if l == 0 and s.clamped:
            neg_f = neg_f + layer.log_prior(a[0])
            continue
        B, A = layer_fields(couplings, squares, a, c, l)
        neg_f = neg_f + xp.sum(layer.log_z(B, A) - B * a[l] + 0.5 * A * (a[l] * a[l] + c[l]), axis=-1)
    for l, (W, W2) in enumerate(zip(couplings, squares)):
        neg_f = neg_f + xp.sum((a[l] @ W) * a[l + 1] + 0.5 * (c[l] @ W2) * c[l + 1], axis=-1)
    return -neg_f


def magnetisations(s: Solution) -> np.ndarray:
    """[a_0, …, a_L] per solution (host), (..., K, Σ n_l)."""
    return np.concatenate([to_numpy(t) for t in s.a], axis=-1)


def log_partition(couplings, layers: list[Layer], s: Solution, tol: float = 1e-3):
    """(ln Z_TAP, F of each unique solution) of a single model's free solutions: −F averaged over
    the distinct fixed points (tap.fixed_points; Fig. 2)."""
    f = to_numpy(free_energy(couplings, layers, s))[
        fixed_points(magnetisations(s), to_numpy(s.converged), tol)
    ]
    return -float(f.mean()), f


def statistics(couplings, s: Solution) -> tuple[list, list]:
    """The solutions' averages of ∂(−F)/∂W_l = a_{l−1}ᵀ a_l + W_l ⊙ c_{l−1}ᵀ c_l (l = 1 … L) and
    of ∂(−F)/∂U_l = a_l (l = 0 … L): the terms of Eqs. 126–129."""
    k = s.a[0].shape[-2]
    dW = [
        _t(s.a[l]) @ (s.a[l + 1] / k) + W * (_t(s.c[l]) @ (s.c[l + 1] / k)) for l, W in enumerate(couplings)
    ]
    return dW, [a.mean(axis=-2) for a in s.a]


def gradient(couplings, clamped_solution: Solution, free_solution: Solution) -> tuple[list, list]:
    """Eqs. 126–129: (ΔW_1 … ΔW_L, ΔU_0 … ΔU_L), the clamped statistics minus the free ones."""
    (pos_W, pos_U), (neg_W, neg_U) = (statistics(couplings, s) for s in (clamped_solution, free_solution))
    return [p - q for p, q in zip(pos_W, neg_W)], [p - q for p, q in zip(pos_U, neg_U)]
