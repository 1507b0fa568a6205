"""Learner.step_cost against the multiply-adds a step really does: every registered learner that
declares a cost runs one step on a small RBM whose arrays count every matrix product they take
part in (an ndarray subclass: ``@``/np.matmul through __array_ufunc__; np.dot, einsum,
tensordot, inner, outer and the factorisations through __array_function__), and the declared
cost must equal the count exactly."""

from __future__ import annotations

import math
import string

import numpy as np
import pytest

from rbmlab.backend import get_backend, macs
from rbmlab.data.batch import Batch
from rbmlab.learners import LEARNERS
from rbmlab.models import factor_graph
from rbmlab.models.fractional_rbm import FractionalRBM
from rbmlab.models.rbm import RBM

N_V, N_H, ROWS = 12, 7, 5

# Learners that declare no cost (the runner refuses a gmac budget for them), with the reason.
UNDECLARED = {
    "logistic": "crbm_bp conditional learner: not a leaderboard entrant",
    "mle_bp": "crbm_bp conditional learner: not a leaderboard entrant",
    "mle_mf": "crbm_bp conditional learner: not a leaderboard entrant",
    "conditional_cd": "crbm_bp conditional learner: not a leaderboard entrant",
    "cd_percloss": "crbm_bp conditional learner: not a leaderboard entrant",
    "mssvm": "crbm_bp conditional learner: not a leaderboard entrant",
    "lssvm": "crbm_bp conditional learner: not a leaderboard entrant",
    "tap_dbm": "trains a DBM, not a plain RBM: not a leaderboard entrant",
    "bethe": "trains an Ising model by loopy BP's beliefs (elementwise, no matmul): "
    "not a leaderboard entrant",
}


# ------------------------------------------------------------------ the counter
def _batch_size(*shapes) -> int:
    return math.prod(np.broadcast_shapes(*shapes)) if shapes else 1


def matmul_macs(a, b) -> int:
    a_shape = (1,) + a.shape if a.ndim == 1 else a.shape
    b_shape = b.shape + (1,) if b.ndim == 1 else b.shape
    (m, k), n = a_shape[-2:], b_shape[-1]
    return _batch_size(a_shape[:-2], b_shape[:-2]) * m * k * n


def dot_macs(a, b, out=None) -> int:
    a, b = np.asarray(a), np.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return 0  # a scalar multiple: elementwise
    k = b.shape[0] if b.ndim == 1 else b.shape[-2]
    return a.size * b.size // k


def einsum_macs(subscripts, *operands, **kwargs) -> int:
    """(operands − 1) multiplies per term of the naive sum over every index."""
    inputs = subscripts.split("->")[0].split(",")
    sizes = {}
    for letters, x in zip(inputs, operands):
        sizes.update(zip(letters, np.shape(x)))
    assert set("".join(inputs)) <= set(string.ascii_letters), subscripts
    return (len(operands) - 1) * math.prod(sizes.values()) if len(operands) > 1 else 0


def tensordot_macs(a, b, axes=2) -> int:
    a, b = np.asarray(a), np.asarray(b)
    contracted = (
        math.prod(a.shape[a.ndim - axes :])
        if isinstance(axes, int)
        else math.prod(a.shape[i] for i in np.atleast_1d(axes[0]))
    )
    return a.size * b.size // contracted if contracted else 0


def inner_macs(a, b) -> int:
    a, b = np.asarray(a), np.asarray(b)
    return a.size * b.size // (a.shape[-1] if a.ndim else 1)


def solve_macs(a, b) -> float:
    n = a.shape[-1]
    rhs = 1 if np.ndim(b) == a.ndim - 1 else b.shape[-1]
    return _batch_size(a.shape[:-2]) * macs.lu_solve(n, rhs)


RULES = {
    np.dot: dot_macs,
    np.vdot: lambda a, b: np.size(a),
    np.einsum: einsum_macs,
    np.tensordot: tensordot_macs,
    np.inner: inner_macs,
    np.outer: lambda a, b, out=None: np.size(a) * np.size(b),
    np.linalg.solve: solve_macs,
    np.linalg.inv: lambda a: _batch_size(a.shape[:-2]) * macs.inverse(a.shape[-1]),
    np.linalg.eigh: lambda a, UPLO="L": _batch_size(a.shape[:-2]) * macs.eigh(a.shape[-1]),
    np.linalg.eigvalsh: lambda a, UPLO="L": _batch_size(a.shape[:-2]) * macs.eigvalsh(a.shape[-1]),
}
UNCOUNTED = {
    np.linalg.svd,
    np.linalg.qr,
    np.linalg.cholesky,
    np.linalg.eig,
    np.linalg.lstsq,
    np.linalg.matrix_power,
    np.linalg.multi_dot,
    np.linalg.det,
    np.linalg.slogdet,
    np.kron,
    np.convolve,
    np.correlate,
    np.linalg.pinv,
    np.linalg.norm,
}


def _plain(x):
    if isinstance(x, Counted):
        return x.view(np.ndarray)
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(y) for y in x)
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    return x


def _counted(x):
    if type(x) is np.ndarray:
        return x.view(Counted)
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return type(x)(_counted(y) for y in x)
    if hasattr(x, "_fields"):  # named tuples (eigh's result)
        return type(x)(*(_counted(y) for y in x))
    return x


class Counted(np.ndarray):
    """An ndarray that adds the MACs of every product it takes part in to ``Counted.macs`` and
    hands the property on to every array computed from it."""

    macs = 0.0

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        args = _plain(inputs)
        if ufunc is np.matmul and method == "__call__":
            Counted.macs += matmul_macs(*args)
        if out is not None:
            kwargs["out"] = _plain(out)
        result = getattr(ufunc, method)(*args, **kwargs)
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _counted(result)

    def __array_function__(self, func, types, args, kwargs):
        assert func not in UNCOUNTED, f"{func.__name__}: a product the counter has no rule for"
        args, kwargs = _plain(args), _plain(kwargs)
        if func in RULES:
            Counted.macs += RULES[func](*args, **kwargs)
        return _counted(func(*args, **kwargs))

    def dot(self, b, out=None):
        return np.dot(self, b)


def counted(x):
    return np.asarray(x).view(Counted)


class CountedRng:
    """The step's Generator, its draws counted arrays (so products of two draws are caught)."""

    def __init__(self, rng):
        self._rng = rng

    def __getattr__(self, name):
        attr = getattr(self._rng, name)
        return (lambda *a, **k: _counted(attr(*a, **k))) if callable(attr) else attr


CREATORS = (
    "empty",
    "zeros",
    "ones",
    "full",
    "eye",
    "identity",
    "arange",
    "array",
    "asarray",
    "ascontiguousarray",
)


@pytest.fixture
def count(monkeypatch):
    """``count(fn, ...)``: (fn(...), the MACs it did), with numpy's array constructors handing
    out counted arrays meanwhile (xp.empty buffers, host copies), so a product of two arrays
    that were never derived from a counted one is caught too."""

    def run(fn, *args, **kwargs):
        with monkeypatch.context() as patch:
            for name in CREATORS:
                make = getattr(np, name)
                patch.setattr(np, name, lambda *a, _make=make, **k: _counted(_make(*_plain(a), **_plain(k))))
            Counted.macs = 0.0
            result = fn(*args, **kwargs)
        return result, Counted.macs

    return run


def test_counter_counts_known_products(count):
    a, b = counted(np.ones((3, 4))), np.ones((4, 5))
    assert count(lambda: np.ones((2, 3)) @ np.empty((3, 4)))[1] == 24  # made during the count
    assert count(lambda: a @ b)[1] == 60
    assert count(lambda: np.matmul(b.T, a.T))[1] == 60
    out = np.empty((3, 5))
    assert count(lambda: np.matmul(a, b, out=out))[1] == 60
    assert count(lambda: (a + 1).swapaxes(0, 1).T @ b)[1] == 60  # derived arrays count too
    assert count(lambda: a.dot(b) + np.dot(a, b))[1] == 120
    assert count(lambda: np.einsum("ij,jk->ik", a, b))[1] == 60
    assert count(lambda: np.einsum("bi,ij,bj->b", a, np.ones((4, 4)), a))[1] == 2 * 3 * 4 * 4
    assert count(lambda: np.tensordot(a, b, axes=1) @ np.ones(5))[1] == 60 + 15
    assert count(lambda: np.inner(a, a) + np.outer(a[0], a[1]).sum())[1] == 36 + 16
    assert count(lambda: np.concatenate([a, np.ones((1, 4))]) @ b)[1] == 80
    assert count(lambda: a * a + np.exp(a))[1] == 0


# ------------------------------------------------------------------ learners
def small_rbm(seed: int = 0) -> RBM:
    rng = np.random.default_rng(seed)
    return RBM(
        counted(0.5 * rng.standard_normal((N_V, N_H))),
        counted(0.3 * rng.standard_normal(N_V)),
        counted(0.3 * rng.standard_normal(N_H)),
    )


def data(rows: int, seed: int = 1) -> Batch:
    return Batch(counted(np.random.default_rng(seed).integers(0, 2, (rows, N_V)).astype(np.float64)))


CASES = {  # learner name → configs (besides its defaults) that one formula must fit
    "cd": [{"k": 3}, {"k": 2, "sampler": {"name": "perturb_descend"}}],
    "ssd": [{"k": 3, "optimizer": {"name": "spectral"}}],
    "pcd": [{"k": 2, "n_chains": 7}, {"k": 1, "n_chains": 3, "optimizer": {"name": "adam"}}],
    "reset": [{"k": 4, "n_chains": 6}, {"k": 3, "sampler": {"name": "pmp"}, "n_chains": 4}],
    "sdcp": [{"d": 2, "k": 3}, {"d": 1, "k": 2}, {"d": 3, "k": 1, "optimizer": {"name": "spectral"}}],
    "csdcp": [{"d": 2, "k": 3}],
    "cg": [{"k": 3}],
    "tap": [
        {"max_iter": 4, "tol": 0.0},
        {"inference": "adatap", "max_iter": 3, "tol": 0.0},
        {"persistent": True, "max_iter": 2, "tol": 0.0},
        {"max_iter": 200, "rows": 40},
    ],  # chains that converge are set aside: fewer products
    "frank_wolfe": [
        {
            "n_samples": 9,
            "sample_steps": 2,
            "restarts": 2,
            "maxiter": 5,
            "bias_fit": "fixed",
            "bias_steps": 3,
            "bias_chains": 4,
            "bias_sweeps": 2,
            "pretrained": True,
        },
        {
            "n_samples": 6,
            "sample_steps": 1,
            "restarts": 1,
            "maxiter": 4,
            "bias_chains": 8,
            "bias_max_steps": 12,
            "bias_window": 3,
            "bias_average": 2,
            "step": "line_search",
        },
        {
            "n_samples": 6,
            "sample_steps": 1,
            "restarts": 1,
            "maxiter": 4,
            "bias_chains": 20,
            "bias_max_steps": 6,
            "bias_window": 3,
        },
        # a fractional RBM (c_i = 0.8: Sec. 3.3's MH steps) with a learned α (∇_α's products)
        {
            "n_samples": 7,
            "sample_steps": 2,
            "restarts": 1,
            "maxiter": 4,
            "bias_fit": "fixed",
            "bias_steps": 3,
            "bias_chains": 5,
            "bias_sweeps": 2,
            "alpha": "learned",
            "alpha_lr": 0.5,
            "pretrained": True,
            "fractional": 0.8,
        },
        {
            "n_samples": 6,
            "sample_steps": 1,
            "restarts": 1,
            "maxiter": 4,
            "bias_chains": 8,
            "bias_max_steps": 6,
            "bias_window": 3,
            "alpha": "learned",
            "alpha_lr": 0.5,
            "pretrained": True,
            "fractional": 0.8,
        },
    ],
}
DEFAULT_OVERRIDES = {  # the defaults' sizes shrunk where they would make the test slow
    "reset": {"k": 5},
    "frank_wolfe": {"n_samples": 10, "maxiter": 5, "bias_max_steps": 10, "bias_window": 5, "bias_chains": 6},
    "ssd": {"k": 2, "optimizer": {"name": "spectral"}},
    "tap": {"tol": 0.0},
}


def _learner_cases():
    for name in LEARNERS.names():
        if name in UNDECLARED:
            continue
        yield pytest.param(name, DEFAULT_OVERRIDES.get(name, {}), id=f"{name}-defaults")
        for i, overrides in enumerate(CASES.get(name, [])):
            yield pytest.param(name, overrides, id=f"{name}-{i}")


def test_every_learner_is_declared_or_listed():
    """A new learner must declare a cost (and get cases here) or be listed with a reason."""
    assert set(LEARNERS.names()) == set(CASES) | set(UNDECLARED)


@pytest.mark.parametrize("name", sorted(UNDECLARED))
def test_undeclared_learners_say_so(name):
    learner = LEARNERS.build(LEARNERS.parse({"name": name}, "learner"))
    assert learner.step_cost(small_rbm(), ROWS, {}) is None


@pytest.mark.parametrize("name,overrides", list(_learner_cases()))
def test_declared_cost_is_the_counted_products(name, overrides, count, monkeypatch):
    # max-product's messages are not matmuls: count them by the declared rule, one max-plus
    # multiply-add per message, on the array path (the numba kernel would hide them)
    monkeypatch.setattr(factor_graph, "_kernels", lambda: None)
    real_message = factor_graph.max_message

    def counted_message(w, c):
        Counted.macs += np.broadcast(w, c).size
        return real_message(w, c)

    monkeypatch.setattr(factor_graph, "max_message", counted_message)

    overrides = dict(overrides)
    pretrained = overrides.pop("pretrained", False)  # frank_wolfe: start from the RBM's units
    fractional = overrides.pop("fractional", None)  # frank_wolfe: those units with c_i = this
    rows = overrides.pop("rows", 8 if name == "frank_wolfe" else ROWS)
    learner = LEARNERS.build(LEARNERS.parse({"name": name, **overrides}, "learner"))
    model, train = small_rbm(), data(rows)
    if fractional is not None:
        model = FractionalRBM.of_rbm(model, counted(np.full(N_H, fractional)))
    backend = get_backend("numpy", "float64")
    model = learner.initial_model(model, pretrained, train)
    state = learner.init_state(model, train, CountedRng(backend.rng(0)))
    (model, state), counted_macs = count(learner.step, model, state, train, CountedRng(backend.rng(1)))
    declared = learner.step_cost(model, rows, state)
    assert declared is not None
    assert declared == pytest.approx(counted_macs, rel=1e-12), (declared, counted_macs)
    if name == "tap" and overrides.get("max_iter") == 200:  # the case is what it says
        assert float(state["tap_chain_iterations"]) < rows * float(state["tap_iterations"])
