"""evaluator=map_time (pmp Sec. 3's chain) against answers known by hand: Gibbs first-passage
times of independent spins are geometric with mean 1 / p², p = σ(2h); the perturbed MAP is
itertools' argmax; undamped max-product on a chain is exact by its diameter; the median, maximum
and arrived share of censored times; every refusal is one line."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rbmlab.backend import host_rng
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.base import Context
from rbmlab.evaluators.map_time import max_product_times, perturbed_answers, summary
from rbmlab.models.ising import Ising, chain
from rbmlab.models.rbm import RBM


def map_time(model, **options):
    evaluator = EVALUATORS.build(EVALUATORS.parse({"name": "map_time", **options}))
    evaluator.check(type(model), {"n": model.n})
    return evaluator.evaluate(model, {}, Context(rng=host_rng(3), final=True))


def test_summary_of_censored_times():
    assert summary(np.array([3, 5, 0, 7]), 10) == pytest.approx(
        {"sweeps_to_map": 6.0, "sweeps_to_map_max": float("nan"), "map_reached": 0.75}, nan_ok=True
    )
    assert summary(np.array([2, 9, 4]), 10) == {
        "sweeps_to_map": 4.0,
        "sweeps_to_map_max": 9.0,
        "map_reached": 1.0,
    }
    assert math.isnan(summary(np.array([0, 0, 4]), 10)["sweeps_to_map"])


@pytest.mark.parametrize("spins,h", [("pm1", 0.3), ("01", 0.6)])
def test_gibbs_first_passage_of_independent_spins_is_geometric(spins, h):
    """J = 0: one sweep redraws both spins from p = P(x_i = hi), so the chain is at x* = (hi, hi)
    after a sweep with probability p², and the first passage is Geometric(p²), mean 1/p²."""
    model = Ising(np.zeros((2, 2)), np.full(2, h), spins)
    p = 1.0 / (1.0 + math.exp(-(2.0 * h if spins == "pm1" else h)))
    metrics = map_time(model, sampler="gibbs", n_chains=4000, max_sweeps=2000)
    assert metrics["map_reached"] == 1.0
    q = p * p
    median = math.ceil(math.log(0.5) / math.log(1.0 - q))  # Geometric(q)'s median
    assert abs(metrics["sweeps_to_map"] - median) <= 1
    assert metrics["sweeps_to_map_max"] > 3 / q  # 4,000 draws reach the tail


def test_perturbed_answers_are_itertools_argmax():
    model = chain(5, coupling=0.8, field=0.1, spins="pm1", dtype="float64")
    graph = model.factor_graph()
    noise = np.random.default_rng(0).logistic(size=(7, 5))
    states = np.array(list(itertools.product([0.0, 1.0], repeat=5)))
    got = perturbed_answers(graph, states, noise)
    for row, answer in zip(noise, got):
        best = max(states, key=lambda x: float(x @ row + graph.log_unnormalized(x[None])[0]))
        np.testing.assert_array_equal(answer, best)


def test_undamped_max_product_on_a_chain_is_exact_by_its_diameter():
    """A chain of n is a tree of diameter n − 1: flooding max-product without damping gives
    exact max-marginals, so the decoded MAP, from sweep n − 1 on; damped (½), it also arrives."""
    n = 7
    model = chain(n, coupling=2.0, field=0.1, spins="pm1", dtype="float64")
    times = max_product_times(model, 1.0, 200, 40, host_rng(1))
    assert times.min() >= 1 and times.max() <= n - 1
    assert times.max() > 2  # strong coupling: information crosses the chain
    damped = max_product_times(model, 0.5, 200, 200, host_rng(1))
    assert (damped > 0).all() and damped.mean() > times.mean()


def test_pmp_route_and_the_sweep_cap():
    model = chain(10, coupling=3.0, field=0.1, spins="pm1", dtype="float64")
    pmp = map_time(model, sampler="pmp", n_chains=50, max_sweeps=100)
    assert pmp["map_reached"] == 1.0 and pmp["sweeps_to_map_max"] <= 100
    capped = map_time(model, sampler="gibbs", n_chains=50, max_sweeps=3)  # e^{2J} ≫ 3 sweeps
    assert capped["map_reached"] < 0.5 and math.isnan(capped["sweeps_to_map"])


@pytest.mark.parametrize(
    "model,options,message",
    [
        (
            Ising(np.array([[0.0, 1.0], [1.0, 0.0]]), np.zeros(2), "pm1"),
            {"sampler": "gibbs"},
            "more than one MAP",
        ),
        (chain(4, coupling=1.0, field=0.1, spins="pm1"), {"sampler": "pmap_lp"}, "neither a chain"),
        (
            chain(4, coupling=1.0, field=0.1, spins="pm1"),
            {"sampler": {"name": "gibbs", "step": "site"}},
            "step must be sweep",
        ),
    ],
)
def test_refusals_are_one_line(model, options, message):
    with pytest.raises(RbmlabError, match=message):
        map_time(model, **options)


def test_models_with_latent_units_are_refused():
    evaluator = EVALUATORS.build(EVALUATORS.parse({"name": "map_time", "sampler": "pmp"}))
    with pytest.raises(RbmlabError, match="latent units"):
        evaluator.check(RBM, {"n_visible": 4, "n_hidden": 2})


def test_the_chain_dataset_is_sampled_from_a_chain():
    from rbmlab.data import ground_truth
    from rbmlab.data.model_samples import IsingSamplesOptions

    truth = ground_truth(name="ising_samples", structure="chain", n=5, coupling=-0.7, field=0.2, spins="pm1")
    expected = np.diag(np.full(4, -0.7), 1)
    np.testing.assert_allclose(truth.J, expected + expected.T)
    np.testing.assert_allclose(truth.h, np.full(5, 0.2))
    with pytest.raises(RbmlabError, match="fields"):
        IsingSamplesOptions(structure="chain", fields="constant")
