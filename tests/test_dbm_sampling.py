"""Sampling and sampled learning of deep Boltzmann machines against exact answers on machines
small enough to enumerate every joint state: block Gibbs by parity leaves the enumerated
distribution of a 3- and a 4-layer machine with mixed unit types invariant; log Z and log p̃(x)
of mixed units by enumeration; the chains' statistics with the odd layers summed out; the
mean-field positive phase (exact where the hidden layers decouple, a fixed point otherwise);
CD and PCD training a DBM from the command line; the options that do not apply refused."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

from rbmlab.backend import host_rng
from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.hydra_app import validated_run_config
from rbmlab.inference import INFERENCE
from rbmlab.learners import LEARNERS
from rbmlab.models import MODELS
from rbmlab.models import layer_stack as stacks
from rbmlab.models.dbm import DBM
from rbmlab.run.checkpoint import load_checkpoint
from rbmlab.run.runner import train
from rbmlab.units import unit_type

MIXED = ("bernoulli", "spin")  # visible {0, 1}, hidden ±1


def machine(sizes, std: float, seed: int, visible="bernoulli", hidden="spin") -> DBM:
    rng = np.random.default_rng(seed)
    weights = [rng.normal(0, std, (p, q)) for p, q in zip(sizes, sizes[1:])]
    return DBM.of(weights, [rng.normal(0, 0.5, m) for m in sizes], visible=visible, hidden=hidden)


def joint_states(dbm: DBM):
    """Every joint state, per layer in its units' values, and ln P̃ of each by the energy (tap
    App. E, Eq. 119), written out here apart from the package's sums."""
    n = [getattr(dbm, f"b{l}").shape[-1] for l in range(dbm.depth + 1)]
    bits = ((np.arange(2 ** sum(n))[:, None] >> np.arange(sum(n))) & 1).astype(np.float64)
    units = [unit_type(dbm.visible)] + [unit_type(dbm.hidden)] * dbm.depth
    layers = [
        u.values[0] + (u.values[1] - u.values[0]) * part
        for u, part in zip(units, np.split(bits, np.cumsum(n)[:-1], axis=1))
    ]
    log_w = sum(h @ getattr(dbm, f"b{l}") for l, h in enumerate(layers))
    log_w = log_w + sum(
        ((layers[l - 1] @ getattr(dbm, f"W{l}")) * layers[l]).sum(-1) for l in range(1, dbm.depth + 1)
    )
    return layers, log_w


def even_distribution(dbm: DBM):
    """{even-layer state (as a tuple): its probability}, the odd layers summed out."""
    layers, log_w = joint_states(dbm)
    even = np.concatenate([layers[l] for l in range(0, dbm.depth + 1, 2)], axis=1)
    keys = [tuple(row) for row in even]
    p = np.exp(log_w - logsumexp(log_w))
    out: dict = {}
    for key, prob in zip(keys, p):
        out[key] = out.get(key, 0.0) + prob
    return out


@pytest.mark.parametrize("sizes", [(3, 2, 2), (2, 2, 2, 2)], ids=["3 layers", "4 layers"])
def test_block_gibbs_by_parity_leaves_the_enumerated_distribution_invariant(sizes):
    """Chains started from exact draws of p(even layers) stay distributed so after 3 sweeps of
    block_gibbs (odd given even, even given odd), visible {0, 1} and hidden ±1 units: each
    state's frequency among 200,000 chains within 5 standard errors of its probability (a
    wrong conditional, unit type or layer order moves several by far more)."""
    dbm = machine(sizes, 0.9, seed=sum(sizes))
    target = even_distribution(dbm)
    keys = list(target)
    p = np.array([target[k] for k in keys])
    n = 200_000
    rng = np.random.default_rng(1)
    start = np.array(keys)[rng.choice(len(keys), size=n, p=p)]
    sampler = INFERENCE.build(INFERENCE.parse("block_gibbs"))
    end = sampler.run(dbm, start, host_rng(2), 3)
    assert end.shape == start.shape and not np.array_equal(end, start)
    index = {k: i for i, k in enumerate(keys)}
    counts = np.bincount([index[tuple(row)] for row in end], minlength=len(keys))
    se = np.sqrt(p * (1 - p) / n)
    assert np.all(np.abs(counts / n - p) < 5 * se + 1e-12), np.max(np.abs(counts / n - p) / se)
    # and from a start far from it (every unit at its lower value), 30 sweeps reach it
    far = sampler.run(dbm, np.tile(np.array(keys[0]), (50_000, 1)), host_rng(3), 30)
    freq = np.bincount([index[tuple(row)] for row in far], minlength=len(keys)) / len(far)
    assert 0.5 * np.abs(freq - p).sum() < 0.02


@pytest.mark.parametrize("units", [("bernoulli", "bernoulli"), MIXED, ("spin", "bernoulli")])
@pytest.mark.parametrize("sizes", [(3, 2, 2), (2, 3, 1, 2)])
def test_log_z_and_marginals_of_mixed_units_by_enumeration(units, sizes):
    dbm = machine(sizes, 0.7, seed=5, visible=units[0], hidden=units[1])
    layers, log_w = joint_states(dbm)
    assert dbm.exact_log_partition() == pytest.approx(float(logsumexp(log_w)), abs=1e-10)
    x = np.unique(layers[0], axis=0)
    rows = [np.all(layers[0] == v, axis=1) for v in x]
    want = [float(logsumexp(log_w[r])) for r in rows]
    np.testing.assert_allclose(dbm.log_unnormalized(x), want, atol=1e-10)


@pytest.mark.parametrize("sizes", [(3, 2, 2), (2, 2, 2, 2)])
def test_chain_statistics_sum_the_odd_layers_out_exactly(sizes):
    """DBM.statistics of chain states: ⟨h_{l−1}ᵀ h_l⟩ and ⟨h_l⟩ with the odd layers at their
    conditional means, equal to the sums over every odd state weighted by p(odd | even)."""
    dbm = machine(sizes, 0.8, seed=11)
    layers, log_w = joint_states(dbm)
    even_layers = list(range(0, dbm.depth + 1, 2))
    chains = np.concatenate([layers[l] for l in even_layers], axis=1)[[3, 17, 40, 41, 63]]
    got = dbm.statistics(chains)
    keys = np.concatenate([layers[l] for l in even_layers], axis=1)
    want = {name: 0.0 for name in dbm.PARAMS}
    for row in chains:  # E over the odd layers given this row's even ones
        match = np.all(keys == row, axis=1)
        w = np.exp(log_w[match] - logsumexp(log_w[match]))
        for l in range(1, dbm.depth + 1):
            pair = layers[l - 1][match][:, :, None] * layers[l][match][:, None, :]
            want[f"W{l}"] = want[f"W{l}"] + np.tensordot(w, pair, axes=1) / len(chains)
        for l in range(dbm.depth + 1):
            want[f"b{l}"] = want[f"b{l}"] + w @ layers[l][match] / len(chains)
    for name in dbm.PARAMS:
        if getattr(dbm, name).size:
            np.testing.assert_allclose(got[name], want[name], atol=1e-12, err_msg=name)
        else:
            assert got[name].shape == getattr(dbm, name).shape


def test_mean_field_is_exact_when_the_hidden_layers_decouple_and_a_fixed_point_otherwise():
    """W_2 = 0: p(h | x) factorises, so mean field gives the exact posterior means (the data's
    statistics exact). Coupled: the means after many sweeps satisfy the fixed-point equations
    μ_l = E_{u_l}[b_l + μ_{l−1} W_l + μ_{l+1} W_{l+1}ᵀ] (tap App. E; Salakhutdinov & Hinton 2009)."""
    dbm = machine((3, 2, 2), 0.8, seed=2)
    free = dbm.replace(W2=0 * dbm.W2)
    layers, log_w = joint_states(free)
    x = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    stats = free.positive_statistics(x, iterations=1)
    want_h1 = []
    for v in x:
        match = np.all(layers[0] == v, axis=1)
        w = np.exp(log_w[match] - logsumexp(log_w[match]))
        want_h1.append(w @ layers[1][match])
    np.testing.assert_allclose(stats["W1"], x.T @ np.array(want_h1) / 2, atol=1e-12)
    np.testing.assert_allclose(stats["b1"], np.mean(want_h1, axis=0), atol=1e-12)
    np.testing.assert_allclose(stats["b2"], np.tanh(free.b2), atol=1e-12)  # ±1 units: tanh
    spin = unit_type("spin")
    up = stacks.mean_field(dbm.layer_stack(), x, iterations=0)  # the start: one upward pass
    np.testing.assert_allclose(up[1], spin.mean(dbm.b1 + x @ dbm.W1), atol=1e-12)
    np.testing.assert_allclose(up[2], spin.mean(dbm.b2 + up[1] @ dbm.W2), atol=1e-12)
    one = stacks.mean_field(dbm.layer_stack(), x, iterations=1)  # odd layers first, then even
    np.testing.assert_allclose(one[1], spin.mean(dbm.b1 + x @ dbm.W1 + up[2] @ dbm.W2.T), atol=1e-12)
    np.testing.assert_allclose(one[2], spin.mean(dbm.b2 + one[1] @ dbm.W2), atol=1e-12)
    mu = stacks.mean_field(dbm.layer_stack(), x, iterations=200)
    np.testing.assert_allclose(mu[1], spin.mean(dbm.b1 + x @ dbm.W1 + mu[2] @ dbm.W2.T), atol=1e-10)
    np.testing.assert_allclose(mu[2], spin.mean(dbm.b2 + mu[1] @ dbm.W2), atol=1e-10)
    stats = dbm.positive_statistics(x, iterations=200)
    np.testing.assert_allclose(stats["W2"], mu[1].T @ mu[2] / 2, atol=1e-12)
    assert not np.allclose(dbm.positive_statistics(x, iterations=1)["W2"], stats["W2"], atol=1e-6)


def test_statistics_refuse_data_rows_and_chains_start_at_the_data():
    dbm = machine((3, 2, 2), 0.8, seed=2)
    x = np.array([[1.0, 0.0, 1.0]])
    with pytest.raises(ValueError, match="chain states of 5 columns"):
        dbm.statistics(x)
    chains = dbm.chain_start(x, host_rng(0))
    assert chains.shape == (1, 5) and np.array_equal(dbm.visible_part(chains), x)
    assert set(np.unique(chains[:, 3:])) <= {-1.0, 1.0}  # layer 2 in its units' values


@pytest.mark.parametrize("name", ["cd", "pcd"])
def test_cd_and_pcd_step_equals_mean_field_minus_chain_statistics(name):
    """One update of a DBM: lr × (positive_statistics(x) − statistics(chains after k sweeps)),
    the chains replayed from the same stream (CD: started at the data by chain_start)."""
    dbm = machine((3, 2, 2), 0.8, seed=4, hidden="bernoulli").astype(np.float64)
    x = (np.random.default_rng(0).random((6, 3)) < 0.5).astype(np.float64)
    node = {"name": name, "lr": 0.1, "k": 2, "mean_field_iterations": 3, "batch_size": 6}
    learner = LEARNERS.build(LEARNERS.parse(node))
    learner.check(DBM)
    state = learner.init_state(dbm, Batch(x), host_rng(1))
    new, new_state = learner.step(dbm, state, Batch(x), host_rng(2))
    rng = host_rng(2)
    start = dbm.chain_start(x, rng) if name == "cd" else state["chains"]
    end = stacks.sweep(dbm.layer_stack(), start, rng, 2)
    pos, neg = dbm.positive_statistics(x, 3), dbm.statistics(end)
    for p in dbm.PARAMS:
        np.testing.assert_allclose(getattr(new, p), getattr(dbm, p) + 0.1 * (pos[p] - neg[p]), atol=1e-12)
    if name == "pcd":
        np.testing.assert_array_equal(new_state["chains"], end)
        assert state["chains"].shape == (6, 5)


def test_options_that_do_not_apply_are_refused():
    base = ["dataset=bars_stripes", "evaluator=exact", "learner=pcd", "learner.mean_field_iterations=5"]
    with pytest.raises(
        RbmlabError,
        match=r"^learner.mean_field_iterations: applies to a DBM; model=rbm's hidden units sum out",
    ):
        validated_run_config(base)
    validated_run_config([*base, "model=dbm"])
    with pytest.raises(RbmlabError, match=r"^learner.pretrain_epochs: applies to a DBM"):
        validated_run_config([*base[:3], "learner.pretrain_epochs=2"])
    with pytest.raises(RbmlabError, match=r"^learner.pretrain_lr: applies with pretrain_epochs > 0"):
        validated_run_config([*base[:3], "model=dbm", "learner.pretrain_lr=0.1"])
    for other in ("sdcp", "reset"):
        with pytest.raises(RbmlabError, match=rf"^learner={other}: model dbm's hidden layers do not sum out"):
            LEARNERS.build(LEARNERS.parse(other)).check(DBM)
    LEARNERS.build(LEARNERS.parse("tap_dbm")).check(DBM)  # its positive phase is TAP's


@pytest.mark.parametrize(
    "learner, hidden",
    [
        (["learner=cd", "learner.k=5"], [6, 4]),
        (["learner=pcd", "learner.n_chains=100"], [6, 4]),
        (
            ["learner=pcd", "learner.n_chains=100"],
            [6],
        ),  # one hidden layer: the RBM as a machine of the layered family
    ],
)
def test_a_dbm_trains_as_a_run(learner, hidden, tmp_path):
    """`rbmlab run learner=pcd model=dbm` on bars and stripes (3×3): the exact test
    log-likelihood of a machine with hidden layers of 6 and 4 units (or one of 6) rises by more
    than 1 nat in 200 epochs from near the uniform model's (−ln 512 = −6.24); its checkpoint holds
    the layers it has, no more."""
    cfg = validated_run_config(
        [
            *learner,
            "model=dbm",
            f"model.n_hidden=[{','.join(map(str, hidden))}]",
            "model.weight_std=0.1",
            "dataset=bars_stripes",
            "evaluator=exact",
            "learner.lr=1.0",
            "learner.batch_size=7",
            "train.epochs=200",
            "train.eval_every=200",
            "train.progress=false",
        ]
    )
    summary = train(cfg, tmp_path / "run", echo=lambda s: None)
    metrics = pd.read_csv(tmp_path / "run" / "metrics.csv")
    first, last = metrics.test_log_likelihood.iloc[0], metrics.test_log_likelihood.iloc[-1]
    assert summary["status"] == "completed" and last > first + 1.0, (first, last)
    model, _, _ = load_checkpoint(tmp_path / "run" / "checkpoint.npz")
    layers = range(len(hidden) + 1)
    assert set(model.arrays()) == {f"W{l}" for l in layers if l} | {f"b{l}" for l in layers}


# ---------------------------------------------------------------- scores: AIS and the bound
@pytest.mark.parametrize("sizes", [(3, 2, 2), (2, 2, 3, 2)])
def test_the_rbm_between_the_parities_is_the_same_distribution(sizes):
    """DBM.as_rbm: its log p̃ of an even-layer state is the DBM's with the odd layers summed out
    (by enumeration, apart from the package), so its log Z is the DBM's."""
    dbm = machine(sizes, 0.8, seed=6, hidden="bernoulli")
    rbm = dbm.as_rbm()
    layers, log_w = joint_states(dbm)
    even = np.concatenate([layers[l] for l in range(0, dbm.depth + 1, 2)], axis=1)
    keys, inverse = np.unique(even, axis=0, return_inverse=True)
    want = [float(logsumexp(log_w[inverse.ravel() == i])) for i in range(len(keys))]
    np.testing.assert_allclose(rbm.log_unnormalized(keys), want, atol=1e-10)
    assert rbm.exact_log_partition() == pytest.approx(dbm.exact_log_partition(), abs=1e-10)
    with pytest.raises(RbmlabError, match="no RBM between its parities"):
        machine(sizes, 0.8, seed=6, hidden="spin").as_rbm()


@pytest.mark.parametrize("sizes", [(4, 3, 2), (3, 2, 3, 2)])
def test_ais_of_a_dbm_brackets_its_exact_log_z(sizes):
    """evaluator=ais on a DBM (the RBM between its parities annealed from the base rates):
    the exact log Z by enumeration lies in its ±3σ interval, and its test log-likelihood is the
    mean-field bound less log Ẑ."""
    from rbmlab.evaluators.ais import AIS, AISConfig
    from rbmlab.evaluators.base import Context

    dbm = machine(sizes, 0.6, seed=8, hidden="bernoulli")
    x = (np.random.default_rng(3).random((20, sizes[0])) < 0.4).astype(np.float64)
    config = AISConfig(schedule="linear", n_temperatures=2000, n_chains=400, exact_check=True)
    evaluator = AIS(config)
    evaluator.check(DBM, dict(zip(("n_visible", "n_hidden1", "n_hidden2", "n_hidden3"), sizes)))
    context = Context(rng=host_rng(5), final=True, data_mean=x.mean(axis=0))
    m = evaluator.evaluate(dbm, {"test": Batch(x)}, context)
    assert m["log_z_within"] == 1.0 and abs(m["log_z_error"]) < 0.05, m
    assert m["log_z_exact"] == pytest.approx(dbm.exact_log_partition(), abs=1e-9)
    bound = dbm.log_unnormalized_bound(x, 30).mean()
    assert m["test_log_likelihood"] == pytest.approx(bound - m["log_z"], abs=1e-9)
    assert m["mean_field_sweeps"] == 30.0 and "mean-field lower bound" in evaluator.headline(m, "test")
    # the record, not the evaluator, says the rows were bounded: an RBM's headline, after, says nothing
    rbm = dbm.as_rbm()
    rows = np.hstack([x, np.zeros((len(x), rbm.n_visible - sizes[0]))])
    rbm_metrics = evaluator.evaluate(rbm, {"test": Batch(rows)}, Context(rng=host_rng(6), final=True))
    assert "mean_field_sweeps" not in rbm_metrics and "bound" not in evaluator.headline(rbm_metrics, "test")
    assert "mean-field lower bound" in evaluator.headline(m, "test")


@pytest.mark.parametrize("hidden", ["bernoulli", "spin"])
def test_the_mean_field_bound_is_tight_when_the_hidden_layers_decouple_and_below_otherwise(hidden):
    dbm = machine((3, 2, 2), 0.9, seed=9, hidden=hidden)
    x = np.unique((np.random.default_rng(0).random((40, 3)) < 0.5).astype(np.float64), axis=0)
    free = dbm.replace(W2=0 * dbm.W2)
    np.testing.assert_allclose(free.log_unnormalized_bound(x, 1), free.log_unnormalized(x), atol=1e-12)
    gap = dbm.log_unnormalized(x) - dbm.log_unnormalized_bound(x, 50)
    assert np.all(gap >= -1e-12) and np.any(gap > 1e-4), gap


def test_ais_options_for_a_dbm_are_refused_elsewhere():
    from rbmlab.evaluators.ais import AIS, AISConfig

    with pytest.raises(RbmlabError, match=r"^evaluator.mean_field_iterations: applies to a DBM"):
        AIS(AISConfig(mean_field_iterations=5)).check(MODELS.get("rbm"), {"n_visible": 4, "n_hidden": 3})


def test_pretraining_stacks_rbms_trained_by_cd():
    """learner.pretrain_epochs (cd, pcd): RBM 1 = (layer 0, W_1, layer 1) takes CD-k steps on the
    data, then RBM 2 on the conditional means H^(1) = E[h_1 | x], learning W_2 and b_2 only (b_1
    as RBM 1 left it), before joint training; one full-batch epoch each, written out here."""
    dbm = machine((3, 2, 2), 0.5, seed=12, hidden="bernoulli").astype(np.float64)
    x = (np.random.default_rng(1).random((8, 3)) < 0.5).astype(np.float64)
    node = {"name": "pcd", "lr": 0.3, "k": 2, "batch_size": "full", "pretrain_epochs": 1}
    learner = LEARNERS.build(LEARNERS.parse(node))
    got = learner.initial_model(dbm, pretrained=False, train=Batch(x), rng=host_rng(4))
    assert learner.initial_model(dbm, pretrained=True, train=Batch(x), rng=host_rng(4)) is dbm

    def cd_step(W, b_v, b_h, v, rng):
        from rbmlab.inference.block_gibbs import gibbs_chain
        from rbmlab.models.rbm import RBM

        rbm = RBM(W, b_v, b_h)
        end = gibbs_chain(rbm, v, rng, 2)
        p, q = rbm.hidden_probs(v), rbm.hidden_probs(end)
        n = len(v)
        return W + 0.3 * (v.T @ p - end.T @ q) / n, b_v + 0.3 * (v - end).mean(0), b_h + 0.3 * (p - q).mean(0)

    order = host_rng(7306, 1, 0).permutation(8)  # the mini-batch order of (stream, layer, epoch)
    rng = host_rng(4)
    W1, b0, b1 = cd_step(dbm.W1, dbm.b0, dbm.b1, x[order], rng)
    h1 = 1 / (1 + np.exp(-(x @ W1 + b1)))
    W2, _, b2 = cd_step(dbm.W2, b1, dbm.b2, h1[host_rng(7306, 2, 0).permutation(8)], rng)
    for name, want in {"W1": W1, "b0": b0, "b1": b1, "W2": W2, "b2": b2}.items():
        np.testing.assert_allclose(getattr(got, name), want, atol=1e-12, err_msg=name)


def test_parallel_tempering_samples_a_dbm_and_trains_it_with_pcd():
    """learner.sampler=parallel_tempering on a DBM tempers the RBM between its parities (the
    same chains, sweeps and free energy): from a far start its β = 1 replica reaches the
    enumerated p(even layers) (total variation < 0.02 over 20,000 chains), and PT-PCD takes one
    step on a DBM with its replicas carried in the learner state."""
    dbm = machine((3, 2, 2), 0.9, seed=7, hidden="bernoulli")
    target = even_distribution(dbm)
    keys = list(target)
    p = np.array([target[k] for k in keys])
    sampler = INFERENCE.build(INFERENCE.parse({"name": "parallel_tempering", "n_temperatures": 4}))
    end = sampler.run(dbm, np.tile(np.array(keys[0]), (20_000, 1)), host_rng(3), 40)
    index = {k: i for i, k in enumerate(keys)}
    freq = np.bincount([index[tuple(row)] for row in end], minlength=len(keys)) / len(end)
    assert 0.5 * np.abs(freq - p).sum() < 0.02
    node = {"name": "pcd", "lr": 0.1, "batch_size": 6, "sampler": {"name": "parallel_tempering"}}
    learner = LEARNERS.build(LEARNERS.parse(node))
    learner.check(DBM)
    x = (np.random.default_rng(0).random((6, 3)) < 0.5).astype(np.float64)
    model = dbm.astype(np.float64)
    state = learner.init_state(model, Batch(x), host_rng(1))
    new, new_state = learner.step(model, state, Batch(x), host_rng(2))
    assert new_state["chains"].shape == (6, 5) and new_state["sampler.replicas"].shape[-1] == 5
    assert not np.array_equal(new.W2, model.W2)


def test_a_dbms_features_are_its_mean_field_means_and_classify():
    """DBM.hidden_probs (LatentFeatures): the hidden layers' mean-field means side by side, the
    exact E[h_1 | x] where the hidden layers decouple; so evaluator=test_error applies."""
    from rbmlab.evaluators.feature_classifier import FeatureClassifier

    dbm = machine((3, 2, 2), 0.8, seed=13, hidden="bernoulli")
    free = dbm.replace(W2=0 * dbm.W2)
    x = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    features = free.hidden_probs(x)
    assert features.shape == (2, 4)
    np.testing.assert_allclose(features[:, :2], 1 / (1 + np.exp(-(x @ free.W1 + free.b1))), atol=1e-12)
    np.testing.assert_allclose(
        features[:, 2:], np.broadcast_to(1 / (1 + np.exp(-free.b2)), (2, 2)), atol=1e-12
    )
    mu = stacks.mean_field(dbm.layer_stack(), x, 10)
    np.testing.assert_allclose(dbm.hidden_probs(x), np.concatenate([mu[1], mu[2]], axis=-1), atol=1e-12)
    FeatureClassifier(EVALUATORS_PARSE("test_error")).check(
        DBM, {"n_visible": 3, "n_hidden1": 2, "n_hidden2": 2}
    )


def EVALUATORS_PARSE(name):
    from rbmlab.evaluators import EVALUATORS

    return EVALUATORS.parse(name)


def test_settings_that_cannot_apply_are_refused_before_any_work(tmp_path):
    """A DBM's unit types are command-line keys; parallel tempering (which tempers a DBM as the RBM
    between its parities) refuses a DBM whose visible and hidden units differ, as learner or
    evaluator sampler, before any work; pretraining options refuse a model that starts from
    model.init (pretraining builds a fresh model)."""
    from rbmlab.run.runner import check_feasible

    dbm = ["model=dbm", "model.n_hidden=[4,3]", "dataset=bars_stripes"]
    cfg = validated_run_config([*dbm, "learner=pcd", "evaluator=exact", "model.hidden_units=spin"])
    assert (cfg.model.visible_units, cfg.model.hidden_units) == ("bernoulli", "spin")
    check_feasible(cfg)  # block Gibbs by parity takes mixed units
    refused = r"^model.hidden_units: spin hidden units with bernoulli visible ones; parallel_tempering"
    for extra in (
        ["learner=pcd", "learner.sampler=parallel_tempering", "evaluator=exact"],
        ["learner=pcd", "evaluator=moments", "evaluator.sampler=parallel_tempering"],
    ):
        with pytest.raises(RbmlabError, match=refused):
            check_feasible(validated_run_config([*dbm, *extra, "model.hidden_units=spin"]))
    check_feasible(
        validated_run_config([*dbm, "learner=pcd", "learner.sampler=parallel_tempering", "evaluator=exact"])
    )
    init = str(tmp_path / "m.npz")
    for learner in ("pcd", "tap_dbm"):
        with pytest.raises(RbmlabError, match=r"^learner.pretrain_epochs: pretraining builds a fresh model"):
            validated_run_config(
                [
                    *dbm,
                    f"learner={learner}",
                    "evaluator=exact",
                    f"model.init={init}",
                    "learner.pretrain_epochs=3",
                ]
            )
