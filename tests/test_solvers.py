"""Every deterministic inference method (rbmlab.inference.solvers.SOLVERS) through the one shape
``solve(model, evidence, budget) -> Beliefs``, against exact answers: at zero coupling every
solver's marginals, decoded state and log Z are the unary fields' own; on trees sum-product BP
gives the enumerated marginals and log Z and the MAP solvers the enumerated MAP. Each numeric
option reaches its core at a non-default value; the yaml of each solver states its defaults; a
toy solver registered in a test is used by an evaluator (the seam)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import yaml

from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.base import Context
from rbmlab.inference import adatap, tap
from rbmlab.inference.matrix_bp import loopy_bp
from rbmlab.inference.mean_field import mean_field
from rbmlab.inference.solvers import SOLVERS
from rbmlab.inference.solvers.base import Beliefs, BinaryBipartiteSolver, SolverConfig, binary_bipartite
from rbmlab.models.base import Conditional, FactorGraphForm, TapForm, supports
from rbmlab.models.crbm import CRBM
from rbmlab.models.ising import Ising
from rbmlab.models.rbm import RBM
from rbmlab.validation import option
from tests.conftest import all_binary

CONF = Path(__file__).resolve().parent.parent / "conf" / "solver"
N_V, N_H, N_X, B = 5, 3, 4, 6


def softplus(b):
    return np.logaddexp(0.0, b).sum(axis=-1)


def build(name: str, **options):
    return SOLVERS.build(SOLVERS.parse({"name": name, **options}))


def decoupled(cls, rng):
    """A model of the kind ``cls`` runs on with every coupling zero, its evidence for B
    instances, and the unary fields (visible, hidden or None) each instance then has."""
    if supports(cls, Conditional) or cls.supports(CRBM):
        model = CRBM(
            W=np.zeros((N_V, N_H)),
            W_xv=rng.standard_normal((N_X, N_V)),
            W_xh=rng.standard_normal((N_X, N_H)),
            b_v=rng.standard_normal(N_V),
            b_h=rng.standard_normal(N_H),
        )
        x = (rng.random((B, N_X)) < 0.5).astype(float)
        return model, x, model.conditional_biases(x)
    if TapForm in cls.requires:
        model = RBM(np.zeros((N_V, N_H)), rng.standard_normal(N_V), rng.standard_normal(N_H))
        start = rng.random((B, N_V))
        return model, start, (np.broadcast_to(model.b_v, (B, N_V)), np.broadcast_to(model.b_h, (B, N_H)))
    assert FactorGraphForm in cls.requires
    model = Ising(np.zeros((N_V, N_V)), rng.standard_normal(N_V), "01")
    noise = rng.standard_normal((B, N_V))
    return model, noise, (model.h + noise, None)


@pytest.mark.parametrize("name", SOLVERS.names())
def test_at_zero_coupling_every_solver_returns_the_unary_fields_own_answer(name):
    """(To a tight tolerance: a damped iteration's stopping rule otherwise leaves it ~√tol away.)"""
    rng = np.random.default_rng(0)
    fields = SOLVERS.get(name).config_class.__dataclass_fields__
    solver = build(name, **({"tol": 1e-24} if "tol" in fields else {}))
    model, evidence, (field_v, field_h) = decoupled(type(solver), rng)
    beliefs = solver.solve(model, evidence, rng=np.random.default_rng(1))
    assert isinstance(beliefs, Beliefs)
    assert np.asarray(beliefs.converged).shape == (B,) and np.all(beliefs.converged)
    if beliefs.marginals is not None:
        np.testing.assert_allclose(beliefs.marginals[0], 1 / (1 + np.exp(-field_v)), atol=1e-7)
        np.testing.assert_allclose(beliefs.marginals[1], 1 / (1 + np.exp(-field_h)), atol=1e-7)
    if beliefs.state is not None:
        np.testing.assert_array_equal(beliefs.state, (field_v > 0).astype(float))
    if beliefs.log_z is not None:
        np.testing.assert_allclose(beliefs.log_z, softplus(field_v) + softplus(field_h), atol=1e-9)
    assert any(v is not None for v in (beliefs.marginals, beliefs.state, beliefs.log_z)), name


def tree_rbm(rng, n_v=N_V, n_h=1, instances=B):
    """A star (one hidden unit, or one visible unit), so BP is exact; per-instance visible fields
    as evidence."""
    model = RBM(1.5 * rng.standard_normal((n_v, n_h)), rng.standard_normal(n_v), rng.standard_normal(n_h))
    return model, rng.standard_normal((instances, n_v))


def enumerate_rbm(model, field):
    V, H = all_binary(model.n_visible), all_binary(model.n_hidden)
    logits = V @ model.W @ H.T + (V @ (model.b_v + field))[:, None] + (H @ model.b_h)[None, :]
    top = logits.max()
    p = np.exp(logits - top)
    return V, H, p / p.sum(), np.log(p.sum()) + top


def test_sum_product_on_a_tree_gives_the_enumerated_marginals_and_log_z():
    rng = np.random.default_rng(2)
    model, fields = tree_rbm(rng)
    beliefs = build("bp_sum", tol=1e-12, max_iter=200).solve(model, fields)
    for n, field in enumerate(fields):
        V, H, p, log_z = enumerate_rbm(model, field)
        np.testing.assert_allclose(beliefs.marginals[0][n], V.T @ p.sum(1), atol=1e-9)
        np.testing.assert_allclose(beliefs.marginals[1][n], H.T @ p.sum(0), atol=1e-9)
        assert beliefs.log_z[n] == pytest.approx(log_z, abs=1e-9)


@pytest.mark.parametrize("name, n_v, n_h", [("bp_max", N_V, 1), ("bp_mixed", 1, N_H)])
def test_max_and_mixed_product_on_a_tree_decode_the_enumerated_map(name, n_v, n_h):
    """Max-product on a tree: the joint MAP's v. Mixed-product: the marginal MAP over v, exact
    where the max nodes form a subtree (Liu & Ihler 2013): one visible unit among any hidden."""
    rng = np.random.default_rng(3)
    model, fields = tree_rbm(rng, n_v, n_h, instances=200)
    beliefs = build(name, tol=1e-12, max_iter=200).solve(model, fields)
    for n, field in enumerate(fields):
        V, _, p, _ = enumerate_rbm(model, field)
        target = p.max(axis=1) if name == "bp_max" else p.sum(axis=1)
        np.testing.assert_array_equal(beliefs.state[n], V[np.argmax(target)], err_msg=f"instance {n}")


def chain_ising(rng, n=7):
    J = np.zeros((n, n))
    for i in range(n - 1):
        J[i, i + 1] = J[i + 1, i] = 2 * rng.standard_normal()
    return Ising(J, rng.standard_normal(n), "01")


@pytest.mark.parametrize(
    "name, options", [("max_product", {"damping": 1.0, "max_iter": 50}), ("mplp", {"tol": 1e-10}), ("lp", {})]
)
def test_map_solvers_on_a_chain_find_the_enumerated_map(name, options):
    rng = np.random.default_rng(4)
    model = chain_ising(rng)
    noise = rng.standard_normal((B, model.n))
    beliefs = build(name, **options).solve(model, noise, rng=np.random.default_rng(5))
    X = all_binary(model.n)
    for n in range(B):
        scores = 0.5 * np.einsum("ai,ij,aj->a", X, model.J, X) + X @ (model.h + noise[n])
        np.testing.assert_array_equal(beliefs.state[n], X[np.argmax(scores)], err_msg=f"instance {n}")


def loopy_case(rng):
    model = CRBM(
        W=1.2 * rng.standard_normal((N_V, N_H)),
        W_xv=rng.standard_normal((N_X, N_V)),
        W_xh=rng.standard_normal((N_X, N_H)),
        b_v=rng.standard_normal(N_V),
        b_h=rng.standard_normal(N_H),
    )
    return model, (rng.random((B, N_X)) < 0.5).astype(float)


@pytest.mark.parametrize("mode", ["sum", "max", "mixed"])
def test_bp_options_reach_the_core_at_non_default_values(mode):
    model, x = loopy_case(np.random.default_rng(6))
    W, b_v, b_h = binary_bipartite(model, x)
    got = build(f"bp_{mode}", damping=0.3, tol=0.05).solve(model, x, 7)
    want = loopy_bp(W, b_v, b_h, mode=mode, max_iter=7, tol=0.05, damping=0.3)
    np.testing.assert_array_equal(got.raw.L, want.L)
    np.testing.assert_array_equal(got.converged, want.converged)
    assert got.iterations == want.iterations
    again = build(f"bp_{mode}", damping=0.3, tol=1e-5).solve(model, x, 3, init=got)  # warm start
    np.testing.assert_array_equal(
        again.raw.L, loopy_bp(W, b_v, b_h, mode=mode, max_iter=3, tol=1e-5, damping=0.3, init=want).L
    )


def test_mean_field_options_reach_the_core():
    model, x = loopy_case(np.random.default_rng(7))
    W, b_v, b_h = binary_bipartite(model, x)
    got = build("mean_field", tol=0.05, max_iter=4).solve(model, x)
    want = mean_field(W, b_v, b_h, tol=0.05, max_iter=4)
    np.testing.assert_array_equal(got.marginals[0], want.tau_v)
    np.testing.assert_array_equal(got.converged, want.converged)
    assert got.iterations == want.iterations
    capped = build("mean_field", tol=0.0, max_iter=4).solve(model, x)  # never converges: the cap
    assert capped.iterations == 4 and not np.any(capped.converged)


@pytest.mark.parametrize("name, core", [("tap", tap.solve), ("adatap", adatap.solve)])
def test_tap_options_reach_the_core(name, core):
    rng = np.random.default_rng(8)
    model = RBM(0.5 * rng.standard_normal((N_V, N_H)), rng.standard_normal(N_V), rng.standard_normal(N_H))
    start = rng.random((B, N_V))
    got = build(name, damping=0.7, tol=1e-3, max_iter=5).solve(model, start)
    want = core(model.W, *model.tap_layers(), start, damping=0.7, tol=1e-3, max_iter=5)
    np.testing.assert_array_equal(got.raw.a_v, want.a_v)
    np.testing.assert_array_equal(got.marginals[1], want.a_h)
    later = build(name, damping=0.7, tol=1e-3, max_iter=5).solve(model, None, 2, init=got)  # persistent
    np.testing.assert_array_equal(
        later.raw.a_v,
        core(model.W, *model.tap_layers(), None, damping=0.7, tol=1e-3, max_iter=2, start=want).a_v,
    )


def test_max_product_and_mplp_options_reach_their_cores():
    from rbmlab.inference.max_product import max_product
    from rbmlab.inference.mplp import mplp

    rng = np.random.default_rng(9)
    model = Ising(
        np.triu(rng.standard_normal((6, 6)), 1) + np.triu(rng.standard_normal((6, 6)), 1).T * 0,
        rng.standard_normal(6),
        "01",
    )
    model = Ising(model.J + model.J.T, model.h, "01")
    noise = rng.standard_normal((5, 6))
    graph = model.factor_graph()
    got = build("max_product", damping=0.8, max_iter=9, chunk=2).solve(model, noise)
    want = max_product(graph, graph.unary[None, :] + noise, 9, damping=0.8)
    np.testing.assert_allclose(got.raw, want.beliefs, rtol=0, atol=1e-12)  # chunks of 2 = all at once
    np.testing.assert_array_equal(got.state, (want.beliefs > 0).astype(float))
    got = build("mplp", tol=0.01).solve(model, noise, 40, rng=np.random.default_rng(1))
    want = mplp(model.J, model.h[None, :] + noise, np.random.default_rng(1), tol=0.01, max_sweeps=40)
    np.testing.assert_array_equal(got.raw.beliefs, want.beliefs)
    np.testing.assert_array_equal(got.raw.sweeps, want.sweeps)
    assert 1 <= want.sweeps.min() < want.sweeps.max() < 40  # instances stop apart: iterations is the last
    assert got.iterations == want.sweeps.max()


@pytest.mark.parametrize("name", SOLVERS.names())
def test_each_solver_has_its_yaml_with_its_defaults(name):
    config = SOLVERS.get(name).config_class()
    stated = yaml.safe_load((CONF / f"{name}.yaml").read_text())
    assert stated == {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}


def test_solvers_refuse_models_outside_their_view_in_one_line():
    with pytest.raises(RbmlabError, match=r"^learner.inference: adatap is written for Bernoulli units"):
        build("adatap").check(
            RBM(np.zeros((2, 2)), np.zeros(2), np.zeros(2), visible="spin"), "learner.inference"
        )
    with pytest.raises(RbmlabError, match=r"^evaluator.inference: written for \{0, 1\} units"):
        build("bp_sum").check(
            RBM(np.zeros((2, 2)), np.zeros(2), np.zeros(2), hidden="spin"), "evaluator.inference"
        )
    with pytest.raises(RbmlabError, match=r"^solver=tap: needs the visible states to start from"):
        build("tap").solve(RBM(np.zeros((2, 2)), np.zeros(2), np.zeros(2)))
    with pytest.raises(RbmlabError, match=r"^solver: written for \{0, 1\} units on both layers"):
        build("bp_sum").solve(RBM(np.zeros((2, 2)), np.zeros(2), np.zeros(2), visible="spin"))
    with pytest.raises(RbmlabError, match=r"^solver: a conditional model needs its inputs x"):
        build("mean_field").solve(loopy_case(np.random.default_rng(0))[0])
    assert not SOLVERS.get("bp_sum").supports(Ising) and SOLVERS.get("bp_sum").supports(RBM)


@dataclasses.dataclass
class AllOnesConfig(SolverConfig):
    name: str = option("all_ones", "solver")


class AllOnes(BinaryBipartiteSolver):
    """A toy solver: predicts every visible unit on."""

    config_class = AllOnesConfig

    def solve(self, model, evidence=None, budget=None, *, init=None, rng=None) -> Beliefs:
        _, b_v, _ = binary_bipartite(model, evidence)
        return Beliefs(None, np.ones(b_v.shape[0], dtype=bool), 0, state=np.ones_like(b_v))


def test_a_solver_registered_with_one_line_is_used_by_config(monkeypatch):
    import rbmlab.evaluators.pixel_error as pixel_error

    monkeypatch.setattr(pixel_error, "SOLVERS", SOLVERS.with_entries(all_ones="tests.test_solvers:AllOnes"))
    model, x = loopy_case(np.random.default_rng(10))
    v = (np.random.default_rng(11).random((B, N_V)) < 0.5).astype(float)
    evaluator = EVALUATORS.build(EVALUATORS.parse({"name": "pixel_error", "inference": "all_ones"}))
    evaluator.check(CRBM, {})
    out = evaluator.evaluate(
        model, {"test": Batch(x, targets=v, mask=np.ones_like(v, dtype=bool))}, Context(rng=None, final=True)
    )
    assert out["test_pixel_error"] == pytest.approx(100 * (v == 0).mean())
    with pytest.raises(RbmlabError, match=r"^evaluator.inference: unknown inference 'nope'"):
        EVALUATORS.parse({"name": "pixel_error", "inference": "nope"})


def test_naive_mean_field_solves_the_first_order_equations():
    """solver=nmf (the tap paper's Sec. IV, Plefka to first order): its fixed points satisfy
    a_v = σ(b_v + W a_h), a_h = σ(b_h + Wᵀ a_v), with no Onsager term (which moves them here by
    far more than the tolerance)."""
    rng = np.random.default_rng(12)
    model = RBM(0.8 * rng.standard_normal((N_V, N_H)), rng.standard_normal(N_V), rng.standard_normal(N_H))
    got = build("nmf", tol=1e-14, max_iter=5000).solve(model, rng.random((B, N_V)))
    a_v, a_h = got.marginals
    sigmoid = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    np.testing.assert_allclose(a_v, sigmoid(model.b_v + a_h @ model.W.T), atol=1e-6)
    np.testing.assert_allclose(a_h, sigmoid(model.b_h + a_v @ model.W), atol=1e-6)


def test_the_lp_solver_decodes_the_rounded_state_and_keeps_the_relaxation_raw():
    """solver=lp on the frustrated triangle (w = −2 on every pair, u = 1.5): the relaxation puts
    every unit at ½ (raw), and the state is its rounding, all zeros (½ → 0)."""
    model = Ising(-2.0 * (np.ones((3, 3)) - np.eye(3)), np.full(3, 1.5), "01")
    got = build("lp").solve(model, np.zeros((2, 3)))
    np.testing.assert_allclose(got.raw, 0.5, atol=1e-7)
    np.testing.assert_array_equal(got.state, 0.0)


def test_max_product_runs_the_budget_it_is_given():
    """A caller's budget (the matched inference of a learner, an evaluator's sweeps) overrides
    max_iter: 2 sweeps on a loopy model are not 50, and equal the core's 2."""
    from rbmlab.inference.max_product import max_product

    rng = np.random.default_rng(21)
    J = np.triu(rng.uniform(-2, 2, (6, 6)), 1)
    model = Ising(J + J.T, rng.uniform(-0.5, 0.5, 6), "01")
    noise = rng.standard_normal((4, 6))
    graph = model.factor_graph()
    two = build("max_product", max_iter=50).solve(model, noise, 2)
    np.testing.assert_allclose(
        two.raw, max_product(graph, graph.unary[None, :] + noise, 2).beliefs, atol=1e-12
    )
    assert not np.allclose(two.raw, build("max_product", max_iter=50).solve(model, noise).raw)
