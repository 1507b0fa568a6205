"""The tap paper's code on the cupy backend gives the numpy answers: every prior's log-normaliser,
moments and gradients over a grid of (B, A) with extreme values, TAP (Alg. 1) on binary and
real-valued RBMs (solutions, free energy, log Z, gradients), adaTAP by VAMP (Alg. 3), the DBM's
TAP, one TAP learner step and the tap evaluator. Needs cupy and a CUDA device (skipped elsewhere);
float64 throughout, so the two backends agree to rounding."""

from __future__ import annotations

import numpy as np
import pytest

from rbmlab.backend import cupy_available, get_backend, to_numpy
from rbmlab.data.batch import Batch
from rbmlab.evaluators.base import Context
from rbmlab.evaluators.tap import TapEvalConfig, TapEvaluator
from rbmlab.inference import adatap, tap
from rbmlab.learners import LEARNERS
from rbmlab.models.dbm import DBM
from rbmlab.models.grbm import GRBM, GRBMConfig
from rbmlab.models.rbm import RBM
from rbmlab.units import PRIOR_NAMES, prior

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not cupy_available(), reason="needs cupy and a GPU")]

THETA = {"bernoulli": [], "spin": [], "truncated_gaussian": [1.5], "gauss_bernoulli": [1.5, -0.7]}


@pytest.fixture
def gpu():
    return get_backend("cupy", "float64")


def close(got, want, tol=1e-9):
    np.testing.assert_allclose(to_numpy(got), to_numpy(want), rtol=tol, atol=tol)


def same_tree(got, want, tol=1e-9):
    """Solutions, gradients, tuples and lists of arrays: every leaf close."""
    if isinstance(want, dict):
        assert set(got) == set(want)
        for k in want:
            same_tree(got[k], want[k], tol)
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            same_tree(g, w, tol)
    elif hasattr(want, "__dataclass_fields__"):
        for k in want.__dataclass_fields__:
            same_tree(getattr(got, k), getattr(want, k), tol)
    elif isinstance(want, float):
        assert got == pytest.approx(want, rel=tol, abs=tol)
    elif isinstance(want, (bool, int, str)) or want is None:
        assert got == want
    else:
        close(got, want, tol)


@pytest.mark.parametrize("name", PRIOR_NAMES)
def test_priors_agree(name, gpu):
    B, A = np.meshgrid(
        [-300.0, -20.0, -1.0, 0.0, 0.3, 5.0, 40.0, 300.0], [-200.0, -10.0, -1e-3, 0.0, 1e-3, 0.5, 10.0, 200.0]
    )
    B, A = B.ravel(), A.ravel()
    theta = [np.full(B.shape, t) for t in THETA[name]]
    p = prior(name)
    on = lambda *xs: [gpu.asarray(x) for x in xs]  # noqa: E731
    for method in ("log_z", "moments", "grad_log_z"):
        same_tree(getattr(p, method)(*on(B, A, *theta)), getattr(p, method)(B, A, *theta))
    x = np.clip(np.random.default_rng(0).random(B.shape) - 0.1, 0.0, 1.0)
    if name == "spin":
        x = np.sign(x - 0.5)
    for method in ("log_base", "grad_log_base"):
        same_tree(getattr(p, method)(*on(x, *theta)), getattr(p, method)(x, *theta))
    if name in ("truncated_gaussian", "gauss_bernoulli"):
        data = np.where(x > 0.5, x, 0.0)[:, None] * np.ones((1, 3))
        same_tree(p.init_params(gpu.asarray(data)), p.init_params(data))
    f32 = p.log_z(*(gpu.asarray(t, dtype="float32") for t in (B[:5], A[:5], *(t[:5] for t in theta))))
    assert f32.dtype == np.float32


def models(rng):
    x = np.where(rng.random((40, 9)) < 0.4, 0.0, rng.beta(2, 3, (40, 9)))
    yield RBM(rng.normal(0, 0.3, (9, 5)), rng.normal(0, 0.5, 9), rng.normal(0, 0.5, 5)), (x > 0.2) * 1.0
    for name in ("truncated_gaussian", "gauss_bernoulli"):
        m = GRBM.initialize(
            GRBMConfig(n_hidden=5, visible_prior=name),
            xp=np,
            rng=rng,
            data_mean=x.mean(0),
            dtype="float64",
            data=x,
        )
        yield m.replace(W=rng.normal(0, 0.3, m.W.shape)), x


def tap_pieces(model, x):
    visible, hidden = model.tap_layers()
    s = tap.solve(model.W, visible, hidden, x, tol=1e-12, max_iter=300)
    return (
        s,
        tap.free_energy(model.W, visible, hidden, s),
        tap.log_partition(model.W, visible, hidden, s),
        tap.clamped_log_density(model.W, visible, hidden, x),
        tap.gradient(model.W, visible, hidden, x, s),
    )


def test_tap_agrees(gpu):
    for model, x in models(np.random.default_rng(1)):
        want = tap_pieces(model, x)
        got = tap_pieces(model.map(gpu.asarray), gpu.asarray(x))
        same_tree(got, want, 1e-8)


def test_adatap_agrees(gpu):
    rng = np.random.default_rng(2)
    rbm = RBM(rng.normal(0, 0.3, (9, 5)), rng.normal(0, 0.5, 9), rng.normal(0, 0.5, 5))
    x = (rng.random((12, 9)) < 0.5) * 1.0
    solve = lambda m, v: adatap.solve(m.W, *m.tap_layers(), v, tol=1e-12, max_iter=200)  # noqa: E731
    same_tree(solve(rbm.map(gpu.asarray), gpu.asarray(x)), solve(rbm, x), 1e-8)


@pytest.mark.parametrize("sizes", [(6, 4, 3), (5, 3, 3, 2)])
def test_dbm_tap_agrees(sizes, gpu):
    rng = np.random.default_rng(3)
    weights = [rng.normal(0, 0.3, (p, q)) for p, q in zip(sizes, sizes[1:])]
    dbm = DBM.of(weights, [rng.normal(0, 0.5, m) for m in sizes])
    x = (rng.random((10, sizes[0])) < 0.5) * 1.0

    def pieces(model, v):
        layers, couplings = model.tap_stack()
        free = tap.solve_layers(couplings, layers, v, tol=1e-12, max_iter=300)
        clamped = tap.clamped_layers(couplings, layers, v, tol=1e-12, max_iter=300)
        return (
            free,
            tap.stack_log_partition(couplings, layers, free),
            tap.stack_free_energy(couplings, layers, clamped),
            tap.stack_gradient(couplings, clamped, free),
        )

    same_tree(pieces(dbm.map(gpu.asarray), gpu.asarray(x)), pieces(dbm, x), 1e-8)


def test_learner_step_and_evaluator_agree(gpu):
    for model, x in models(np.random.default_rng(4)):
        learner = LEARNERS.build(LEARNERS.parse({"name": "tap", "lr": 0.01, "batch_size": 20}))
        evaluator = TapEvaluator(TapEvalConfig(n_init=20, progress=False, splits=["train"]))
        results = []
        for move in (lambda a: a, gpu.asarray):
            m, train = model.map(move), Batch(x).map(move)
            state = learner.init_state(m, train, np.random.default_rng(0))
            m, _ = learner.step(m, state, Batch(x[:20]).map(move), np.random.default_rng(1))
            metrics = evaluator.evaluate(m, {"train": train}, Context(rng=None, final=True, train=train))
            results.append((m.arrays(), metrics))
        (got, got_metrics), (want, want_metrics) = results[1], results[0]
        same_tree(got, want, 1e-8)
        assert set(got_metrics) == set(want_metrics)
        for k, v in want_metrics.items():
            assert got_metrics[k] == pytest.approx(v, rel=1e-7, abs=1e-9), k
