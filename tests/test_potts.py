"""Categorical (Potts) units against exact answers: brute-force sums over both layers for log Z,
marginals and conditionals; block Gibbs's stationary distribution by enumeration; the data path
(integer codes checked against q, encoded one-hot) and checkpoints end to end."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from scipy.special import logsumexp

from rbmlab.inference.block_gibbs import gibbs_chain
from rbmlab.models.rbm import RBM, RBMConfig, free_energy, log_likelihood, log_partition, sample_exact
from rbmlab.units import unit_type
from rbmlab.units.potts import Potts

Q = 3


def potts_rbm(
    backend,
    units: int,
    hidden: int,
    *,
    q_v: int = Q,
    q_h: int | None = None,
    scale: float = 1.0,
    seed: int = 0,
) -> RBM:
    """Random couplings; Potts visible units of ``q_v`` states, Bernoulli hidden units (or Potts
    of ``q_h`` states)."""
    rng = np.random.default_rng(seed)
    m, n = units * q_v, hidden * (q_h or 1)
    hidden_kind = {"hidden": "potts", "hidden_states": str(q_h)} if q_h else {}
    return RBM(
        backend.asarray(scale * rng.standard_normal((m, n))),
        backend.asarray(scale * rng.standard_normal(m)),
        backend.asarray(scale * rng.standard_normal(n)),
        visible="potts",
        visible_states=str(q_v),
        **hidden_kind,
    )


def layer_states(units, n_columns: int) -> np.ndarray:
    """Every state of a layer, by brute force (itertools, independent of the unit type's own)."""
    if units.width() == 1:
        return np.array(list(itertools.product([0.0, 1.0], repeat=n_columns)))
    codes = np.array(list(itertools.product(range(units.q), repeat=n_columns // units.q)))
    return np.eye(units.q)[codes].reshape(len(codes), -1)


def brute_index(onehot, q: int = Q) -> np.ndarray:
    """The row of :func:`layer_states` of each one-hot state (itertools order: the last unit
    varies fastest)."""
    codes = Potts.with_states(q).decode(onehot)
    return codes @ (q ** np.arange(codes.shape[-1])[::-1])


def joint_log_weights(rbm: RBM):
    """(visible states, hidden states, −E(v, h) for every pair), numpy float64."""
    W, b_v, b_h = (np.asarray(a, dtype=np.float64) for a in (rbm.W, rbm.b_v, rbm.b_h))
    vs, hs = layer_states(rbm.visible_units, rbm.n_visible), layer_states(rbm.hidden_units, rbm.n_hidden)
    return vs, hs, vs @ W @ hs.T + (vs @ b_v)[:, None] + (hs @ b_h)[None, :]


# ---------------------------------------------------------------- the unit type
def test_encode_decode_and_enumeration_order():
    P = unit_type("potts", 4)
    assert P is Potts.with_states(4) and P.q == 4 and P.width() == 4
    codes = np.array([[0, 3, 1], [2, 2, 0]])
    onehot = P.encode(codes)
    assert onehot.shape == (2, 12) and onehot.dtype == np.float32
    np.testing.assert_array_equal(onehot.reshape(2, 3, 4).argmax(-1), codes)
    np.testing.assert_array_equal(onehot.reshape(2, 3, 4).sum(-1), 1)
    np.testing.assert_array_equal(P.decode(onehot), codes)
    # state k: base-q digit j is unit j (as a binary layer's bit j)
    states = P.states(np, 3 * 4, 0, P.state_count(12), np.float64)
    assert P.state_count(12) == 64 and P.state_bits(12) == 6.0
    digits = P.decode(states)
    np.testing.assert_array_equal(digits @ (4 ** np.arange(3)), np.arange(64))
    assert P.data_value_set().points == (0.0, 1.0, 2.0, 3.0)


def test_softmax_log_partition_and_field_for_mean():
    P = unit_type("potts", Q)
    a = np.random.default_rng(1).normal(size=(5, 2 * Q))
    groups = a.reshape(5, 2, Q)
    np.testing.assert_allclose(P.log_partition(a), logsumexp(groups, axis=-1))
    np.testing.assert_allclose(P.log_partition_sum_(a.copy()), logsumexp(groups, axis=-1).sum(-1))
    expected = np.exp(groups - logsumexp(groups, axis=-1, keepdims=True)).reshape(5, -1)
    np.testing.assert_allclose(P.mean(a), expected)
    out = np.empty_like(a)
    assert P.mean(a, out=out) is out and np.allclose(out, expected)
    m = np.array([0.2, 0.3, 0.5, 0.6, 0.0, 0.4])
    fields = P.field_for_mean(m, clip=1e-3)
    np.testing.assert_allclose(fields.reshape(2, Q).sum(-1), 0, atol=1e-12)  # centred per unit
    clipped = np.array([0.2, 0.3, 0.5, 0.6, 1e-3, 0.4])
    want = (clipped.reshape(2, Q) / clipped.reshape(2, Q).sum(-1, keepdims=True)).ravel()
    np.testing.assert_allclose(P.mean(fields), want)
    np.testing.assert_allclose(
        P.mean(P.field_for_mean(m, clip=0.05)).reshape(2, Q)[1, 1], 0.05 / 1.05
    )  # clip at a non-default


def test_sample_draws_each_state_with_its_softmax_probability():
    P = unit_type("potts", 4)
    field = np.array([0.5, -1.0, 2.0, 0.0, 0.0, 0.0, 0.0, 3.0])
    bias = np.array([0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0, -3.0])
    n = 200_000
    a = np.tile(field, (n, 1))
    x = P.sample_(a, np.random.default_rng(2), bias=bias)
    assert x is a and set(np.unique(x)) == {0.0, 1.0}
    np.testing.assert_array_equal(x.reshape(n, 2, 4).sum(-1), 1)
    p = P.mean(field + bias)
    freq = x.mean(0)
    np.testing.assert_array_less(np.abs(freq - p), 5 * np.sqrt(p * (1 - p) / n) + 1e-9)
    u = P.uniform_states(np.random.default_rng(3), (n, 8), np.float32)
    assert u.dtype == np.float32
    np.testing.assert_allclose(u.mean(0), 0.25, atol=0.005)


# ---------------------------------------------------------------- the RBM by enumeration
@pytest.mark.parametrize(
    "units, hidden, q_h",
    [(3, 4, None), (4, 2, None), (2, 2, 3)],
    ids=["visible-enumerated", "hidden-enumerated", "potts-hidden"],
)
def test_log_partition_and_marginals_equal_brute_force(backend, units, hidden, q_h):
    """log Z and p(v) (hence every unit's marginal) equal the sums over all (v, h) pairs, whichever
    layer the code enumerates; q = 3 visible, Bernoulli or q = 3 hidden."""
    rbm = potts_rbm(backend, units, hidden, q_h=q_h, seed=units + hidden)
    vs, hs, log_w = joint_log_weights(rbm.map(backend.to_numpy))
    log_z = logsumexp(log_w)
    assert log_partition(rbm) == pytest.approx(log_z, abs=1e-9)
    log_p = backend.to_numpy(log_likelihood(rbm, backend.asarray(vs)))
    np.testing.assert_allclose(log_p, logsumexp(log_w, axis=1) - log_z, atol=1e-9)
    np.testing.assert_allclose(
        -backend.to_numpy(free_energy(rbm, backend.asarray(vs))), logsumexp(log_w, axis=1), atol=1e-9
    )
    marginals = np.exp(log_p) @ vs  # P(unit i = s), one-hot columns
    brute = np.exp(logsumexp(log_w, axis=1) - log_z) @ vs
    np.testing.assert_allclose(marginals, brute, atol=1e-12)
    np.testing.assert_allclose(marginals.reshape(units, Q).sum(-1), 1.0)


def test_conditionals_are_the_brute_force_conditionals(backend):
    rbm = potts_rbm(backend, 3, 2, seed=5)
    np_rbm = rbm.map(backend.to_numpy)
    vs, hs, log_w = joint_log_weights(np_rbm)
    for j, h in enumerate(hs):  # p(v | h): the column of log_w, normalised, marginalised per unit
        p_v = np.exp(log_w[:, j] - logsumexp(log_w[:, j]))
        got = backend.to_numpy(rbm.visible_probs(backend.asarray(h[None])))[0]
        np.testing.assert_allclose(got, p_v @ vs, atol=1e-12)


def test_exact_samples_follow_p_v(backend):
    rbm = potts_rbm(backend, 3, 5, scale=0.7, seed=6)
    vs, _, log_w = joint_log_weights(rbm.map(backend.to_numpy))
    p = np.exp(logsumexp(log_w, axis=1) - logsumexp(log_w))
    draws = backend.to_numpy(sample_exact(rbm, backend.rng(0), 40_000))
    counts = np.bincount(brute_index(draws), minlength=Q**3) / len(draws)
    assert 0.5 * np.abs(counts - p).sum() < 0.02


def stationary_tv(rbm, backend, chains: int, sweeps: int, seed: int) -> float:
    vs, _, log_w = joint_log_weights(rbm.map(backend.to_numpy))
    p = np.exp(logsumexp(log_w, axis=1) - logsumexp(log_w))
    start = rbm.visible_units.uniform_states(backend.rng(seed), (chains, rbm.n_visible), rbm.dtype)
    v = backend.to_numpy(gibbs_chain(rbm, start, backend.rng(seed + 1), sweeps))
    units = rbm.n_visible // Q
    counts = np.bincount(brute_index(v), minlength=Q**units)
    return 0.5 * np.abs(counts / chains - p).sum()


def test_block_gibbs_samples_the_enumerated_distribution(backend):
    """Total variation between 20,000 chains after 40 sweeps and exact p(v) (27 states): sampling
    error alone gives about 0.5·Σ√(p/N) ≈ 0.01; a wrong conditional (the model with W doubled,
    sampled and compared with the original) is far outside."""
    rbm = potts_rbm(backend, 3, 3, scale=0.8, seed=7)
    assert stationary_tv(rbm, backend, 20_000, 40, seed=8) < 0.025
    wrong = rbm.replace(W=2 * rbm.W)
    vs, _, log_w = joint_log_weights(rbm.map(backend.to_numpy))
    start = wrong.visible_units.uniform_states(backend.rng(8), (20_000, rbm.n_visible), rbm.dtype)
    v = backend.to_numpy(gibbs_chain(wrong, start, backend.rng(9), 40))
    counts = np.bincount(brute_index(v), minlength=27) / 20_000
    p = np.exp(logsumexp(log_w, axis=1) - logsumexp(log_w))
    assert 0.5 * np.abs(counts - p).sum() > 0.1


# ---------------------------------------------------------------- configuration and data
def test_config_sizes_count_columns():
    config = RBMConfig(n_hidden=5, visible_units="potts", visible_states=4)
    assert RBM.sizes(config, 7) == {"n_visible": 28, "n_hidden": 5}
    config = RBMConfig(n_hidden=5, hidden_units="potts", hidden_states=3)
    assert RBM.sizes(config, 7) == {"n_visible": 7, "n_hidden": 15}


def test_initial_model_matches_the_data_frequencies():
    from rbmlab.models.rbm import init_rbm

    codes = np.random.default_rng(0).choice(3, size=(5000, 4), p=[0.1, 0.3, 0.6])
    x = Potts.with_states(3).encode(codes)
    rbm = init_rbm(
        np,
        np.random.default_rng(1),
        12,
        2,
        weight_std=0.0,
        data_mean=x.mean(0),
        visible="potts",
        visible_states=3,
        dtype="float64",
    )
    assert rbm.visible_units.q == 3 and rbm.data_dimension == 4
    np.testing.assert_allclose(rbm.visible_units.mean(rbm.b_v), x.mean(0), atol=1e-6)


@pytest.fixture()
def codes_file(tmp_path):
    codes = np.random.default_rng(0).integers(0, 3, size=(200, 4))
    path = tmp_path / "codes.npy"
    np.save(path, codes)
    return path


def run_cli(tmp_path, monkeypatch, *overrides):
    from rbmlab.cli import main

    monkeypatch.chdir(tmp_path)
    return main(["run", *overrides])


def test_a_potts_rbm_trains_on_integer_codes_and_its_checkpoint_evaluates(
    tmp_path, monkeypatch, capsys, codes_file
):
    from rbmlab.cli import main
    from rbmlab.run.checkpoint import load_checkpoint

    common = [f"dataset.path={codes_file}", "model.visible_units=potts", "model.visible_states=3"]
    code = run_cli(
        tmp_path,
        monkeypatch,
        "dataset=file",
        *common,
        "model.n_hidden=3",
        "learner=pcd",
        "evaluator=exact",
        "train.epochs=2",
        f"hydra.run.dir={tmp_path / 'run'}",
    )
    assert code in (0, None)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    ll = summary["final"]["test_log_likelihood"] if "final" in summary else summary["test_log_likelihood"]
    assert -4 * np.log(3) - 0.5 < ll < -4 * np.log(3) + 0.2  # near uniform codes' entropy
    model = load_checkpoint(tmp_path / "run" / "checkpoint.npz")[0]
    assert model.settings()["visible_states"] == "3" and model.W.shape == (12, 3)
    capsys.readouterr()
    main(
        [
            "evaluate",
            f"checkpoint={tmp_path / 'run' / 'checkpoint.npz'}",
            "dataset=file",
            *common[:1],
            "evaluator=exact",
        ]
    )
    out = capsys.readouterr().out
    assert "log" in out


@pytest.mark.parametrize(
    "overrides, needle",
    [
        (
            ["model.visible_units=potts", "model.visible_states=2"],
            "holds {0,1,2}, but model.visible_units=potts has potts (2 states) visible units, values {0,1} "
            "(model.visible_units=potts model.visible_states=3 takes these)",
        ),
        (["model.visible_units=bernoulli"], "(model.visible_units=potts model.visible_states=3 takes these)"),
        (
            ["model.visible_units=spin", "model.visible_states=3"],
            "model.visible_states: spin units have 2 states, got 3",
        ),
        (
            ["model.visible_units=potts", "model.visible_states=3", "learner=tap"],
            "model.visible_units: potts visible units; learner=tap is written for Bernoulli {0,1} or spin",
        ),
        (["model.visible_units=potts", "model.visible_states=65"], "model.visible_states: must be <= 64"),
    ],
)
def test_bad_potts_configurations_are_one_line(tmp_path, monkeypatch, capsys, codes_file, overrides, needle):
    with pytest.raises(SystemExit) as exit_info:
        run_cli(
            tmp_path,
            monkeypatch,
            "dataset=file",
            f"dataset.path={codes_file}",
            "evaluator=exact",
            "model.n_hidden=3",
            *overrides,
        )
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_info.value.code == 2 and len(err) == 1 and err[0].startswith("rbmlab: error:"), err
    assert needle in err[0], err[0]


def test_the_python_estimator_takes_integer_codes_and_samples_codes():
    from rbmlab.api.rbm import RBM as Estimator

    X = np.random.default_rng(0).integers(0, 3, size=(100, 4))
    est = Estimator(
        n_components=3,
        model_options={"visible_units": "potts", "visible_states": 3},
        evaluator="exact",
        n_iter=2,
        random_state=0,
    ).fit(X)
    assert est.n_features_in_ == 4 and est.model_.W.shape == (12, 3)
    np.testing.assert_allclose(
        est.score_samples(X),
        log_likelihood(est.model_, Potts.with_states(3).encode(X, np.float64)),
        rtol=1e-5,
    )
    drawn = est.sample(5, n_steps=3)
    assert drawn.shape == (5, 4) and set(np.unique(drawn)) <= {0, 1, 2}
    with pytest.raises(ValueError, match=r"potts visible units of 2 states take the codes \{0,1\}"):
        Estimator(n_components=3, model_options={"visible_units": "potts", "visible_states": 2}).fit(X)


@pytest.mark.slow  # composes every entrant's configuration (about 10 s)
def test_a_potts_board_enters_only_the_learners_written_for_its_units():
    from rbmlab.experiment.leaderboard import entrants, sweep_spec
    from rbmlab.experiment.spec import load_spec

    spec = load_spec("leaderboard/exact")
    spec["overrides"] = [*spec["overrides"], "model.visible_units=potts", "model.visible_states=3"]
    board = sweep_spec("leaderboard/exact", spec, "smoke")
    assert {"cd", "pcd", "sdcp"} <= set(board["variants"])
    assert {"tap", "adatap", "frank_wolfe", "pmp_reset"} <= set(board["not_entered"])
    assert set(board["variants"]) | set(board["not_entered"]) == set(entrants())
    assert "potts visible units; learner=tap is written for" in board["not_entered"]["tap"]


def test_potts_samples_draws_a_valid_split_after_the_others():
    from rbmlab.data import load_dataset

    plain = load_dataset("potts_samples", n_train=50, n_test=20)
    with_valid = load_dataset("potts_samples", n_train=50, n_test=20, n_valid=30)
    assert plain.valid is None and with_valid.valid.shape == (30, 10)
    np.testing.assert_array_equal(plain.train, with_valid.train)  # the earlier draws unchanged
    np.testing.assert_array_equal(plain.test, with_valid.test)
    assert "valid" in with_valid.info["ground_truth"]["mean_loglik"]


def test_a_combined_evaluator_takes_potts_units_only_where_every_part_does():
    from rbmlab.evaluators import EVALUATORS

    def combined(*parts):
        return EVALUATORS.build(EVALUATORS.parse({"name": "combined", "parts": [{"name": p} for p in parts]}))

    assert "potts" in combined("exact", "ais").units["visible"]
    assert "potts" not in combined("ais", "kl").units["visible"]  # kl names no unit types
    assert "potts" not in combined("ais", "reconstruction").units["visible"]
