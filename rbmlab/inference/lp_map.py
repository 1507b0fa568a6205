"""MAP by linear programming over the local polytope, the "PmapLP" baseline (pmp App. D).

For a {0, 1} pairwise model with unary log-odds u and edges k = {i, j} of weight w_k (an Ising
model's pairs, or an RBM's visible-hidden pairs) the MAP problem max_x uᵀx + Σ_k w_k x_i x_j
relaxes to the compact LP of the paper's App. D (its Eq. 7 objective, with the ½ of ½ xᵀWx kept
by counting each pair once):

    max  uᵀp + Σ_k w_k q_k   s.t.  q_k ≤ p_i,  q_k ≤ p_j,  p_i + p_j − 1 ≤ q_k,  0 ≤ p ≤ 1,  q ≥ 0.   (1)

Pairs of weight 0 are left out: their q_k can always satisfy the constraints, so the optimum over
p is the same. The solution is rounded half to even (0.5 → 0, as the authors' ``round``), after
rounding away the solver's last digits; the LP
is tight on trees, where this is the exact MAP. Each problem is one HiGHS solve
(``scipy.optimize.linprog``); the paper ran this on 96 cores, and it fits small models only.
"""

from __future__ import annotations

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from rbmlab.models.factor_graph import Bipartite, DensePairwise, FactorGraph


def pairwise_edges(graph: FactorGraph) -> tuple[np.ndarray, np.ndarray]:
    """(edges (E, 2) global variable indices, weights (E,)) of the nonzero pairwise factors of a
    graph made of dense pairwise and bipartite groups."""
    edges, weights = [], []
    for group in graph.groups:
        W = np.asarray(group.W, dtype=np.float64)
        if isinstance(group, DensePairwise):
            i, j = np.nonzero(np.triu(W, 1))
            local = np.asarray(group.variables)
            edges.append(np.stack([local[i], local[j]], axis=1))
            weights.append(W[i, j])
        elif isinstance(group, Bipartite):
            i, j = np.nonzero(W)
            edges.append(np.stack([np.asarray(group.visible)[i], np.asarray(group.hidden)[j]], axis=1))
            weights.append(W[i, j])
        else:
            raise TypeError(f"lp_map: no LP for factor group {type(group).__name__}")
    if not edges:
        return np.zeros((0, 2), dtype=np.int64), np.zeros(0)
    return np.concatenate(edges).astype(np.int64), np.concatenate(weights)


def _constraints(n: int, edges: np.ndarray) -> sparse.csr_matrix:
    """A_ub of (1) over the variables [p (n), q (E)]: three rows per edge."""
    n_edges = len(edges)
    k = np.arange(n_edges)
    q = n + k
    rows = np.concatenate([3 * k, 3 * k, 3 * k + 1, 3 * k + 1, 3 * k + 2, 3 * k + 2, 3 * k + 2])
    cols = np.concatenate([q, edges[:, 0], q, edges[:, 1], edges[:, 0], edges[:, 1], q])
    vals = np.concatenate(
        [
            np.ones(n_edges),
            -np.ones(n_edges),
            np.ones(n_edges),
            -np.ones(n_edges),
            np.ones(n_edges),
            np.ones(n_edges),
            -np.ones(n_edges),
        ]
    )
    return sparse.csr_matrix((vals, (rows, cols)), shape=(3 * n_edges, n + n_edges))


def lp_map(graph: FactorGraph, unary) -> tuple[np.ndarray, np.ndarray]:
    """(x (B, n) rounded LP solutions, p (B, n) the relaxed ones) of (1) for each row of ``unary``
    (B, n) over ``graph``'s pairwise factors."""
    unary = np.array(unary, dtype=np.float64, ndmin=2)
    n = graph.n
    edges, weights = pairwise_edges(graph)
    a_ub = _constraints(n, edges)
    b_ub = np.tile([0.0, 0.0, 1.0], len(edges))
    bounds = [(0.0, 1.0)] * n + [(0.0, None)] * len(edges)
    relaxed = np.empty_like(unary)
    for s, u in enumerate(unary):
        result = linprog(-np.concatenate([u, weights]), A_ub=a_ub, b_ub=b_ub, bounds=bounds, method="highs")
        if result.status != 0:
            raise RuntimeError(f"lp_map: HiGHS did not solve problem {s}: {result.message}")
        relaxed[s] = result.x[:n]
    return rounded(relaxed), relaxed


def rounded(relaxed) -> np.ndarray:
    """An LP solution rounded half to even (½ → 0), after rounding to 6 decimals so that solver
    noise around ½ cannot decide a unit."""
    return np.round(np.round(relaxed, 6))
