"""MPLP (rbmlab.inference.mplp) against enumeration on trees, and numba against plain Python."""

from __future__ import annotations

import numpy as np
import pytest

from rbmlab.backend import numba_kernels
from rbmlab.inference import mplp as mplp_module
from rbmlab.inference.max_product import decode
from tests.test_max_product import exact_map, random_tree_ising


def test_on_trees_mplp_converges_to_the_exact_map():
    rng = np.random.default_rng(0)
    for _ in range(4):
        graph = random_tree_ising(rng, 8)
        W = graph.groups[0].W
        unary = graph.unary[None, :] + rng.logistic(size=(10, 8))
        result = mplp_module.mplp(W, unary, np.random.default_rng(1))
        assert result.converged.all() and (result.sweeps < 1000).all()
        np.testing.assert_array_equal(decode(result.beliefs), exact_map(graph, unary))


@pytest.mark.skipif(not numba_kernels.available(), reason="numba kernels unavailable")
def test_the_compiled_sweep_is_the_python_sweep():
    rng = np.random.default_rng(2)
    d = 7
    W = rng.standard_normal((d, d))
    W = W + W.T
    np.fill_diagonal(W, 0.0)
    pairs = np.stack(np.triu_indices(d, 1), axis=1)[rng.permutation(21)]
    state = [rng.standard_normal((3, d, d)), rng.standard_normal((3, d))]
    copies = [a.copy() for a in state]
    active = np.array([True, False, True])
    moved, expected = np.full(3, -1.0), np.full(3, -1.0)  # an inactive problem's entry is left
    mplp_module._kernel()(W, *state, pairs, active, moved)
    mplp_module._sweep(W, *copies, pairs, active, expected)
    np.testing.assert_allclose(moved, expected, rtol=1e-13)
    for a, b in zip(state, copies):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    assert moved[1] == -1.0


def test_one_sweep_on_two_variables_is_the_emplp_update_by_hand():
    """Beliefs b = u (messages 0): c_0 = u_0, c_1 = u_1; to x_1: ½ g(w, u_0) − ½ u_1, to x_0:
    ½ g(w, u_1) − ½ u_0, with g(w, c) = max(0, w + c) − max(0, c); beliefs move by those."""
    W = np.array([[0.0, 1.5], [1.5, 0.0]])
    u = np.array([[0.4, -1.0]])
    M, b = np.zeros((1, 2, 2)), u.copy()
    moved = np.zeros(1)
    mplp_module._sweep(W, M, b, np.array([[0, 1]]), np.array([True]), moved)

    def g(w, c):
        return max(0.0, w + c) - max(0.0, c)

    to_1, to_0 = 0.5 * g(1.5, 0.4) - 0.5 * (-1.0), 0.5 * g(1.5, -1.0) - 0.5 * 0.4
    assert M[0, 1, 0] == pytest.approx(to_1) and M[0, 0, 1] == pytest.approx(to_0)
    np.testing.assert_allclose(b, [[0.4 + to_0, -1.0 + to_1]])
    assert moved[0] == pytest.approx(max(abs(to_0), abs(to_1)))
