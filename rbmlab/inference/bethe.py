"""Loopy sum-product belief propagation on a pairwise Ising model: the Bethe approximation's
beliefs (Yedidia, Freeman and Weiss), whose learnability limit pmp Sec. 5.1 cites ("This model is
not learnable using the Bethe approximation for θ > 0.316" [23]).

For ±1 spins and log p̃(s) = Σ_{i<j} J_ij s_i s_j + Σ_i h_i s_i, the message from i to j is a field
u_{i→j} on s_j, updated in parallel for every directed edge (one matrix, ``u[i, j]``):

    H_i = h_i + Σ_k u_{k→i},      h_{i\\j} = H_i − u_{j→i}                   (cavity field)
    u_{i→j} ← atanh(tanh J_ij · tanh h_{i\\j})                                 (sum-product)

damped as u ← d·u_old + (1 − d)·u_new. The beliefs at the messages: E_b[s_i] = tanh H_i, and the
pair belief b_ij ∝ exp(J_ij s_i s_j + h_{i\\j} s_i + h_{j\\i} s_j), whose moment is

    E_b[s_i s_j] = (tanh J_ij + t_ij t_ji) / (1 + tanh J_ij · t_ij t_ji),   t_ij = tanh h_{i\\j}.

Exact on a tree. Models in {0, 1} units are solved in their ±1 form (rbmlab.models.ising.to_spins)
and their moments mapped back (x = (s + 1)/2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rbmlab.backend import namespace


@dataclass(frozen=True)
class BetheBeliefs:
    mean: Any  # (..., n): E_b[x_i] in the model's units
    pair: Any  # (..., n, n): E_b[x_i x_j], symmetric, zero diagonal (every pair an edge of the
    # complete graph: where J_ij = 0 the belief factorises, E_b = product of the means)
    messages: Any  # (..., n, n): u[i, j] = u_{i→j} (±1 form)
    converged: bool
    iterations: int


def _fields(J, h, u):
    """(H, cavity): the total field of each spin and the cavity field h_{i\\j} as cavity[i, j]."""
    H = h + u.sum(axis=-2)
    return H, H[..., :, None] - u.swapaxes(-1, -2)


def loopy_bp(J, h, u, *, max_iter: int, tol: float, damping: float) -> tuple[Any, bool, int]:
    """Sum-product messages of the ±1 model (J, h) from ``u`` until no message moves by ``tol``
    (then converged) or ``max_iter`` iterations: (u, converged, iterations)."""
    xp = namespace(J)
    tJ = xp.tanh(J)
    edge = 1.0 - float(xp.finfo(J.dtype).eps)  # tanh rounds to ±1 for large arguments: keep atanh finite
    for it in range(1, max_iter + 1):
        new = xp.arctanh(xp.clip(tJ * xp.tanh(_fields(J, h, u)[1]), -edge, edge))
        new = damping * u + (1.0 - damping) * new
        change = float(xp.max(xp.abs(new - u))) if u.size else 0.0
        u = new
        if change <= tol:
            return u, True, it
    return u, False, max_iter


def spin_moments(J, h, u):
    """(E_b[s_i], E_b[s_i s_j]) of the ±1 model at messages ``u`` (pair zero on the diagonal)."""
    xp = namespace(J)
    H, cavity = _fields(J, h, u)
    t = xp.tanh(cavity)
    tt = t * t.swapaxes(-1, -2)
    tJ = xp.tanh(J)
    pair = (tJ + tt) / (1.0 + tJ * tt)
    n = J.shape[-1]
    pair = pair * (1.0 - xp.eye(n, dtype=pair.dtype))
    return xp.tanh(H), pair


def random_messages(model, rng, std: float):
    """Starting messages N(0, ``std``²) in the model's shape, device and dtype (None for std 0: all
    zero), for the learner's and the evaluator's BP."""
    if not std:
        return None
    return std * model.xp.asarray(rng.standard_normal(model.J.shape), dtype=model.J.dtype)


def bethe_beliefs(model, messages=None, *, max_iter: int, tol: float, damping: float) -> BetheBeliefs:
    """Loopy BP on an Ising ``model`` (either spin convention) from ``messages`` (±1 form; None:
    all zero, where a field-free model stays on its symmetric fixed point) and its beliefs' moments
    in the model's units."""
    from rbmlab.models.ising import to_spins  # noqa: PLC0415 - inference imports no model at load

    spins, _ = to_spins(model, "pm1")
    xp = namespace(spins.J)
    n = spins.J.shape[-1]
    u = xp.zeros_like(spins.J) if messages is None else messages * (1.0 - xp.eye(n, dtype=spins.J.dtype))
    u, converged, iterations = loopy_bp(spins.J, spins.h, u, max_iter=max_iter, tol=tol, damping=damping)
    m, c = spin_moments(spins.J, spins.h, u)
    if model.spins == "01":  # x = (s + 1)/2: E[x_i] = (1 + m_i)/2, E[x_i x_j] = (1 + m_i + m_j + c_ij)/4
        n = m.shape[-1]
        c = (1.0 + m[..., :, None] + m[..., None, :] + c) * 0.25 * (1.0 - xp.eye(n, dtype=c.dtype))
        m = (1.0 + m) * 0.5
    return BetheBeliefs(m, c, u, converged, iterations)
