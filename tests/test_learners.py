"""Learner numerics against exact answers: gradients by finite differences and enumeration."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import all_binary, random_rbm

from rbmlab.backend import get_backend
from rbmlab.data.batch import Batch
from rbmlab.inference.block_gibbs import gibbs_chain
from rbmlab.learners.base import difference
from rbmlab.learners.cd import CD, CDConfig
from rbmlab.learners.pcd import PCD, PCDConfig
from rbmlab.models.rbm import RBM, energy, free_energy


def test_free_energy_matches_summing_out_hidden(backend):
    rbm = random_rbm(backend, 5, 4)
    xp = backend.xp
    v = backend.asarray(all_binary(5))
    h = backend.asarray(all_binary(4))
    # F(v) = -log Σ_h exp(-E(v, h)) by explicit enumeration of h
    e = xp.stack([energy(rbm, v, xp.broadcast_to(hh, (v.shape[0], 4))) for hh in h], axis=1)
    brute = -xp.log(xp.exp(-e).sum(axis=1))
    np.testing.assert_allclose(backend.to_numpy(free_energy(rbm, v)), backend.to_numpy(brute), rtol=1e-10)


def test_positive_statistics_are_the_gradient_of_minus_free_energy(backend):
    """∂/∂θ mean(−F(v)) = (vᵀp/B, mean v, mean p): central finite differences on every parameter."""
    rbm = random_rbm(backend, 4, 3, seed=1)
    v = backend.asarray(np.random.default_rng(2).integers(0, 2, (7, 4)).astype(float))
    stats = rbm.statistics(v)
    eps = 1e-6
    for name in ("W", "b_v", "b_h"):
        base = backend.to_numpy(getattr(rbm, name))
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            plus, minus = base.copy(), base.copy()
            plus[idx] += eps
            minus[idx] -= eps
            f = [
                float(-free_energy(rbm.replace(**{name: backend.asarray(p)}), v).mean())
                for p in (plus, minus)
            ]
            numeric[idx] = (f[0] - f[1]) / (2 * eps)
        np.testing.assert_allclose(backend.to_numpy(stats[name]), numeric, atol=1e-7)


def test_gibbs_chain_samples_the_model_distribution(backend):
    """Long block-Gibbs chains: empirical p(v) within 0.03 total variation of exact p(v)."""
    rbm = random_rbm(backend, 4, 3, scale=0.8, seed=3)
    states = all_binary(4)
    logp = -backend.to_numpy(free_energy(rbm, backend.asarray(states)))
    p_exact = np.exp(logp - np.logaddexp.reduce(logp))
    v = backend.xp.zeros((20000, 4))
    v = backend.to_numpy(gibbs_chain(rbm, v, backend.rng(0), 50))
    counts = np.bincount((v @ (2 ** np.arange(4))).astype(int), minlength=16) / len(v)
    assert 0.5 * np.abs(counts - p_exact).sum() < 0.03


def test_cd_step_is_positive_minus_negative_statistics(backend):
    """One CD-k step equals θ + lr (stats(data) − stats(chain end)) with the same random stream."""
    rbm = random_rbm(backend, 6, 3, scale=0.1, seed=4)
    v = backend.asarray(np.random.default_rng(5).integers(0, 2, (8, 6)).astype(float))
    learner = CD(CDConfig(lr=0.1, k=3, batch_size=8))
    new, _ = learner.step(rbm, {}, Batch(v), backend.rng(7))
    vk = gibbs_chain(rbm, v, backend.rng(7), 3)
    grad = difference(rbm.statistics(v), rbm.statistics(vk))
    np.testing.assert_allclose(backend.to_numpy(new.W), backend.to_numpy(rbm.W + 0.1 * grad["W"]))
    np.testing.assert_allclose(backend.to_numpy(new.b_h), backend.to_numpy(rbm.b_h + 0.1 * grad["b_h"]))


def test_pcd_negative_phase_approaches_the_exact_model_expectation(backend):
    """With many persistent chains the negative statistics ≈ E_model[v pᵀ] from enumeration."""
    rbm = random_rbm(backend, 4, 3, scale=0.5, seed=8)
    states = all_binary(4)
    logp = -backend.to_numpy(free_energy(rbm, backend.asarray(states)))
    p = np.exp(logp - np.logaddexp.reduce(logp))
    p_h = 1 / (1 + np.exp(-(states @ backend.to_numpy(rbm.W) + backend.to_numpy(rbm.b_h))))
    exact_W = (states * p[:, None]).T @ p_h  # Σ_v p(v) v σ(vW + b_h)ᵀ
    learner = PCD(PCDConfig(lr=1e-12, k=30, batch_size=4, n_chains=20000))
    data = Batch(backend.asarray(states))
    state = learner.init_state(rbm, data, backend.rng(0))
    _, state = learner.step(rbm, state, data, backend.rng(1))
    negative = rbm.statistics(state["chains"])
    np.testing.assert_allclose(backend.to_numpy(negative["W"]), exact_W, atol=0.02)


def test_momentum_and_weight_decay_follow_their_formulas(backend):
    rbm = random_rbm(backend, 5, 2, scale=0.1, seed=9)
    v = backend.asarray(np.random.default_rng(1).integers(0, 2, (4, 5)).astype(float))
    cfg = CDConfig(
        lr=0.1, k=1, batch_size=4, optimizer={"name": "sgd", "momentum": 0.5, "weight_decay": 0.01}
    )
    learner = CD(cfg)
    r1, s1 = learner.step(rbm, {}, Batch(v), backend.rng(2))
    g1 = difference(rbm.statistics(v), rbm.statistics(gibbs_chain(rbm, v, backend.rng(2), 1)))
    u1 = g1["W"] - 0.01 * rbm.W
    np.testing.assert_allclose(backend.to_numpy(r1.W), backend.to_numpy(rbm.W + 0.1 * u1), atol=1e-12)
    r2, _ = learner.step(r1, s1, Batch(v), backend.rng(3))
    g2 = difference(r1.statistics(v), r1.statistics(gibbs_chain(r1, v, backend.rng(3), 1)))
    u2 = 0.5 * u1 + g2["W"] - 0.01 * r1.W
    np.testing.assert_allclose(backend.to_numpy(r2.W), backend.to_numpy(r1.W + 0.1 * u2), atol=1e-12)


def test_adam_follows_kingma_and_ba_step_by_step(backend):
    """Four Adam steps (Kingma & Ba 2015, Alg. 1, as ascent) on a varying gradient at non-default
    β1, β2, ε: m, v, the bias corrections 1 − β^t with t = 1 … 4 and the step lr·m̂/(√v̂ + ε)
    written out here; W at a non-default interaction_lr_scale."""
    from rbmlab.optimizers import OPTIMIZERS

    rbm = random_rbm(backend, 5, 2, scale=0.1, seed=9)
    options = {"name": "adam", "beta1": 0.8, "beta2": 0.95, "eps": 1e-3, "interaction_lr_scale": 2.0}
    adam, state, model = OPTIMIZERS.build(OPTIMIZERS.parse(options)), {}, rbm
    rng = np.random.default_rng(4)
    m = {k: 0.0 for k in ("W", "b_v", "b_h")}
    v, want = dict(m), {k: backend.to_numpy(getattr(rbm, k)) for k in m}
    for t in range(1, 5):
        grad = {k: rng.standard_normal(want[k].shape) * t for k in m}
        model, state = adam.update(model, {k: backend.asarray(g) for k, g in grad.items()}, state, 0.1)
        for k, g in grad.items():
            m[k] = 0.8 * m[k] + 0.2 * g
            v[k] = 0.95 * v[k] + 0.05 * g * g
            rate = 0.1 * (2.0 if k == "W" else 1.0)
            want[k] = want[k] + rate * (m[k] / (1 - 0.8**t)) / (np.sqrt(v[k] / (1 - 0.95**t)) + 1e-3)
            np.testing.assert_allclose(backend.to_numpy(getattr(model, k)), want[k], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_the_l1_penalty_moves_interactions_against_their_sign(backend, optimizer):
    """g − l1 · sign(W) on W only (the biases keep their plain gradient); with Adam the first
    step is lr · sign of that direction."""
    rbm = random_rbm(backend, 5, 2, scale=0.1, seed=9)
    v = backend.asarray(np.random.default_rng(1).integers(0, 2, (4, 5)).astype(float))
    learner = CD(CDConfig(lr=0.1, k=1, batch_size=4, optimizer={"name": optimizer, "l1": 0.3}))
    new, _ = learner.step(rbm, {}, Batch(v), backend.rng(2))
    g = difference(rbm.statistics(v), rbm.statistics(gibbs_chain(rbm, v, backend.rng(2), 1)))
    direction = {"W": g["W"] - 0.3 * np.sign(rbm.W), "b_v": g["b_v"], "b_h": g["b_h"]}
    for name, d in direction.items():
        step = 0.1 * (d if optimizer == "sgd" else np.sign(d))
        np.testing.assert_allclose(
            backend.to_numpy(getattr(new, name)), backend.to_numpy(getattr(rbm, name) + step), atol=1e-6
        )


def test_adam_steps_the_interactions_at_a_multiple_of_lr(backend):
    """interaction_lr_scale: W moves scale times as far as with scale 1, the biases as far (pmp:
    Adam on the paper's W = J/2 at lr is 2 lr on J and lr on the fields)."""
    rbm = random_rbm(backend, 5, 2, scale=0.1, seed=9)
    v = backend.asarray(np.random.default_rng(1).integers(0, 2, (4, 5)).astype(float))

    def step(scale):
        learner = CD(
            CDConfig(lr=0.1, k=1, batch_size=4, optimizer={"name": "adam", "interaction_lr_scale": scale})
        )
        return learner.step(rbm, {}, Batch(v), backend.rng(2))[0]

    plain, scaled = step(1.0), step(2.0)
    for name, factor in (("W", 2.0), ("b_v", 1.0), ("b_h", 1.0)):
        moved = backend.to_numpy(getattr(plain, name) - getattr(rbm, name))
        assert np.abs(moved).max() > 0.05  # a first Adam step: about lr per parameter
        np.testing.assert_allclose(
            backend.to_numpy(getattr(scaled, name) - getattr(rbm, name)), factor * moved, atol=1e-7
        )


@pytest.mark.parametrize(
    "bad, key",
    [
        ({"k": 0}, "k"),
        ({"lr": -1.0}, "lr"),
        ({"batch_size": 0}, "batch_size"),
        ({"optimizer": {"name": "sgd", "momentum": 1.0}}, "optimizer.momentum"),
    ],
)
def test_learner_config_rejects_bad_values(bad, key):
    """Made in code, a config names the bad key; parsed as the learner group, ``learner.<key>``.
    Either way the error is one line."""
    from rbmlab.errors import RbmlabError
    from rbmlab.learners import LEARNERS

    with pytest.raises(RbmlabError) as e:
        CDConfig(**bad)
    assert str(e.value).startswith(f"{key}: ") and "\n" not in str(e.value)
    with pytest.raises(RbmlabError) as e:
        LEARNERS.parse({"name": "cd", **bad})
    assert str(e.value).startswith(f"learner.{key}: ") and "\n" not in str(e.value)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bernoulli_from_logits_has_the_sigmoid_frequencies(dtype):
    """P(1) = σ(x) over a grid of logits, extremes included, with no overflow warning."""
    import warnings

    from rbmlab.backend import get_backend
    from rbmlab.backend.ops import bernoulli_logits_

    backend = get_backend("numpy", dtype)
    logits = np.array([-200.0, -5.0, -1.0, 0.0, 0.5, 3.0, 200.0])
    x = backend.asarray(np.repeat(logits[None, :], 200_000, axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sample = bernoulli_logits_(x, backend.rng(0))
    assert set(np.unique(sample)) <= {0.0, 1.0}
    freq = sample.mean(axis=0)
    p = 1 / (1 + np.exp(-logits))
    assert np.all(np.abs(freq - p) <= 4 * np.sqrt(p * (1 - p) / 200_000) + 1e-12), (freq, p)


@pytest.mark.parametrize("persistent", [False, True])
def test_the_fused_contrastive_gradient_is_the_plain_one(persistent):
    """One hidden product for data and chains and one W product for both phases: the same
    gradient and chain end as statistics(x) − statistics(gibbs_chain(...)) from the same stream."""
    backend = get_backend("numpy", "float64")
    rng = np.random.default_rng(0)
    rbm = RBM(0.5 * rng.standard_normal((12, 7)), 0.1 * rng.standard_normal(12), 0.1 * rng.standard_normal(7))
    x = (rng.random((9, 12)) < 0.4).astype(np.float64)
    start = (rng.random((5, 12)) < 0.6).astype(np.float64) if persistent else x
    grad, end = CD(CDConfig(k=3)).contrastive_gradient(rbm, x, start, backend.rng(4), 3)
    plain_end = gibbs_chain(rbm, start, backend.rng(4), 3)
    plain = difference(rbm.statistics(x), rbm.statistics(plain_end))
    np.testing.assert_array_equal(end, plain_end)
    for name in plain:
        np.testing.assert_allclose(grad[name], plain[name], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("momentum", [0.0, 0.5])
def test_sgd_turns_a_handed_over_gradient_into_the_parameters_and_keeps_velocities(momentum):
    """Without momentum the gradient's arrays become the new parameters in place (no (m, n)
    temporary); with momentum the gradient is read, never written (it seeds the velocity)."""
    from rbmlab.optimizers.sgd import SGD, SGDConfig

    rng = np.random.default_rng(0)
    rbm = RBM(rng.standard_normal((5, 3)), rng.standard_normal(5), rng.standard_normal(3))
    grad = {"W": rng.standard_normal((5, 3)), "b_v": rng.standard_normal(5), "b_h": rng.standard_normal(3)}
    before = {k: v.copy() for k, v in grad.items()}
    new, state = SGD(SGDConfig(momentum=momentum)).update(rbm, grad, {}, 0.1)
    for name in grad:
        np.testing.assert_allclose(getattr(new, name), getattr(rbm, name) + 0.1 * before[name], rtol=1e-15)
    if momentum:
        assert all(np.array_equal(grad[k], before[k]) for k in grad)
        np.testing.assert_array_equal(state["velocity_W"], before["W"])
    else:
        assert new.W is grad["W"]


@pytest.mark.parametrize("units", ["bernoulli", "spin"])
@pytest.mark.parametrize("name", ["cd", "pcd", "sdcp"])
def test_the_contrastive_learners_train_a_binary_prior_general_rbm_as_the_plain_rbm(name, units):
    """tap's general RBM (Eq. 9) with a binary visible prior is an RBM: from the same parameters
    and random streams, five steps of CD, PCD and S-DCP give it exactly the plain RBM's
    parameters (the shared maths: rbmlab.models.rbm.BinaryLayers)."""
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS
    from rbmlab.models.grbm import GRBM
    from rbmlab.models.rbm import RBM

    rng = np.random.default_rng(0)
    W, b_v, b_h = 0.3 * rng.standard_normal((6, 4)), rng.standard_normal(6), rng.standard_normal(4)
    x = (rng.random((20, 6)) < 0.5).astype(np.float64)
    if units == "spin":
        x = 2 * x - 1
    trained = []
    for model in (RBM(W, b_v, b_h, visible=units), GRBM(W, b_v, b_h, np.zeros((0, 6)), visible=units)):
        learner = LEARNERS.build(LEARNERS.parse({"name": name, "lr": 0.1, "batch_size": 10}))
        learner.check(type(model))
        state, draws = learner.init_state(model, Batch(x), np.random.default_rng(1)), np.random.default_rng(2)
        for i in range(5):
            model, state = learner.step(model, state, Batch(x[10 * (i % 2) : 10 * (i % 2) + 10]), draws)
        trained.append(model)
    rbm, grbm = trained
    assert isinstance(grbm, GRBM) and grbm.v_theta.shape == (0, 6)
    assert not np.array_equal(rbm.W, W)
    for key in ("W", "b_v", "b_h"):
        np.testing.assert_array_equal(getattr(grbm, key), getattr(rbm, key))


def test_a_real_valued_prior_general_rbm_refuses_block_gibbs_in_one_line():
    from rbmlab.data.batch import Batch
    from rbmlab.errors import RbmlabError
    from rbmlab.learners import LEARNERS
    from rbmlab.models.grbm import GRBM

    rng = np.random.default_rng(3)
    model = GRBM(
        0.1 * rng.standard_normal((5, 3)),
        np.zeros(5),
        np.zeros(3),
        np.ones((1, 5)),
        visible="truncated_gaussian",
    )
    learner = LEARNERS.build(LEARNERS.parse({"name": "cd", "lr": 0.1, "batch_size": 4}))
    x = rng.random((4, 5))
    with pytest.raises(
        RbmlabError, match=r"^model.visible_prior: truncated_gaussian units have no binary unit type"
    ):
        learner.step(model, learner.init_state(model, Batch(x), rng), Batch(x), rng)


def test_a_real_valued_prior_general_rbm_still_trains_by_tap_and_is_evaluated(tmp_path, monkeypatch):
    """The shared binary maths must not reach a real-valued prior: one epoch of TAP learning of a
    truncated-Gaussian GRBM, evaluated by TAP, completes (no reconstruction error is added)."""
    import csv

    from rbmlab.cli import main

    monkeypatch.chdir(tmp_path)
    main(
        [
            "run",
            "model=grbm",
            "model.visible_prior=truncated_gaussian",
            "model.n_hidden=8",
            "learner=tap",
            "evaluator=tap",
            "evaluator.n_init=20",
            "dataset=bars_stripes",
            "train.epochs=1",
            "train.progress=false",
            "evaluator.progress=false",
            "hydra.run.dir=run",
        ]
    )
    header = next(csv.reader(open(tmp_path / "run" / "metrics.csv")))
    assert "test_log_likelihood" in header and not any("reconstruction" in c for c in header)
