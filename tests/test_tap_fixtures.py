"""What TAP computes today, frozen before TAP is written once over the stack (issue 58 item 3):
the RBM's and the DBM's solvers (free and clamped fixed points, first and second order), free
energies, gradients, one step of each learner (tap_dbm's pretraining included) and each
evaluator's metrics, on fixed small float64 models, against tests/fixtures/tap_before_merge.npz.

A merge of inference/tap.py with inference/tap_dbm.py (done: tap.py is now the one TAP module,
its stack functions the DBM's) and of their learners and evaluators (done: learners/tap.py and
evaluators/tap.py, each one for every depth) must leave every array here
as it was; float64 throughout, so the tolerance covers only a BLAS's
summation order on another CPU. Regenerate (only on purpose, from the code before the change):
``python -m tests.test_tap_fixtures``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rbmlab.backend import host_rng
from rbmlab.data.batch import Batch
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.base import Context
from rbmlab.inference import tap
from rbmlab.learners import LEARNERS
from rbmlab.models.dbm import DBM
from rbmlab.models.grbm import GRBM
from rbmlab.models.rbm import RBM

FIXTURE = Path(__file__).parent / "fixtures" / "tap_before_merge.npz"
SOLVE = {"max_iter": 60, "tol": 1e-14}


def _rng(seed: int):
    return np.random.default_rng(seed)


def _rows(seed: int, k: int, n: int) -> np.ndarray:
    return (_rng(seed).random((k, n)) < 0.4).astype(np.float64)


def rbm() -> RBM:
    r = _rng(1)
    return RBM(r.normal(0, 0.4, (6, 4)), r.normal(0, 0.5, 6), r.normal(0, 0.5, 4))


def grbm() -> GRBM:
    r = _rng(2)
    W = r.normal(0, 0.3, (5, 3))
    theta = np.stack([np.full(5, 0.8), np.full(5, 0.6)])  # gauss_bernoulli: two parameter rows
    return GRBM(W, r.normal(0, 0.3, 5), r.normal(0, 0.3, 3), theta, visible="gauss_bernoulli")


def dbm(sizes) -> DBM:
    r = _rng(sum(sizes))
    weights = [r.normal(0, 0.5, (p, q)) for p, q in zip(sizes, sizes[1:])]
    return DBM.of(weights, [r.normal(0, 0.4, m) for m in sizes])


def _rbm_case(out: dict, name: str, model, x) -> None:
    visible, hidden = model.tap_layers()
    for order in (1, 2):
        s = tap.solve(model.W, visible, hidden, x, order=order, **SOLVE)
        key = f"{name}.order{order}"
        for field in ("a_v", "c_v", "a_h", "c_h"):
            out[f"{key}.{field}"] = getattr(s, field)
        out[f"{key}.free_energy"] = tap.free_energy(model.W, visible, hidden, s)
        for g, value in tap.gradient(model.W, visible, hidden, x, s).items():
            out[f"{key}.grad.{g}"] = value


def _dbm_case(out: dict, name: str, model: DBM, x) -> None:
    layers, couplings = model.tap_stack()
    free = tap.solve_layers(couplings, layers, x, **SOLVE)
    held = tap.clamped_layers(couplings, layers, x, **SOLVE)
    for kind, s in (("free", free), ("clamped", held)):
        for l, (a, c) in enumerate(zip(s.a, s.c)):
            out[f"{name}.{kind}.a{l}"], out[f"{name}.{kind}.c{l}"] = a, c
        out[f"{name}.{kind}.free_energy"] = tap.stack_free_energy(couplings, layers, s)
    dW, dU = tap.stack_gradient(couplings, held, free)
    for l, g in enumerate(dW, 1):
        out[f"{name}.grad.W{l}"] = g
    for l, g in enumerate(dU):
        out[f"{name}.grad.b{l}"] = g


def _learner_step(out: dict, name: str, node: dict, model, x) -> None:
    learner = LEARNERS.build(LEARNERS.parse(node))
    start = learner.initial_model(model, pretrained=False, train=Batch(x), rng=host_rng(0))
    state = learner.init_state(start, Batch(x), host_rng(1))
    new, _ = learner.step(start, state, Batch(x), host_rng(2))
    for p in new.PARAMS:
        out[f"{name}.{p}"] = getattr(new, p)


def _evaluator(out: dict, name: str, node: dict, model, x) -> None:
    evaluator = EVALUATORS.build(EVALUATORS.parse(node))
    context = Context(rng=host_rng(9), final=True, train=Batch(x), data_mean=x.mean(axis=0))
    for metric, value in evaluator.evaluate(model, {"test": Batch(x)}, context).items():
        out[f"{name}.{metric}"] = np.asarray(value)


def compute() -> dict[str, np.ndarray]:
    out: dict[str, np.ndarray] = {}
    _rbm_case(out, "rbm", rbm(), _rows(3, 7, 6))
    _rbm_case(out, "grbm", grbm(), _rng(4).random((7, 5)))
    for sizes in ((5, 4, 3), (4, 3, 3, 2)):
        _dbm_case(out, f"dbm{len(sizes)}", dbm(sizes), _rows(5, 6, sizes[0]))
    x = _rows(6, 8, 6)
    _learner_step(out, "learner.tap", {"name": "tap", "lr": 0.05, "batch_size": 8, "max_iter": 5}, rbm(), x)
    node = {
        "name": "tap_dbm",
        "lr": 0.05,
        "batch_size": 4,
        "max_iter": 5,
        "pretrain_epochs": 2,
        "pretrain_lr": 0.1,
    }
    _learner_step(out, "learner.tap_dbm", node, dbm((6, 4, 3)), x)
    tap_eval = {"name": "tap", "n_init": 20, "max_iter": 200}
    _evaluator(out, "evaluator.tap", tap_eval, rbm(), x)
    _evaluator(
        out, "evaluator.tap_dbm", {"name": "tap_dbm", "n_init": 20, "max_iter": 200}, dbm((6, 4, 3)), x
    )
    return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}


@pytest.fixture(scope="module")
def computed():
    return compute()


def test_the_fixture_covers_what_it_says(computed):
    saved = np.load(FIXTURE)
    # written when a 2-layer DBM held an empty third layer (W3 (n_2, 0), b3 (0,)): those name no
    # layer of today's machine, and only those are absent
    placeholders = {k for k in saved.files if k.startswith("learner.tap_dbm.") and saved[k].size == 0}
    assert placeholders == {"learner.tap_dbm.W3", "learner.tap_dbm.b3"}
    assert set(saved.files) - placeholders == set(computed)
    prefixes = {k.split(".")[0] for k in computed}
    assert prefixes == {"rbm", "grbm", "dbm3", "dbm4", "learner", "evaluator"}


def test_tap_computes_what_it_computed_before_the_merge(computed):
    saved = np.load(FIXTURE)
    for key in sorted(computed):
        np.testing.assert_allclose(computed[key], saved[key], rtol=1e-9, atol=1e-12, err_msg=key)


if __name__ == "__main__":
    FIXTURE.parent.mkdir(exist_ok=True)
    np.savez_compressed(FIXTURE, **compute())
    print(f"wrote {FIXTURE}")
