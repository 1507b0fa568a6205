"""Single-site Gibbs on the blind-deconvolution posterior (rbmlab.inference.deconvolution_gibbs)
against exact enumeration: on a posterior small enough to list (one 3 x 3 image, one 2 x 2 feature
at 2 x 2 locations: 8 binary sites), the chain's state frequencies match p(W, S | X); its counts
are the OR-convolution's."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rbmlab.inference import deconvolution_gibbs as dg
from rbmlab.models.convolution_or import or_convolve


def test_counts_light_exactly_the_or_convolution():
    rng = np.random.default_rng(0)
    W = (rng.random((3, 4, 4)) < 0.3).astype(np.int8)
    S = (rng.random((5, 3, 6, 6)) < 0.1).astype(np.int8)
    np.testing.assert_array_equal(
        dg.counts(W, S) > 0, or_convolve(S[None].astype(float), W[None].astype(float))[0] > 0
    )


X_SMALL = np.array([[[1, 1, 0], [1, 1, 1], [0, 1, 1]]], dtype=np.int8)  # one 3 x 3 image
STATES = list(itertools.product([0, 1], repeat=8))  # 4 W sites, then 4 S sites


def exact_posterior(p_w, p_s, p_e) -> np.ndarray:
    """p(W, S | X_SMALL) of every state of a 2 x 2 feature at 2 x 2 locations, by enumeration."""
    log_p = np.array(
        [
            dg.log_joint(
                np.array(s[:4], np.int8).reshape(1, 2, 2),
                np.array(s[4:], np.int8).reshape(1, 1, 2, 2),
                X_SMALL,
                p_w,
                p_s,
                p_e,
            )
            for s in STATES
        ]
    )
    exact = np.exp(log_p - log_p.max())
    return exact / exact.sum()


def visit_frequencies(step, chain, n: int) -> np.ndarray:
    """The share of ``n`` calls of ``step()`` after which ``chain`` is in each of STATES."""
    index = {s: i for i, s in enumerate(STATES)}
    freq = np.zeros(len(STATES))
    for _ in range(n):
        step()
        freq[index[tuple(chain.W.ravel()) + tuple(chain.S.ravel())]] += 1
        if chain.sweeps % 5000 == 0:
            np.testing.assert_array_equal(chain.C, dg.counts(chain.W, chain.S))
    return freq / freq.sum()


@pytest.mark.parametrize("p_w, p_s, p_e", [(0.4, 0.3, 0.1), (0.25, 0.5, 0.2)])
def test_the_chain_samples_the_exact_posterior(p_w, p_s, p_e):
    rng = np.random.default_rng(1)
    chain = dg.start(rng, X_SMALL, 1, 2, p_w, p_s)
    freq = visit_frequencies(
        lambda: dg.run_chain(chain, X_SMALL, rng, p_w=p_w, p_s=p_s, p_e=p_e, sweeps=chain.sweeps + 1),
        chain,
        20_000,
    )
    assert 0.5 * np.abs(freq - exact_posterior(p_w, p_s, p_e)).sum() < 0.03


def test_a_time_budget_runs_whole_sweeps():
    rng = np.random.default_rng(2)
    X = np.zeros((2, 5, 5), dtype=np.int8)
    chain = dg.run_chain(dg.start(rng, X, 2, 2, 0.3, 0.1), X, rng, p_w=0.3, p_s=0.1, p_e=0.01, seconds=0.05)
    assert chain.sweeps >= 1
    np.testing.assert_array_equal(chain.C, dg.counts(chain.W, chain.S))


def test_the_interpreted_kernel_makes_the_compiled_kernels_moves():
    """Without numba the same code runs as Python: given the same draws, the same states."""
    sweep = getattr(dg._sweep, "py_func", None)
    if sweep is None:
        pytest.skip("numba not installed: the kernel is the interpreted one")
    rng = np.random.default_rng(3)
    X = (rng.random((2, 6, 6)) < 0.4).astype(np.int8)
    a = dg.start(rng, X, 2, 3, 0.3, 0.2)
    b = dg.GibbsChain(a.W.copy(), a.S.copy(), a.C.copy())
    for _ in range(5):
        u = rng.random(a.W.size + a.S.size)
        t = np.log(u) - np.log1p(-u)
        dg._sweep(a.W, a.S, a.C, X, t, -1.0, -2.0, 3.0)
        sweep(b.W, b.S, b.C, X, t, -1.0, -2.0, 3.0)
    np.testing.assert_array_equal(a.W, b.W)
    np.testing.assert_array_equal(a.S, b.S)
    np.testing.assert_array_equal(a.C, b.C)


def test_gwg_flip_deltas_are_the_exact_log_joint_differences():
    from rbmlab.inference import deconvolution_gwg as gwg

    rng = np.random.default_rng(5)
    X = (rng.random((2, 5, 5)) < 0.4).astype(np.int8)
    W = (rng.random((2, 2, 2)) < 0.5).astype(np.int8)
    S = (rng.random((2, 2, 4, 4)) < 0.3).astype(np.int8)
    p = (0.3, 0.2, 0.05)
    d_w, d_s = gwg.flip_deltas(W, S, dg.counts(W, S), X, dg.logit(p[0]), dg.logit(p[1]), -dg.logit(p[2]))
    base = dg.log_joint(W, S, X, *p)
    for array, delta in ((W, d_w), (S, d_s)):
        for index in np.ndindex(array.shape):
            array[index] ^= 1
            assert delta[index] == pytest.approx(dg.log_joint(W, S, X, *p) - base, abs=1e-9)
            array[index] ^= 1


@pytest.mark.slow  # about 12 s: the exact-posterior check of the Gibbs sampler stays fast
def test_gwg_samples_the_exact_posterior():
    from rbmlab.inference import deconvolution_gwg as gwg

    p_w, p_s, p_e = 0.4, 0.3, 0.1
    rng = np.random.default_rng(6)
    chain = dg.start(rng, X_SMALL, 1, 2, p_w, p_s)
    # single flips, ~42 % accepted: TV 0.03 after 40,000, 0.017 at 80,000
    freq = visit_frequencies(
        lambda: gwg.run_chain(chain, X_SMALL, rng, p_w=p_w, p_s=p_s, p_e=p_e, steps=1), chain, 40_000
    )
    np.testing.assert_array_equal(chain.C, dg.counts(chain.W, chain.S))
    assert 0.5 * np.abs(freq - exact_posterior(p_w, p_s, p_e)).sum() < 0.04


def exact_conditional(block: str, held, p_w, p_s, p_e) -> np.ndarray:
    """p(free block | held block, X_SMALL) over STATES' free half (16 states), by enumeration."""
    log_p = np.array(
        [
            dg.log_joint(
                *(
                    (held, np.array(f, np.int8).reshape(1, 1, 2, 2))
                    if block == "W"
                    else (np.array(f, np.int8).reshape(1, 2, 2), held)
                ),
                X_SMALL,
                p_w,
                p_s,
                p_e,
            )
            for f in itertools.product([0, 1], repeat=4)
        ]
    )
    exact = np.exp(log_p - log_p.max())
    return exact / exact.sum()


@pytest.mark.slow  # about 6 s
@pytest.mark.parametrize("clamp", ["W", "S"])
def test_gwg_with_a_block_clamped_samples_the_exact_conditional_and_never_moves_the_block(clamp):
    """pmp Sec. 5.6's check ("GWG did work when S or W were clamped"): proposals over the other
    block only, so the chain samples p(other | clamped, X) (enumerated over its 4 sites)."""
    from rbmlab.inference import deconvolution_gwg as gwg

    p_w, p_s, p_e = 0.4, 0.3, 0.1
    rng = np.random.default_rng(7)
    chain = dg.start(rng, X_SMALL, 1, 2, p_w, p_s)
    chain.W, chain.S = np.array([[[1, 1], [0, 1]]], np.int8), np.array([[[[1, 0], [0, 1]]]], np.int8)
    chain.C = dg.counts(chain.W, chain.S)
    held = (chain.W if clamp == "W" else chain.S).copy()
    freq = np.zeros(16)
    for _ in range(20_000):
        gwg.run_chain(chain, X_SMALL, rng, p_w=p_w, p_s=p_s, p_e=p_e, steps=1, clamp=clamp)
        np.testing.assert_array_equal(chain.W if clamp == "W" else chain.S, held)
        free = (chain.S if clamp == "W" else chain.W).ravel()
        freq[int("".join(map(str, free)), 2)] += 1
    np.testing.assert_array_equal(chain.C, dg.counts(chain.W, chain.S))
    assert 0.5 * np.abs(freq / freq.sum() - exact_conditional(clamp, held, p_w, p_s, p_e)).sum() < 0.03


def test_gwg_carries_its_proposal_from_step_to_step():
    """One call of 300 steps makes the moves of 300 calls of one step (each of which forms the
    proposal afresh from the state, as its definition says), draw for draw from the same stream:
    the proposal and its flip deltas carried over an accepted move are the new state's."""
    from rbmlab.inference import deconvolution_gwg as gwg

    p_w, p_s, p_e = 0.4, 0.3, 0.1
    one, many = (dg.start(np.random.default_rng(8), X_SMALL, 1, 2, p_w, p_s) for _ in range(2))
    rng_one, rng_many = np.random.default_rng(9), np.random.default_rng(9)
    _, accepted = gwg.run_chain(many, X_SMALL, rng_many, p_w=p_w, p_s=p_s, p_e=p_e, steps=300)
    total = sum(
        gwg.run_chain(one, X_SMALL, rng_one, p_w=p_w, p_s=p_s, p_e=p_e, steps=1)[1] for _ in range(300)
    )
    assert accepted == total > 30
    for a, b in ((one.W, many.W), (one.S, many.S), (one.C, many.C)):
        np.testing.assert_array_equal(a, b)
