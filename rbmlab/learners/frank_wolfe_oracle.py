"""The linear oracle of Frank-Wolfe for infinite RBMs (frank_wolfe Eq. 9, Algorithm 1 line 4).

The new hidden unit is the weight vector w = (weights u ∈ R^D, hidden bias c) minimising

    f(w) = λ/2 ‖w‖² + Σ_s π_s softplus(u·v_s + c) − (1/N) Σ_n softplus(u·v_n + c)      (Alg. 1, l. 4)
    ∇f   = λ w + Σ_s π_s σ(u·v_s + c) (v_s, 1) − (1/N) Σ_n σ(u·v_n + c) (v_n, 1)        (Eq. 9)

where {v_s} with weights π_s stand for the current model p(v | q_t, ϑ_t): S Monte-Carlo samples
with π_s = 1/S in training, every state with its exact probability in tests. The hidden bias is the
weight of the paper's constant visible unit, so it is penalised too unless ``penalize_bias=False``
(Sec. 2: the bias is a constant visible unit's weight). The problem is non-convex and w = 0 is a
saddle once the visible bias matches the data means (Eq. 9's gradient vanishes there), so
:func:`solve` runs scipy's L-BFGS-B from a few random non-zero starts and keeps the best.

The products run on the backend in the data's dtype; sums of softplus and the returned value and
gradient are float64, as L-BFGS-B needs.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize

from rbmlab.backend import namespace, to_numpy
from rbmlab.backend.ops import sigmoid, softplus


class LinearOracle:
    """f and ∇f of the oracle problem for fixed data and model states (a pure function of w)."""

    def __init__(self, data, states, weights=None, *, lam: float, penalize_bias: bool = True):
        self.xp = xp = namespace(data)
        self.data, self.states = data, states
        self.weights = None if weights is None else xp.asarray(weights, dtype=data.dtype)
        self.lam, self.penalize_bias = float(lam), penalize_bias
        self.dim = data.shape[1] + 1
        self.evaluations = 0

    def _term(self, x, weights, u, c):
        """(Σ weight · softplus(x u + c), Σ weight · σ(x u + c) (x, 1)) in float64."""
        xp = self.xp
        a = x @ u
        a += c
        sp = softplus(a)
        s = sigmoid(a, out=a)
        if weights is None:
            value = float(sp.sum(dtype=xp.float64)) / x.shape[0]
            s *= 1.0 / x.shape[0]
        else:
            value = float((sp * weights).sum(dtype=xp.float64))
            s *= weights
        grad = np.empty(self.dim)
        grad[:-1] = to_numpy(s @ x)
        grad[-1] = float(s.sum(dtype=xp.float64))
        return value, grad

    def __call__(self, w: np.ndarray) -> tuple[float, np.ndarray]:
        self.evaluations += 1
        xp, dtype = self.xp, self.data.dtype
        u, c = xp.asarray(w[:-1], dtype=dtype), w[-1]
        model_value, model_grad = self._term(self.states, self.weights, u, c)
        data_value, data_grad = self._term(self.data, None, u, c)
        penalised = w if self.penalize_bias else np.concatenate([w[:-1], [0.0]])
        value = 0.5 * self.lam * float(penalised @ penalised) + model_value - data_value
        return value, self.lam * penalised + model_grad - data_grad

    def gain(self, w: np.ndarray) -> float:
        """−f(w): the linearised gain of adding unit w (⟨δ_w, ∇_q L⟩ up to the constant log 2
        terms; 0 at w = 0). The FW step is an ascent step in the linearisation iff it is ≥ 0."""
        return -self(w)[0]


@dataclass(frozen=True)
class OracleResult:
    w: np.ndarray  # (D + 1,) float64: weights to the visibles, then the hidden bias
    value: float  # f(w), the best over the restarts
    evaluations: int  # f/∇f evaluations over all restarts
    iterations: int  # L-BFGS iterations over all restarts


@functools.cache
def scipy_blas():
    """scipy's own BLAS, a threadpoolctl selection, or None where scipy shares numpy's. scipy's
    wheels bundle a second OpenBLAS (in scipy.libs) with its own thread pool, which L-BFGS-B's
    vector updates call: on 2 cores its threads contend with numpy's for nothing (vectors of D)."""
    from threadpoolctl import ThreadpoolController  # noqa: PLC0415

    controller = ThreadpoolController()
    paths = [lib.filepath for lib in controller.lib_controllers if "scipy.libs" in Path(lib.filepath).parts]
    return controller.select(filepath=paths) if paths else None


def solve(
    oracle: LinearOracle,
    rng: np.random.Generator,
    *,
    restarts: int = 3,
    init_std: float = 0.01,
    maxiter: int = 200,
    gtol: float = 1e-5,
    scipy_blas_threads: int | None = 1,
) -> OracleResult:
    """The best of ``restarts`` L-BFGS-B runs from w ~ N(0, init_std²) (host generator ``rng``),
    with scipy's own BLAS at ``scipy_blas_threads`` (None: as it is; the products of f and ∇f run
    on numpy's, untouched)."""
    best: Any = None
    iterations = 0
    separate = scipy_blas() if scipy_blas_threads is not None else None
    with separate.limit(limits=scipy_blas_threads) if separate is not None else contextlib.nullcontext():
        for _ in range(restarts):
            start = init_std * rng.standard_normal(oracle.dim)
            result = minimize(
                oracle, start, jac=True, method="L-BFGS-B", options={"maxiter": maxiter, "gtol": gtol}
            )
            iterations += int(result.nit)
            if best is None or result.fun < best.fun:
                best = result
    return OracleResult(np.asarray(best.x, dtype=np.float64), float(best.fun), oracle.evaluations, iterations)
