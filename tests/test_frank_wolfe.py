"""Frank-Wolfe for infinite RBMs (frank_wolfe paper) against exact answers.

The reference here is Eq. 5 written out by brute force over every visible state, independent of
rbmlab's RBM code: log p(v) = α Σ_s γ_s softplus(w_s·v + c_s) + b·v − log Z with q = Σ_s γ_s δ(w_s).
"""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize_scalar

from rbmlab.errors import RbmlabError
from rbmlab.learners.frank_wolfe import FrankWolfeConfig, append_unit, without_units
from rbmlab.learners.frank_wolfe_oracle import LinearOracle, solve
from rbmlab.models.rbm import RBM, log_likelihood
from rbmlab.validation import parse_options
from tests.conftest import all_binary
from tests.test_cli import rbmlab, straight_and_resumed

D = 8
STATES = all_binary(D)


def infinite_rbm_log_p(v, units, gammas, alpha, b):
    """Eq. 5 by enumeration: units (K, D + 1) rows (w, c), mixture weights gammas (K,)."""

    def neg_f(x):
        a = x @ units[:, :-1].T + units[:, -1]
        return alpha * (np.logaddexp(0, a) @ gammas) + x @ b

    return neg_f(v) - np.logaddexp.reduce(neg_f(STATES))


def penalised_objective(data, units, gammas, alpha, b, lam):
    """Eq. 6: mean log-likelihood − (λ/2) E_q‖w‖²."""
    return infinite_rbm_log_p(data, units, gammas, alpha, b).mean() - 0.5 * lam * gammas @ (units**2).sum(
        axis=1
    )


def model_probabilities(units, gammas, alpha, b):
    return np.exp(infinite_rbm_log_p(STATES, units, gammas, alpha, b))


@pytest.fixture
def toy():
    """Data with structure an independent model lacks: noisy copies of two prototypes."""
    rng = np.random.default_rng(3)
    prototypes = np.array([[1, 1, 1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 1, 1, 0, 1]], dtype=float)
    x = prototypes[rng.integers(0, 2, size=40)]
    flip = rng.random(x.shape) < 0.1
    return np.where(flip, 1 - x, x)


def test_fw_model_with_alpha_n_is_the_rbm_of_its_n_units():
    """Prop. 3.1: q uniform over n point masses and α = n give the plain RBM with those n
    hidden units (the FW model after n insertions); another α does not."""
    rng = np.random.default_rng(0)
    n = 5
    units = rng.normal(size=(n, D + 1))
    b = rng.normal(size=D)
    rbm = RBM(np.zeros((D, 3)), b, np.zeros(3))
    rbm = without_units(rbm)
    for w in units:  # as FW builds it: append with step 1/t at α_t = t
        rbm = append_unit(rbm, w)
    v = STATES[rng.integers(0, 2**D, size=30)]
    ours = log_likelihood(rbm, v)
    np.testing.assert_allclose(
        ours, infinite_rbm_log_p(v, units, np.full(n, 1 / n), n, b), rtol=1e-10, atol=1e-10
    )
    assert not np.allclose(ours, infinite_rbm_log_p(v, units, np.full(n, 1 / n), n + 1, b))


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("penalize_bias", [True, False])
def test_oracle_gradient_matches_finite_differences(toy, weighted, penalize_bias):
    rng = np.random.default_rng(1)
    states = STATES if weighted else STATES[rng.integers(0, 2**D, size=50)]
    weights = rng.dirichlet(np.ones(len(states))) if weighted else None
    oracle = LinearOracle(toy, states, weights, lam=0.3, penalize_bias=penalize_bias)
    w = rng.normal(size=D + 1)
    value, grad = oracle(w)
    # the value against Alg. 1 line 4 written out
    pi = weights if weighted else np.full(len(states), 1 / len(states))
    sp = lambda x: np.logaddexp(0, x @ w[:-1] + w[-1])  # noqa: E731
    penalty = w @ w if penalize_bias else w[:-1] @ w[:-1]
    assert value == pytest.approx(0.15 * penalty + pi @ sp(states) - sp(toy).mean(), rel=1e-12)
    eps = 1e-6
    fd = [(oracle(w + eps * e)[0] - oracle(w - eps * e)[0]) / (2 * eps) for e in np.eye(D + 1)]
    np.testing.assert_allclose(grad, fd, rtol=1e-6, atol=1e-8)


def test_oracle_finds_the_exact_minimiser_on_a_convex_instance(toy):
    """With a large λ the problem is strongly convex: every start ends at one minimiser with zero
    gradient, better than w = 0 (value 0) whenever the data and model moments differ."""
    oracle = LinearOracle(toy, STATES, np.full(2**D, 2.0**-D), lam=2.0)
    best = solve(oracle, np.random.default_rng(0), restarts=3, gtol=1e-10)
    assert np.abs(oracle(best.w)[1]).max() < 1e-6
    assert best.value < 0 and oracle.gain(np.zeros(D + 1)) == pytest.approx(0, abs=1e-15)
    other = solve(oracle, np.random.default_rng(7), restarts=1, init_std=1.0, gtol=1e-10)
    np.testing.assert_allclose(other.w, best.w, atol=1e-5)


def fw_with_exact_expectations(data, alpha, lam, steps, rng, bias_steps=300, eta=0.5):
    """Frank-Wolfe on Eq. 6 at a fixed temperature α with exact expectations: the exact linear
    oracle is Eq. 9 with λ/α (derived from Eq. 8, which scales the data terms by α but not λ), the
    step β by exact line search on [0, 1]; then exact ascent on b. Yields (objective before the
    step, FW gap, slope at β = 0, objective after)."""
    units, gammas, b = np.zeros((0, D + 1)), np.zeros(0), np.zeros(D)
    for t in range(1, steps + 1):
        before = penalised_objective(data, units, gammas, alpha, b, lam) if t > 1 else None
        p = model_probabilities(units, gammas, alpha, b)
        oracle = LinearOracle(data, STATES, p, lam=lam / alpha)
        w = solve(oracle, rng, restarts=3).w
        # ⟨δ_w − q, ∇_q L⟩ with ∇_q L(u) = −α f_oracle(u) (Eq. 8): the FW duality gap
        gap = alpha * (-oracle(w)[0] + sum(g * oracle(u)[0] for g, u in zip(gammas, units)))
        new = np.vstack([units, w])
        mix = lambda beta: np.append((1 - beta) * gammas, beta)  # noqa: E731, B023 - used in this step only
        if t == 1:
            beta = 1.0  # q_0 has no atoms: the first step is the point mass
        else:
            L = lambda beta: -penalised_objective(data, new, mix(beta), alpha, b, lam)  # noqa: E731, B023
            h = 1e-6
            slope = (L(0) - L(h)) / h
            beta = minimize_scalar(L, bounds=(0, 1), method="bounded", options={"xatol": 1e-9}).x
        units, gammas = new, mix(beta)
        after_step = penalised_objective(data, units, gammas, alpha, b, lam)
        for _ in range(bias_steps):  # Eq. 10 with exact model means: concave in b
            b = b + eta * (data.mean(axis=0) - model_probabilities(units, gammas, alpha, b) @ STATES)
        after = penalised_objective(data, units, gammas, alpha, b, lam)
        assert after >= after_step - 1e-12
        if t > 1:
            yield before, gap, slope, after


def test_each_fw_step_with_exact_expectations_does_not_decrease_the_objective(toy):
    """Eq. 6 is concave in q (Prop. 3.1): at a fixed α, with the exact oracle the FW gap is ≥ 0,
    it is the slope of the objective along the FW direction (Eq. 8 is the functional gradient),
    and the line-searched step plus the bias ascent never decrease the objective."""
    rng = np.random.default_rng(0)
    rises = []
    for before, gap, slope, after in fw_with_exact_expectations(toy, alpha=4.0, lam=0.05, steps=6, rng=rng):
        assert gap >= -1e-9
        assert slope == pytest.approx(gap, rel=1e-3, abs=1e-5)
        assert after >= before - 1e-10
        rises.append(after - before)
    assert sum(rises) > 0.05  # it learns: the objective rises, not merely stays put


def test_the_paper_step_alpha_t_is_not_monotone_in_general(toy):
    """Alg. 1's step (β = 1/t with α_t = t) adds a whole unit: its change of the log-likelihood is
    E_data sp − log E_p e^{sp} ≤ the oracle's linear gain (Jensen), and can be negative. The
    counterexample the claims README cites: a small λ lets the oracle pick a large-norm unit."""
    lam = 0.01
    rbm = RBM(np.zeros((D, 0)), np.zeros(D), np.zeros(0))
    p = model_probabilities(np.zeros((0, D + 1)), np.zeros(0), 0.0, np.zeros(D))
    oracle = LinearOracle(toy, STATES, p, lam=lam)
    w = solve(oracle, np.random.default_rng(0), restarts=3).w
    assert oracle.gain(w) > 0
    before = log_likelihood(rbm, toy).mean()
    after = log_likelihood(append_unit(rbm, w), toy).mean()
    assert after - before < oracle.gain(w)  # Jensen: the linear gain is an upper bound


def test_config_requires_the_whole_training_set_per_step():
    with pytest.raises(RbmlabError, match=r"learner.batch_size: frank_wolfe adds one hidden unit"):
        parse_options(FrankWolfeConfig, {"name": "frank_wolfe", "batch_size": 100}, "learner")


FW_SMALL = [
    "train.eval_every=1",
    "dataset=bars_stripes",
    "learner=frank_wolfe",
    "model.visible_bias=zero",
    "evaluator=exact",
    "evaluator.splits=[test,train]",
    "learner.n_samples=200",
    "learner.bias_fit=fixed",  # 20 plain bias steps a unit: cheap
    "learner.bias_steps=20",
    "learner.bias_chains=50",
    "learner.lam=0.05",
    "learner.restarts=2",
    "train.progress=false",
]


def test_a_growing_run_records_its_size_and_snapshots_that_start_cd(tmp_path):
    rbmlab("run", *FW_SMALL, "train.epochs=6", "train.snapshot_every=3", "hydra.run.dir=fw", cwd=tmp_path)
    metrics = pd.read_csv(tmp_path / "fw" / "metrics.csv")
    assert metrics["n_hidden"].tolist() == list(range(7))  # q_0 has no units; one per epoch
    assert (metrics["fw_oracle_gain"][1:] >= 0).all()
    summary = json.loads((tmp_path / "fw" / "summary.json").read_text())
    assert summary["n_hidden"] == 6
    assert "early_stopping" not in summary  # bars_stripes has no valid split
    snapshot = tmp_path / "fw" / "snapshots" / "epoch_3.npz"
    assert sorted(p.name for p in snapshot.parent.iterdir()) == ["epoch_3.npz", "epoch_6.npz"]
    # CD starts from the FW model of 3 units: same log-likelihood at epoch 0, sizes from the file
    rbmlab(
        "run",
        "dataset=bars_stripes",
        "learner=cd",
        "learner.k=2",
        "evaluator=exact",
        "evaluator.splits=[test,train]",
        f"model.init={snapshot}",
        "train.epochs=2",
        "train.progress=false",
        "hydra.run.dir=cd",
        cwd=tmp_path,
    )
    cd = pd.read_csv(tmp_path / "cd" / "metrics.csv")
    assert json.loads((tmp_path / "cd" / "summary.json").read_text())["n_hidden"] == 3
    assert cd["test_log_likelihood"][0] == pytest.approx(metrics["test_log_likelihood"][3], rel=1e-6)


@pytest.mark.parametrize(
    "init, message",
    [
        ("missing.npz", "model.init: file not found: missing.npz"),
        ("fw/snapshots/epoch_2.npz", "model.init: .* models 9-dimensional data; the dataset has 784"),
    ],
)
def test_model_init_problems_are_one_line(tmp_path, init, message):
    if "fw" in init:
        rbmlab("run", *FW_SMALL, "train.epochs=2", "train.snapshot_every=2", "hydra.run.dir=fw", cwd=tmp_path)
    proc = rbmlab(
        "run",
        "dataset=caltech101",
        "dataset.n_train=100",
        f"model.init={init}",
        "hydra.run.dir=bad",
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert re.search(message, proc.stderr), proc.stderr


@pytest.mark.slow
def test_a_growing_run_killed_mid_growth_resumes_to_identical_metrics(tmp_path):
    args = [*FW_SMALL, "train.epochs=8", "train.checkpoint_every=2", "seed=4"]
    # killed after epoch 5, past the checkpoint of 4 units
    ref, run, _, out = straight_and_resumed(tmp_path, args, kill_after_epoch=5)
    assert "at epoch 4" in out.stdout
    a, b = (json.loads((d / "summary.json").read_text()) for d in (ref, run))
    assert b["status"] == "completed" and b["n_hidden"] == a["n_hidden"] == 8
    assert b["final"] == a["final"]
    ma, mb = pd.read_csv(ref / "metrics.csv"), pd.read_csv(run / "metrics.csv")
    pd.testing.assert_frame_equal(ma.drop(columns="wall_time"), mb.drop(columns="wall_time"))


def test_gap_rule_selects_the_point_before_the_first_large_jump():
    from rbmlab.run.early_stopping import gap_jump

    gaps = [0.0, 1.0, 2.1, 2.9, 4.0, 5.0, 12.0, 20.0, 21.0]
    pick = gap_jump(gaps, kappa=3.0, warmup=3)
    assert pick.stopped and pick.index == 5 and pick.gap == 5.0
    assert not gap_jump([0, 1, 2, 3, 4, 5], kappa=3.0).stopped  # steady growth: no stop
    assert gap_jump([0, 1, 2, 3, 4, 5], kappa=3.0).index == 5
    assert gap_jump([0.0, 1.0, 2.0, 3.0, 30.0], kappa=3.0, warmup=3).index == 3
    # a jump inside the warm-up does not count
    assert gap_jump([0.0, 9.0, 10.0, 11.0, 12.0], kappa=3.0, warmup=3).stopped is False


def test_a_run_with_train_and_valid_likelihoods_records_the_size_early_stopping_selects():
    from rbmlab.run.early_stopping import can_select, select_from_rows

    rows = pd.DataFrame(
        {
            "epoch": range(0, 90, 10),
            "n_hidden": range(0, 90, 10),
            "train_log_likelihood": [-90, -80, -70, -62, -55, -49, -40, -33, -30.0],
            "valid_log_likelihood": [-90, -80.5, -71, -63.4, -56.8, -51.1, -49, -48, -47.0],
        }
    )
    record = select_from_rows(rows, kappa=3.0, warmup=3)
    # gaps 0, .5, 1, 1.4, 1.8, 2.1, 9, 15, 17: the jump 2.1 -> 9 stops at 50 units
    assert record["n_hidden"] == 50 and record["epoch"] == 50 and record["stopped"]
    assert select_from_rows(rows.drop(columns="valid_log_likelihood")) is None
    assert can_select(list(rows.columns), None) and can_select(["epoch", "train_valid_gap"], None)
    assert not can_select(["epoch", "train_log_likelihood"], None)
    assert select_from_rows(rows.iloc[:4], warmup=3) is None  # too few points to judge


def test_model_init_selects_the_one_run_of_a_sweep_with_the_given_values(tmp_path):
    from rbmlab.run.pretrained import select_run

    for i, (h, seed) in enumerate([(2, 0), (2, 1), (4, 0)]):
        (tmp_path / "sweep" / str(i)).mkdir(parents=True)
        (tmp_path / "sweep" / str(i) / "config.yaml").write_text(
            f"seed: {seed}\nmodel:\n  n_hidden: {h}\n  init: null\n"
        )
    sweep = tmp_path / "sweep"
    assert select_run(f"{sweep}?model.n_hidden=2&seed=1") == sweep / "1" / "checkpoint.npz"
    assert select_run(f"{sweep}?model.n_hidden=4.0") == sweep / "2" / "checkpoint.npz"  # numbers as numbers
    for spec, message in [
        (f"{sweep}?model.n_hidden=2", "2 runs \\(0, 1\\) under .* with model.n_hidden=2"),
        (f"{sweep}?model.n_hidden=8&seed=0", "no run under .* with model.n_hidden=8, seed=0"),
        (f"{sweep}?n_hidden", "the selector after '\\?' must be key=value"),
        (f"{tmp_path / 'nowhere'}?seed=0", "no sweep directory"),
        (f"{sweep}?file=checkpoint.npz", "at least one key=value of the run's config"),
        (f"{sweep}?seed=1&file=a&file=b", "one file= at most"),
        (f"{sweep}?seed=1&file=snapshots/epoch_9.npz", "has no snapshots/epoch_9.npz"),
    ]:
        with pytest.raises(RbmlabError, match=f"^model.init: .*{message}"):
            select_run(spec)
    # file=: another file of the selected run, paired by its recorded seed (job 1 holds seed 1)
    (sweep / "1" / "snapshots").mkdir()
    (sweep / "1" / "snapshots" / "epoch_2.npz").write_bytes(b"")
    assert (
        select_run(f"{sweep}?seed=1&file=snapshots/epoch_2.npz") == sweep / "1" / "snapshots" / "epoch_2.npz"
    )


def test_the_oracle_runs_scipys_own_blas_at_one_thread_and_restores_it():
    """L-BFGS-B's vector updates call the OpenBLAS bundled in scipy's wheels: solve limits that
    pool to one thread while it runs (numpy's is left alone) and gives the setting back after."""
    from rbmlab.learners.frank_wolfe_oracle import scipy_blas

    separate = scipy_blas()
    if separate is None:
        pytest.skip("this scipy shares numpy's BLAS")
    from threadpoolctl import threadpool_limits

    seen = []

    class Watching(LinearOracle):
        def __call__(self, w):
            seen.append([lib["num_threads"] for lib in separate.info()])
            return super().__call__(w)

    rng = np.random.default_rng(0)
    x = (rng.random((40, 6)) < 0.4).astype(np.float32)
    with threadpool_limits(limits=2):  # a setting above one (make test's workers start at one)
        before = [lib["num_threads"] for lib in separate.info()]
        if not all(threads > 1 for threads in before):
            pytest.skip(f"scipy's BLAS runs one thread at most here: {before}")
        solve(Watching(x, x[::-1].copy(), lam=1.0), rng, restarts=1)
        assert [lib["num_threads"] for lib in separate.info()] == before
    assert seen and all(threads == [1] * len(before) for threads in seen)


def test_a_growing_run_scored_by_test_error_from_epoch_0(tmp_path):
    """q_0 has no hidden units: at epoch 0 the classifier has no features and predicts the most
    frequent training label (an intercept alone), instead of failing the run."""
    rbmlab(
        "run",
        "dataset=caltech101",
        "dataset.n_train=200",
        "learner=frank_wolfe",
        "learner.n_samples=50",
        "learner.restarts=1",
        "learner.bias_chains=20",
        "learner.bias_max_steps=30",
        "evaluator=test_error",
        "evaluator.C=[1.0]",
        "evaluator.splits=[test]",
        "train.epochs=2",
        "train.eval_every=1",
        "train.progress=false",
        "hydra.run.dir=fw",
        cwd=tmp_path,
    )
    metrics = pd.read_csv(tmp_path / "fw" / "metrics.csv")
    assert json.loads((tmp_path / "fw" / "summary.json").read_text())["status"] == "completed"
    assert metrics["n_hidden"].tolist() == [0, 1, 2] and np.isnan(metrics["classifier_c"][0])
    from rbmlab.data import load_dataset  # noqa: PLC0415

    data = load_dataset("caltech101", n_train=200)
    labels, counts = np.unique(np.asarray(data.train_labels).ravel(), return_counts=True)
    majority = labels[np.argmax(counts)]
    expected = 100 * np.mean(np.asarray(data.test_labels).ravel() != majority)
    assert metrics["test_error"][0] == pytest.approx(expected)


@pytest.mark.parametrize(
    "scaling, pretrained, want, penalize_bias",
    [
        ("constant", 0, [0.6, 0.6, 0.6, 0.6], True),
        ("over_t", 0, [0.6 / 1, 0.6 / 2, 0.6 / 3, 0.6 / 4], False),  # λ/t, t = 1, 2, ... (Eq. 8)
        ("over_t", 2, [0.6 / 3, 0.6 / 4, 0.6 / 5, 0.6 / 6], True),  # from a 2-unit model: t = 3, 4, ...
    ],
)
def test_the_oracle_gets_lambda_on_the_schedule_step_by_step(
    scaling, pretrained, want, penalize_bias, tmp_path, monkeypatch
):
    """The penalty each epoch's oracle is built with (Alg. 1: one unit an epoch, t = units + 1),
    recorded where the learner hands it over: λ constant, or λ/t with t counted from the units the
    run starts with (issue 57: the schedule was only ever seen through its end result); and the
    learner's penalize_bias with it."""
    import rbmlab.learners.frank_wolfe as fw  # noqa: PLC0415
    from rbmlab.hydra_app import validated_run_config  # noqa: PLC0415
    from rbmlab.run.runner import train  # noqa: PLC0415

    handed: list[float] = []
    penalised: list[bool] = []

    class Recorded(LinearOracle):
        def __init__(self, *args, lam, **kwargs):
            handed.append(lam)
            penalised.append(kwargs.get("penalize_bias", True))
            super().__init__(*args, lam=lam, **kwargs)

    monkeypatch.setattr(fw, "LinearOracle", Recorded)
    small = [
        "dataset=bars_stripes",
        "learner=frank_wolfe",
        "learner.bias_fit=fixed",
        "learner.bias_steps=5",
        "learner.n_samples=50",
        "learner.bias_chains=10",
        "learner.restarts=1",
        "learner.lam=0.6",
        f"learner.lambda_scaling={scaling}",
        f"learner.penalize_bias={str(penalize_bias).lower()}",
        "evaluator=exact",
        "train.eval_every=0",
        "train.progress=false",
    ]
    if pretrained:  # a run of `pretrained` units to start from (a snapshot of the same learner)
        train(
            validated_run_config([*small, f"train.epochs={pretrained}"]),
            tmp_path / "first",
            echo=lambda s: None,
        )
        small.append(f"model.init={tmp_path / 'first' / 'checkpoint.npz'}")
        handed.clear()
        penalised.clear()
    train(validated_run_config([*small, "train.epochs=4"]), tmp_path / "run", echo=lambda s: None)
    assert handed == pytest.approx(want, rel=1e-12)
    assert penalised == [penalize_bias] * 4
