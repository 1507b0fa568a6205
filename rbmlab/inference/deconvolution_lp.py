"""MAP of the blind-deconvolution posterior (pmp Sec 5.6) by linear programming: the LP-based
MAP solver the paper's Discussion says fails on "challenging models with symmetries, such as the
one in Section 5.6", as a perturb-and-MAP sampler (PmapLP, App. D's recipe on this model).

The model is rbmlab.models.convolution_or's (Eq. 1): features W (K, fh, fw), locations S
(N, K, h, w), and each observed pixel X[n, r, c] the OR over the pairs (k, p, q) with
u = r − p, v = c − q inside the location grid of S[n, k, u, v] AND W[k, p, q]. With the paper's
evidence (p_e = 1e−100: ±230 nats a pixel, more than every prior term together can repay) the MAP
honours X exactly, so X enters as constraints and the objective is the priors' (perturbed)
log-odds u_w·W + u_s·S. Relaxed to [0, 1] with one variable z per pair that reaches a lit pixel:

    max  u_wᵀw + u_sᵀs
    s.t. s + w ≤ 1                  for every pair reaching a dark pixel (it would light it)
         z ≤ s,  z ≤ w              for every pair reaching a lit pixel
         Σ_pairs of the pixel z ≥ 1 for every lit pixel (someone lights it)
         0 ≤ w, s, z ≤ 1.                                                          (1)

With w, s integral this is exactly the MAP problem (z = s·w is then optimal), so the relaxation's
value bounds the MAP's from above and a solution that comes out integral is a MAP state. Each
problem is one HiGHS solve (``scipy.optimize.linprog``); the solution is rounded by
rbmlab.inference.lp_map's ``rounded`` (½ → 0, after rounding away the solver's last digits).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from rbmlab.inference.lp_map import rounded  # noqa: F401 - the rounding PmapLP samples share


@dataclass(frozen=True)
class DeconvolutionLP:
    """The constraints of (1) for images X, with the variables ordered [w (K·fh·fw), s (N·K·h·w),
    z (pairs reaching lit pixels)]."""

    a_ub: sparse.csr_matrix
    b_ub: np.ndarray
    n_w: int
    n_s: int
    n_z: int


def pairs(X, n_features: int, feature_side: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(pixel, w index, s index) of every (pixel, feature, tap) pair whose location is on the grid:
    flat indices into X, W (K, fh, fw) and S (N, K, h, w)."""
    N, H, Wd = X.shape
    K, f = n_features, feature_side
    h, w = H - f + 1, Wd - f + 1
    n, k, p, q, u, v = np.meshgrid(
        np.arange(N), np.arange(K), np.arange(f), np.arange(f), np.arange(h), np.arange(w), indexing="ij"
    )
    pixel = np.ravel_multi_index((n, u + p, v + q), X.shape).ravel()
    w_index = np.ravel_multi_index((k, p, q), (K, f, f)).ravel()
    s_index = np.ravel_multi_index((n, k, u, v), (N, K, h, w)).ravel()
    return pixel, w_index, s_index


def constraints(X, n_features: int, feature_side: int) -> DeconvolutionLP:
    """The rows of (1) as A_ub x ≤ b_ub."""
    N, H, Wd = X.shape
    f = feature_side
    n_w, n_s = n_features * f * f, N * n_features * (H - f + 1) * (Wd - f + 1)
    pixel, w_index, s_index = pairs(X, n_features, f)
    lit = np.asarray(X).reshape(-1)[pixel] > 0
    dark = ~lit
    n_dark, n_z = int(dark.sum()), int(lit.sum())
    z = n_w + n_s + np.arange(n_z)
    rows, cols, vals = [], [], []

    def add(r, c, value):
        rows.append(r)
        cols.append(c)
        vals.append(np.full(len(r), value))

    r = np.arange(n_dark)  # s + w ≤ 1
    add(r, n_w + s_index[dark], 1.0)
    add(r, w_index[dark], 1.0)
    r = n_dark + np.arange(n_z)  # z − s ≤ 0
    add(r, z, 1.0)
    add(r, n_w + s_index[lit], -1.0)
    r = n_dark + n_z + np.arange(n_z)  # z − w ≤ 0
    add(r, z, 1.0)
    add(r, w_index[lit], -1.0)
    lit_pixels, owner = np.unique(pixel[lit], return_inverse=True)  # −Σ z ≤ −1 per lit pixel
    add(n_dark + 2 * n_z + owner, z, -1.0)
    n_rows = n_dark + 2 * n_z + len(lit_pixels)
    a_ub = sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n_rows, n_w + n_s + n_z)
    )
    b_ub = np.concatenate([np.ones(n_dark), np.zeros(2 * n_z), -np.ones(len(lit_pixels))])
    return DeconvolutionLP(a_ub, b_ub, n_w, n_s, n_z)


def solve(lp: DeconvolutionLP, unary_w, unary_s) -> tuple[np.ndarray, float]:
    """(the relaxed [w, s] of (1) for log-odds ``unary_w`` (n_w,) and ``unary_s`` (n_s,), the
    relaxation's optimal value)."""
    cost = -np.concatenate(
        [np.asarray(unary_w, np.float64), np.asarray(unary_s, np.float64), np.zeros(lp.n_z)]
    )
    result = linprog(cost, A_ub=lp.a_ub, b_ub=lp.b_ub, bounds=(0.0, 1.0), method="highs")
    if result.status != 0:
        raise RuntimeError(f"deconvolution_lp: HiGHS did not solve the LP: {result.message}")
    return result.x[: lp.n_w + lp.n_s], -float(result.fun)
