"""TAP inference (tap paper) against exact answers: log Z by enumeration on small weakly coupled
RBMs, exactness at zero coupling, the weight gradient against finite differences of the re-solved
TAP free energy, the two binary conventions, the magnetisation form of the binary free energy,
and the trial axis."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rbmlab.inference import tap
from rbmlab.models.rbm import RBM, log_partition
from rbmlab.units import Bernoulli


def small_rbm(seed: int, std: float, m: int = 10, n: int = 8, visible="bernoulli", hidden="bernoulli"):
    rng = np.random.default_rng(seed)
    return RBM(
        rng.normal(0, std, (m, n)),
        rng.normal(0, 0.5, m),
        rng.normal(0, 0.5, n),
        visible=visible,
        hidden=hidden,
    )


def solve(rbm, x, **kw):
    visible, hidden = rbm.tap_layers()
    return tap.solve(rbm.W, visible, hidden, x, **{"tol": 1e-26, "max_iter": 5000, **kw})


def tap_log_z(rbm, x, **kw):
    visible, hidden = rbm.tap_layers()
    return tap.log_partition(rbm.W, visible, hidden, solve(rbm, x, **kw))[0]


def data(seed: int, k: int, n: int) -> np.ndarray:
    return (np.random.default_rng(seed).random((k, n)) < 0.5).astype(np.float64)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_weak_coupling_log_z_within_1e3_of_enumeration(seed):
    for std, bound in ((0.1, 1e-4), (0.2, 1e-3)):
        rbm = small_rbm(seed, std)
        assert abs(tap_log_z(rbm, data(seed, 30, 10)) - log_partition(rbm)) < bound


def test_zero_coupling_is_exact():
    rbm = small_rbm(3, 0.0).replace(W=np.zeros((10, 8)))
    exact = np.logaddexp(0, rbm.b_v).sum() + np.logaddexp(0, rbm.b_h).sum()
    assert tap_log_z(rbm, data(3, 5, 10)) == pytest.approx(exact, abs=1e-12)
    assert log_partition(rbm) == pytest.approx(exact, abs=1e-12)


@pytest.mark.parametrize("order", [2, 1])
def test_weight_gradient_matches_finite_differences_of_the_resolved_free_energy(order):
    """TAP (order 2) and naive mean field (order 1): the gradient's model term is the derivative of
    the re-solved free energy of that order."""
    rbm, x = small_rbm(4, 0.3), data(4, 1, 10)  # one solution: F is a smooth function of W
    visible, hidden = rbm.tap_layers()
    s = solve(rbm, x, order=order)
    # the model term of tap.gradient is −∂(−F)/∂W: recover it from a zero-data gradient
    grad = tap.gradient(rbm.W, visible, hidden, x, s)
    (a_x, _), _ = tap.clamped_hidden(rbm.W, hidden, x)
    model_term = {
        "W": x.T @ a_x - grad["W"],
        "b_v": x.mean(0) - grad["b_v"],
        "b_h": a_x.mean(0) - grad["b_h"],
    }
    eps = 1e-6
    for name, index in (("W", (2, 3)), ("W", (7, 0)), ("b_v", (4,)), ("b_h", (5,))):
        values = []
        for sign in (1, -1):
            p = getattr(rbm, name).copy()
            p[index] += sign * eps
            values.append(tap_log_z(rbm.replace(**{name: p}), x, order=order))
        fd = (values[0] - values[1]) / (2 * eps)
        assert model_term[name][index] == pytest.approx(fd, abs=1e-7), name


def test_binary_free_energy_equals_its_magnetisation_form():
    """Eq. 36 with Bernoulli priors = the entropy form of Gabrié et al. 2015 (derived here, not in
    the paper)."""
    rbm = small_rbm(5, 0.3)
    visible, hidden = rbm.tap_layers()
    s = solve(rbm, data(5, 6, 10))
    entropy = lambda m: -(m * np.log(m) + (1 - m) * np.log1p(-m)).sum(-1)  # noqa: E731
    neg_f = (
        entropy(s.a_v)
        + entropy(s.a_h)
        + s.a_v @ rbm.b_v
        + s.a_h @ rbm.b_h
        + np.einsum("ki,ij,kj->k", s.a_v, rbm.W, s.a_h)
        + 0.5 * np.einsum("ki,ij,kj->k", s.c_v, rbm.W**2, s.c_h)
    )
    np.testing.assert_allclose(-tap.free_energy(rbm.W, visible, hidden, s), neg_f, rtol=1e-12)


def to_spins(rbm: RBM) -> tuple[RBM, float]:
    """The ±1 RBM with x = (s + 1)/2 on both layers, and the constant: ln Z₀₁ = ln Z±₁ + const."""
    W, b, c = rbm.W, rbm.b_v, rbm.b_h
    spins = RBM(W / 4, b / 2 + W.sum(1) / 4, c / 2 + W.sum(0) / 4, visible="spin", hidden="spin")
    return spins, W.sum() / 4 + b.sum() / 2 + c.sum() / 2


def test_spin_and_binary_priors_give_the_same_tap_log_z():
    rbm = small_rbm(6, 0.4)
    spins, const = to_spins(rbm)
    x = data(6, 4, 10)
    assert log_partition(rbm) == pytest.approx(log_partition(spins) + const, abs=1e-10)
    assert tap_log_z(rbm, x) == pytest.approx(tap_log_z(spins, 2 * x - 1) + const, abs=1e-10)


def test_trial_axis_solves_each_model_as_alone():
    rbms = [small_rbm(s, 0.5) for s in (7, 8)]
    stacked = RBM(*(np.stack([getattr(r, k) for r in rbms]) for k in ("W", "b_v", "b_h")))
    x = data(7, 5, 10)
    both = solve(stacked, x, max_iter=40, tol=0.0)
    for t, rbm in enumerate(rbms):
        alone = solve(rbm, x, max_iter=40, tol=0.0)
        np.testing.assert_allclose(both.a_v[t], alone.a_v, rtol=1e-12)
        np.testing.assert_allclose(both.c_h[t], alone.c_h, rtol=1e-12)


def test_ordered_phase_has_two_solutions_counted_once_each():
    """A bipartite Curie-Weiss magnet (±1 units, W = β/n, no fields) has one TAP solution, m = 0,
    for β < 1 and two mirror images ±m for β > 1 (m = tanh(βm) at large n); data near either end
    finds each, and each is counted once."""
    rng, n = np.random.default_rng(9), 40
    x = np.repeat([1.0, -1.0], 10)[:, None] * np.where(rng.random((20, n)) < 0.1, -1.0, 1.0)
    for beta, count in ((0.5, 1), (2.0, 2)):
        rbm = RBM(np.full((n, n), beta / n), np.zeros(n), np.zeros(n), visible="spin", hidden="spin")
        s = solve(rbm, x)
        keep = tap.unique_solutions(s, 1e-2)
        assert keep.tolist() == [0, 10][:count]
        if count == 2:
            np.testing.assert_allclose(s.a_v[:10], -s.a_v[10:], atol=1e-10)
            m = s.a_v[0, 0]
            assert m == pytest.approx(np.tanh(beta * m), abs=0.02) and m > 0.9
            visible, hidden = rbm.tap_layers()
            f = tap.free_energy(rbm.W, visible, hidden, s)
            assert f[0] == pytest.approx(f[10], abs=1e-10)


def test_distinct_rows_keeps_first_of_each_group_across_chunks():
    rng = np.random.default_rng(10)
    centres = rng.random((7, 20))
    order = rng.integers(0, 7, 300)
    rows = centres[order] + 1e-5 * rng.standard_normal((300, 20))
    keep = tap.distinct_rows(rows, 1e-3, chunk=64)
    firsts = sorted(int(np.flatnonzero(order == c)[0]) for c in np.unique(order))
    assert keep.tolist() == firsts


def test_bernoulli_prior_tilt_is_a_field_shift():
    B, A = np.linspace(-40, 40, 9), np.linspace(-5, 0, 9)
    m, v = Bernoulli.moments(B, A)
    np.testing.assert_allclose(Bernoulli.log_z(B, A), np.logaddexp(0, B - A / 2), rtol=1e-14)
    np.testing.assert_allclose(m, 1 / (1 + np.exp(-(B - A / 2))), rtol=1e-12)
    np.testing.assert_allclose(v, m * (1 - m), rtol=1e-12)


def test_tap_learning_raises_the_exact_log_likelihood():
    """Alg. 2 on a small RBM (12 visible, 4 hidden; exact log-likelihood by enumeration) fitted to
    copies of three patterns with 5% of bits flipped (entropy ≈ 3.5 nats): the exact mean
    log-likelihood rises from the base rate's −7.7 to about −4.1 in 20 epochs."""
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS
    from rbmlab.models.rbm import init_rbm, log_likelihood

    rng = np.random.default_rng(11)
    patterns = (rng.random((3, 12)) < 0.5).astype(np.float64)
    x = patterns[rng.integers(0, 3, 600)]
    x = np.abs(x - (rng.random(x.shape) < 0.05))
    model = init_rbm(np, rng, 12, 4, weight_std=0.001, data_mean=x.mean(0), dtype="float64")
    learner = LEARNERS.build(
        LEARNERS.parse(
            {
                "name": "tap",
                "lr": 0.2,
                "batch_size": 50,
                "optimizer": {"name": "sgd", "momentum": 0.5, "momentum_on": "interactions"},
            }
        )
    )
    state = learner.init_state(model, Batch(x), rng)
    before = log_likelihood(model, x).mean()
    for _epoch in range(20):
        for i in range(0, 600, 50):
            model, state = learner.step(model, state, Batch(x[i : i + 50]), rng)
    after = log_likelihood(model, x).mean()
    assert before < -7.5 and after > -4.5, (before, after)


def test_converged_chains_stop_and_the_rest_go_on_alone():
    """Chains of a strongly coupled RBM converge at different iterations; solved together (the
    converged ones set aside as they finish) each ends where it ends when solved alone."""
    rbm = small_rbm(12, 1.2, m=16, n=12)
    x = data(12, 40, 16)
    together = solve(rbm, x, tol=1e-12, max_iter=3000)
    assert together.converged.all()
    for k in range(0, 40, 7):
        alone = solve(rbm, x[k : k + 1], tol=1e-12, max_iter=3000)
        np.testing.assert_allclose(together.a_v[k], alone.a_v[0], atol=1e-5)
        np.testing.assert_allclose(together.c_h[k], alone.c_h[0], atol=1e-5)
    for cap in range(12, 22):  # chains set aside on the last allowed iteration
        s = solve(small_rbm(0, 1.0, m=8, n=4), data(0, 20, 8), tol=1e-8, max_iter=cap)
        assert s.converged.shape == (20,) and s.iterations <= cap
    offset = np.random.default_rng(1).normal(size=(40, 16))  # per-row fields follow their rows
    visible, hidden = rbm.tap_layers()
    shifted = tap.solve(rbm.W, replace(visible, offset=offset), hidden, x, tol=1e-12, max_iter=3000)
    for k in (3, 30):
        alone = tap.solve(
            rbm.W, replace(visible, offset=offset[k : k + 1]), hidden, x[k : k + 1], tol=1e-12, max_iter=3000
        )
        np.testing.assert_allclose(shifted.a_v[k], alone.a_v[0], atol=1e-5)


@pytest.mark.parametrize("name", ["truncated_gaussian", "gauss_bernoulli"])
def test_real_valued_priors_through_the_general_rbm(name, tmp_path):
    """A GRBM with a real-valued visible prior: TAP is exact at W = 0 (ln Z = Σ ln Z̃_i(U_i, 0) +
    Σ softplus(c_j)), its gradient in the prior parameters is the derivative of −F at the
    re-solved fixed point, and it trains, scores and round-trips through a checkpoint."""
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS
    from rbmlab.models.grbm import GRBM, GRBMConfig
    from rbmlab.run.checkpoint import load_checkpoint, save_checkpoint
    from rbmlab.units import prior

    rng = np.random.default_rng(13)
    x = np.where(rng.random((200, 9)) < 0.4, 0.0, rng.beta(2, 3, (200, 9)))
    model = GRBM.initialize(
        GRBMConfig(n_hidden=5, visible_prior=name, weight_std=0.0),
        xp=np,
        rng=rng,
        data_mean=x.mean(0),
        dtype="float64",
        data=x,
    )
    visible, hidden = model.tap_layers()
    theta = [model.v_theta[i] for i in range(model.v_theta.shape[0])]
    exact = prior(name).log_z(model.b_v, 0.0 * model.b_v, *theta).sum() + np.logaddexp(0, model.b_h).sum()
    s = tap.solve(model.W, visible, hidden, x[:5], tol=1e-26, max_iter=500)
    assert tap.log_partition(model.W, visible, hidden, s)[0] == pytest.approx(exact, abs=1e-10)

    model = model.replace(W=rng.normal(0, 0.3, model.W.shape), b_h=rng.normal(0, 0.5, 5))
    visible, hidden = model.tap_layers()
    s = tap.solve(model.W, visible, hidden, x[:1], tol=1e-26, max_iter=5000)
    grad = tap.gradient(model.W, visible, hidden, x[:1], s)
    data_term = np.stack(prior(name).grad_log_base(x[:1], *[t[None, :] for t in theta]))[:, 0]
    eps = 1e-6
    for index in ((0, 2), (len(theta) - 1, 7)):
        values = []
        for sign in (1, -1):
            shifted = model.v_theta.copy()
            shifted[index] += sign * eps
            m = model.replace(v_theta=shifted)
            v, h = m.tap_layers()
            values.append(
                tap.log_partition(m.W, v, h, tap.solve(m.W, v, h, x[:1], tol=1e-26, max_iter=5000))[0]
            )
        model_term = data_term[index] - grad["v_theta"][index]
        assert model_term == pytest.approx((values[0] - values[1]) / (2 * eps), abs=1e-6)

    learner = LEARNERS.build(LEARNERS.parse({"name": "tap", "lr": 0.01, "batch_size": 50}))
    state = learner.init_state(model, Batch(x), rng)
    trained, state = learner.step(model, state, Batch(x[:50]), rng)
    assert set(grad) == {"W", "b_v", "b_h", "v_theta"} and np.isfinite(trained.v_theta).all()
    path = save_checkpoint(tmp_path / "m.npz", trained, meta={"epoch": 1})
    back = load_checkpoint(path)[0]
    assert back.visible == name and np.array_equal(back.v_theta, trained.v_theta)


def test_fixed_points_count_only_chains_that_converged():
    a = np.array([[0.0, 0.0], [0.5, 0.5], [0.0, 0.0], [1.0, 1.0]])
    assert tap.fixed_points(a, np.array([True, False, True, True]), 1e-2).tolist() == [0, 3]
    assert tap.fixed_points(a, np.zeros(4, dtype=bool), 1e-2).tolist() == [0, 1, 3]  # none: all


def test_fixed_points_count_every_chain_when_asked_and_refuse_another_rule():
    a = np.array([[0.0, 0.0], [0.5, 0.5], [0.0, 0.0], [1.0, 1.0]])
    done = np.array([True, False, True, True])
    assert tap.fixed_points(a, done, 1e-2, "all").tolist() == [0, 1, 3]
    assert tap.fixed_points(a, done, 0.6, "all").tolist() == [0, 3]  # 0.5 from both: merged into the first
    with pytest.raises(ValueError, match="count must be one of"):
        tap.fixed_points(a, done, 1e-2, "some")


def test_the_evaluators_count_option_keeps_the_unconverged_chains_end_states():
    """distinct (the evaluator's estimate) with count=all: the unconverged chain's state is a
    solution, its F in the mean; with the default only the converged ones."""
    from rbmlab.evaluators.tap import TapEvalConfig, distinct

    a = np.array([[0.0, 0.0], [0.5, 0.5], [1.0, 1.0]])
    f = np.array([1.0, 4.0, 2.0])
    chunks = [(a, f, np.array([True, False, True]), 7)]
    assert distinct(chunks, 3, 1e-2).free_energies.tolist() == [1.0, 2.0]
    every = distinct(chunks, 3, 1e-2, count="all")
    assert every.free_energies.tolist() == [1.0, 4.0, 2.0] and every.log_z == pytest.approx(-7 / 3)
    assert TapEvalConfig().count == "converged"


@pytest.mark.parametrize("evaluator", ["tap", "tap_dbm"])
def test_both_tap_evaluators_hand_their_count_option_to_the_counting(evaluator, monkeypatch):
    """estimate() (one over every depth) counts the solutions by config.count, with the config of
    evaluator=tap and of evaluator=tap_dbm."""
    from rbmlab.backend import get_backend
    from rbmlab.bench.core import random_rbm
    from rbmlab.evaluators import tap as module

    asked = []
    fixed_points = tap.fixed_points
    monkeypatch.setattr(
        tap,
        "fixed_points",
        lambda a, done, tol, count="converged": asked.append(count) or fixed_points(a, done, tol, count),
    )
    config_class = module.TapDBMEvalConfig if evaluator == "tap_dbm" else module.TapEvalConfig
    x = (np.random.default_rng(0).random((5, 6)) < 0.5).astype(np.float32)
    if evaluator == "tap_dbm":
        from rbmlab.models.dbm import DBM, DBMConfig

        model = DBM.initialize(
            DBMConfig(n_hidden=[4, 3], weight_std=0.1),
            xp=np,
            rng=np.random.default_rng(0),
            data_mean=x.mean(0),
            dtype="float32",
        )
    else:
        model = random_rbm(get_backend("numpy", "float32"), 6, 4)
    module.estimate(model, x, config_class(count="all"))
    assert asked == ["all"]


def test_two_bands_are_found_in_a_bimodal_sample_and_not_in_one_peak():
    from rbmlab.experiment.figures.tap_counting import MIN_SOLUTIONS, bands

    rng = np.random.default_rng(0)
    two = bands(np.concatenate([rng.normal(-300, 2, 150), rng.normal(-280, 2, 50)]))
    assert two["two"] == 1.0 and two["delta_bic"] > 10 and two["d"] > 2 and 0.2 < two["minor"] < 0.3
    one = bands(rng.normal(-300, 2, 200))
    assert one["two"] == 0.0 and one["delta_bic"] < 10
    near = bands(np.concatenate([rng.normal(-300, 2, 100), rng.normal(-297, 2, 100)]))  # D = 1.5
    assert near["two"] == 0.0
    assert np.isnan(bands(np.arange(MIN_SOLUTIONS - 1.0))["two"])


def curie_weiss_log_z(n: int, beta: float, field: float) -> float:
    """Exact ln Z of the bipartite Curie-Weiss magnet (n ±1 units a side, W = β/n, field on every
    unit): summing the hidden side out at visible magnetisation M = 2k − n,
    Z = Σ_k C(n, k) e^{field·M} (2 cosh(βM/n + field))^n."""
    from scipy.special import gammaln, logsumexp

    k = np.arange(n + 1)
    m = 2 * k - n
    log_choose = gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)
    return float(logsumexp(log_choose + field * m + n * np.log(2 * np.cosh(beta * m / n + field))))


@pytest.mark.parametrize("beta, field", [(2.0, 0.0), (1.5, 0.03)])
def test_logsumexp_combination_is_closer_to_exact_log_z_than_uniform(beta, field):
    """In the ordered phase the magnet has two TAP solutions (±m; a field makes their F differ).
    The evaluator's ``log_z_uniform`` and ``log_z_logsumexp`` are the mean and the log-sum-exp of
    −F over those solutions, computed here from them; ``log_z`` and the log-likelihoods follow
    ``combine``; against exact ln Z (enumeration, and the closed form), the uniform average sits
    low by about ln 2 and the log-sum-exp within 0.05."""
    from rbmlab.data.batch import Batch
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.evaluators.base import Context
    from rbmlab.run.evaluation import evaluate

    n = 12
    rng = np.random.default_rng(9)
    x = np.repeat([1.0, -1.0], 10)[:, None] * np.where(rng.random((20, n)) < 0.1, -1.0, 1.0)
    rbm = RBM(np.full((n, n), beta / n), np.full(n, field), np.full(n, field), visible="spin", hidden="spin")
    exact = curie_weiss_log_z(n, beta, field)
    assert exact == pytest.approx(float(log_partition(rbm)), abs=1e-10)

    s = solve(rbm, x)
    visible, hidden = rbm.tap_layers()
    neg_f = -np.asarray(tap.free_energy(rbm.W, visible, hidden, s))[tap.unique_solutions(s, 1e-2)]
    assert len(neg_f) == 2
    direct = {"uniform": neg_f.mean(), "logsumexp": np.log(np.exp(neg_f).sum())}
    assert direct["uniform"] - exact < -0.6 and abs(direct["logsumexp"] - exact) < 0.05

    context = Context(rng=np.random.default_rng(0), final=True, progress=False, train=Batch(x))
    test = Batch(x[::3])
    found = {}
    for rule in tap.COMBINE_RULES:
        cfg = {"name": "tap", "n_init": 0, "tol": 1e-26, "max_iter": 5000, "combine": rule, "progress": False}
        found[rule] = evaluate(rbm, {"test": test}, EVALUATORS.build(EVALUATORS.parse(cfg)), context)
        for r in tap.COMBINE_RULES:
            assert found[rule][f"log_z_{r}"] == pytest.approx(direct[r], abs=1e-10)
        assert found[rule]["log_z"] == pytest.approx(direct[rule], abs=1e-10)
        assert tap.log_partition(rbm.W, visible, hidden, s, 1e-2, rule)[0] == pytest.approx(
            direct[rule], abs=1e-10
        )
    shift = found["logsumexp"]["log_z"] - found["uniform"]["log_z"]
    assert found["uniform"]["test_log_likelihood"] - found["logsumexp"][
        "test_log_likelihood"
    ] == pytest.approx(shift)


def test_combination_rules_agree_on_one_solution_and_differ_by_log_k_on_k_equal_ones():
    assert tap.combine_log_z([3.0], "logsumexp") == tap.combine_log_z([3.0], "uniform") == -3.0
    assert tap.combine_log_z([3.0] * 5, "logsumexp") == pytest.approx(-3.0 + np.log(5), abs=1e-14)
    assert tap.combine_log_z([1.0, 3.0], "uniform") == -2.0
    with pytest.raises(ValueError, match="rule must be one of uniform, logsumexp"):
        tap.combine_log_z([1.0], "mean")


def test_naive_mean_field_solutions_are_the_first_order_fixed_points():
    """order=1: a_h = σ(b_h + a_v W), a_v = σ(b_v + W a_h) (no Onsager term), and the free energy
    the first-order one, −F = H(a_v) + H(a_h) + a_v·b_v + a_h·b_h + a_vᵀ W a_h (Welling and Hinton
    2002's; the tap paper's Sec. IV starting point)."""
    rbm = small_rbm(9, 0.3)
    visible, hidden = rbm.tap_layers()
    s = solve(rbm, data(9, 6, 10), order=1)
    assert s.order == 1 and s.converged.all()
    sigmoid = lambda z: 1.0 / (1.0 + np.exp(-z))  # noqa: E731
    np.testing.assert_allclose(s.a_h, sigmoid(rbm.b_h + s.a_v @ rbm.W), rtol=1e-10)
    np.testing.assert_allclose(s.a_v, sigmoid(rbm.b_v + s.a_h @ rbm.W.T), rtol=1e-10)
    entropy = lambda m: -(m * np.log(m) + (1 - m) * np.log1p(-m)).sum(-1)  # noqa: E731
    neg_f = (
        entropy(s.a_v)
        + entropy(s.a_h)
        + s.a_v @ rbm.b_v
        + s.a_h @ rbm.b_h
        + np.einsum("ki,ij,kj->k", s.a_v, rbm.W, s.a_h)
    )
    np.testing.assert_allclose(-tap.free_energy(rbm.W, visible, hidden, s), neg_f, rtol=1e-12)
    second = solve(rbm, data(9, 6, 10))
    assert np.abs(second.a_h - s.a_h).max() > 1e-4  # the Onsager term moves the fixed point


def test_naive_mean_field_is_a_learner_option_and_costs_half_a_tap_iteration():
    from rbmlab.inference.solvers import SOLVERS
    from rbmlab.learners import LEARNERS

    learner = LEARNERS.build(LEARNERS.parse({"name": "tap", "inference": "nmf"}))
    assert learner.solver.config.name == "nmf"
    assert SOLVERS.get("nmf").cost(10, 8, 5, 7, True) == 10 * 8 * (2 * 7 + 5)
    assert SOLVERS.get("tap").cost(10, 8, 5, 7, True) == 10 * 8 * (4 * 7 + 5)
    with pytest.raises(ValueError, match="order"):
        solve(small_rbm(1, 0.1), data(1, 2, 10), order=3)


@pytest.mark.parametrize("device", [False, True], ids=["host", "masked"])
@pytest.mark.parametrize("k", [3, 5, 7])
def test_the_solver_stops_at_the_first_iteration_whose_mean_square_move_is_below_tol(k, device):
    """Fig. 3's stopping rule, judged from outside: the magnetisations after 0, 1, ... iterations
    (runs capped there with a tol never met) give each iteration's mean-square move over both
    layers; with tol just above iteration k's move (and below iteration k - 1's), the solver stops
    after exactly k iterations, converged. A rule at another tolerance or one iteration off fails.
    ``masked``: arrays that stand for a device's (tests/sync_counting.py), so the solver takes the
    loop that never reads the host (rbmlab.inference.tap._masked_stack)."""
    from tests.sync_counting import counted  # noqa: PLC0415

    rbm, x = small_rbm(3, 0.5), data(4, 1, 10)
    if device:
        rbm, x = rbm.replace(W=counted(rbm.W)), counted(x)
    states = [solve(rbm, x, max_iter=t, tol=1e-300) for t in range(k + 1)]
    path = [np.concatenate([s.a_v.ravel(), s.a_h.ravel()]) for s in states]
    moves = [float(np.mean((path[t] - path[t - 1]) ** 2)) for t in range(1, k + 1)]  # iteration t's
    tol = moves[-1] * (1 + 1e-9)
    assert moves[-2] > 2 * tol and moves[-1] > tol / 2  # neighbouring rules land elsewhere
    stopped = solve(rbm, x, max_iter=100, tol=tol)
    assert int(stopped.iterations) == k and bool(np.all(stopped.converged))


@pytest.mark.parametrize("decay", [1.0, 0.8])
def test_the_step_size_decays_once_an_epoch_step_by_step(decay):
    """tap's lr_decay (Sec. VII: γ from 1e-2 down each epoch): the rate handed to the optimizer at
    each step of 3 epochs of 4 mini-batches is lr · decay^epoch, epoch counted from 0."""
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS
    from rbmlab.models.rbm import init_rbm

    rng = np.random.default_rng(2)
    x = (rng.random((40, 6)) < 0.5).astype(np.float64)
    model = init_rbm(np, rng, 6, 3, weight_std=0.01, data_mean=x.mean(0), dtype="float64")
    learner = LEARNERS.build(LEARNERS.parse({"name": "tap", "lr": 0.05, "batch_size": 10, "lr_decay": decay}))
    handed, update = [], learner.optimizer.update
    learner.optimizer.update = lambda m, g, s, rate: (handed.append(rate), update(m, g, s, rate))[1]
    state = learner.init_state(model, Batch(x), rng)
    for i in range(12):
        model, state = learner.step(model, state, Batch(x[10 * (i % 4) : 10 * (i % 4) + 10]), rng)
    assert handed == pytest.approx([0.05 * decay ** (i // 4) for i in range(12)], rel=1e-12)


@pytest.mark.parametrize("persistent", [False, True])
def test_persistent_solutions_start_the_next_steps_solve(persistent):
    """persistent=true: each step's TAP solve starts from the magnetisations the previous step
    ended at (the first from the data); false: every solve starts afresh."""
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS
    from rbmlab.models.rbm import init_rbm

    rng = np.random.default_rng(3)
    x = (rng.random((10, 6)) < 0.5).astype(np.float64)
    model = init_rbm(np, rng, 6, 3, weight_std=0.5, data_mean=x.mean(0), dtype="float64")
    learner = LEARNERS.build(LEARNERS.parse({"name": "tap", "batch_size": 10, "persistent": persistent}))
    starts, ends, solve = [], [], learner.solver.solve

    fields = ("a_v", "c_v", "a_h", "c_h")

    def recorded(model, x, init=None, **kw):
        starts.append(None if init is None else [getattr(init.raw, k).copy() for k in fields])
        out = solve(model, x, init=init, **kw)
        ends.append([getattr(out.raw, k).copy() for k in fields])
        return out

    learner.solver.solve = recorded
    state = learner.init_state(model, Batch(x), rng)
    for _ in range(3):
        model, state = learner.step(model, state, Batch(x), rng)
    assert starts[0] is None
    if persistent:
        for start, end in zip(starts[1:], ends[:-1]):
            for k, a, b in zip(fields, start, end):  # magnetisations and variances, each its own
                np.testing.assert_array_equal(a, b, err_msg=k)
    else:
        assert starts == [None, None, None]


def test_the_per_unit_likelihood_divides_by_every_unit():
    """tap Fig. 3 reports the log-likelihood per unit, over n_visible + n_hidden (here 10 + 8)."""
    from rbmlab.backend import host_rng
    from rbmlab.data.batch import Batch
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.evaluators.base import Context

    rbm, x = small_rbm(3, 0.3), data(4, 20, 10)
    evaluator = EVALUATORS.build(EVALUATORS.parse({"name": "tap", "n_init": 5}))
    metrics = evaluator.evaluate(rbm, {"test": Batch(x)}, Context(rng=host_rng(0), final=True))
    assert metrics["test_log_likelihood_per_unit"] == pytest.approx(
        metrics["test_log_likelihood"] / 18, rel=1e-12
    )
    # and its standard error is the sample standard deviation of the 20 examples' over √20
    ll = tap.clamped_log_density(rbm.W, *rbm.tap_layers(), x) - metrics["log_z"]
    assert metrics["test_log_likelihood"] == pytest.approx(ll.mean(), rel=1e-12)
    assert metrics["test_log_likelihood_se"] == pytest.approx(ll.std(ddof=1) / np.sqrt(20), rel=1e-9)


@pytest.mark.parametrize("visible_prior", ["bernoulli", "truncated_gaussian"])
def test_a_grbm_starts_its_visible_fields_at_the_priors_fit_to_the_data(visible_prior):
    """tap Alg. 2's θ⁽⁰⁾ ← X: the visible fields U^v start where the prior fitted to the training
    data puts them — the base rate's logit (Bernoulli), mean × precision per column (truncated
    Gaussian, moment matched) — written out here; hidden fields at 0."""
    from rbmlab.models.grbm import GRBM, GRBMConfig

    x = np.random.default_rng(20).beta(2.0, 5.0, (200, 6))
    data = (x > 0.3).astype(float) if visible_prior == "bernoulli" else x
    config = GRBMConfig(n_hidden=3, visible_prior=visible_prior)
    model = GRBM.initialize(
        config, xp=np, rng=np.random.default_rng(0), data_mean=data.mean(0), dtype="float64", data=data
    )
    if visible_prior == "bernoulli":
        p = np.clip(data.mean(0), 1e-3, 1 - 1e-3)
        want = np.log(p / (1 - p))
    else:
        want = data.mean(0) / np.maximum(data.var(0), 1e-2)
    np.testing.assert_allclose(model.b_v, want, rtol=1e-10)
    assert not model.b_h.any()


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_clamped_data_term_is_minus_the_free_energy(dtype):
    """Eq. 39's data term for Bernoulli units is the RBM's closed form, ln P̃(x) = x·b_v +
    Σ_j softplus((xW)_j + b_h,j) (an unnormalised base measure: no ln ½ per unit), the visible
    sum taken in float64 even for a float32 model (there the hidden softplus terms, formed in
    float32, leave ~1e-6)."""
    rng = np.random.default_rng(22)
    # visible fields of size 100: summed in float32 their 235 active terms would be off by ~1e-4
    rbm = RBM(rng.normal(0, 0.05, (784, 20)), rng.normal(0, 100.0, 784), rng.normal(0, 0.5, 20)).astype(dtype)
    x = (rng.random((5, 784)) < 0.3).astype(dtype)
    W, b_v, b_h = (np.asarray(a, np.float64) for a in (rbm.W, rbm.b_v, rbm.b_h))
    x64 = x.astype(np.float64)
    want = x64 @ b_v + np.logaddexp(0.0, x64 @ W + b_h).sum(1)
    got = tap.clamped_log_density(rbm.W, *rbm.tap_layers(), x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-9 if dtype == "float64" else 2e-5)
