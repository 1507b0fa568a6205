"""Loopy sum-product BP on Ising models (rbmlab.inference.bethe), Bethe learning (learner=bethe)
and evaluator=bethe against exact answers: enumeration on a tree, where BP is exact; the 4-spin
model of pmp Sec. 5.1, whose symmetric fixed point (pair moment tanh θ) loses stability at
2 tanh θ = 1 and whose data pair moment is 1/2 at θ = 0.31597 (the root of e^{6θ} − 5e^{−2θ} = 4)."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest

from rbmlab.cli import main
from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.base import Context
from rbmlab.inference.bethe import bethe_beliefs
from rbmlab.models.ising import Ising

K4 = np.ones((4, 4)) - np.eye(4)


def _exact_moments(model: Ising):
    """(E[x_i], E[x_i x_j] with a zero diagonal) by enumerating every state."""
    values = (-1.0, 1.0) if model.spins == "pm1" else (0.0, 1.0)
    states = np.array(list(itertools.product(values, repeat=model.n)))
    log_p = 0.5 * np.einsum("si,ij,sj->s", states, model.J, states) + states @ model.h
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    pair = (states * p[:, None]).T @ states
    np.fill_diagonal(pair, 0.0)
    return p @ states, pair


def _chain(spins: str) -> Ising:
    rng = np.random.default_rng(3)
    J = np.zeros((5, 5))
    for i in range(4):
        J[i, i + 1] = J[i + 1, i] = rng.normal()
    return Ising(J, rng.normal(size=5), spins)


@pytest.mark.parametrize("spins", ["pm1", "01"])
@pytest.mark.parametrize("damping", [0.0, 0.5])
def test_bp_on_a_tree_gives_the_exact_means_and_edge_moments(spins, damping):
    model = _chain(spins)
    b = bethe_beliefs(model, None, max_iter=500, tol=1e-13, damping=damping)
    mean, pair = _exact_moments(model)
    edges = model.J != 0
    assert b.converged
    np.testing.assert_allclose(b.mean, mean, atol=1e-11)
    np.testing.assert_allclose(b.pair[edges], pair[edges], atol=1e-11)
    assert np.all(np.diag(b.pair) == 0) and np.allclose(b.pair, b.pair.T)
    if (
        damping == 0.0
    ):  # undamped, messages settle in as many rounds as the chain's diameter, plus one to see it
        assert b.iterations == 5


def test_bp_stops_at_its_iteration_cap_unconverged():
    b = bethe_beliefs(_chain("pm1"), None, max_iter=2, tol=1e-13, damping=0.0)
    assert not b.converged and b.iterations == 2


def test_the_4_spin_models_symmetric_fixed_point_and_its_instability():
    """Zero messages stay zero in a field-free model: pair tanh θ, means 0, at any θ. From random
    messages BP returns there while 2 tanh θ < 1 (θ < 0.5493) and leaves it above."""
    rng = np.random.default_rng(0)
    for theta in (0.3, 0.7):
        b = bethe_beliefs(Ising(theta * K4, np.zeros(4), "pm1"), None, max_iter=50, tol=1e-13, damping=0.5)
        assert b.converged and np.all(b.mean == 0)
        np.testing.assert_allclose(b.pair[K4 == 1], np.tanh(theta), rtol=1e-12)
    below = bethe_beliefs(
        Ising(0.5 * K4, np.zeros(4), "pm1"),
        0.1 * rng.standard_normal((4, 4)),
        max_iter=5000,
        tol=1e-13,
        damping=0.5,
    )
    above = bethe_beliefs(
        Ising(0.6 * K4, np.zeros(4), "pm1"),
        0.1 * rng.standard_normal((4, 4)),
        max_iter=5000,
        tol=1e-13,
        damping=0.5,
    )
    assert below.converged and np.abs(below.mean).max() < 1e-9
    assert above.converged and np.abs(above.mean).min() > 0.3
    assert np.allclose(above.mean, above.mean[0])  # magnetised alike, one sign


def test_the_papers_threshold_is_where_the_data_pair_moment_passes_what_stable_bp_can_give():
    """The paper's 0.316: the true pair moment (rbmlab's exact enumeration, Ising.log_probability)
    reaches 1/2 at θ = 0.31597, and 1/2 is the largest pair moment of BP's symmetric fixed point
    while it is stable (tanh θ_B < 1/2): from random messages BP keeps it just below θ_B = atanh ½
    and leaves it just above."""

    def true_pair(theta):
        model = Ising(theta * K4, np.zeros(4), "pm1").astype(np.float64)
        states = np.array(list(itertools.product((-1.0, 1.0), repeat=4)))
        p = np.exp(model.log_probability(states))
        return float(p @ (states[:, 0] * states[:, 1]))

    assert true_pair(0.3159) < 0.5 < true_pair(0.3160)
    rng = np.random.default_rng(1)
    edge = np.arctanh(0.5)
    for theta, magnetised in ((edge - 0.02, False), (edge + 0.02, True)):
        b = bethe_beliefs(
            Ising(theta * K4, np.zeros(4), "pm1"),
            0.1 * rng.standard_normal((4, 4)),
            max_iter=20000,
            tol=1e-13,
            damping=0.5,
        )
        assert (np.abs(b.mean).min() > 0.05) == magnetised and b.converged


def _run(tmp_path, coupling, *extra):
    main(
        [
            "run",
            "dataset=ising_samples",
            "dataset.structure=dense",
            "dataset.n=4",
            "dataset.weights=constant",
            f"dataset.coupling={coupling}",
            "dataset.field=0.0",
            "dataset.spins=pm1",
            "dataset.sampler=exact",
            "dataset.n_train=50000",
            "dataset.n_test=10",
            "model=ising",
            "model.spins=pm1",
            "model.tie=uniform",
            "model.coupling_std=0",
            "model.field_init=zero",
            "learner=bethe",
            "learner.batch_size=full",
            "learner.lr=0.05",
            "learner/optimizer=adam",
            "train.epochs=100",
            "train.eval_every=0",
            "train.progress=false",
            "evaluator=bethe",
            "evaluator.splits=[train]",
            "evaluator.progress=false",
            "evaluator.max_iter=2000",
            *extra,
            f"hydra.run.dir={tmp_path}",
        ]
    )
    return json.loads((tmp_path / "summary.json").read_text())["final"]


def test_bethe_learning_matches_the_data_below_the_threshold_and_not_above(tmp_path):
    """θ = 0.2: θ_B → atanh(c) with c the data's pair moment, both gaps at the data's sampling error;
    θ = 0.5: the pair moment is matched at a magnetised fixed point, whose means are far from 0."""
    c = _exact_moments(Ising(0.2 * K4, np.zeros(4), "pm1"))[1][0, 1]
    low = _run(tmp_path / "low", 0.2)
    assert low["theta"] == pytest.approx(np.arctanh(c), abs=0.01)
    assert low["train_bethe_mean_gap"] < 0.02 and low["train_bethe_pair_gap"] < 0.02
    assert low["bethe_converged"] == 1.0
    high = _run(tmp_path / "high", 0.5)
    assert high["train_bethe_mean_gap"] > 0.5 and high["train_bethe_pair_gap"] < 0.02
    assert (
        high["theta"] < 0.8
    )  # the magnetised fixed point matches c at θ_B ≈ 0.64; the symmetric one needs > 0.9
    # zero messages never leave the symmetric fixed point: the mean gap hides, the pair gap shows
    stuck = _run(tmp_path / "stuck", 0.5, "learner.init_std=0", "evaluator.init_std=0")
    assert stuck["train_bethe_mean_gap"] < 0.02 and stuck["train_bethe_pair_gap"] < 0.02
    assert stuck["theta"] > 0.9  # tanh θ_B = 0.78: far past the point the symmetric fixed point is stable


def test_the_evaluator_measures_the_gaps_against_the_split():
    """On a tree BP's beliefs are exact on the edges; elsewhere they factorise (E_b = product of
    the means): the pair gap is taken over every pair i ≠ j, as learner=bethe fits them."""
    model = _chain("01")
    b = bethe_beliefs(model, None, max_iter=500, tol=1e-13, damping=0.5)
    mean, pair = _exact_moments(model)
    edges = model.J != 0
    np.testing.assert_allclose(b.pair[edges], pair[edges], atol=1e-11)
    off = ~edges & ~np.eye(5, dtype=bool)
    np.testing.assert_allclose(b.pair[off], np.outer(b.mean, b.mean)[off], atol=1e-12)
    evaluator = EVALUATORS.build(EVALUATORS.parse({"name": "bethe", "init_std": 0.0, "tol": 1e-13}))
    x = np.array([[1, 0, 1, 1, 0], [0, 0, 1, 0, 1], [1, 1, 1, 0, 0], [0, 1, 0, 1, 1]], dtype=float)
    got = evaluator.evaluate(
        model, {"train": Batch(x, None)}, Context(rng=np.random.default_rng(0), final=True)
    )
    data_pair = x.T @ x / 4
    pairs = ~np.eye(5, dtype=bool)
    assert got["train_bethe_mean_gap"] == pytest.approx(np.abs(mean - x.mean(0)).max(), abs=1e-11)
    assert got["train_bethe_pair_gap"] == pytest.approx(np.abs(b.pair - data_pair)[pairs].max(), abs=1e-11)
    assert got["bethe_converged"] == 1.0
    capped = EVALUATORS.build(EVALUATORS.parse({"name": "bethe", "max_iter": 1, "damping": 0.9}))
    assert (
        capped.evaluate(model, {"train": Batch(x, None)}, Context(rng=np.random.default_rng(0), final=True))[
            "bethe_converged"
        ]
        == 0.0
    )


def test_refusals_are_one_line(tmp_path):
    for key, value in (("damping", 1.0), ("init_std", -1.0), ("max_iter", 0)):
        with pytest.raises(RbmlabError, match=f"evaluator.{key}"):
            EVALUATORS.parse({"name": "bethe", key: value})
    with pytest.raises(SystemExit) as stop:
        main(["run", "dataset=bars_stripes", "learner=bethe", f"hydra.run.dir={tmp_path / 'rbm'}"])
    assert stop.value.code == 2
