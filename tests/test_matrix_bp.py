"""Matrix-form loopy BP (rbmlab.inference.matrix_bp) against exact answers: on tree-structured
RBMs (one hidden unit; a forest) sum-product gives the exact marginals and log Z, max-product the
exact joint MAP and mixed-product the exact marginal MAP; over a batch it equals instance by
instance; on loopy models the Bethe free energy's gradient at the fixed point is the beliefs."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rbmlab.inference.matrix_bp import bethe_log_z, decode, loopy_bp, pairwise_beliefs
from tests.conftest import all_binary

TIGHT = {"max_iter": 2000, "tol": 1e-13}


def exact(W, b_v, b_h):
    """Enumerated p(v, h) of one RBM: (states v, states h, probabilities (2^nv, 2^nh), log Z)."""
    V, H = all_binary(W.shape[0]), all_binary(W.shape[1])
    logp = V @ W @ H.T + (V @ b_v)[:, None] + (H @ b_h)[None, :]
    log_z = np.logaddexp.reduce(logp.ravel())
    return V, H, np.exp(logp - log_z), log_z


def random_instance(rng, n_v, n_h, mask=None, scale=1.5):
    W = scale * rng.standard_normal((n_v, n_h))
    if mask is not None:
        W = W * mask
    return W, rng.standard_normal(n_v), rng.standard_normal(n_h)


# a forest: hidden 0 joins visibles 0-2, hidden 1 joins 2-3 (a tree through v_2), hidden 2 joins 4-5
FOREST = np.array([[1, 0, 0], [1, 0, 0], [1, 1, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1]], dtype=float)
TREES = [("one hidden unit", 6, 1, None), ("forest", 6, 3, FOREST)]


@pytest.mark.parametrize("name, n_v, n_h, mask", TREES, ids=[t[0] for t in TREES])
def test_sum_product_on_trees_gives_the_exact_marginals_and_log_z(name, n_v, n_h, mask):
    rng = np.random.default_rng(0)
    for _ in range(5):
        W, b_v, b_h = random_instance(rng, n_v, n_h, mask)
        V, H, p, log_z = exact(W, b_v, b_h)
        result = loopy_bp(W, b_v[None], b_h[None], **TIGHT)
        assert bool(result.converged[0])
        np.testing.assert_allclose(result.tau_v[0], V.T @ p.sum(1), rtol=0, atol=1e-8)
        np.testing.assert_allclose(result.tau_h[0], H.T @ p.sum(0), rtol=0, atol=1e-8)
        gamma = np.einsum("ai,ab,bj->ij", V, p, H)
        edges = W != 0
        np.testing.assert_allclose(pairwise_beliefs(W, result)[0][edges], gamma[edges], rtol=0, atol=1e-8)
        assert bethe_log_z(W, b_v[None], b_h[None], result)[0] == pytest.approx(log_z, abs=1e-8)


@pytest.mark.parametrize("name, n_v, n_h, mask", TREES, ids=[t[0] for t in TREES])
def test_max_product_on_trees_finds_the_exact_joint_map(name, n_v, n_h, mask):
    rng = np.random.default_rng(1)
    for _ in range(10):
        W, b_v, b_h = random_instance(rng, n_v, n_h, mask)
        V, H, p, _ = exact(W, b_v, b_h)
        a, b = np.unravel_index(np.argmax(p), p.shape)
        result = loopy_bp(W, b_v[None], b_h[None], mode="max", **TIGHT)
        np.testing.assert_array_equal(decode(result)[0], V[a])
        np.testing.assert_array_equal((result.eta_h[0] > 0).astype(float), H[b])


def test_mixed_product_finds_the_exact_marginal_map_where_the_max_nodes_form_a_subtree():
    """Mixed-product is exact on trees whose max nodes (v) form a connected subtree (Liu & Ihler
    2013); in a bipartite RBM that is one visible unit with any number of hidden units."""
    rng = np.random.default_rng(2)
    for _ in range(20):
        W, b_v, b_h = random_instance(rng, 1, 6)
        V, _, p, _ = exact(W, b_v, b_h)
        result = loopy_bp(W, b_v[None], b_h[None], mode="mixed", **TIGHT)
        np.testing.assert_array_equal(decode(result)[0], V[np.argmax(p.sum(1))])


@pytest.mark.parametrize("name, n_v, n_h, mask", TREES, ids=[t[0] for t in TREES])
def test_mixed_product_on_trees_stops_at_a_local_maximum_of_the_marginal(name, n_v, n_h, mask):
    """On other trees a fixed point ṽ is a local maximum of p(v) (no single flip raises it; not
    always the global one), and τ^h is E[h | ṽ] exactly (derived here, not in the paper: what
    Eq. 7's MSSVM gradient needs). All v move at once, so the iteration can also cycle between two
    states: no fixed point then."""
    rng = np.random.default_rng(2)
    fixed = 0
    for _ in range(10):
        W, b_v, b_h = random_instance(rng, n_v, n_h, mask)
        V, _, p, _ = exact(W, b_v, b_h)
        marginal = dict(zip(map(tuple, V), p.sum(1)))
        result = loopy_bp(W, b_v[None], b_h[None], mode="mixed", max_iter=200)
        if not result.converged[0]:
            continue
        fixed += 1
        v_tilde = decode(result)[0]
        flips = np.abs(v_tilde[None] - np.eye(n_v))
        assert all(marginal[tuple(f)] <= marginal[tuple(v_tilde)] for f in flips)
        np.testing.assert_allclose(result.tau_h[0], 1 / (1 + np.exp(-(v_tilde @ W + b_h))), atol=1e-12)
    assert fixed >= 8


@pytest.mark.parametrize("mode", ["sum", "max", "mixed"])
def test_bp_over_a_batch_equals_bp_instance_by_instance(mode):
    rng = np.random.default_rng(3)
    W = 0.5 * rng.standard_normal((7, 4))
    b_v, b_h = rng.standard_normal((5, 7)), rng.standard_normal((5, 4))
    batch = loopy_bp(W, b_v, b_h, mode=mode, max_iter=6, tol=0.0)
    for n in range(5):
        one = loopy_bp(W, b_v[n : n + 1], b_h[n : n + 1], mode=mode, max_iter=6, tol=0.0)
        np.testing.assert_allclose(batch.eta_v[n], one.eta_v[0], rtol=0, atol=1e-12)
        np.testing.assert_allclose(batch.K[n], one.K[0], rtol=0, atol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "max", "mixed"])
@pytest.mark.parametrize("damping", [0.0, 0.3])
def test_a_warm_start_continues_the_run_it_starts_from_and_leaves_its_messages_alone(mode, damping):
    """5 iterations, then 7 from their messages: the 12 of one run, to the bit (the iterations
    write into reused buffers; the warm start's own arrays are copied, not written)."""
    rng = np.random.default_rng(4)
    W = rng.standard_normal((6, 5)).astype(np.float32)
    b_v, b_h = rng.standard_normal((3, 6)).astype(np.float32), rng.standard_normal((1, 5)).astype(np.float32)
    options = {"mode": mode, "tol": None, "damping": damping}
    first = loopy_bp(W, b_v, b_h, max_iter=5, **options)
    kept = [first.L.copy(), first.K.copy(), first.eta_v.copy(), first.eta_h.copy()]
    resumed = loopy_bp(W, b_v, b_h, max_iter=7, init=first, **options)
    straight = loopy_bp(W, b_v, b_h, max_iter=12, **options)
    for name in ("eta_v", "eta_h", "L", "K"):
        np.testing.assert_array_equal(getattr(resumed, name), getattr(straight, name), err_msg=name)
    for before, now in zip(kept, [first.L, first.K, first.eta_v, first.eta_h]):
        np.testing.assert_array_equal(before, now)


@pytest.mark.parametrize("mode", ["sum", "max", "mixed"])
@pytest.mark.parametrize("damping", [0.0, 0.3])
def test_a_warm_start_from_a_fixed_point_does_not_move(mode, damping):
    """Messages converged to 1e-12 are a fixed point of BP's equations: one more iteration from
    them (at any damping) leaves them where they are and says converged at once. A warm start that
    ignored its messages, or one that mixed in the undamped update from other ones, would move."""
    rng = np.random.default_rng(6)
    W = 0.4 * rng.standard_normal((6, 5))
    b_v, b_h = rng.standard_normal((3, 6)), 0.5 * rng.standard_normal((1, 5))
    fixed = loopy_bp(W, b_v, b_h, mode=mode, damping=damping, max_iter=2000, tol=1e-13)
    assert fixed.converged.all()
    again = loopy_bp(W, b_v, b_h, mode=mode, damping=damping, max_iter=1, tol=1e-9, init=fixed)
    assert again.converged.all() and again.iterations == 1
    for name in ("eta_v", "eta_h", "L", "K"):
        np.testing.assert_allclose(
            getattr(again, name), getattr(fixed, name), rtol=0, atol=1e-10, err_msg=name
        )
    cold = loopy_bp(W, b_v, b_h, mode=mode, damping=damping, max_iter=1, tol=1e-9)
    assert np.abs(cold.eta_v - fixed.eta_v).max() > 1e-3  # one iteration from nothing is not there


@pytest.mark.parametrize("mode", ["sum", "max", "mixed"])
@pytest.mark.parametrize("damping", [0.0, 0.3])
def test_an_instance_stops_where_it_converges_whatever_the_rest_of_the_batch_does(mode, damping):
    """Instances clamped by strong visible biases converge within a few iterations, one without
    biases on the same couplings takes longer. In one batch, every instance has exactly the
    messages, beliefs and flag it has alone: a converged one stopped at its own iteration (had it
    gone on with the batch, its messages would still have moved, by less than tol)."""
    rng = np.random.default_rng(5)
    W = 3.0 * rng.standard_normal((9, 6))
    b_v = 2.0 * rng.choice([-4.0, 4.0], size=(5, 9)) + rng.standard_normal((5, 9))
    b_v[2] = 0.0  # the frustrated one
    b_h = 0.5 * rng.standard_normal((5, 6))
    cap, tol = 60, 1e-6
    batch = loopy_bp(W, b_v, b_h, mode=mode, max_iter=cap, damping=damping, tol=tol)
    stopped, moved, iterations = 0, 0, []
    for n in range(5):
        alone = loopy_bp(W, b_v[n : n + 1], b_h[n : n + 1], mode=mode, max_iter=cap, damping=damping, tol=tol)
        iterations.append(alone.iterations)
        assert bool(batch.converged[n]) == bool(alone.converged[0])
        for field in ("eta_v", "eta_h", "L", "K"):
            np.testing.assert_array_equal(getattr(batch, field)[n], getattr(alone, field)[0])
        if alone.converged[0]:
            stopped += alone.iterations < batch.iterations
            longer = loopy_bp(
                W,
                b_v[n : n + 1],
                b_h[n : n + 1],
                mode=mode,
                max_iter=alone.iterations + 5,
                damping=damping,
                tol=None,
            )
            moved += not np.array_equal(longer.L, alone.L)
    assert stopped >= 3 and batch.iterations == max(iterations)
    assert moved >= 3 or mode != "sum"  # max- and mixed-product often reach exact fixed points
    # capped one iteration short of the slowest: it is still running when the others are set aside
    cap = max(iterations) - 1
    capped = loopy_bp(W, b_v, b_h, mode=mode, max_iter=cap, damping=damping, tol=tol)
    assert 1 <= int((~capped.converged).sum()) < 5
    for n in range(5):
        alone = loopy_bp(W, b_v[n : n + 1], b_h[n : n + 1], mode=mode, max_iter=cap, damping=damping, tol=tol)
        assert bool(capped.converged[n]) == bool(alone.converged[0])
        for field in ("eta_v", "eta_h", "L", "K"):
            np.testing.assert_array_equal(getattr(capped, field)[n], getattr(alone, field)[0])
    # one row of hidden biases shared by the batch: the same as giving it to every instance
    shared = loopy_bp(W, b_v, b_h[:1], mode=mode, max_iter=cap, damping=damping, tol=tol)
    given = loopy_bp(W, b_v, np.repeat(b_h[:1], 5, axis=0), mode=mode, max_iter=cap, damping=damping, tol=tol)
    np.testing.assert_array_equal(shared.eta_v, given.eta_v)
    np.testing.assert_array_equal(shared.converged, given.converged)


def test_each_instance_gets_its_own_convergence_flag():
    """A weak instance converges within the budget, a strongly coupled frustrated one does not."""
    rng = np.random.default_rng(4)
    W = rng.standard_normal((12, 8))
    weak = loopy_bp(0.05 * W, np.zeros((1, 12)), np.zeros((1, 8)), max_iter=5)
    assert bool(weak.converged[0]) and weak.iterations < 5
    b_v = np.stack([np.full(12, 30.0), np.zeros(12)])  # row 0 clamped by its biases: converges
    both = loopy_bp(6 * W, b_v, np.zeros((2, 8)), max_iter=4)
    assert both.converged.tolist() == [True, False]


def test_the_bethe_gradient_is_the_beliefs_at_a_loopy_fixed_point():
    """On a loopy 3 × 3 RBM: ∂ log Z_Bethe / ∂W_ij = Γ_ij, ∂/∂b¹ = τ^v, ∂/∂b² = τ^h, by central
    differences of log Z_Bethe at the re-converged fixed point (MLE-BP's gradient)."""
    rng = np.random.default_rng(5)
    W, b_v, b_h = random_instance(rng, 3, 3, scale=0.7)

    def log_z(W, b_v, b_h):
        result = loopy_bp(W, b_v[None], b_h[None], **TIGHT)
        assert bool(result.converged[0])
        return bethe_log_z(W, b_v[None], b_h[None], result)[0], result

    _, result = log_z(W, b_v, b_h)
    eps = 1e-6
    grad_w = np.zeros_like(W)
    for i, j in itertools.product(range(3), range(3)):
        d = np.zeros_like(W)
        d[i, j] = eps
        grad_w[i, j] = (log_z(W + d, b_v, b_h)[0] - log_z(W - d, b_v, b_h)[0]) / (2 * eps)
    np.testing.assert_allclose(grad_w, pairwise_beliefs(W, result)[0], atol=1e-7)
    grad_bv = [(log_z(W, b_v + e, b_h)[0] - log_z(W, b_v - e, b_h)[0]) / (2 * eps) for e in eps * np.eye(3)]
    np.testing.assert_allclose(grad_bv, result.tau_v[0], atol=1e-7)
    grad_bh = [(log_z(W, b_v, b_h + e)[0] - log_z(W, b_v, b_h - e)[0]) / (2 * eps) for e in eps * np.eye(3)]
    np.testing.assert_allclose(grad_bh, result.tau_h[0], atol=1e-7)
    # and on this loopy model Bethe is an approximation, not the exact log Z
    assert abs(log_z(W, b_v, b_h)[0] - exact(W, b_v, b_h)[3]) > 1e-6


def test_float32_messages_stay_finite_where_the_cheap_form_would_give_minus_inf():
    """log1p(σ(c)(e^w − 1)) is −inf in float32 once σ(c) rounds to 1 and e^w is tiny; the floor
    keeps the message finite (and below log of float32's resolution)."""
    W = np.array([[-30.0, 2.0], [1.0, -25.0]], dtype=np.float32)
    result = loopy_bp(W, np.full((1, 2), 40.0, np.float32), np.full((1, 2), 40.0, np.float32), max_iter=3)
    assert np.isfinite(result.L).all() and np.isfinite(result.K).all()
    assert result.L.dtype == np.float32


def test_the_convergence_test_equals_comparing_every_message_probability():
    """The shortcuts (the log-odds bound, the largest change's edge) decide exactly as comparing
    every probability would, saturated edges included: large log-odds moves at tiny probability."""
    from rbmlab.backend.ops import sigmoid
    from rbmlab.inference.matrix_bp import _moved_at_most

    rng = np.random.default_rng(3)
    old = rng.normal(0, 3, (12, 5, 4))
    new = old + rng.normal(0, 1e-3, old.shape) * np.repeat([1.0, 100.0, 1.0], 4)[:, None, None]
    new[8:, 0, 0] = old[8:, 0, 0] = 40.0 + np.arange(4) * 0.1  # saturated edges ...
    new[8:, 0, 0] += 5.0  # ... move far in log-odds
    old[10:, 1, 1], new[10:, 1, 1] = 0.0, 0.1  # and two move in probability too
    expected = np.abs(sigmoid(new) - sigmoid(old)).max(axis=(1, 2)) <= 1e-3
    np.testing.assert_array_equal(_moved_at_most(new, old, 1e-3), expected)
    assert expected[8:10].all() and not expected[10:].any() and 0 < expected[:8].sum() < 8


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("tol", [1e-3, 1e-6])
def test_the_convergence_test_agrees_with_every_probability_at_the_boundary(dtype, tol):
    """Moves of about 4 tol in log-odds near σ = 1/2, where the bound is tight and σ's rounding in
    float32 decides: the same answer as comparing every computed probability."""
    from rbmlab.backend.ops import sigmoid
    from rbmlab.inference.matrix_bp import _moved_at_most

    rng = np.random.default_rng(5)
    old = rng.normal(0, 1e-3, (20000, 2, 2)).astype(dtype)
    new = (old + 4 * tol * rng.uniform(0.99, 1.01, old.shape) * rng.choice([-1, 1], old.shape)).astype(dtype)
    expected = np.abs(sigmoid(new) - sigmoid(old)).max(axis=(1, 2)) <= tol
    np.testing.assert_array_equal(_moved_at_most(new, old, tol), expected)
    assert 0 < expected.sum() < expected.size
    assert _moved_at_most(new[:0], old[:0], tol).shape == (0,)


def test_pairwise_beliefs_stay_in_range_where_the_potentials_overflow():
    """Log potentials of ±hundreds in float32: Γ is the four-state softmax's (1, 1) entry, 0 or 1
    where it saturates, never NaN."""
    from rbmlab.inference.matrix_bp import BPResult, pairwise_beliefs

    rng = np.random.default_rng(11)
    W = (rng.choice([-300.0, -2.0, 0.5, 300.0], (6, 5))).astype(np.float32)
    L, K = (rng.normal(0, 150, (2, 6, 5)).astype(np.float32) for _ in range(2))
    eta_v, eta_h = (
        rng.normal(0, 150, (2, 6)).astype(np.float32),
        rng.normal(0, 150, (2, 5)).astype(np.float32),
    )
    gamma = pairwise_beliefs(W, BPResult(eta_v, eta_h, L, K, None, 0))
    cv, ch = (eta_v[:, :, None] - L).astype(float), (eta_h[:, None, :] - K).astype(float)
    logits = np.stack([W + cv + ch, cv, ch, np.zeros_like(cv)])
    expected = np.exp(logits[0] - logits.max(axis=0)) / np.exp(logits - logits.max(axis=0)).sum(axis=0)
    assert np.isfinite(gamma).all()
    np.testing.assert_allclose(gamma, expected, atol=1e-6)


def reference_iterations(W, b_v, b_h, mode: str, iterations: int, damping: float):
    """Alg. 1 written out for one instance in float64, from all messages 1/2 (log-odds 0), each
    iteration every h → v message then every v → h one, each damped as m ← (1 − α) m_new + α m:
    (L, K, η^v, η^h) after ``iterations``. Independent of the module's buffers and kernels."""
    sig = lambda x: 1.0 / (1.0 + np.exp(-x))  # noqa: E731
    if mode == "max":
        g = lambda w, c: np.maximum(0.0, w + c) - np.maximum(0.0, c)  # noqa: E731
    else:
        g = lambda w, c: np.log(sig(-c) + sig(c) * np.exp(w))  # noqa: E731 - Eqs. 13, 14
    L, K = np.zeros_like(W), np.zeros_like(W)
    for _ in range(iterations):
        eta_h = b_h + K.sum(axis=0)
        L = (1 - damping) * g(W, eta_h[None, :] - K) + damping * L  # h_j → v_i, without v_i's message
        eta_v = b_v + L.sum(axis=1)
        new_K = W * (eta_v[:, None] > 0) if mode == "mixed" else g(W, eta_v[:, None] - L)  # Eq. 15 / 14
        K = (1 - damping) * new_K + damping * K
    return L, K, b_v + L.sum(axis=1), b_h + K.sum(axis=0)


@pytest.mark.parametrize("mode", ["sum", "max", "mixed"])
@pytest.mark.parametrize("damping", [0.0, 0.3, 0.8])
def test_each_iteration_is_alg_1_with_its_damping(mode, damping):
    """The messages after 1, 2 and 7 iterations (tol=None: exactly that many) equal Alg. 1's
    update written out above, damped as its docstring says, on a loopy model: a damping applied to
    one direction only, with its weights swapped, or to the wrong messages fails here."""
    rng = np.random.default_rng(11)
    W, b_v, b_h = random_instance(rng, 5, 4)
    for iterations in (1, 2, 7):
        got = loopy_bp(W, b_v[None], b_h[None], mode=mode, max_iter=iterations, tol=None, damping=damping)
        L, K, eta_v, eta_h = reference_iterations(W, b_v, b_h, mode, iterations, damping)
        np.testing.assert_allclose(got.L[0], L, rtol=0, atol=1e-10)
        np.testing.assert_allclose(got.K[0], K, rtol=0, atol=1e-10)
        np.testing.assert_allclose(got.eta_v[0], eta_v, rtol=0, atol=1e-10)
        np.testing.assert_allclose(got.eta_h[0], eta_h, rtol=0, atol=1e-10)


def test_a_damped_run_reaches_the_undamped_fixed_point():
    """Damping changes the path, not the fixed point: on loopy models where undamped sum-product
    converges, the damped run converges to the same beliefs (a damping that scaled the messages,
    m ← (1 − α) m_new, would move it)."""
    rng = np.random.default_rng(12)
    for _ in range(5):
        W, b_v, b_h = random_instance(rng, 6, 4, scale=0.7)
        plain = loopy_bp(W, b_v[None], b_h[None], **TIGHT)
        damped = loopy_bp(W, b_v[None], b_h[None], damping=0.5, **TIGHT)
        assert bool(plain.converged[0]) and bool(damped.converged[0])
        assert int(damped.iterations) != int(plain.iterations)  # another path
        np.testing.assert_allclose(damped.tau_v[0], plain.tau_v[0], rtol=0, atol=1e-9)
        np.testing.assert_allclose(damped.tau_h[0], plain.tau_h[0], rtol=0, atol=1e-9)
