"""MPLP (Globerson & Jaakkola 2008), the sequential baseline of pmp Sec 5.2 (details the paper omits
follow the authors' code).

For a {0, 1} pairwise model with log p̃(x) = ½ xᵀWx + uᵀx (W symmetric, zero diagonal) MPLP keeps,
for every pair {i, j} (all pairs, as the authors' dense code: a zero W_ij still passes messages),
log-ratio messages M[j, i] from factor {i, j} into x_j, with beliefs b = u + Σ_i M[:, i]. One
sweep visits every pair once, in a fresh random order, and replaces both of its messages at once
by the EMPLP update (cavities c_i = b_i − M[i, j] and c_j = b_j − M[j, i] taken before either
changes):

    M[j, i] ← ½ g(W_ij, c_i) − ½ c_j,     M[i, j] ← ½ g(W_ij, c_j) − ½ c_i,                  (1)

g(w, c) = max(0, w + c) − max(0, c), then moves b_i and b_j by the change in their message. It
stops when a whole sweep moved no message by more than ``tol`` (1e−6 in the paper), per problem,
or after ``max_sweeps``. Decoding is x_i = 1[b_i > 0], as for max-product.

Sequential by nature (the damping that makes max-product parallel does not work for it, paper
§5.2), so a pair loop runs in a numba kernel when the ``fast`` extra is installed (and not switched
off, rbmlab.backend.numba_kernels) and in plain Python otherwise (the same arithmetic, fit for tests
on a few variables only).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.backend import numba_kernels


def _sweep(W, M, b, pairs, active, moved):
    """One EMPLP sweep (1) over ``pairs`` (P, 2) for every active problem; M (B, d, d), b (B, d)
    in place; the largest message change of each active problem into ``moved`` (B,). Allocates
    nothing (numba compiles it whatever numpy's creators are at the time)."""
    n_problems = b.shape[0]
    for s in range(n_problems):
        if not active[s]:
            continue
        largest = 0.0
        for p in range(pairs.shape[0]):
            i, j = pairs[p, 0], pairs[p, 1]
            c_i = b[s, i] - M[s, i, j]
            c_j = b[s, j] - M[s, j, i]
            w = W[i, j]
            to_j = 0.5 * (max(0.0, w + c_i) - max(0.0, c_i)) - 0.5 * c_j
            to_i = 0.5 * (max(0.0, w + c_j) - max(0.0, c_j)) - 0.5 * c_i
            d_j = to_j - M[s, j, i]
            d_i = to_i - M[s, i, j]
            M[s, j, i] = to_j
            M[s, i, j] = to_i
            b[s, j] += d_j
            b[s, i] += d_i
            largest = max(largest, abs(d_i), abs(d_j))
        moved[s] = largest


def _kernel():
    """The sweep, compiled with numba where kernels are available (else the Python function)."""
    return numba_kernels.compile(_sweep) or _sweep


@dataclass(frozen=True)
class MPLPResult:
    beliefs: np.ndarray  # (B, d) float64
    sweeps: np.ndarray  # (B,) sweeps run until each problem stopped
    converged: np.ndarray  # (B,) bool: its last sweep moved no message by more than tol


def mplp(W, unary, rng, *, tol: float = 1e-6, max_sweeps: int = 50_000) -> MPLPResult:
    """MPLP (1) on the problems ``unary`` (B, d) sharing W (d, d), in float64; pair orders from
    ``rng`` (one permutation per sweep, shared by the problems)."""
    W = np.ascontiguousarray(W, dtype=np.float64)
    unary = np.array(unary, dtype=np.float64, ndmin=2)
    d = W.shape[0]
    sweep = _kernel()
    pairs = np.stack(np.triu_indices(d, 1), axis=1).astype(np.int64)
    M = np.zeros((unary.shape[0], d, d))
    b = unary.copy()
    active = np.ones(unary.shape[0], dtype=bool)
    sweeps = np.zeros(unary.shape[0], dtype=np.int64)
    moved = np.zeros(unary.shape[0])
    for _ in range(max_sweeps):
        sweep(W, M, b, pairs[rng.permutation(len(pairs))], active, moved)
        sweeps += active
        active &= moved > tol
        if not active.any():
            break
    return MPLPResult(b, sweeps, ~active)
