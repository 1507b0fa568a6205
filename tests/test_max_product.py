"""Max-product and PMP on binary factor graphs against enumeration (trees: exact MAP)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rbmlab.inference.max_product import decode, max_product, perturb_and_max_product
from rbmlab.models.factor_graph import FactorGraph, from_ising, from_rbm


def all_states(n):
    return np.array(list(itertools.product([0.0, 1.0], repeat=n)))


def random_tree_ising(rng, n, scale=2.0):
    """A random tree (each node i > 0 joined to one earlier node) with N(0, scale²) couplings."""
    J = np.zeros((n, n))
    for i in range(1, n):
        j = rng.integers(i)
        J[i, j] = J[j, i] = scale * rng.standard_normal()
    return from_ising(J, rng.standard_normal(n))


def random_forest_rbm(rng, n_v, n_h, scale=2.0):
    """Each visible unit joined to exactly one hidden unit: a forest."""
    W = np.zeros((n_v, n_h))
    W[np.arange(n_v), rng.integers(n_h, size=n_v)] = scale * rng.standard_normal(n_v)
    return from_rbm(W, rng.standard_normal(n_v), rng.standard_normal(n_h))


def exact_map(graph: FactorGraph, unary: np.ndarray) -> np.ndarray:
    """argmax_x of uᵀx + Σ log φ for each row of ``unary``, by enumeration."""
    states = all_states(graph.n)
    pairwise = graph.log_unnormalized(states) - states @ graph.unary
    return states[np.argmax(unary @ states.T + pairwise[None, :], axis=1)]


@pytest.mark.parametrize("make", [lambda r: random_tree_ising(r, 9), lambda r: random_forest_rbm(r, 6, 3)])
@pytest.mark.parametrize("damping, sweeps", [(1.0, 12), (0.5, 200)])
def test_on_trees_max_product_decodes_the_exact_map(make, damping, sweeps):
    rng = np.random.default_rng(0)
    for _ in range(5):
        graph = make(rng)
        unary = graph.unary[None, :] + rng.standard_normal((16, graph.n))
        x = decode(max_product(graph, unary, sweeps, damping=damping).beliefs)
        np.testing.assert_array_equal(x, exact_map(graph, unary))


def test_undamped_pmp_on_a_tree_gives_the_exact_perturb_and_map_sample():
    """With the noise fixed, PMP's sample is the argmax of the perturbed objective over all
    states, and the objective it reports is that maximum."""
    rng = np.random.default_rng(1)
    graph = random_tree_ising(rng, 8)
    noise = rng.logistic(size=(64, 8))
    x, objective = perturb_and_max_product(graph, rng, 64, 10, damping=1.0, noise=noise)
    states = all_states(8)
    scores = (graph.unary[None, :] + noise) @ states.T + (
        graph.log_unnormalized(states) - states @ graph.unary
    )
    np.testing.assert_array_equal(x, states[scores.argmax(axis=1)])
    np.testing.assert_allclose(objective, scores.max(axis=1), rtol=1e-12)


def test_with_unaries_only_pmp_samples_the_model_and_its_objective_averages_log_z():
    """No factors: the perturbed MAP is exact (Gumbel trick), so samples follow σ(u) and the
    mean perturbed objective is log Z = Σ softplus(u) in expectation."""
    rng = np.random.default_rng(2)
    u = np.array([-1.5, 0.0, 0.7, 2.0])
    graph = FactorGraph(u, ())
    x, objective = perturb_and_max_product(graph, rng, 40_000, 1)
    p = 1 / (1 + np.exp(-u))
    assert np.all(np.abs(x.mean(0) - p) < 4 * np.sqrt(p * (1 - p) / 40_000))
    log_z = np.logaddexp(0, u).sum()
    assert abs(objective.mean() - log_z) < 4 * objective.std() / math.sqrt(40_000)


def test_damping_must_be_in_range():
    graph = FactorGraph(np.zeros(2), ())
    with pytest.raises(ValueError, match="damping"):
        max_product(graph, np.zeros((1, 2)), 1, damping=0.0)


def test_on_a_loopy_dense_graph_each_sweep_is_app_c1_damped_matrix_update():
    """pmp App. C.1's matrix form with Alg. 1's damping, written out here: mm = b + Σ_i N[i, ·],
    input to edge i → j mm_i − N[j, i], N_new = max(0, P + W) − max(0, P), N ← N + ½ (N_new − N),
    all edges from the previous messages. A sequential or undamped schedule would not match after 7
    sweeps."""
    rng = np.random.default_rng(3)
    d, batch = 12, 5
    W = rng.standard_normal((d, d))
    W = W + W.T
    np.fill_diagonal(W, 0.0)
    graph = from_ising(W, rng.standard_normal(d))
    unary = graph.unary[None, :] + rng.logistic(size=(batch, d))
    N = np.zeros((batch, d, d))
    for _ in range(7):
        mm = unary + N.sum(axis=1)
        P = mm[:, :, None] - N.transpose(0, 2, 1)
        N += 0.5 * (np.maximum(0, P + W) - np.maximum(0, P) - N)
    result = max_product(graph, unary, 7)
    np.testing.assert_allclose(result.beliefs, unary + N.sum(axis=1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
@pytest.mark.parametrize("damping", [0.5, 1.0])
@pytest.mark.parametrize("kind", ["rbm", "dense"])
def test_the_fused_kernels_make_the_array_paths_update(kind, damping, dtype, tol, monkeypatch):
    """A group's numba sweep (in place, one pass) and its numpy path give the same messages and
    beliefs over 9 loopy sweeps, to float rounding (the sums run in another order), and the same
    decoded states; messages handed in are copied, never modified."""
    pytest.importorskip("numba")
    from rbmlab.models import factor_graph

    rng = np.random.default_rng(8)
    if kind == "rbm":
        graph = from_rbm(rng.standard_normal((13, 7)), rng.standard_normal(13), rng.standard_normal(7))
    else:
        W = rng.standard_normal((45, 45))  # more than one TILE of pairs
        W = W + W.T
        np.fill_diagonal(W, 0.0)
        graph = from_ising(W, rng.standard_normal(45))
    graph = graph.map(lambda a: a.astype(dtype))
    unary = (graph.unary[None, :] + rng.logistic(size=(6, graph.n))).astype(dtype)
    start = tuple(
        0.1 * rng.standard_normal(g.init_messages(np, 6, dtype).shape).astype(dtype) for g in graph.groups
    )
    kept = [m.copy() for m in start]
    group = graph.groups[0]  # the kernel applies here
    assert group.sweep_(unary[:, group.variables], start[0].copy(), damping) is not None
    fused = max_product(graph, unary, 9, damping=damping, messages=start)
    monkeypatch.setattr(factor_graph, "_kernels", lambda: None)
    plain = max_product(graph, unary, 9, damping=damping, messages=start)
    assert all(np.array_equal(a, b) for a, b in zip(start, kept))
    assert fused.beliefs.dtype == plain.beliefs.dtype == dtype
    scale = np.abs(plain.beliefs).max()
    np.testing.assert_allclose(fused.beliefs, plain.beliefs, rtol=0, atol=tol * scale)
    for a, b in zip(fused.messages, plain.messages):
        np.testing.assert_allclose(a, b, rtol=0, atol=tol * scale)
    assert np.array_equal(decode(fused.beliefs), decode(plain.beliefs))


def reference_beliefs(J, unary, sweeps: int, damping: float):
    """Flooding max-product on the pairwise binary model uᵀx + Σ_{i<j} J_ij x_i x_j, written out in
    log-odds: every edge factor's message to j from the previous beliefs, m_new = max(0, J_ij + c)
    − max(0, c) with c = b_i − m_{j→i} (i's belief less what the factor sent it), damped as
    m ← m + α (m_new − m) (Eq. 1 of the module), beliefs b = u + Σ_i m_{i→j}. (B, n) after ``sweeps``."""
    m = np.zeros((unary.shape[0],) + J.shape)  # m[:, i, j]: the (i, j) factor's message to j
    edges = J != 0
    for _ in range(sweeps):
        b = unary + m.sum(axis=1)
        cavity = b[:, :, None] - m.swapaxes(1, 2)  # c[:, i, j] = b_i − m_{j→i}
        new = np.maximum(0.0, J + cavity) - np.maximum(0.0, cavity)
        m = np.where(edges, m + damping * (new - m), 0.0)
    return unary + m.sum(axis=1)


@pytest.mark.parametrize("path", ["fused", "array"])
@pytest.mark.parametrize("damping", [1.0, 0.5, 0.2])
def test_each_sweep_is_damped_flooding_max_product(damping, path, monkeypatch):
    """The beliefs after 1, 2 and 6 sweeps on a loopy model (all pairs of 6 variables) equal the
    update written out above: damping mis-weighted, applied to some factor groups only, or a
    sequential schedule in place of flooding fails here (the tree tests converge whatever the
    damping, so they cannot tell)."""
    rng = np.random.default_rng(5)
    n = 6
    J = np.triu(1.5 * rng.standard_normal((n, n)), 1)
    J = J + J.T
    graph = from_ising(J, rng.standard_normal(n))
    if path == "array":  # the factor groups' numpy update in place of their fused kernels
        for group in graph.groups:
            if hasattr(type(group), "sweep_"):
                monkeypatch.delattr(type(group), "sweep_")
    states = all_states(n)
    pairwise = graph.log_unnormalized(states) - states @ graph.unary
    pair = np.array(  # the graph's own convention for J_ij, read off its log potential
        [
            [
                pairwise[(2 ** (n - 1 - i)) + (2 ** (n - 1 - j))]
                - pairwise[2 ** (n - 1 - i)]
                - pairwise[2 ** (n - 1 - j)]
                + pairwise[0]
                if i != j
                else 0.0
                for j in range(n)
            ]
            for i in range(n)
        ]
    )
    unary = graph.unary[None, :] + rng.standard_normal((3, n))
    for sweeps in (1, 2, 6):
        got = max_product(graph, unary, sweeps, damping=damping).beliefs
        np.testing.assert_allclose(got, reference_beliefs(pair, unary, sweeps, damping), rtol=0, atol=1e-9)


def test_the_pmp_sampler_damps_by_one_half_unless_told():
    """pmp Sec. 3: "The damping α is set to 1/2". The sampler's default draws are those of an
    explicit damping=0.5 and not the undamped ones, on a loopy model where damping matters."""
    from rbmlab.inference import INFERENCE
    from rbmlab.models.ising import Ising

    rng = np.random.default_rng(4)
    J = np.triu(rng.uniform(-2, 2, (8, 8)), 1)
    model, x = Ising(J + J.T, rng.uniform(-0.1, 0.1, 8)), np.zeros((200, 8))

    def draws(**options):
        return INFERENCE.build(INFERENCE.parse({"name": "pmp", **options})).run(
            model, x, np.random.default_rng(9), 3
        )

    assert INFERENCE.parse("pmp").damping == 0.5
    np.testing.assert_array_equal(draws(), draws(damping=0.5))
    assert not np.array_equal(draws(), draws(damping=1.0))
