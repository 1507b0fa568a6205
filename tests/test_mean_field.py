"""Naive mean field (rbmlab.inference.mean_field) against its equations written out: under an
iteration cap the returned marginals are exactly T alternations from τ^v = σ(b¹), with τ^h made
consistent with the returned τ^v by one closing half-step (issue 57, item 7: mle_mf stops at
7 + epoch iterations, so the capped state is the one its learning uses)."""

from __future__ import annotations

import numpy as np
import pytest

from rbmlab.inference.mean_field import mean_field


def sigma(x):
    return 1.0 / (1.0 + np.exp(-x))


def reference(W, b_v, b_h, iterations: int):
    """τ^h ← σ(b² + Wᵀτ^v), τ^v ← σ(b¹ + Wτ^h), ``iterations`` times from τ^v = σ(b¹), then
    τ^h ← σ(b² + Wᵀτ^v) once more."""
    tau_v = sigma(b_v)
    for _ in range(iterations):
        tau_h = sigma(tau_v @ W + b_h)
        tau_v = sigma(tau_h @ W.T + b_v)
    return tau_v, sigma(tau_v @ W + b_h)


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize("cap", [1, 3, 8])
def test_a_capped_run_returns_its_equations_after_the_cap(cap, packed):
    rng = np.random.default_rng(3)
    W, b_v, b_h = 2.0 * rng.standard_normal((7, 5)), rng.standard_normal((4, 7)), rng.standard_normal((4, 5))
    tol = 1e-15  # never met within these caps: every instance runs to the cap
    if packed:  # a leading run axis (rbmlab.run.packed): the masked loop
        got = mean_field(W[None], b_v[None], b_h[None], max_iter=cap, tol=tol)
        tau_v, tau_h, converged, iterations = (
            got.tau_v[0],
            got.tau_h[0],
            got.converged[0],
            int(got.iterations[0]),
        )
    else:
        got = mean_field(W, b_v, b_h, max_iter=cap, tol=tol)
        tau_v, tau_h, converged, iterations = got.tau_v, got.tau_h, got.converged, int(got.iterations)
    want_v, want_h = reference(W, b_v, b_h, cap)
    np.testing.assert_allclose(tau_v, want_v, rtol=0, atol=1e-14)
    np.testing.assert_allclose(tau_h, want_h, rtol=0, atol=1e-14)
    assert iterations == cap and not converged.any()


def test_it_stops_at_the_first_iteration_that_meets_the_tolerance():
    """The stopping rule: the run ends after the first iteration in which no τ^v moved by more
    than tol. tol is set just above the 5th iteration's largest move (the equations stepped here),
    below the 4th's, so a rule one iteration early or late, or at another tolerance, is seen."""
    rng = np.random.default_rng(4)
    W, b_v, b_h = 0.8 * rng.standard_normal((6, 4)), rng.standard_normal((1, 6)), rng.standard_normal((1, 4))
    tau_v, moves = sigma(b_v), []
    for _ in range(8):
        new_v = sigma(sigma(tau_v @ W + b_h) @ W.T + b_v)
        moves.append(float(np.abs(new_v - tau_v).max()))
        tau_v = new_v
    tol = moves[4] * (1 + 1e-9)
    assert moves[3] > 2 * tol and moves[4] > tol / 2  # no neighbouring rule lands on iteration 5
    got = mean_field(W, b_v, b_h, max_iter=200, tol=tol)
    assert int(got.iterations) == 5 and bool(got.converged[0])
    packed = mean_field(W[None], b_v[None], b_h[None], max_iter=200, tol=tol)
    assert int(packed.iterations[0]) == 5 and bool(packed.converged[0, 0])
