"""The deep TAP machine (tap paper App. E) against exact answers on tiny DBMs: free and clamped
TAP log-partitions against enumeration of every state, exactness without couplings, the RBM's
TAP when the top layer is decoupled, the gradients (Eqs. 126–129) against finite differences of
the re-solved free energies, the evaluator, Alg. 4's learner raising the exact log-likelihood,
and the family's checkpoints."""

from __future__ import annotations

import re

import numpy as np
import pytest
from scipy.special import logsumexp

from rbmlab.backend import host_rng
from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.base import Context
from rbmlab.evaluators.tap import TapDBMEvalConfig, TapDBMEvaluator
from rbmlab.inference import tap
from rbmlab.learners.tap import PRETRAIN_STREAM, TapDBM, TapDBMConfig
from rbmlab.models import MODELS
from rbmlab.models.dbm import DBM, DBMConfig
from rbmlab.models.rbm import RBM
from rbmlab.run.checkpoint import load_checkpoint, save_checkpoint

EXACT = {"tol": 1e-26, "max_iter": 5000}


def small_dbm(sizes, std: float, seed: int) -> DBM:
    rng = np.random.default_rng(seed)
    weights = [rng.normal(0, std, (p, q)) for p, q in zip(sizes, sizes[1:])]
    return DBM.of(weights, [rng.normal(0, 0.5, m) for m in sizes])


def data(seed: int, k: int, n: int) -> np.ndarray:
    return (np.random.default_rng(seed).random((k, n)) < 0.5).astype(np.float64)


def states(n: int) -> np.ndarray:
    return ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.float64)


def log_weight(dbm: DBM, parts) -> np.ndarray:
    """ln P̃ of joint states given per layer (broadcasting), Eq. 119."""
    layers, couplings = dbm.tap_stack()
    out = sum(p @ layer.field for p, layer in zip(parts, layers))
    return out + sum(((p @ W) * q).sum(-1) for p, q, W in zip(parts, parts[1:], couplings))


def hidden_states(dbm: DBM) -> list[np.ndarray]:
    n = [layer.field.shape[-1] for layer in dbm.tap_stack()[0][1:]]
    return np.split(states(sum(n)), np.cumsum(n)[:-1], axis=1)


def exact_log_z(dbm: DBM) -> float:
    x = states(dbm.b0.shape[-1])
    return float(logsumexp(exact_log_density(dbm, x)))


def exact_log_density(dbm: DBM, x) -> np.ndarray:
    """ln Σ_h P̃(x, h) per row of x, by enumerating every hidden state."""
    return logsumexp(log_weight(dbm, [x[:, None, :], *hidden_states(dbm)]), axis=1)


def free(dbm, x, **kw):
    layers, couplings = dbm.tap_stack()
    return tap.solve_layers(couplings, layers, x, **{**EXACT, **kw})


def tap_log_z(dbm, x) -> float:
    layers, couplings = dbm.tap_stack()
    return tap.stack_log_partition(couplings, layers, free(dbm, x))[0]


def tap_log_density(dbm, x) -> np.ndarray:
    layers, couplings = dbm.tap_stack()
    return -tap.stack_free_energy(couplings, layers, tap.clamped_layers(couplings, layers, x, **EXACT))


SIZES = [(6, 4, 3), (5, 3, 3, 2)]


@pytest.mark.parametrize("sizes", SIZES)
@pytest.mark.parametrize("seed", [0, 1])
def test_weak_coupling_free_and_clamped_log_z_within_1e3_of_enumeration(sizes, seed):
    dbm, x = small_dbm(sizes, 0.2, seed), data(seed, 20, sizes[0])
    assert abs(tap_log_z(dbm, x) - exact_log_z(dbm)) < 1e-3
    np.testing.assert_allclose(tap_log_density(dbm, x), exact_log_density(dbm, x), atol=1e-3)


@pytest.mark.parametrize("sizes", SIZES)
def test_zero_coupling_is_exact(sizes):
    dbm = small_dbm(sizes, 0.0, 2)
    x = data(2, 5, sizes[0])
    softplus = [np.logaddexp(0, b).sum() for b in dbm.biases()]
    assert tap_log_z(dbm, x) == pytest.approx(sum(softplus), abs=1e-12)
    np.testing.assert_allclose(tap_log_density(dbm, x), x @ dbm.b0 + sum(softplus[1:]), atol=1e-12)


def test_a_decoupled_top_layer_adds_its_softplus_to_the_rbm_tap():
    """W2 = 0: the DBM is the RBM (layers 0, 1; tap.py) beside an independent layer 2."""
    dbm = small_dbm((6, 4, 3), 0.4, 3)
    dbm = dbm.replace(W2=np.zeros_like(dbm.W2))
    x, top = data(3, 8, 6), np.logaddexp(0, dbm.b2).sum()
    rbm = RBM(dbm.W1, dbm.b0, dbm.b1)
    visible, hidden = rbm.tap_layers()
    rbm_log_z = tap.log_partition(rbm.W, visible, hidden, tap.solve(rbm.W, visible, hidden, x, **EXACT))[0]
    assert tap_log_z(dbm, x) == pytest.approx(rbm_log_z + top, abs=1e-10)
    np.testing.assert_allclose(
        tap_log_density(dbm, x), tap.clamped_log_density(rbm.W, visible, hidden, x) + top, atol=1e-10
    )


@pytest.mark.parametrize("clamped", [False, True])
def test_statistics_match_finite_differences_of_the_resolved_free_energy(clamped):
    """∂(−F)/∂θ at a fixed point (the terms of Eqs. 126–129) from one solution, against the
    central difference of −F re-solved at θ ± ε (free: one initialisation, so ln Z_TAP = −F)."""
    dbm, x = small_dbm((5, 3, 3, 2), 0.4, 4), data(4, 1, 5)
    layers, couplings = dbm.tap_stack()
    solve = tap.clamped_layers if clamped else tap.solve_layers

    def neg_f(model) -> float:
        layers, couplings = model.tap_stack()
        return -float(tap.stack_free_energy(couplings, layers, solve(couplings, layers, x, **EXACT))[0])

    dW, dU = tap.stack_statistics(couplings, solve(couplings, layers, x, **EXACT))
    analytic = {**{f"W{l}": g for l, g in enumerate(dW, 1)}, **{f"b{l}": g for l, g in enumerate(dU)}}
    eps = 1e-6
    for name, index in (
        ("W1", (4, 2)),
        ("W1", (0, 0)),
        ("W2", (1, 2)),
        ("W3", (2, 1)),
        ("b0", (3,)),
        ("b1", (0,)),
        ("b2", (2,)),
        ("b3", (1,)),
    ):
        values = []
        for sign in (1, -1):
            p = getattr(dbm, name).copy()
            p[index] += sign * eps
            values.append(neg_f(dbm.replace(**{name: p})))
        assert analytic[name][index] == pytest.approx((values[0] - values[1]) / (2 * eps), abs=1e-7), name


def test_evaluator_matches_the_exact_log_likelihood():
    dbm = small_dbm((6, 4, 3), 0.2, 5)
    train, test = Batch(data(5, 30, 6)), Batch(data(6, 10, 6))
    config = TapDBMEvalConfig(splits=["train", "test"], progress=False, tol=1e-20, max_iter=5000, chunk=4)
    metrics = TapDBMEvaluator(config).evaluate(
        dbm, {"train": train, "test": test}, Context(rng=None, final=True, train=train)
    )
    assert metrics["log_z"] == pytest.approx(exact_log_z(dbm), abs=1e-3)
    assert metrics["tap_solutions"] == 1 and metrics["tap_converged"] == 1.0
    exact = exact_log_density(dbm, test.inputs).mean() - exact_log_z(dbm)
    assert metrics["test_log_likelihood"] == pytest.approx(exact, abs=2e-3)
    assert metrics["test_log_likelihood_per_unit"] == pytest.approx(metrics["test_log_likelihood"] / 13)
    # chunks of 4 rows (not dividing 10 or 30): every clamped solution converged, a fraction of the rows
    assert metrics["test_clamped_converged"] == 1.0 and metrics["train_clamped_converged"] == 1.0


def prototypes(n: int, seed: int) -> np.ndarray:
    """Noisy copies (5% flips) of two complementary half-on patterns of 8 pixels."""
    rng = np.random.default_rng(seed)
    base = np.array([[1, 1, 1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 1, 1, 0, 0]], dtype=np.float64)
    x = base[rng.integers(0, 2, n)]
    return np.abs(x - (rng.random(x.shape) < 0.05))


def test_pretraining_and_joint_training_raise_the_exact_log_likelihood():
    x = prototypes(200, 0)
    config = DBMConfig(n_hidden=[4, 3], weight_std=0.01)
    dbm = DBM.initialize(config, xp=np, rng=np.random.default_rng(0), data_mean=x.mean(0), dtype="float64")

    def log_likelihood(model) -> float:
        return float(exact_log_density(model, x).mean() - exact_log_z(model))

    learner = TapDBM(TapDBMConfig(lr=0.5, batch_size=20, pretrain_epochs=20, pretrain_lr=0.5))
    train = Batch(x)
    assert learner.initial_model(dbm, pretrained=True, train=train) is dbm
    pretrained = learner.initial_model(dbm, pretrained=False, train=train)
    again = learner.initial_model(dbm, pretrained=False, train=train)
    np.testing.assert_array_equal(again.W2, pretrained.W2)  # deterministic
    model, state = pretrained, learner.init_state(pretrained, train, None)
    for _epoch in range(10):
        for i in range(0, 200, 20):
            model, state = learner.step(model, state, train.take(np.arange(i, i + 20)), None)
    before, after_pretraining, after = map(log_likelihood, (dbm, pretrained, model))
    assert after_pretraining > before + 0.5, (before, after_pretraining)
    assert after > after_pretraining, (after_pretraining, after)
    assert np.abs(model.W2 - pretrained.W2).max() > 1e-3  # joint training moves W2


@pytest.mark.parametrize("hidden", [[4, 3], [4, 3, 2]])
def test_checkpoint_round_trip_and_config(hidden, tmp_path):
    config = DBMConfig(n_hidden=hidden)
    dbm = DBM.initialize(
        config, xp=np, rng=np.random.default_rng(1), data_mean=np.full(6, 0.3), dtype="float32", trials=2
    )
    assert dbm.depth == len(hidden) and dbm.trial(1).model_sizes() == DBM.sizes(config, 6)
    assert DBM.parameter_count(DBM.sizes(config, 6)) == sum(a[0].size for a in dbm.arrays().values())
    back, _, _ = load_checkpoint(save_checkpoint(tmp_path / "m.npz", dbm))
    assert type(back) is type(dbm) and isinstance(back, DBM) and back.depth == dbm.depth
    assert set(type(dbm).PARAMS) == {f"W{l}" for l in range(1, len(hidden) + 1)} | {
        f"b{l}" for l in range(len(hidden) + 1)
    }  # the layers it has, no more
    for name in type(dbm).PARAMS:
        np.testing.assert_array_equal(getattr(back, name), getattr(dbm, name))
    with pytest.raises(RbmlabError, match="model.n_hidden"):
        MODELS.parse({"name": "dbm", "n_hidden": []})


@pytest.mark.parametrize("sizes", [*SIZES, (3, 5, 1), (2, 1, 4, 3)])
def test_enumeration_gives_the_exact_log_z_and_marginals(sizes):
    """The family's own exact sums (one parity of layers enumerated, the other summed out;
    models/dbm_enumeration.py) against the sum over every joint state, in small chunks too."""
    dbm = small_dbm(sizes, 0.8, 7)
    x = states(sizes[0])
    assert dbm.exact_log_partition() == pytest.approx(exact_log_z(dbm), abs=1e-10)
    assert dbm.exact_log_partition(chunk_size=3) == pytest.approx(exact_log_z(dbm), abs=1e-10)
    np.testing.assert_allclose(dbm.log_unnormalized(x), exact_log_density(dbm, x), atol=1e-10)
    n = dbm.model_sizes()
    assert list(n) == ["n_visible", *(f"n_hidden{l}" for l in range(1, len(sizes)))]
    assert DBM.enumeration_size(n) == min(sum(sizes[0::2]), sum(sizes[1::2]))


def test_exact_and_free_energy_refuse_a_dbm_too_large_to_enumerate():
    from rbmlab.evaluators import EVALUATORS

    big = {"n_visible": 784, "n_hidden1": 500, "n_hidden2": 500}
    for name, words in (
        ("exact", "evaluator=exact: log p̃(x) of a dbm model enumerates 2^500"),
        ("free_energy", "evaluator=free_energy: log p̃(x) of a dbm model enumerates"),
    ):
        with pytest.raises(RbmlabError, match=re.escape(words)):
            EVALUATORS.build(EVALUATORS.parse({"name": name})).check(DBM, big)
    EVALUATORS.build(EVALUATORS.parse({"name": "exact"})).check(
        DBM, {**big, "n_visible": 6, "n_hidden1": 4, "n_hidden2": 3}
    )


def test_each_stage_learns_its_own_parameters_and_feeds_the_next_the_conditional_means(monkeypatch):
    """Alg. 4: joint training steps every W_l and b_l, b0 included, by lr × Eqs. 126-129 (the
    gradient of the clamped and free TAP solutions); pretraining RBM 1 learns W1, b0, b1 on the
    data, RBM 2 learns W2 and b2 (not b1) on H^(1) = σ(X W1 + b1) of the RBM 1 it follows."""
    x = prototypes(40, 1)
    config = DBMConfig(n_hidden=[4, 3], weight_std=0.3)
    dbm = DBM.initialize(config, xp=np, rng=np.random.default_rng(2), data_mean=x.mean(0), dtype="float64")
    learner = TapDBM(TapDBMConfig(lr=0.5, batch_size=40, pretrain_epochs=1, pretrain_lr=0.5))
    stepped, _ = learner.step(dbm, learner.init_state(dbm, Batch(x), None), Batch(x), None)
    layers, couplings = dbm.tap_stack()
    options = learner.config.solver_options()
    free_ = tap.solve_layers(couplings, layers, x, **options)
    dW, dU = tap.stack_gradient(couplings, tap.clamped_layers(couplings, layers, x, **options), free_)
    for l, g in enumerate(dU):
        np.testing.assert_allclose(getattr(stepped, f"b{l}") - getattr(dbm, f"b{l}"), 0.5 * g, atol=1e-12)
    for l, g in enumerate(dW, 1):
        np.testing.assert_allclose(getattr(stepped, f"W{l}") - getattr(dbm, f"W{l}"), 0.5 * g, atol=1e-12)
    assert np.abs(dU[0]).max() > 1e-3  # b0 has a step to take

    seen, ascend = [], learner.ascend
    monkeypatch.setattr(
        learner,
        "ascend",
        lambda m, s, h, lr, rng=None, lo=0, hi=None: (
            seen.append((m, h, lo)),
            ascend(m, s, h, lr, rng, lo, hi),
        )[1],
    )
    pretrained = learner.initial_model(dbm, pretrained=False, train=Batch(x))
    (rbm1, h1, lo1), (rbm2, h2, lo2) = seen
    assert (lo1, lo2) == (0, 1)
    order = [host_rng(PRETRAIN_STREAM, layer, 0).permutation(40) for layer in (1, 2)]  # each epoch's shuffle
    np.testing.assert_array_equal(h1, x[order[0]])
    np.testing.assert_allclose(h2, 1 / (1 + np.exp(-(x @ rbm2.W1 + rbm2.b1)))[order[1]], atol=1e-12)
    np.testing.assert_array_equal(pretrained.b1, rbm2.b1)  # RBM 2 leaves b1 as RBM 1 left it
    assert np.abs(rbm2.b0 - dbm.b0).max() > 0  # RBM 1 learned b0


def test_the_visible_fields_start_at_the_clipped_base_rate():
    """As the RBM's (Hinton 2010): b0 = logit(clip(mean, 1e-3, 1 − 1e-3)), written out here, on
    means at and inside the clip (a pixel never on, always on, rare, even)."""
    mean = np.array([0.0, 1.0, 1e-4, 0.02, 0.5])
    dbm = DBM.initialize(
        DBMConfig(n_hidden=[3, 2]), xp=np, rng=np.random.default_rng(0), data_mean=mean, dtype="float64"
    )
    p = np.clip(mean, 1e-3, 1 - 1e-3)
    np.testing.assert_allclose(dbm.b0, np.log(p / (1 - p)), rtol=1e-12)
