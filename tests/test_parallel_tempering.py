"""Parallel tempering (rbmlab.inference.parallel_tempering) against exact answers: the swap move's
detailed balance on a 2-temperature, 3-unit model (matrix by enumeration, and the stochastic
exchange against it); the stationary distribution of PT and block Gibbs on a 5 × 3 RBM against
p(v) by enumeration (with a wrong-β control that must fail), and of PT on a Potts RBM; the ladders;
PT-PCD from the config,
its swap statistics in metrics.csv, and resume carrying the sampler state; step costs counted."""

from __future__ import annotations

import dataclasses
import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.special import logsumexp

from rbmlab.backend import get_backend
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.sampling import draw, parse_sampler, sampler_for
from rbmlab.hydra_app import validated_run_config
from rbmlab.inference import INFERENCE
from rbmlab.inference.parallel_tempering import exchange_, geometric_ladder, swap_log_ratio, swap_probability
from rbmlab.learners import LEARNERS
from rbmlab.models.rbm import RBM, energy, log_likelihood
from rbmlab.run.checkpoint import load_checkpoint
from rbmlab.run.runner import train
from rbmlab.storage.faults import InjectedFault
from tests.test_potts import brute_index, joint_log_weights, potts_rbm
from tests.test_step_cost import CountedRng, count, data, small_rbm  # noqa: F401 - count: a fixture

BACKEND = get_backend("numpy", "float64")


def pt(**options):
    return INFERENCE.build(INFERENCE.parse({"name": "parallel_tempering", **options}))


def tiny_rbm() -> RBM:
    """2 visible × 1 hidden: 8 joint states (v, h)."""
    return RBM(np.array([[1.3], [-0.7]]), np.array([0.4, -0.2]), np.array([0.5]))


def joint_states():
    return [(np.array(s[:2], float), np.array(s[2:], float)) for s in itertools.product((0, 1), repeat=3)]


# ---------------------------------------------------------------- (a) the swap move
def swap_matrix(model, betas):
    """The swap kernel on pairs of joint states (s0 at β0, s1 at β1), from the code's acceptance
    probability, and the product π of the two tempered distributions."""
    states = joint_states()
    neg_e = np.array([-energy(model, v[None], h[None])[0] for v, h in states])
    pairs = list(itertools.product(range(len(states)), repeat=2))
    index = {p: i for i, p in enumerate(pairs)}
    tempered = [np.exp(b * neg_e) / np.exp(b * neg_e).sum() for b in betas]
    pi = np.array([tempered[0][a] * tempered[1][b] for a, b in pairs])
    T = np.zeros((len(pairs), len(pairs)))
    for (a, b), i in index.items():
        accept = swap_probability(betas[0], betas[1], neg_e[a], neg_e[b])
        T[i, index[(b, a)]] += accept
        T[i, i] += 1.0 - accept
    return pairs, neg_e, pi, T


def test_the_swap_move_satisfies_detailed_balance():
    pairs, neg_e, pi, T = swap_matrix(tiny_rbm(), (1.0, 0.35))
    flow = pi[:, None] * T
    np.testing.assert_allclose(flow, flow.T, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(T.sum(axis=1), 1.0)
    off = T[~np.eye(len(pairs), dtype=bool)]
    assert np.any((off > 0.05) & (off < 0.95))  # some swaps accepted only sometimes
    # the control: the ratio with its sign flipped does not balance
    wrong = np.exp(np.minimum(-swap_log_ratio(1.0, 0.35, neg_e[:, None], neg_e[None, :]), 0.0))
    assert not np.allclose(pi.reshape(8, 8) * wrong, (pi.reshape(8, 8) * wrong).T)


def test_the_stochastic_exchange_follows_the_swap_matrix():
    """Every pair of joint states, 4000 chains each: the fraction exchanged by exchange_ equals
    the matrix's off-diagonal entry within 4.5 binomial standard errors."""
    model, betas, n = tiny_rbm(), np.array([1.0, 0.35]), 4000
    pairs, neg_e, _, T = swap_matrix(model, betas)
    states = joint_states()
    v = np.stack(
        [np.repeat([states[a][0] for a, b in pairs], n, 0), np.repeat([states[b][0] for a, b in pairs], n, 0)]
    )
    h = np.stack(
        [np.repeat([states[a][1] for a, b in pairs], n, 0), np.repeat([states[b][1] for a, b in pairs], n, 0)]
    )
    before = v.copy()
    e = np.stack([np.repeat([neg_e[a] for a, b in pairs], n), np.repeat([neg_e[b] for a, b in pairs], n)])
    p = exchange_((v, h), e, betas, 0, BACKEND.rng(3))
    swapped = (
        np.all(v[0] == before[1], axis=-1)
        & np.all(v[1] == before[0], axis=-1)
        & ~np.all(before[0] == before[1], axis=-1)
    )
    want = np.array([T[i, pairs.index((b, a))] for i, (a, b) in enumerate(pairs)])
    np.testing.assert_allclose(p[0].reshape(len(pairs), n)[:, 0], want, rtol=1e-12)
    distinct = np.array([not np.array_equal(states[a][0], states[b][0]) for a, b in pairs])
    got = swapped.reshape(len(pairs), n).mean(axis=1)[distinct]
    se = np.sqrt(want[distinct] * (1 - want[distinct]) / n) + 1e-9
    assert np.all(np.abs(got - want[distinct]) <= 4.5 * se), np.max(np.abs(got - want[distinct]) / se)
    assert exchange_((v, h), e, betas, 1, BACKEND.rng(3)) is None  # R = 2: no odd pair


# ---------------------------------------------------------------- (b) stationary distribution
CHAINS, STEPS = 10_000, 30


def small(visible: str = "bernoulli") -> RBM:
    rng = np.random.default_rng(4)
    return RBM(
        1.2 * rng.standard_normal((5, 3)),
        0.5 * rng.standard_normal(5),
        0.5 * rng.standard_normal(3),
        visible=visible,
    )


def tv_to_exact(model, v) -> float:
    states = model.visible_units.states(np, 5, 0, 32, np.float64)
    p = np.exp(log_likelihood(model, states))
    codes = ((v == model.visible_units.values[1]).astype(int) << np.arange(5)).sum(axis=1)
    q = np.bincount(codes, minlength=32) / len(codes)
    return 0.5 * np.abs(p - q).sum()


def sampling_bound(model) -> float:
    states = model.visible_units.states(np, 5, 0, 32, np.float64)
    return tv_bound(np.exp(log_likelihood(model, states)))


def tv_bound(p) -> float:
    """The 99.9th percentile of the TV of CHAINS exact draws (multinomial) from p, times 1.2."""
    draws = np.random.default_rng(0).multinomial(CHAINS, p / p.sum(), size=2000) / CHAINS
    return 1.2 * float(np.quantile(0.5 * np.abs(draws - p).sum(axis=1), 0.999))


def start(model) -> np.ndarray:
    return model.visible_units.uniform_states(BACKEND.rng(9), (CHAINS, 5), np.float64)


@pytest.mark.parametrize("visible", ["bernoulli", "spin"])
def test_pt_and_gibbs_sample_the_enumerated_distribution(visible):
    model = small(visible)
    bound = sampling_bound(model)
    gibbs = INFERENCE.build(INFERENCE.parse("block_gibbs")).run(model, start(model), BACKEND.rng(1), STEPS)
    sampler = pt(n_temperatures=4, beta_min=0.2)
    tempered = sampler.run(model, start(model), BACKEND.rng(2), STEPS)
    assert tv_to_exact(model, gibbs) < bound
    assert tv_to_exact(model, tempered) < bound
    # the control: the β = 1 replica run at β = 0.8 samples another distribution, and the test sees it
    state = sampler.init_state(model, start(model), BACKEND.rng(0))
    state["betas"] = np.array([0.8, 0.5, 0.3, 0.2])
    wrong, _ = sampler.run(model, start(model), BACKEND.rng(2), STEPS, state=state)
    assert tv_to_exact(model, wrong) > 2 * bound


def test_pt_samples_a_potts_rbm_through_its_unit_types():
    """Categorical visible units (3 units of q = 3: 27 states, one-hot columns): PT's conditionals
    and energies are the unit type's, its stationary p(v) the enumerated one."""
    model = potts_rbm(BACKEND, 3, 3, scale=0.8, seed=7)
    _, _, log_w = joint_log_weights(model)
    p = np.exp(logsumexp(log_w, axis=1) - logsumexp(log_w))
    x = model.visible_units.uniform_states(BACKEND.rng(8), (CHAINS, model.n_visible), model.dtype)
    v = pt(n_temperatures=3, beta_min=0.3).run(model, x, BACKEND.rng(9), STEPS)
    assert np.all(v.reshape(CHAINS, 3, 3).sum(axis=-1) == 1)
    q = np.bincount(brute_index(v), minlength=27) / CHAINS
    assert 0.5 * np.abs(q - p).sum() < tv_bound(p)


# ---------------------------------------------------------------- (c) ladders
def test_the_geometric_ladder_is_exact_at_a_non_default_beta_min():
    sampler = pt(n_temperatures=5, beta_min=0.3)
    want = np.array([1.0, 0.3**0.25, 0.3**0.5, 0.3**0.75, 0.3])
    np.testing.assert_allclose(geometric_ladder(5, 0.3), want, rtol=1e-15)
    state = sampler.init_state(small(), start(small())[:10], BACKEND.rng(0))
    _, state = sampler.run(small(), start(small())[:10], BACKEND.rng(0), 20, state=state)
    np.testing.assert_allclose(state["betas"], want, rtol=1e-15)  # a fixed ladder stays put
    assert int(state["steps"]) == 20 and state["replicas"].shape == (4, 10, 5)


def test_the_adaptive_ladder_moves_the_swap_rates_to_a_non_default_target():
    model, x, target = small(), start(small())[:200], 0.75
    rates = {}
    for ladder in ("geometric", "adaptive"):
        aim = {"target_swap_rate": target} if ladder == "adaptive" else {}  # a fixed ladder aims at nothing
        sampler = pt(n_temperatures=4, beta_min=0.02, ladder=ladder, **aim)
        state = sampler.init_state(model, x, BACKEND.rng(0))
        _, state = sampler.run(model, x, BACKEND.rng(1), 1500, state=state)
        rates[ladder], betas = state["swap_rate"], state["betas"]
    assert np.abs(rates["geometric"] - target).max() > 0.15  # the start is far from the target
    assert np.abs(rates["adaptive"] - target).max() < 0.05, rates["adaptive"]
    assert betas[0] == 1.0 and np.all(np.diff(betas) < 0) and betas[-1] > 0.2  # narrowed


def test_an_unreachable_target_keeps_the_ladder_finite():
    """A small model swaps easily even with β → 0: a low target pushes the gaps to their bound."""
    sampler = pt(n_temperatures=4, ladder="adaptive", target_swap_rate=0.05)
    state = sampler.init_state(small(), start(small())[:50], BACKEND.rng(0))
    _, state = sampler.run(small(), start(small())[:50], BACKEND.rng(1), 300, state=state)
    assert np.all(state["betas"] > 0) and np.all(np.diff(state["betas"]) < 0)
    assert np.all(np.isfinite(state["swap_rate"]))
    assert state["betas"][-1] == pytest.approx(0.1, rel=1e-9)  # widened to the floor beta_min, no further
    floor = pt(n_temperatures=4, ladder="adaptive", target_swap_rate=0.05, beta_min=0.4)
    state = floor.init_state(small(), start(small())[:50], BACKEND.rng(0))
    _, state = floor.run(small(), start(small())[:50], BACKEND.rng(1), 300, state=state)
    assert state["betas"][-1] == pytest.approx(0.4, rel=1e-9)  # at a non-default floor too


def test_options_are_checked_at_the_edge():
    for node, key in (
        ({"n_temperatures": 1}, "n_temperatures"),
        ({"beta_min": 1.0}, "beta_min"),
        ({"ladder": "linear"}, "ladder"),
        ({"target_swap_rate": 0}, "target_swap_rate"),
        ({"target_swap_rate": 0.5}, "target_swap_rate"),  # under the geometric ladder: unread, refused
        ({"adapt_rate": 2.0}, "adapt_rate"),
    ):
        with pytest.raises(RbmlabError, match=rf"^learner.sampler.{key}: "):
            INFERENCE.parse({"name": "parallel_tempering", **node}, "learner.sampler")


# ---------------------------------------------------------------- (d) PT-PCD
RUN = [
    "dataset=bars_stripes",
    "model.n_hidden=4",
    "evaluator=exact",
    "learner=pcd",
    "learner.batch_size=8",
    "+learner/sampler=parallel_tempering",
    "learner.sampler.n_temperatures=3",
    "learner.sampler.ladder=adaptive",
    "train.progress=false",
    "train.epochs=4",
    "train.checkpoint_every=1",
    "seed=3",
]


def run(out, *overrides) -> pd.DataFrame:
    train(validated_run_config([*RUN, *overrides]), out, echo=lambda s: None)
    return pd.read_csv(out / "metrics.csv")


def test_pt_pcd_records_swap_statistics_and_resumes_with_its_sampler_state(tmp_path, monkeypatch):
    straight = run(tmp_path / "straight")
    assert {"swap_rate_min", "swap_rate_mean", "beta_min"} <= set(straight.columns)
    assert straight["swap_rate_mean"].iloc[-1] > 0 and straight["beta_min"].iloc[-1] != 0.1  # adapted
    _, _, state = load_checkpoint(tmp_path / "straight" / "checkpoint.npz")
    assert state["sampler.replicas"].shape == (2, *state["chains"].shape)
    assert state["sampler.betas"].shape == (3,) and int(state["sampler.steps"]) > 0
    monkeypatch.setenv("RBMLAB_FAULT", "raise_after_epoch:2")
    with pytest.raises(InjectedFault):
        run(tmp_path / "stopped")
    monkeypatch.delenv("RBMLAB_FAULT")
    resumed = run(tmp_path / "stopped", "resume=true")
    pd.testing.assert_frame_equal(resumed.drop(columns="wall_time"), straight.drop(columns="wall_time"))


def test_pt_pcd_is_selected_by_name_from_the_config():
    config = validated_run_config(["learner=pcd", "learner.sampler=parallel_tempering"])
    assert config.learner.sampler.name == "parallel_tempering" and config.learner.sampler.n_temperatures == 10


# ---------------------------------------------------------------- (e) step cost
def test_the_sampler_cost_is_the_counted_products(count):  # noqa: F811 - the imported fixture
    sampler, model, x = pt(n_temperatures=4), small_rbm(), data(5).inputs
    _, counted = count(sampler.run, model, x, CountedRng(BACKEND.rng(1)), 3)
    assert sampler.step_cost(model, 5, 3) == counted == 4 * 5 * 12 * 7 * 2 * 3


@pytest.mark.parametrize("options", [{"n_temperatures": 3}, {"n_temperatures": 5, "ladder": "adaptive"}])
def test_pt_pcd_cost_is_the_counted_products(count, options):  # noqa: F811 - the imported fixture
    learner = LEARNERS.build(
        LEARNERS.parse(
            {"name": "pcd", "k": 2, "n_chains": 6, "sampler": {"name": "parallel_tempering", **options}},
            "learner",
        )
    )
    model, batch = small_rbm(), data(5)
    state = learner.init_state(model, batch, CountedRng(BACKEND.rng(0)))
    (model, state), counted = count(learner.step, model, state, batch, CountedRng(BACKEND.rng(1)))
    assert learner.step_cost(model, 5, state) == pytest.approx(counted, rel=1e-12)
    assert counted > options["n_temperatures"] * 6 * 12 * 7 * 2 * 2  # the replicas' sweeps are in it


def test_the_sampling_evaluators_draw_with_pt():
    """evaluator.sampler=parallel_tempering (mmd, kl): draws from uniform starts, no state kept."""
    sampler = sampler_for(parse_sampler({"name": "parallel_tempering", "n_temperatures": 3}), RBM, "mmd")
    model = small("spin")
    drawn = draw(model, sampler, 4000, 20, 2000, BACKEND.rng(4))
    assert drawn.shape == (4000, 5) and set(np.unique(drawn)) == {-1.0, 1.0}
    assert tv_to_exact(model, drawn) < 0.05


def test_the_yaml_states_the_defaults():
    path = Path(__file__).resolve().parent.parent / "conf" / "learner" / "sampler" / "parallel_tempering.yaml"
    config = INFERENCE.get("parallel_tempering").config_class()
    assert yaml.safe_load(path.read_text()) == {
        f.name: getattr(config, f.name) for f in dataclasses.fields(config)
    }


# ---------------------------------------------------------------- (c) dynamics: it moves between modes
def bimodal() -> RBM:
    """8 visible units and 1 hidden: two equally likely modes, every visible unit off (h = 0) or on
    (h = 1); b_h = -24 balances them exactly (log(1 + e^3) - log(1 + e^-3) = 3 a unit). A Gibbs
    sweep leaves the off mode with probability about 1e-4 (four or more of eight units at
    σ(-3) = 0.047 turning on together)."""
    return RBM(np.full((8, 1), 6.0), np.full(8, -3.0), np.array([-24.0]))


def test_tempering_carries_chains_between_modes_where_gibbs_stays():
    """Judged by its dynamics, not only its stationary law (Gibbs has the same one): from the off
    mode, 200 steps leave about half of 400 chains in the on mode under PT, under 10 % under
    block Gibbs. A PT whose exchanges moved v but not h (the next v is drawn from h) is Gibbs at
    β = 1 and fails here; its stationary-law tests would pass."""
    model, start_states = bimodal(), np.zeros((400, 8))
    gibbs = INFERENCE.build(INFERENCE.parse("block_gibbs")).run(
        model, start_states.copy(), BACKEND.rng(1), 200
    )
    tempered = pt(n_temperatures=8, beta_min=0.1).run(model, start_states.copy(), BACKEND.rng(2), 200)
    on = lambda v: float((v.mean(axis=1) > 0.5).mean())  # noqa: E731
    assert on(gibbs) < 0.1
    assert 0.35 < on(tempered) < 0.65  # 0.5 ± 6 binomial standard errors of 400 chains
