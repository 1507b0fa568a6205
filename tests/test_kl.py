"""evaluator=kl (pmp Sec 5.1) against independent computations: KL(truth ‖ model) by an explicit
sum over itertools' states, 0 for the truth itself; the pseudo-counted histogram of a sampler that
mixes on 4 spins gives KL(truth ‖ q) near KL(truth ‖ model); state indices invert states_of; the
Sec 5.1 experiment runs at its smoke tier and PMP learning moves θ up from 0."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rbmlab.backend import host_rng
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.base import Context
from rbmlab.evaluators.kl import state_index
from rbmlab.models.ising import Ising, constant_dense, fully_connected
from rbmlab.units import Bernoulli, Spin


def explicit_kl(p: Ising, q: Ising) -> float:
    values = p.units.values
    total, zp, zq = 0.0, p.exact_log_partition(), q.exact_log_partition()
    for state in itertools.product(values, repeat=p.n):
        x = np.array([state], dtype=np.float64)
        log_p = float(p.log_unnormalized(x)[0]) - zp
        log_q = float(q.log_unnormalized(x)[0]) - zq
        total += math.exp(log_p) * (log_p - log_q)
    return total


def kl(model: Ising, truth: Ising, **options) -> dict[str, float]:
    evaluator = EVALUATORS.build(EVALUATORS.parse({"name": "kl", **options}))
    return evaluator.evaluate(model, {}, Context(rng=host_rng(5), final=True, truth=truth))


@pytest.mark.parametrize("spins", ["01", "pm1"])
def test_kl_of_the_model_is_the_explicit_sum(spins):
    truth = constant_dense(4, coupling=0.5, spins=spins, dtype="float64")
    model = fully_connected(
        4, rng=np.random.default_rng(2), coupling_std=0.4, field_std=0.3, spins=spins, dtype="float64"
    )
    metrics = kl(model, truth, n_samples=0)
    assert set(metrics) == {"kl_model"}
    assert metrics["kl_model"] == pytest.approx(explicit_kl(truth, model), abs=1e-12)
    assert kl(truth, truth, n_samples=0)["kl_model"] == pytest.approx(0.0, abs=1e-12)


def test_kl_of_a_mixing_samplers_histogram_is_near_the_models():
    """Gibbs with 30 sweeps on 4 spins is exact to far below the 200,000-draw noise: KL(truth ‖ q)
    for q the histogram of draws from the truth is the histogram's own error (~15/(2·200,000)),
    and for draws from another model is that model's KL within 4 standard deviations of the
    histogram's (two states of p ≈ 0.4 and q ≈ 0.18: σ ≈ 0.4·√2·√(0.82/(200,000·0.18)) ≈ 0.003)."""
    truth = constant_dense(4, coupling=0.5, spins="pm1", dtype="float64")
    options = {"sampler": "gibbs", "sweeps": 30, "n_samples": 200_000, "chunk": 50_000}
    assert kl(truth, truth, **options)["kl_samples"] < 0.0005
    other = constant_dense(4, coupling=0.2, spins="pm1", dtype="float64")
    metrics = kl(other, truth, **options)
    assert metrics["kl_model"] > 0.05
    assert metrics["kl_samples"] == pytest.approx(metrics["kl_model"], abs=0.012)


@pytest.mark.parametrize("units", [Bernoulli, Spin])
def test_state_index_inverts_states_of(units):
    idx = np.arange(2**6)
    assert np.array_equal(state_index(units, units.states_of(np, idx, 6, np.float32)), idx)


def test_sec_5_1_smoke_learns_theta_up_from_zero(tmp_path):
    from rbmlab.experiment import run_experiment

    rows = run_experiment(
        "pmp/sec-5-1-theta", ["scale=smoke"], results_root=tmp_path, outputs_root=tmp_path / "outputs"
    )["table"].read_text()
    assert "paper: 0.331" in rows or "0.331" in rows
    runs = (tmp_path / "pmp" / "sec-5-1-theta_smoke_runs.csv").read_text().splitlines()
    header = runs[0].split(",")
    thetas = [float(line.split(",")[header.index("final.theta")]) for line in runs[1:]]
    assert len(thetas) == 2 and all(0.0 < t < 0.1 for t in thetas)  # 5 Adam steps of 0.01 from 0


@pytest.mark.parametrize("pseudo_count", [0.5, 2.0])
def test_the_samples_kl_is_of_the_pseudo_counted_histogram_written_out(pseudo_count, monkeypatch):
    """(2) with the draws fixed: 10 draws over 3 of 16 states, q(x) = (n(x) + α)/(N + α·16), and
    KL(truth ‖ q) summed by hand over the states (small N, where α moves q a lot)."""
    import rbmlab.evaluators.kl as kl_module

    truth = constant_dense(4, coupling=0.5, spins="01", dtype="float64")
    states = np.array([[0, 0, 0, 0]] * 5 + [[1, 1, 1, 1]] * 4 + [[1, 0, 1, 0]], dtype=np.float64)
    monkeypatch.setattr(kl_module, "draw", lambda *args: states)
    got = kl(truth, truth, sampler="gibbs", n_samples=10, pseudo_count=pseudo_count)["kl_samples"]
    counts = {(0, 0, 0, 0): 5, (1, 1, 1, 1): 4, (1, 0, 1, 0): 1}
    log_z, want = truth.exact_log_partition(), 0.0
    for state in itertools.product((0.0, 1.0), repeat=4):
        log_p = float(truth.log_unnormalized(np.array([state]))[0]) - log_z
        q = (counts.get(tuple(int(s) for s in state), 0) + pseudo_count) / (10 + 16 * pseudo_count)
        want += math.exp(log_p) * (log_p - math.log(q))
    assert got == pytest.approx(want, rel=1e-12)
