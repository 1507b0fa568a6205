"""The line-searched Frank-Wolfe step (rbmlab.learners.frank_wolfe_step) against enumeration: its
estimate of the penalised objective's change is exact with exact expectations, it never lowers the
objective where Alg. 1's whole unit does, and the learner's ``step=line_search`` path appends the
scaled unit."""

from __future__ import annotations

import numpy as np
import pytest

from rbmlab.backend import get_backend
from rbmlab.data.batch import Batch
from rbmlab.learners import LEARNERS
from rbmlab.learners.frank_wolfe import append_unit
from rbmlab.learners.frank_wolfe_oracle import LinearOracle, solve
from rbmlab.learners.frank_wolfe_step import line_search, scale_grid
from rbmlab.models.rbm import RBM, log_likelihood
from tests.conftest import all_binary

D = 8
STATES = all_binary(D)


@pytest.fixture
def toy():
    """Noisy copies of two prototypes: structure an independent model lacks."""
    rng = np.random.default_rng(3)
    prototypes = np.array([[1, 1, 1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 1, 1, 0, 1]], dtype=float)
    x = prototypes[rng.integers(0, 2, size=40)]
    return np.where(rng.random(x.shape) < 0.1, 1 - x, x)


def probabilities(rbm):
    return np.exp(log_likelihood(rbm, STATES))


def test_the_scale_grid_halves_every_two_points():
    assert scale_grid(5) == pytest.approx([1, 2**-0.5, 0.5, 2**-1.5, 0.25])


@pytest.mark.parametrize("penalize_bias, points", [(True, 13), (False, 7)])
def test_the_estimated_change_is_the_exact_change_with_exact_expectations(toy, penalize_bias, points):
    """With every state weighted by its probability, Δ(s) − (λ/2)s²‖w‖² equals the change of the
    mean log-likelihood (enumeration, b held) minus the unit's penalty, at every scale."""
    rng = np.random.default_rng(1)
    rbm = RBM(0.5 * rng.standard_normal((D, 2)), 0.3 * rng.standard_normal(D), 0.2 * rng.standard_normal(2))
    w, lam = rng.standard_normal(D + 1), 0.07
    step = line_search(
        toy, STATES, w, lam=lam, penalize_bias=penalize_bias, weights=probabilities(rbm), points=points
    )
    penalised = w if penalize_bias else w[:-1]
    before = log_likelihood(rbm, toy).mean()
    exact = [
        log_likelihood(append_unit(rbm, s * w), toy).mean()
        - before
        - 0.5 * lam * s * s * penalised @ penalised
        for s in scale_grid(points)
    ]
    assert len(step.changes) == points
    np.testing.assert_allclose(step.changes, exact, rtol=0, atol=1e-10)
    assert step.scale == step.scales[int(np.argmax(exact))]


@pytest.mark.parametrize("points", [5, 2])
def test_with_a_bias_shift_the_change_is_the_exact_change_of_the_shifted_model(toy, points):
    """step_bias=refit's score: each scale with its own bias change δ_s (any δ_s; here random),
    Δ(s) equals the exact change of the mean log-likelihood to the model with s·w appended and b
    moved by δ_s, minus the unit's penalty (enumeration); the shift is asked once per scale."""
    rng = np.random.default_rng(4)
    rbm = RBM(0.5 * rng.standard_normal((D, 2)), 0.3 * rng.standard_normal(D), 0.2 * rng.standard_normal(2))
    w, lam = rng.standard_normal(D + 1), 0.05
    shifts = {float(s): 0.4 * rng.standard_normal(D) for s in scale_grid(points)}
    asked = []
    step = line_search(
        toy,
        STATES,
        w,
        lam=lam,
        weights=probabilities(rbm),
        points=points,
        shift=lambda s: asked.append(s) or shifts[s],
    )
    before = log_likelihood(rbm, toy).mean()
    exact = [
        log_likelihood(append_unit(rbm, s * w).replace(b_v=rbm.b_v + shifts[float(s)]), toy).mean()
        - before
        - 0.5 * lam * s * s * w @ w
        for s in scale_grid(points)
    ]
    np.testing.assert_allclose(step.changes, exact, rtol=0, atol=1e-9)
    assert asked == [float(s) for s in scale_grid(points)]
    held = line_search(toy, STATES, w, lam=lam, weights=probabilities(rbm), points=points)
    assert not np.allclose(held.changes, step.changes)


def test_with_samples_the_estimate_uses_them_uniformly(toy):
    """Samples stand for the model with weight 1/S each: the same as weights of 1/S given."""
    rng = np.random.default_rng(2)
    samples = STATES[rng.integers(0, len(STATES), 300)]
    w = rng.standard_normal(D + 1)
    uniform = line_search(toy, samples, w, lam=0.1)
    weighted = line_search(toy, samples, w, lam=0.1, weights=np.full(300, 1 / 300))
    np.testing.assert_allclose(uniform.changes, weighted.changes, rtol=0, atol=1e-12)


def test_where_a_whole_unit_lowers_the_objective_the_line_search_raises_it(toy):
    """Alg. 1's whole unit at a small λ lowers the penalised objective (Jensen: the linear gain is
    only an upper bound); the searched scale raises it, for several steps of exact FW."""
    lam = 0.01
    rbm = RBM(np.zeros((D, 0)), np.zeros(D), np.zeros(0))
    rng = np.random.default_rng(0)
    whole_lowered = 0
    for _ in range(4):
        p = probabilities(rbm)
        w = solve(LinearOracle(toy, STATES, p, lam=lam), rng, restarts=3).w
        step = line_search(toy, STATES, w, lam=lam, weights=p)

        def objective(model):
            return log_likelihood(model, toy).mean() - 0.5 * lam * float(
                (model.W**2).sum() + (model.b_h**2).sum()
            )

        whole_lowered += objective(append_unit(rbm, w)) < objective(rbm)
        after = append_unit(rbm, step.scale * w)
        assert objective(after) > objective(rbm)
        assert objective(after) - objective(rbm) == pytest.approx(step.changes.max(), abs=1e-9)
        rbm = after
    assert whole_lowered >= 1  # the control: the paper's step does lower it here


def one_step(toy, **options):
    backend = get_backend("numpy", "float32")
    node = {
        "name": "frank_wolfe",
        "lam": 0.01,
        "n_samples": 2000,
        "restarts": 2,
        "bias_fit": "fixed",
        "bias_steps": 0,
        **options,
    }
    learner = LEARNERS.build(LEARNERS.parse(node))
    model = RBM(np.zeros((D, 0), np.float32), np.zeros(D, np.float32), np.zeros(0, np.float32))
    train = Batch(backend.xp.asarray(toy, dtype=np.float32))
    state = learner.init_state(model, train, backend.rng(0))
    model, state = learner.step(model, state, train, backend.rng(1))
    return model, learner.diagnostics(state)


@pytest.mark.parametrize("points", [13, 3])
def test_the_learner_appends_the_unit_scaled_by_the_searched_scale(toy, points):
    """Same seed, same oracle: line_search's unit is the whole step's unit times its scale (on the
    grid, below 1 at this λ, where the whole unit overshoots)."""
    whole, whole_metrics = one_step(toy)
    searched, metrics = one_step(toy, step="line_search", step_points=points)
    scale = metrics["fw_step_scale"]
    assert whole_metrics["fw_step_scale"] == 1.0
    assert np.isclose(scale_grid(points), scale).any() and scale < 1
    np.testing.assert_allclose(searched.W, scale * whole.W, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(searched.b_h, scale * whole.b_h, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("pool", ["two", "one"])
def test_one_chain_pool_gives_the_oracle_the_chains_the_bias_fit_left(toy, pool):
    """chain_pool=one: no oracle pool of its own; the oracle advances and reads the bias loop's
    chains (so, with no bias steps, the bias chains after a step are the oracle's sample) and its
    unit's oracle value is the one the learner recorded, on them. chain_pool=two leaves the bias
    chains alone."""
    backend = get_backend("numpy", "float32")
    node = {
        "name": "frank_wolfe",
        "lam": 0.1,
        "n_samples": 300,
        "bias_chains": 300,
        "restarts": 1,
        "bias_fit": "fixed",
        "bias_steps": 0,
        "sample_steps": 3,
        "chain_pool": pool,
    }
    learner = LEARNERS.build(LEARNERS.parse(node))
    model = RBM(np.zeros((D, 1), np.float32), np.zeros(D, np.float32), np.zeros(1, np.float32))
    model = append_unit(model, np.r_[np.full(D, 2.0), -8.0])  # a unit, so the sweeps move the chains
    train = Batch(backend.xp.asarray(toy, dtype=np.float32))
    state = learner.init_state(model, train, backend.rng(0))
    assert ("chains" in state) == (pool == "two")
    start = state["bias_chains"].copy()
    grown, after = learner.step(model, state, train, backend.rng(1))
    oracle_states = after["bias_chains"] if pool == "one" else after["chains"]
    assert (pool == "one") == (not np.array_equal(after["bias_chains"], start))
    unit = np.r_[grown.W[:, -1], grown.b_h[-1]].astype(np.float64)
    value = LinearOracle(train.inputs, oracle_states, lam=0.1)(unit)[0]
    assert value == pytest.approx(-float(after["oracle_gain"]), rel=1e-5)  # solved on these states
    assert learner.step_cost(grown, len(toy), after) > 0


def base_rate_rbm(data):
    """No units, the visible bias at the data's clipped log-odds (not zero: a shift ≠ a bias)."""
    p = data.mean(axis=0).clip(0.05, 0.95)
    return RBM(np.zeros((D, 0), np.float32), np.log(p / (1 - p)).astype(np.float32), np.zeros(0, np.float32))


@pytest.mark.parametrize("lam, points, bias_steps", [(0.1, 5, 20), (0.3, 4, 10)])
def test_the_refitted_line_search_fits_the_bias_for_every_scale_and_keeps_the_chosen_one(
    toy, monkeypatch, lam, points, bias_steps
):
    """step_bias=refit: the oracle's unit at the scale that maximises the score; the bias loop
    run once per scale from the same chains (search_bias_steps = points × K); each scale scored
    with δ_s = its fitted bias − the old bias, importance-weighted over the oracle's own samples;
    the chosen scale's fit kept (an interior scale wins at these λ); and the step's cost counts
    every candidate's bias steps and each scale's δ·v products."""
    import rbmlab.learners.frank_wolfe as fw  # noqa: PLC0415

    backend = get_backend("numpy", "float32")
    node = {
        "name": "frank_wolfe",
        "lam": lam,
        "n_samples": 2000,
        "restarts": 2,
        "bias_fit": "fixed",
        "lr": 0.2,
        "bias_steps": bias_steps,
        "bias_chains": 200,
        "step": "line_search",
        "step_points": points,
        "step_bias": "refit",
    }
    learner = LEARNERS.build(LEARNERS.parse(node))
    model, train = base_rate_rbm(toy), Batch(backend.xp.asarray(toy, dtype=np.float32))
    state = learner.init_state(model, train, backend.rng(0))
    fitted, starts, fit = {}, [], learner.fit_visible_bias

    def recorded(candidate, state, *args, **kwargs):
        starts.append(state["bias_chains"].copy())
        out = fit(candidate, state, *args, **kwargs)
        fitted[len(fitted)] = out[0].b_v.copy()
        return out

    searched = {}

    def spy(*args, **kwargs):
        searched.update(args=args, kwargs=kwargs, result=line_search(*args, **kwargs))
        return searched["result"]

    learner.fit_visible_bias = recorded
    monkeypatch.setattr(fw, "line_search", spy)
    grown, after = learner.step(model, state, train, backend.rng(1))
    grid, scale = scale_grid(points), learner.diagnostics(after)["fw_step_scale"]
    chosen = int(np.flatnonzero(np.isclose(grid, scale))[0])
    assert 0 < chosen < points - 1  # an interior scale
    assert chosen == int(np.argmax(searched["result"].changes))
    np.testing.assert_array_equal(grown.b_v, fitted[chosen])  # the chosen scale's own fit
    assert len({v.tobytes() for v in fitted.values()}) == points  # each scale its own fit
    assert all(np.array_equal(c, state["bias_chains"]) for c in starts)  # each from the same chains
    assert int(after["bias_steps"]) == bias_steps and int(after["search_bias_steps"]) == points * bias_steps
    # the score: δ_s relative to the old bias, over the oracle's samples (after["chains"])
    w = np.r_[grown.W[:, -1], grown.b_h[-1]].astype(np.float64) / scale
    again = line_search(
        train.inputs,
        after["chains"],
        w,
        lam=lam,
        points=points,
        shift=lambda s: fitted[int(np.flatnonzero(np.isclose(grid, s))[0])] - model.b_v,
    )
    np.testing.assert_allclose(searched["result"].changes, again.changes, rtol=1e-5, atol=1e-5)
    # the cost: over the held search, every other candidate's K bias steps and each scale's δ·v
    held = LEARNERS.build(LEARNERS.parse({**node, "step_bias": "held"}))
    n, s_chains, m = len(toy), after["chains"].shape[0], after["bias_chains"].shape[0]
    extra = (
        points * (s_chains + n) * D
        + (points - 1) * bias_steps * learner.sampler_cost(grown, m, 1)
        + learner.update_cost(grown, points * bias_steps)
        - learner.update_cost(grown, bias_steps)
    )
    assert learner.step_cost(grown, n, after) == pytest.approx(
        held.step_cost(grown, n, after) + extra, rel=1e-12
    )
