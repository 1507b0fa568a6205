"""The LP relaxation of the blind-deconvolution MAP (rbmlab.inference.deconvolution_lp) against
enumeration: with w and s integral its constraints admit exactly the states that reproduce X, its
optimum bounds the enumerated MAP from above, and where the solution comes out integral it is the
MAP state."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rbmlab.inference import deconvolution_lp as dlp
from rbmlab.models.convolution_or import or_convolve

X_SMALL = np.array([[[1, 1, 0], [1, 1, 1], [0, 1, 1]]], dtype=np.float64)  # one 3 x 3 image


def states(K: int, f: int, N: int, h: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (W (K, f, f), S (N, K, h, h)) pair of {0, 1} arrays, stacked: ((M, K, f, f), (M, N, K, h, h))."""
    n_w, n_s = K * f * f, N * K * h * h
    bits = np.array(list(itertools.product([0.0, 1.0], repeat=n_w + n_s)))
    return bits[:, :n_w].reshape(-1, K, f, f), bits[:, n_w:].reshape(-1, N, K, h, h)


def enumerated_map(X, K, f, unary_w, unary_s):
    """(best objective, its states) over the states whose OR-convolution is X (-inf, []: none)."""
    W, S = states(K, f, X.shape[0], X.shape[1] - f + 1)
    explains = (or_convolve(S, W) == X).all(axis=(1, 2, 3))
    if not explains.any():
        return -np.inf, []
    value = np.where(explains, W.reshape(len(W), -1) @ unary_w + S.reshape(len(S), -1) @ unary_s, -np.inf)
    best = value.max()
    return best, [(W[i], S[i]) for i in np.flatnonzero(value >= best - 1e-12)]


def in_polytope(lp, X, W, S) -> bool:
    """Whether (w, s), possibly fractional, with the best z (min(s, w) per lit pair) satisfies
    every row of (1) for images X."""
    pixel, w_index, s_index = dlp.pairs(X, W.shape[0], W.shape[1])
    lit = X.reshape(-1)[pixel] > 0
    z = np.minimum(S.ravel()[s_index[lit]], W.ravel()[w_index[lit]])
    x = np.concatenate([W.ravel(), S.ravel(), z])
    return bool(np.all(lp.a_ub @ x <= lp.b_ub + 1e-12))


def test_integral_points_of_the_polytope_are_exactly_the_states_that_reproduce_x():
    lp = dlp.constraints(X_SMALL, 1, 2)
    assert (lp.n_w, lp.n_s) == (4, 4)
    seen = {True: 0, False: 0}
    for W, S in zip(*states(1, 2, 1, 2)):
        feasible = in_polytope(lp, X_SMALL, W, S)
        assert feasible == np.array_equal(or_convolve(S, W), X_SMALL)
        seen[feasible] += 1
    assert seen[True] >= 2 and seen[False] > 0


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_the_relaxation_bounds_the_map_and_an_integral_solution_is_a_map_state(seed):
    rng = np.random.default_rng(seed)
    unary_w, unary_s = rng.normal(-1.0, 1.5, 4), rng.normal(-2.0, 1.5, 4)
    best, maps = enumerated_map(X_SMALL, 1, 2, unary_w, unary_s)
    relaxed, value = dlp.solve(dlp.constraints(X_SMALL, 1, 2), unary_w, unary_s)
    assert value >= best - 1e-7
    x = dlp.rounded(relaxed)
    if np.allclose(relaxed, x, atol=1e-6):  # integral: the MAP itself
        assert value == pytest.approx(best, abs=1e-7)
        assert any(np.array_equal(x, np.concatenate([W.ravel(), S.ravel()])) for W, S in maps)


def test_two_features_that_can_swap_put_half_of_each_map_state_on_the_relaxations_optimum():
    """The symmetry the paper's Discussion names: with two interchangeable features (K = 2, equal
    log-odds) the two MAP states that swap them average to a point of the polytope with the MAP's
    value, whose ½s round (½ → 0) to a state that explains nothing."""
    X = np.array([[[1, 1, 0], [0, 0, 0], [0, 0, 0]]], dtype=np.float64)
    unary_w, unary_s = np.full(8, -0.5), np.full(8, -0.5)
    best, maps = enumerated_map(X, 2, 2, unary_w, unary_s)
    lp = dlp.constraints(X, 2, 2)
    _, value = dlp.solve(lp, unary_w, unary_s)
    assert value == pytest.approx(best, abs=1e-7)
    W0, S0 = maps[0]
    W1, S1 = W0[::-1], S0[:, ::-1]  # the same state with the features swapped
    assert any(np.array_equal(W1, W) and np.array_equal(S1, S) for W, S in maps)
    W_mid, S_mid = (W0 + W1) / 2, (S0 + S1) / 2
    assert in_polytope(lp, X, W_mid, S_mid)
    assert unary_w @ W_mid.ravel() + unary_s @ S_mid.ravel() == pytest.approx(value)
    assert not or_convolve(dlp.rounded(S_mid), dlp.rounded(W_mid)).any()


def test_the_relaxation_can_explain_an_image_no_state_explains():
    """A 3 x 3 ring cannot be drawn by 2 x 2 features on a 2 x 2 grid (every window covers the dark
    centre), yet the relaxation is feasible: its solution is necessarily fractional."""
    X = np.array([[[1, 1, 1], [1, 0, 1], [1, 1, 1]]], dtype=np.float64)
    unary = np.full(8, -0.3)
    best, _ = enumerated_map(X, 2, 2, unary, unary)
    relaxed, value = dlp.solve(dlp.constraints(X, 2, 2), unary, unary)
    assert best == -np.inf and np.isfinite(value)
    assert not np.allclose(relaxed, dlp.rounded(relaxed), atol=1e-6)
