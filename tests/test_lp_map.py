"""The LP perturb-and-MAP baseline (rbmlab.inference.lp_map) against enumeration."""
from __future__ import annotations

import numpy as np
import pytest

from rbmlab.inference.lp_map import lp_map
from rbmlab.models.factor_graph import from_ising
from tests.test_max_product import exact_map, random_forest_rbm, random_tree_ising


@pytest.mark.parametrize("make", [lambda r: random_tree_ising(r, 7), lambda r: random_forest_rbm(r, 5, 3)])
def test_on_trees_the_lp_is_tight_and_rounds_to_the_exact_map(make):
    rng = np.random.default_rng(0)
    graph = make(rng)
    unary = graph.unary[None, :] + rng.logistic(size=(6, graph.n))
    x, relaxed = lp_map(graph, unary)
    np.testing.assert_allclose(relaxed, x, atol=1e-7)
    np.testing.assert_array_equal(x, exact_map(graph, unary))


def test_a_frustrated_triangle_relaxes_to_one_half_and_rounds_to_zero():
    """w = −2 on every pair, u = 1.5: the best state has one unit on (1.5), the LP puts every
    p at ½ with q = 0 (2.25), and rounding half to even gives all zeros (the authors' round)."""
    W = -2.0 * (np.ones((3, 3)) - np.eye(3))
    x, relaxed = lp_map(from_ising(W, np.full(3, 1.5)), np.full((1, 3), 1.5))
    np.testing.assert_allclose(relaxed, 0.5, atol=1e-7)
    np.testing.assert_array_equal(x, 0.0)
