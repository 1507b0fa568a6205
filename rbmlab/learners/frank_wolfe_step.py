"""How much of the oracle's unit a Frank-Wolfe step adds: all of it (Alg. 1) or a line search.

Alg. 1 appends the oracle's w with coefficient 1 (line 5: β_t = 1/t at α_t = t). With the visible
bias b held, appending the unit s·w changes the mean log-likelihood (Eq. 3) by

    Δ(s) = (1/N) Σ_n softplus(s a_n) − log E_p[exp softplus(s a)],   a = u·v + c,

(log Z gains the second term) and the penalised objective (Eq. 6 at α_t = t, one penalty term per
unit) by Δ(s) − (λ/2) s² ‖w‖². The oracle's linear gain is the first-order part of this at s = 1
with E_p[softplus] in place of the log-mean-exp, an upper bound by Jensen's inequality, so a whole
unit can lower the likelihood (tests/test_frank_wolfe.py). :func:`line_search` picks s from a
geometric grid 1, 2^(−1/2), 2^(−1), … by the Monte-Carlo estimate of the penalised change over the
oracle's own model samples (exact with every state and its probability). A unit s·w is the
standard-RBM form of a fractional unit of coefficient s (Eq. 12, Sec. 3.3), so the model stays an
RBM. This step is a control for the paper's: ``learner.step=line_search``, not the default.

With the bias held, Δ(s) undervalues every step that the bias refit after it would complete (the
refit moves b to its optimum for the new unit). ``learner.step_bias=refit`` scores each s with the
bias the loop of Alg. 1 lines 7–10 fits for it, δ_s: the change is then
(1/N) Σ_n [softplus(s a_n) + δ_s·v_n] − log E_p[exp(softplus(s a) + δ_s·v)] − (λ/2) s² ‖w‖².
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.special import logsumexp

from rbmlab.backend import namespace, to_numpy
from rbmlab.backend.ops import softplus

POINTS = 13  # the grid's default size: scales 1 … 2^(−6)


@dataclass(frozen=True)
class StepResult:
    scale: float  # the chosen s
    scales: np.ndarray  # the grid, largest first
    changes: np.ndarray  # the estimated change of the penalised objective at each s


def scale_grid(points: int) -> np.ndarray:
    """1, 2^(−1/2), 2^(−1), …: ``points`` scales, each √2 below the last."""
    return 2.0 ** (-0.5 * np.arange(points))


def line_search(
    data,
    states,
    w: np.ndarray,
    *,
    lam: float,
    penalize_bias: bool = True,
    weights=None,
    points: int = POINTS,
    shift: Callable[[float], Any] | None = None,
) -> StepResult:
    """The s on :func:`scale_grid` maximising Δ(s) − (λ/2) s² ‖w‖² (module docstring), with E_p
    over ``states`` (uniform, or ``weights`` summing to one); ties go to the larger s.
    ``shift(s)``: the visible bias's change δ_s that comes with the unit s·w (its refit); Δ(s) then
    scores the model with both, (1/N) Σ_n [softplus(s a_n) + δ_s·v_n] − log E_p[exp(softplus(s a)
    + δ_s·v)], exact with exact expectations, an importance-weighted estimate from samples."""
    xp = namespace(data)
    u = xp.asarray(w[:-1], dtype=data.dtype)
    a_data = to_numpy(data @ u).astype(np.float64) + w[-1]
    a_model = to_numpy(states @ u).astype(np.float64) + w[-1]
    log_p = (
        np.full(a_model.shape, -np.log(a_model.size))
        if weights is None
        else np.log(np.asarray(to_numpy(weights), dtype=np.float64))
    )
    scales = scale_grid(points)
    penalised = w if penalize_bias else w[:-1]
    norm2 = float(penalised @ penalised)
    changes = np.empty(len(scales))
    for i, s in enumerate(scales):
        on_data, on_model = softplus(s * a_data), softplus(s * a_model)
        if shift is not None:
            delta = xp.asarray(shift(float(s)), dtype=data.dtype)
            on_data = on_data + to_numpy(data @ delta).astype(np.float64)
            on_model = on_model + to_numpy(states @ delta).astype(np.float64)
        changes[i] = on_data.mean() - logsumexp(on_model + log_p) - 0.5 * lam * s * s * norm2
    best = int(np.argmax(changes))
    return StepResult(float(scales[best]), scales, changes)
