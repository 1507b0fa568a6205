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


def test_the_pmap_lp_sampler_is_the_exact_perturbed_map_on_a_forest_and_agrees_with_pmp():
    """inference=pmap_lp on an RBM whose graph is a forest: each sample is the exact MAP of the model
    under its own Logistic perturbation (enumeration, the noise redrawn from the same seed), and PMP
    (exact on trees) given the same seed returns the same samples."""
    from rbmlab.inference import INFERENCE
    from rbmlab.inference.max_product import logistic_noise
    from rbmlab.models.rbm import RBM

    rng = np.random.default_rng(3)
    W = np.zeros((6, 3))
    W[np.arange(6), rng.integers(3, size=6)] = 2.0 * rng.standard_normal(6)
    rbm = RBM(W, rng.standard_normal(6), rng.standard_normal(3))
    graph = rbm.factor_graph()
    x = np.zeros((40, 6))
    lp = INFERENCE.build(INFERENCE.parse("pmap_lp")).run(rbm, x, np.random.default_rng(7), 1)
    noise = logistic_noise(np.random.default_rng(7), (40, graph.n), graph.unary.dtype)
    np.testing.assert_array_equal(lp, exact_map(graph, graph.unary[None, :] + noise)[:, :6])
    pmp = INFERENCE.build(INFERENCE.parse("pmp")).run(rbm, x, np.random.default_rng(7), 200)
    np.testing.assert_array_equal(lp, pmp)
    assert 0 < lp.mean() < 1


def test_the_lp_diagnosis_exact_map_enumerates_hidden_states_correctly():
    """scripts/pmp_lp_diagnosis.py's exact perturbed MAP (hidden states enumerated, the visible
    units by sign) equals brute force over every (v, h) of a 5 x 3 RBM."""
    import sys

    from rbmlab.models.rbm import RBM
    from tests.test_bad_input import script_main

    script_main("pmp_lp_diagnosis")
    diagnosis = sys.modules["pmp_lp_diagnosis"]
    rng = np.random.default_rng(4)
    rbm = RBM(rng.normal(0, 2, (5, 3)), rng.normal(0, 1, 5), rng.normal(0, 1, 3))
    graph = rbm.factor_graph()
    unary = graph.unary[None, :] + rng.logistic(size=(30, graph.n))
    np.testing.assert_array_equal(diagnosis.exact_map(rbm.W, unary), exact_map(graph, unary))


def test_the_pmap_lp_sampler_returns_rounded_states_where_the_lp_is_not_tight():
    """On the frustrated triangle the perturbed LPs relax to halves for some noise draws: the
    sampler's samples are states (0 or 1 in every unit), never the relaxed halves."""
    from rbmlab.inference import INFERENCE
    from rbmlab.inference.max_product import logistic_noise
    from rbmlab.models.ising import Ising

    W = -2.0 * (np.ones((3, 3)) - np.eye(3))
    model = Ising(W, np.full(3, 1.5))
    samples = INFERENCE.build(INFERENCE.parse("pmap_lp")).run(
        model, np.zeros((60, 3)), np.random.default_rng(7), 1
    )
    noise = logistic_noise(np.random.default_rng(7), (60, 3), np.float64)
    relaxed = lp_map(model.factor_graph(), model.factor_graph().unary[None, :] + noise)[1]
    assert np.any(np.abs(relaxed - 0.5) < 1e-6)  # the premise: some draws are not tight
    assert set(np.unique(samples)) <= {0.0, 1.0}
