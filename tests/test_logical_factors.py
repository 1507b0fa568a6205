"""AND/OR log-ratio messages and the OR-convolution factor group against enumeration (pmp
App. C.3): each factor's messages are brute-force max-marginal log-ratios; on tree-shaped instances
max-product decodes the exact MAP; on a loopy one a sweep is each factor's brute-force update."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rbmlab.inference.max_product import decode, max_product, perturb_and_max_product
from rbmlab.models.convolution_or import ConvolutionOR, deconvolution_graph, or_convolve
from rbmlab.models.factor_graph import FactorGraph
from rbmlab.models.logical_factors import OFF, and_to_input, and_to_output, merge_top2, or_messages, top2


def brute_messages(incoming, satisfied):
    """Per variable i: max over satisfying states with x_i = 1 of Σ_{j≠i} n_j x_j, less the same
    with x_i = 0 (float64)."""
    k = len(incoming)
    states = np.array([s for s in itertools.product([0, 1], repeat=k) if satisfied(s)], dtype=float)
    out = []
    for i in range(k):
        others = np.delete(states, i, axis=1) @ np.delete(np.asarray(incoming, float), i)
        out.append(others[states[:, i] == 1].max() - others[states[:, i] == 0].max())
    return out


def test_and_messages_are_max_marginals():
    rng = np.random.default_rng(0)
    for scale in (1.0, 30.0):
        for _ in range(50):
            n1, n2, nb = scale * rng.standard_normal(3)
            want = brute_messages([n1, n2, nb], lambda s: s[2] == (s[0] and s[1]))
            got = [and_to_input(nb, n2), and_to_input(nb, n1), and_to_output(n1, n2)]
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("K", [1, 2, 3, 4, 5])
def test_or_messages_are_max_marginals(K):
    rng = np.random.default_rng(K)
    # integer messages make ties (for the largest input) common; normal ones the generic case
    draws = [rng.integers(-2, 3, size=(40, K + 1)).astype(float), 3 * rng.standard_normal((40, K + 1))]
    for n in draws:
        to_b, to_t = or_messages(n[:, :K], n[:, K], axis=-1)
        for row, b, t in zip(n, to_b, to_t):
            want = brute_messages(list(row), lambda s: s[K] == max(s[:K]))
            np.testing.assert_allclose(list(t) + [b], want, rtol=1e-12, atol=1e-9)


def test_or_messages_along_another_axis_match_the_last():
    rng = np.random.default_rng(3)
    n, n_b = rng.standard_normal((4, 5, 6)), rng.standard_normal((4, 6))
    b1, t1 = or_messages(n, n_b, axis=1)
    b2, t2 = or_messages(n.swapaxes(1, 2), n_b, axis=-1)
    np.testing.assert_allclose(b1, b2)
    np.testing.assert_allclose(t1, t2.swapaxes(1, 2))


def test_top2_keeps_ties_and_gives_minus_inf_for_one_entry():
    first, second = top2(np.array([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]]))
    np.testing.assert_array_equal(first, [3.0, 2.0])
    np.testing.assert_array_equal(second, [3.0, 0.0])
    assert top2(np.array([[5.0]]))[1][0] == -np.inf


def test_merging_top2s_gives_the_top2_of_the_union():
    rng = np.random.default_rng(11)
    for n in (rng.integers(-2, 3, size=(200, 7)).astype(float), rng.standard_normal((200, 7))):
        left, right = n[:, :3], n[:, 3:]
        merged = merge_top2(*top2(left), *top2(right))
        np.testing.assert_array_equal(merged, top2(n))


def test_forced_off_inputs_give_no_nan_and_the_large_negative_answer():
    """−inf (or OFF) inputs: finite-or-−inf messages equal to those of a very negative finite input."""
    rng = np.random.default_rng(4)
    n = rng.standard_normal((30, 5)).astype(np.float32)
    n[:, :2] = -np.inf
    n_b = np.where(rng.random(30) < 0.5, -np.inf, rng.standard_normal(30)).astype(np.float32)
    for a, b in [(n, n_b), (np.maximum(n, OFF), np.maximum(n_b, OFF))]:
        with np.errstate(invalid="raise"):
            to_b, to_t = or_messages(a, b)
            msgs = [
                to_b,
                to_t,
                and_to_input(b, a[:, 0]),
                and_to_input(a[:, 0], a[:, 3]),
                and_to_output(a[:, 0], a[:, 1]),
            ]
        assert not any(np.isnan(m).any() for m in msgs)
    finite = lambda x: np.maximum(x, -1e4)  # noqa: E731
    got = or_messages(n, n_b)
    want = or_messages(finite(n).astype(np.float64), finite(n_b).astype(np.float64))
    for g, w in zip(got, want):  # where the finite version is far below zero, so is the −inf one
        assert np.all(
            np.isclose(g, w, rtol=1e-6, atol=1e-5) | ((g < -1e3) & (w < -1e3)) | ((g > 1e3) & (w > 1e3))
        )


# ---------------------------------------------------------------- the OR-convolution group
def group_of(n_images, n_features, feature_shape, location_shape) -> ConvolutionOR:
    g = ConvolutionOR(np.arange(0), n_images, n_features, feature_shape, location_shape)
    return ConvolutionOR(np.arange(sum(g.sizes)), n_images, n_features, feature_shape, location_shape)


def test_or_convolve_pastes_each_feature_at_its_top_left_corner():
    rng = np.random.default_rng(5)
    S = (rng.random((2, 3, 4, 5)) < 0.3).astype(np.float32)
    W = (rng.random((3, 2, 3)) < 0.5).astype(np.float32)
    want = np.zeros((2, 5, 7), np.float32)
    for n, k, u, v, p, q in itertools.product(range(2), range(3), range(4), range(5), range(2), range(3)):
        want[n, u + p, v + q] = max(want[n, u + p, v + q], S[n, k, u, v] * W[k, p, q])
    np.testing.assert_array_equal(or_convolve(S, W), want)
    np.testing.assert_array_equal(or_convolve(S[None], W[None])[0], want)  # leading batch axes


def test_log_potential_is_zero_exactly_on_consistent_states():
    rng = np.random.default_rng(6)
    group = group_of(2, 2, (2, 2), (3, 3))
    W = (rng.random((4, 2, 2, 2)) < 0.5).astype(np.float32)
    S = (rng.random((4, 2, 2, 3, 3)) < 0.3).astype(np.float32)
    X = or_convolve(S, W)
    x = np.concatenate([W.reshape(4, -1), S.reshape(4, -1), X.reshape(4, -1)], axis=1)
    np.testing.assert_array_equal(group.log_potential(x), 0.0)
    x[1, -1] = 1 - x[1, -1]
    x[2, -3:] = 1 - x[2, -3:]
    np.testing.assert_array_equal(group.log_potential(x), [0.0, OFF, 3 * OFF, 0.0])


def brute_sweep(group: ConvolutionOR, beliefs, messages):
    """One sweep of the authors' code's schedule, factor by factor, every message by enumeration
    (float64)."""
    to_s, to_w, to_x = (m.astype(np.float64) for m in group._unpack(messages))
    b_w, b_s, b_x = (b.astype(np.float64) for b in group.split(beliefs))
    new_s, new_w, new_x = np.zeros_like(to_s), np.zeros_like(to_w), np.zeros_like(to_x)
    B, N, K, h, w, fh, fw = to_s.shape
    ands = list(itertools.product(range(N), range(K), range(h), range(w), range(fh), range(fw)))
    and_gate = lambda s: s[2] == (s[0] and s[1])  # noqa: E731  (t1, t2, b)
    for b in range(B):
        cav = {
            a: (b_s[(b,) + a[:4]] - to_s[(b,) + a], b_w[b, a[1], a[4], a[5]] - to_w[(b,) + a]) for a in ands
        }
        up = {a: brute_messages([*cav[a], 0.0], and_gate)[2] for a in ands}  # AND → aux
        down = {}
        for n, r, c in itertools.product(range(N), range(h + fh - 1), range(w + fw - 1)):
            inputs = [a for a in ands if a[0] == n and a[2] + a[4] == r and a[3] + a[5] == c]
            msgs = brute_messages(
                [up[a] for a in inputs] + [b_x[b, n, r, c] - to_x[b, n, r, c]], lambda s: s[-1] == max(s[:-1])
            )
            down.update(zip(inputs, msgs[:-1]))  # OR → aux
            new_x[b, n, r, c] = msgs[-1]  # OR → X
        for a in ands:
            to_t1, to_t2, _ = brute_messages([*cav[a], down[a]], and_gate)
            new_s[(b,) + a], new_w[(b,) + a] = to_t1, to_t2
    return np.concatenate([new_s.reshape(B, -1), new_w.reshape(B, -1), new_x.reshape(B, -1)], axis=1)


def test_one_sweep_is_every_factors_brute_force_update_on_a_loopy_instance():
    """2 features 2 × 2 at 2 × 2 locations of one 3 × 3 image (32 ANDs, 9 ORs, with loops), random
    beliefs and messages: the group's update equals each factor's enumeration."""
    rng = np.random.default_rng(7)
    group = group_of(1, 2, (2, 2), (2, 2))
    B = 3
    beliefs = (2 * rng.standard_normal((B, sum(group.sizes)))).astype(np.float32)
    messages = rng.standard_normal((B, 2 * group.n_ands + group.sizes[2])).astype(np.float32)
    np.testing.assert_allclose(
        group.max_product(beliefs, messages), brute_sweep(group, beliefs, messages), rtol=1e-5, atol=1e-5
    )


def test_incoming_sums_each_variables_messages():
    rng = np.random.default_rng(8)
    group = group_of(2, 2, (2, 3), (2, 2))
    messages = rng.standard_normal((2, 2 * group.n_ands + group.sizes[2]))
    to_s, to_w, to_x = group._unpack(messages)
    got_w, got_s, got_x = group.split(group.incoming(messages))
    np.testing.assert_allclose(got_w, to_w.sum(axis=(1, 3, 4)))
    np.testing.assert_allclose(got_s, to_s.sum(axis=(5, 6)))
    np.testing.assert_allclose(got_x, to_x)


def exact_map(group: ConvolutionOR, unary):
    """argmax over consistent states (X = or_convolve(S, W)) of unaryᵀx, per row of ``unary``."""
    n_w, n_s, _ = group.sizes
    ws = np.array(list(itertools.product([0.0, 1.0], repeat=n_w + n_s)))
    W = ws[:, :n_w].reshape((-1, group.n_features) + group.feature_shape)
    S = ws[:, n_w:].reshape((-1, group.n_images, group.n_features) + group.location_shape)
    states = np.concatenate([ws, or_convolve(S, W).reshape(len(ws), -1)], axis=1)
    scores = unary @ states.T
    assert np.all(np.sort(scores, axis=1)[:, -1] - np.sort(scores, axis=1)[:, -2] > 1e-6)  # unique MAP
    return states[scores.argmax(axis=1)]


TREES = {  # instances whose factor graph has no loop
    "one location, 2x3 feature": (1, 1, (2, 3), (1, 1)),
    "one 1x1 feature, 3x3 locations": (1, 1, (1, 1), (3, 3)),
    "three 1x1 features, one pixel (OR of 3)": (1, 3, (1, 1), (1, 1)),
}


@pytest.mark.parametrize("shape", TREES.values(), ids=TREES.keys())
@pytest.mark.parametrize("damping, sweeps", [(1.0, 20), (0.5, 300)])
def test_on_trees_max_product_decodes_the_exact_map(shape, damping, sweeps):
    rng = np.random.default_rng(9)
    group = group_of(*shape)
    graph = FactorGraph(np.zeros(sum(group.sizes)), (group,))
    unary = 2.0 * rng.standard_normal((32, graph.n))
    x = decode(max_product(graph, unary, sweeps, damping=damping).beliefs)
    np.testing.assert_array_equal(x, exact_map(group, unary))


def test_pmp_posterior_samples_reproduce_the_observed_images():
    """Data from a known (W, S); PMP samples of p(W, S | X) with the paper's priors explain X."""
    rng = np.random.default_rng(10)
    W = np.array([[[1, 1, 0], [0, 1, 0], [0, 1, 1]], [[0, 1, 0], [1, 1, 1], [0, 1, 0]]], np.float32)
    S = np.zeros((6, 2, 5, 5), np.float32)
    for n in range(6):
        S[n, rng.integers(2), rng.integers(5), rng.integers(5)] = 1
        S[n, rng.integers(2), rng.integers(5), rng.integers(5)] = 1
    X = or_convolve(S, W)
    graph = deconvolution_graph(X, 2, (3, 3), p_s=0.01, p_w=0.25)
    group = graph.groups[0]
    noise = rng.logistic(size=(4, graph.n)).astype(np.float32)
    noise[:, -group.sizes[2] :] = 0.0  # only W and S are perturbed
    x, objective = perturb_and_max_product(graph, rng, 4, 200, noise=noise)
    w, s, x_decoded = group.split(x)
    np.testing.assert_array_equal(x_decoded, np.broadcast_to(X, x_decoded.shape))
    np.testing.assert_array_equal(or_convolve(s, w), np.broadcast_to(X, x_decoded.shape))
    assert np.all(objective > OFF / 2)  # no violated constraint
