"""crbm_bp's code on the cupy backend gives the numpy answers: matrix loopy BP (Alg. 1) in the
three modes, damped and undamped, with per-instance early stopping; the pairwise beliefs (Eq. 18)
and the Bethe log Z; one step of every deterministic CRBM learner (LR, MLE-MF, MLE-BP, LSSVM,
MSSVM) and the pixel-error evaluator in each inference mode. Needs cupy and a CUDA device (skipped
elsewhere); float64 throughout, so the two backends agree to rounding (crbm_bp Sec. 7: BP as
matrix products and elementwise operations runs on a GPU)."""

from __future__ import annotations

import numpy as np
import pytest

from rbmlab.backend import cupy_available, get_backend, to_numpy
from rbmlab.data.batch import Batch
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.base import Context
from rbmlab.inference.matrix_bp import bethe_log_z, decode, loopy_bp, pairwise_beliefs
from rbmlab.learners import LEARNERS
from rbmlab.models.crbm import CRBM

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not cupy_available(), reason="needs cupy and a GPU")]

N_V, N_H, N_X, N = 12, 7, 9, 16


@pytest.fixture
def gpu():
    return get_backend("cupy", "float64")


def close(got, want, tol=1e-9):
    np.testing.assert_allclose(to_numpy(got), to_numpy(want), rtol=tol, atol=tol)


def crbm(rng, scale=0.8):
    return CRBM(
        W=scale * rng.standard_normal((N_V, N_H)),
        W_xv=scale * rng.standard_normal((N_X, N_V)),
        W_xh=scale * rng.standard_normal((N_X, N_H)),
        b_v=rng.standard_normal(N_V),
        b_h=rng.standard_normal(N_H),
    )


def task(rng):
    x = (rng.random((N, N_X)) < 0.5).astype(float)
    v = (rng.random((N, N_V)) < 0.5).astype(float)
    return x, v


@pytest.mark.parametrize("mode", ["sum", "max", "mixed"])
@pytest.mark.parametrize("damping, tol", [(0.0, 1e-6), (0.3, 1e-6), (0.0, None)])
def test_loopy_bp_agrees(gpu, mode, damping, tol):
    """Scales 0.3 to 2 in one batch: some instances stop early, some run to max_iter, so the
    set-aside path and the final reassembly both run on the device."""
    rng = np.random.default_rng(0)
    W = rng.standard_normal((N_V, N_H))
    scale = np.linspace(0.3, 2.0, N)[:, None]
    b_v, b_h = scale * rng.standard_normal((N, N_V)), scale * rng.standard_normal((N, N_H))
    runs = [
        loopy_bp(*(move(a) for a in (W, b_v, b_h)), mode=mode, max_iter=40, tol=tol, damping=damping)
        for move in (np.asarray, gpu.asarray)
    ]
    want, got = runs
    assert got.iterations == want.iterations
    np.testing.assert_array_equal(to_numpy(got.converged), want.converged)
    for name in ("eta_v", "eta_h", "L", "K"):
        close(getattr(got, name), getattr(want, name), 1e-8)
    np.testing.assert_array_equal(to_numpy(decode(got)), decode(want))
    if mode == "sum":
        close(pairwise_beliefs(gpu.asarray(W), got), pairwise_beliefs(W, want), 1e-8)
        close(
            bethe_log_z(gpu.asarray(W), gpu.asarray(b_v), gpu.asarray(b_h), got),
            bethe_log_z(W, b_v, b_h, want),
            1e-8,
        )


@pytest.mark.parametrize(
    "name, extra",
    [
        ("logistic", {}),
        ("mle_mf", {}),
        ("mle_bp", {"tol": 1e-10}),
        ("lssvm", {"tol": 1e-10}),
        ("mssvm", {"tol": 1e-10}),
    ],
)
def test_learner_step_agrees(gpu, name, extra):
    rng = np.random.default_rng(1)
    model, (x, v) = crbm(rng), task(rng)
    learner = LEARNERS.build(LEARNERS.parse({"name": name, "lr": 0.1, "batch_size": N, **extra}))
    results = []
    for move in (lambda a: a, gpu.asarray):
        m, batch = model.map(move), Batch(x, targets=v).map(move)
        state = learner.init_state(m, batch, np.random.default_rng(2))
        new, _ = learner.step(m, state, batch, np.random.default_rng(3))
        results.append(new.arrays())
    want, got = results
    for key in want:
        close(got[key], want[key], 1e-8)


@pytest.mark.parametrize("inference", ["none", "mf", "sum", "max", "mixed"])
def test_pixel_error_agrees(gpu, inference):
    rng = np.random.default_rng(4)
    model, (x, v) = crbm(rng, scale=1.5), task(rng)
    mask = rng.random(v.shape) < 0.3
    evaluator = EVALUATORS.build(
        EVALUATORS.parse(
            {"name": "pixel_error", "inference": inference, "max_iter": 30, "tol": 1e-6, "chunk": 5}
        )
    )
    out = [
        evaluator.evaluate(
            model.map(move), {"test": Batch(x, targets=v, mask=mask).map(move)}, Context(rng=None, final=True)
        )
        for move in (lambda a: a, gpu.asarray)
    ]
    assert out[1] == pytest.approx(out[0], rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("mode", ["sum", "max", "mixed"])
def test_loopy_bp_agrees_in_float32(mode):
    """The default dtype: the fused message kernel against numpy's passes, to float32 rounding
    (the damped mix is one expression on the device, two on the host)."""
    gpu32 = get_backend("cupy", "float32")
    rng = np.random.default_rng(5)
    W = rng.standard_normal((N_V, N_H)).astype(np.float32)
    b_v, b_h = (
        rng.standard_normal((N, N_V)).astype(np.float32),
        rng.standard_normal((N, N_H)).astype(np.float32),
    )
    want = loopy_bp(W, b_v, b_h, mode=mode, max_iter=20, tol=None, damping=0.3)
    got = loopy_bp(*(gpu32.asarray(a) for a in (W, b_v, b_h)), mode=mode, max_iter=20, tol=None, damping=0.3)
    close(got.eta_v, want.eta_v, 1e-4)
    close(got.eta_h, want.eta_h, 1e-4)
