"""Denoising the binary symmetric channel (tap §VII.4): the MCC, the channel, the optimal
pointwise estimator, 1-NN against brute force, TAP against the OPE where the posterior factorises
and on an RBM that stores two patterns, and the evaluator end to end."""

from __future__ import annotations

import numpy as np
import pytest

from rbmlab.backend import host_rng
from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.base import Context
from rbmlab.evaluators.denoising import bsc, mcc, nearest_neighbour, ope, tap_denoise
from rbmlab.models.ising import Ising
from rbmlab.models.rbm import RBM
from rbmlab.run.evaluation import evaluate


def binary(seed: int, shape) -> np.ndarray:
    return (np.random.default_rng(seed).random(shape) < 0.5).astype(np.float32)


def direct_mcc(e, t) -> float:
    tp, tn = np.sum((e == 1) & (t == 1)), np.sum((e == 0) & (t == 0))
    fp, fn = np.sum((e == 1) & (t == 0)), np.sum((e == 0) & (t == 1))
    den = np.sqrt(float((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn)))
    return (tp * tn - fp * fn) / den if den else 0.0


def test_mcc_hand_cases_and_direct_formula_per_image():
    t = np.array([[1, 0, 1, 0, 0], [1, 1, 0, 0, 0], [1, 0, 0, 0, 0], [1, 1, 0, 0, 0]])
    e = np.array([[1, 0, 1, 0, 0], [0, 0, 1, 1, 1], [0, 0, 0, 0, 0], [1, 0, 1, 0, 0]])
    assert mcc(e, t) == pytest.approx([1.0, -1.0, 0.0, 1 / 6])  # TP1 TN2 FP1 FN1: (2−1)/√36
    assert mcc(np.ones(5), t[0]) == 0.0  # constant estimate
    e, t = binary(0, (50, 30)), binary(1, (50, 30))
    assert mcc(e, t) == pytest.approx([direct_mcc(a, b) for a, b in zip(e, t)])


def test_bsc_flips_at_rate_p_and_is_keyed_by_the_seed():
    x = binary(2, (200, 784))
    y = bsc(x, 0.2, host_rng(5))
    assert abs(np.mean(y != x) - 0.2) < 0.005  # 5 σ at 156,800 pixels
    assert np.array_equal(y, bsc(x, 0.2, host_rng(5)))
    assert not np.array_equal(y, bsc(x, 0.2, host_rng(6)))
    assert np.array_equal(bsc(x, 0.0, host_rng(5)), x)
    assert np.all((y != x) <= (bsc(x, 0.3, host_rng(5)) != x))  # flips nested in p


def test_ope_limits_and_formula():
    y, m = binary(3, (20, 40)), np.random.default_rng(4).random(40)
    with np.errstate(all="raise"):
        assert np.array_equal(ope(y, m, 0.0), y)
        np.testing.assert_allclose(ope(y, m, 0.5), np.broadcast_to(m, y.shape), rtol=1e-12)
    p = 0.15
    s = 2 * y.astype(np.float64) - 1
    paper = 1 / (1 + (1 - m) / m * (p / (1 - p)) ** s)  # Eq. 46 with the sign corrected
    np.testing.assert_allclose(ope(y, m, p), paper, rtol=1e-12)
    assert np.all(ope(y, np.zeros(40), p) > 0)  # m clipped to [1e-6, 1 − 1e-6]


@pytest.mark.parametrize("max_bytes", [1, 2**28])  # chunks of one row / one chunk
def test_nearest_neighbour_is_the_brute_force_hamming_argmin(max_bytes):
    train, y = binary(5, (60, 8)), binary(6, (40, 8))  # 8 bits: many ties
    hamming = (y[:, None, :] != train[None, :, :]).sum(-1)
    assert np.array_equal(nearest_neighbour(y, train, max_bytes), hamming.argmin(axis=1))


def test_tap_with_zero_coupling_is_the_ope():
    m = np.random.default_rng(7).uniform(0.05, 0.95, 30)
    rbm = RBM(np.zeros((30, 5)), np.log(m / (1 - m)), np.ones(5))
    y = binary(8, (25, 30))
    for p in (0.0, 0.1, 0.3, 0.5):
        with np.errstate(all="raise"):
            s = tap_denoise(rbm, y, p, ope(y, m, p))
        np.testing.assert_allclose(s.a_v, ope(y, m, p), atol=1e-12)


def test_tap_recovers_stored_patterns_better_than_the_ope():
    """Hidden unit j has input c − w·Hamming(v, ξ_j) and, on, pulls v to ξ_j with field ±w."""
    n, w = 64, 3.0
    xi = binary(9, (2, n))
    rbm = RBM(w * (2 * xi.T - 1), np.zeros(n), -w * xi.sum(1) + w * n / 4)
    x = np.repeat(xi, 100, axis=0)
    y = bsc(x, 0.1, host_rng(1))
    a = ope(y, xi.mean(0), 0.1)
    s = tap_denoise(rbm, y, 0.1, a)
    assert s.converged.all()
    assert mcc(s.a_v > 0.5, x).mean() > mcc(a > 0.5, x).mean() + 0.05
    assert mcc(s.a_v > 0.5, x).mean() > 0.99


def small_run(seed: int = 0, visible: str = "bernoulli"):
    rng = np.random.default_rng(seed)
    W, b_v, b_h = (rng.normal(0, 0.5, shape).astype(np.float32) for shape in ((16, 4), 16, 4))
    rbm = RBM(W, b_v, b_h, visible=visible)
    train = binary(10, (50, 16))

    def context(s):
        return Context(
            rng=np.random.default_rng(s),
            final=True,
            train=Batch(train),
            data_mean=train.mean(axis=0),
        )

    return rbm, {"test": Batch(binary(11, (20, 16)))}, context


def test_evaluator_metrics_are_finite_and_fixed_by_the_seed():
    evaluator = EVALUATORS.build(EVALUATORS.parse({"name": "denoising", "flip": 0.2, "seed": 3}))
    rbm, splits, context = small_run()
    evaluator.check(RBM, rbm.model_sizes())
    m1 = evaluator.evaluate(rbm, splits, context(0))
    assert set(m1) == {
        "test_mcc_tap",
        "test_mcc_ope",
        "test_mcc_nn",
        "test_mcc_const",
        "test_denoise_iterations",
        "test_tap_distinct",
    }
    assert all(np.isfinite(v) for v in m1.values())
    assert m1 == evaluator.evaluate(rbm, splits, context(1))  # the noise is not the context's
    other = EVALUATORS.build(EVALUATORS.parse({"name": "denoising", "flip": 0.2, "seed": 4}))
    assert other.evaluate(rbm, splits, context(0)) != m1
    line = evaluator.headline(evaluate(rbm, splits, evaluator, context(0)), "test")
    assert line.startswith("test denoising MCC at p = 0.2: tap ")


def test_constant_baseline_and_distinct_estimates_expose_an_estimate_that_ignores_the_image():
    """const scores the rounded training mean image; at p = ½ the channel carries nothing (D = 0),
    every image's TAP starts at the same OPE (the mean) and ends at the same image: one distinct
    estimate, whose MCC is then a constant image's. At p = 0.05 the TAP estimates differ."""
    rbm, splits, context = small_run()
    truth = splits["test"].inputs > 0.5
    mean = context(0).data_mean
    for flip, distinct in ((0.5, 1 / 20), (0.05, None)):
        evaluator = EVALUATORS.build(EVALUATORS.parse({"name": "denoising", "flip": flip}))
        m = evaluator.evaluate(rbm, splits, context(0))
        assert m["test_mcc_const"] == pytest.approx(
            mcc(np.broadcast_to(mean > 0.5, truth.shape), truth).mean()
        )
        if distinct is not None:
            assert m["test_tap_distinct"] == distinct
        else:
            assert m["test_tap_distinct"] > 0.5
    only = EVALUATORS.build(EVALUATORS.parse({"name": "denoising", "methods": ["const"]}))
    assert set(only.evaluate(rbm, splits, context(0))) == {"test_mcc_const"}


def test_evaluator_refuses_spin_visible_units_and_models_without_tap():
    evaluator = EVALUATORS.build(EVALUATORS.parse({"name": "denoising"}))
    rbm, splits, context = small_run(visible="spin")
    with pytest.raises(RbmlabError, match="^evaluator=denoising: .*visible=spin") as e:
        evaluator.evaluate(rbm, splits, context(0))
    assert "\n" not in str(e.value)
    with pytest.raises(RbmlabError, match="^evaluator=denoising: "):
        evaluator.check(Ising, {"n": 16})
