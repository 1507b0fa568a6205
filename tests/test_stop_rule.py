"""train.stop_rule: early stopping during training (frank_wolfe §4: the train − valid gap;
crbm_bp §6: the validation error), the selected model's file and final metrics, resume, and the
free_energy evaluator's gap against exact enumeration.

The runs train a small RBM on 20 Caltech-101 silhouettes with exact log-likelihoods on the train
and valid splits; where each rule must stop is computed from a run without a rule.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rbmlab.cli import main
from rbmlab.data import load_dataset
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.hydra_app import validated_run_config
from rbmlab.run.checkpoint import load_checkpoint
from rbmlab.run.early_stopping import StopRule, gap_jump
from rbmlab.run.runner import train
from tests.test_run_identity import recorded_hash

RUN = [
    "train.eval_every=1",
    "dataset=caltech101",
    "dataset.n_train=20",
    "model.n_hidden=8",
    "evaluator=exact",
    "evaluator.splits=[train,valid]",
    "learner=cd",
    "learner.k=1",
    "learner.batch_size=5",
    "learner.lr=0.05",
    "train.progress=false",
    "train.snapshot_every=1",
    "train.gap_warmup=5",
]
REFERENCE_EPOCHS = 12


def caltech_present() -> bool:
    try:
        load_dataset("caltech101", n_train=20)
    except RbmlabError:
        return False
    return True


needs_caltech = pytest.mark.skipif(not caltech_present(), reason="caltech101 files not here")


def run(out: Path, *overrides: str, echo=lambda s: None) -> Path:
    train(validated_run_config([*RUN, *overrides]), out, echo=echo)
    return out


def summary_of(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text())


def metrics_of(run_dir: Path) -> pd.DataFrame:
    return pd.read_csv(run_dir / "metrics.csv").drop(columns="wall_time")


@pytest.fixture(scope="module")
def reference(tmp_path_factory) -> Path:
    """The same training without a rule (train.stop_rule=none), every epoch evaluated and kept."""
    return run(tmp_path_factory.mktemp("ref") / "run", f"train.epochs={REFERENCE_EPOCHS}")


def first_patience_stop(values, patience: int, higher: bool) -> tuple[int, int]:
    """(stop index, selected index) of the valid rule, transcribed independently: the running
    best (strict improvement) and the count of points since it."""
    best, since = 0, 0
    for i in range(1, len(values)):
        better = values[i] > values[best] if higher else values[i] < values[best]
        best, since = (i, 0) if better else (best, since + 1)
        if since >= patience:
            return i, best
    raise AssertionError("the reference run is too short for the rule to fire")


def assert_selected_is_the_snapshot(run_dir: Path, epoch: int) -> None:
    selected, meta, _ = load_checkpoint(run_dir / "selected.npz")
    snapshot, _, _ = load_checkpoint(run_dir / "snapshots" / f"epoch_{epoch}.npz")
    assert meta["epoch"] == epoch
    for name in ("W", "b_v", "b_h"):
        np.testing.assert_array_equal(getattr(selected, name), getattr(snapshot, name))


def exact_mean_log_likelihood(model, x: np.ndarray) -> float:
    """Brute force over the 2^8 hidden states (the visible units summed out), float64."""
    W, b_v, b_h = (np.asarray(a, np.float64) for a in (model.W, model.b_v, model.b_h))
    H = ((np.arange(2 ** W.shape[1])[:, None] >> np.arange(W.shape[1])) & 1).astype(np.float64)
    log_z = np.logaddexp.reduce(H @ b_h + np.logaddexp(0, H @ W.T + b_v).sum(1))
    return float((x @ b_v + np.logaddexp(0, x @ W + b_h).sum(1)).mean() - log_z)


# ----------------------------------------------------------------- the rule objects
def test_valid_rule_keeps_the_best_and_fires_after_patience_points():
    rule = StopRule("valid", patience=2, metric=MetricSpec("error", "%", False))  # lower is better
    values = [5.0, 4.0, 4.0, 3.0, 3.5, 3.0, 3.2]
    decisions = [rule.decide(values[:n]) for n in range(1, len(values) + 1)]
    assert [d.selected for d in decisions] == [0, 1, 1, 3, 3, 3, 3]  # a tie is no improvement
    assert [d.keep for d in decisions] == [True, True, False, True, False, False, False]
    assert [d.stop for d in decisions] == [False] * 5 + [True, True]
    higher = StopRule("valid", patience=2)
    assert higher.decide([1.0, 3.0, 2.0, 2.5]).stop and higher.decide([1.0, 3.0, 2.0, 2.5]).selected == 1
    assert not higher.decide([1.0, 3.0, 2.0, 3.5]).stop


def test_gap_rule_online_fires_where_the_offline_rule_selects():
    """At each evaluation point as it comes, the gap rule fires at the first jump gap_jump finds
    over the whole series and selects the point before it; until then it keeps the newest."""
    rng = np.random.default_rng(0)
    series = [[0.0, 1.0, 2.1, 2.9, 4.0, 5.0, 12.0, 20.0, 21.0]]
    series += [np.cumsum(1 + 0.5 * rng.random(30) + 10 * (rng.random(30) < 0.03)) for _ in range(40)]
    fired = 0
    for gaps in series:
        rule = StopRule("gap", kappa=3.0, warmup=3)
        offline = gap_jump(gaps, kappa=3.0, warmup=3)
        stop = next((n for n in range(1, len(gaps) + 1) if rule.decide(gaps[:n]).stop), None)
        if offline.stopped:
            fired += 1
            assert stop == offline.index + 2  # the point after the selected one
            assert rule.decide(gaps[:stop]).selected == offline.index
        else:
            assert stop is None
        keeps = [rule.decide(gaps[:n]).keep for n in range(1, (stop or len(gaps) + 1))]
        assert all(keeps)
    assert 5 < fired < len(series)


def test_the_direction_of_the_stop_metric_is_its_metric_spec():
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.models import MODELS
    from rbmlab.run.runner import stop_rule_of

    def rule(*overrides):
        cfg = validated_run_config(["train.stop_rule=valid", "evaluator.splits=[valid]", *overrides])
        return stop_rule_of(cfg, MODELS.get(cfg.model.name), EVALUATORS.build(cfg.evaluator))

    assert rule("evaluator=exact", "train.stop_metric=valid_log_likelihood").metric.higher_is_better
    assert not rule("evaluator=exact", "train.stop_metric=valid_reconstruction_error").metric.higher_is_better
    assert not rule(
        "model=crbm",
        "task=occlude",
        "learner=mle_bp",
        "evaluator=pixel_error",
        "train.stop_metric=valid_pixel_error",
        "train.patience=4",
    ).metric.higher_is_better
    with pytest.raises(RbmlabError, match="^train.stop_metric: .* does not record valid_pixel_error"):
        rule("evaluator=exact", "train.stop_metric=valid_pixel_error")


def test_free_energy_gap_is_the_exact_log_likelihood_gap():
    """train_valid_gap over the first n_valid training rows equals the difference of exact mean
    log-likelihoods (log Z enumerated), and each split's −F minus log Z is its exact mean."""
    from rbmlab.backend import get_backend
    from rbmlab.data.batch import Batch
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.evaluators.base import Context
    from rbmlab.models.rbm import RBM
    from rbmlab.run.evaluation import evaluate

    rng = np.random.default_rng(1)
    model = RBM(rng.normal(0, 1, (9, 3)), rng.normal(0, 1, 9), rng.normal(0, 1, 3))
    train_x, valid_x = [(rng.random((n, 9)) < 0.4).astype(np.float64) for n in (20, 8)]
    splits = {"train": Batch(train_x), "valid": Batch(valid_x)}
    context = Context(rng=get_backend("numpy", "float64").rng(0), final=True)
    fe = evaluate(model, splits, EVALUATORS.build(EVALUATORS.parse("free_energy")), context)
    V = ((np.arange(2**9)[:, None] >> np.arange(9)) & 1).astype(np.float64)
    neg_f = lambda x: x @ model.b_v + np.logaddexp(0, x @ model.W + model.b_h).sum(1)  # noqa: E731
    log_z = np.logaddexp.reduce(neg_f(V))
    exact = lambda x: float((neg_f(x) - log_z).mean())  # noqa: E731
    assert fe["train_valid_gap"] == pytest.approx(exact(train_x[:8]) - exact(valid_x), rel=1e-12)
    assert abs(fe["train_valid_gap"] - (exact(train_x) - exact(valid_x))) > 1e-3  # n_valid rows, not all
    assert fe["valid_log_likelihood_unnormalised"] - log_z == pytest.approx(exact(valid_x), rel=1e-12)
    assert fe["train_log_likelihood_unnormalised"] - log_z == pytest.approx(exact(train_x), rel=1e-12)


# ----------------------------------------------------------------- runs
@needs_caltech
def test_gap_rule_stops_after_the_jump_and_finishes_on_the_point_before(reference, tmp_path):
    ref = metrics_of(reference)
    pick = gap_jump((ref.train_log_likelihood - ref.valid_log_likelihood).to_numpy(), kappa=3.0, warmup=5)
    assert pick.stopped and pick.index + 1 < REFERENCE_EPOCHS
    stop, chosen = int(ref.epoch[pick.index + 1]), int(ref.epoch[pick.index])
    out = run(tmp_path / "gap", "train.stop_rule=gap", "train.epochs=30")
    summary = summary_of(out)
    assert summary["status"] == "completed" and summary["epochs_done"] == stop
    assert summary["stopped"] == {
        **summary["stopped"],
        "epoch": stop,
        "selected_epoch": chosen,
        "rule": "gap",
        "fired": True,
    }
    # every row evaluated is kept, and it is the unstopped run's
    pd.testing.assert_frame_equal(metrics_of(out), ref[ref.epoch <= stop].reset_index(drop=True))
    assert load_checkpoint(out / "checkpoint.npz")[1]["epoch"] == stop
    assert_selected_is_the_snapshot(out, chosen)
    # final: the selected model's (exact evaluation: its row), not the last one's
    final, row = summary["final"], ref[ref.epoch == chosen].iloc[0]
    assert final == {k: pytest.approx(row[k], rel=1e-12) for k in final}
    assert final["valid_log_likelihood"] != ref[ref.epoch == stop].valid_log_likelihood.iloc[0]
    selected = load_checkpoint(out / "selected.npz")[0]
    valid = load_dataset("caltech101", n_train=20).valid.astype(np.float64)
    assert final["valid_log_likelihood"] == pytest.approx(
        exact_mean_log_likelihood(selected, valid), rel=1e-6
    )
    # the post-hoc record agrees with the online rule
    assert summary["early_stopping"]["epoch"] == chosen
    # model.init loads it: an untrained run from it scores the selected row
    again = run(tmp_path / "init", f"model.init={out / 'selected.npz'}", "train.epochs=0")
    assert metrics_of(again).valid_log_likelihood[0] == pytest.approx(row.valid_log_likelihood, rel=1e-9)


@needs_caltech
def test_free_energy_gap_stops_the_run_where_the_exact_gap_does(reference, tmp_path):
    """With 20 training rows (< n_valid) both gaps average the same rows: the same stop."""
    exact = run(tmp_path / "exact", "train.stop_rule=gap", "train.epochs=30", "train.snapshot_every=0")
    cheap = run(
        tmp_path / "fe",
        "train.stop_rule=gap",
        "train.epochs=30",
        "train.snapshot_every=0",
        "evaluator=free_energy",
    )
    a, b = summary_of(exact)["stopped"], summary_of(cheap)["stopped"]
    assert (b["epoch"], b["selected_epoch"]) == (a["epoch"], a["selected_epoch"])
    assert b["value"] == pytest.approx(a["value"], rel=1e-9)
    assert "train_valid_gap" in pd.read_csv(cheap / "metrics.csv").columns


@needs_caltech
def test_valid_rule_stops_patience_points_after_the_best(reference, tmp_path):
    ref = metrics_of(reference)
    index, best = first_patience_stop(ref.valid_log_likelihood.to_numpy(), patience=3, higher=True)
    stop, chosen = int(ref.epoch[index]), int(ref.epoch[best])
    assert 0 < chosen < stop - 1  # a case that tells the best from the first and the previous
    out = run(
        tmp_path / "valid",
        "train.stop_rule=valid",
        "train.stop_metric=valid_log_likelihood",
        "train.patience=3",
        "train.epochs=30",
    )
    summary = summary_of(out)
    assert (summary["stopped"]["epoch"], summary["stopped"]["selected_epoch"]) == (stop, chosen)
    assert summary["epochs_done"] == stop and summary["stopped"]["fired"]
    pd.testing.assert_frame_equal(metrics_of(out), ref[ref.epoch <= stop].reset_index(drop=True))
    assert_selected_is_the_snapshot(out, chosen)
    row = ref[ref.epoch == chosen].iloc[0]
    assert summary["final"]["valid_log_likelihood"] == pytest.approx(row.valid_log_likelihood, rel=1e-12)


@needs_caltech
def test_a_rule_that_does_not_fire_runs_every_epoch_and_finishes_on_the_best(reference, tmp_path):
    ref = metrics_of(reference).iloc[:5]
    out = run(
        tmp_path / "valid",
        "train.stop_rule=valid",
        "train.stop_metric=valid_log_likelihood",
        "train.patience=20",
        "train.epochs=4",
    )
    summary = summary_of(out)
    best = int(ref.epoch[ref.valid_log_likelihood.idxmax()])
    assert summary["epochs_done"] == 4 and not summary["stopped"]["fired"]
    assert summary["stopped"]["selected_epoch"] == best
    assert summary["final"]["valid_log_likelihood"] == pytest.approx(
        ref.valid_log_likelihood.max(), rel=1e-12
    )


@needs_caltech
def test_stop_rule_none_keeps_todays_run(reference):
    """No rule: every epoch runs, no selected.npz, final = the last row, and the config hash of
    a run without the options (recorded before they existed) is unchanged."""
    summary = summary_of(reference)
    assert "stopped" not in summary and not (reference / "selected.npz").exists()
    assert summary["epochs_done"] == REFERENCE_EPOCHS
    last = metrics_of(reference).iloc[-1]
    assert summary["final"]["valid_log_likelihood"] == pytest.approx(last.valid_log_likelihood, rel=1e-12)
    assert recorded_hash([]) == "3cb5a7421c576754"  # under the run defaults of then
    assert recorded_hash(["train.stop_rule=none", "train.patience=5"]) == "3cb5a7421c576754"
    assert recorded_hash(["train.stop_rule=gap"]) != "3cb5a7421c576754"


# ----------------------------------------------------------------- resume
def assert_same_run(a: Path, b: Path) -> None:
    sa, sb = summary_of(a), summary_of(b)
    assert sb["status"] == "completed"
    for key in ("final", "stopped", "epochs_done"):
        assert sb[key] == sa[key], key
    pd.testing.assert_frame_equal(metrics_of(a), metrics_of(b))
    np.testing.assert_array_equal(
        load_checkpoint(a / "selected.npz")[0].W, load_checkpoint(b / "selected.npz")[0].W
    )


@needs_caltech
def test_a_run_killed_after_its_selection_resumes_to_the_same_stop(tmp_path):
    """kill -9 after the epoch before the jump (its model in selected.npz, newer than the
    checkpoint), then resume=true: the same stop, final and metrics as a straight run."""
    args = ["train.stop_rule=gap", "train.epochs=30", "train.checkpoint_every=4", "train.snapshot_every=0"]
    straight = run(tmp_path / "straight", *args)
    stop = summary_of(straight)["stopped"]
    assert stop["selected_epoch"] > 4 and stop["epoch"] > 4  # killed past the checkpoint of 4
    killed = tmp_path / "killed"
    env = {**os.environ, "RBMLAB_FAULT": f"after_epoch:{stop['selected_epoch']}", "HYDRA_FULL_ERROR": "0"}
    cmd = [sys.executable, "-m", "rbmlab", "run", *RUN, *args, f"hydra.run.dir={killed}"]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert load_checkpoint(killed / "selected.npz")[1]["epoch"] == stop["selected_epoch"]
    assert load_checkpoint(killed / "checkpoint.npz")[1]["epoch"] == 4
    messages = []
    run(killed, *args, "resume=true", echo=messages.append)
    assert any("resuming" in m and "at epoch 4" in m for m in messages)
    assert_same_run(straight, killed)


@needs_caltech
def test_a_run_that_failed_at_its_stop_resumes_to_the_final_evaluation(tmp_path, monkeypatch):
    """A failure right after the rule fired (its checkpoint saved at the stop): resume=true
    trains nothing more and evaluates the selected model as the straight run did."""
    from rbmlab.storage.faults import InjectedFault

    args = [
        "train.stop_rule=valid",
        "train.stop_metric=valid_log_likelihood",
        "train.patience=3",
        "train.epochs=30",
        "train.checkpoint_every=100",
        "train.snapshot_every=0",
    ]
    straight = run(tmp_path / "straight", *args)
    stop = summary_of(straight)["stopped"]["epoch"]
    monkeypatch.setenv("RBMLAB_FAULT", f"raise_after_epoch:{stop}")
    with pytest.raises(InjectedFault):
        run(tmp_path / "failed", *args)
    monkeypatch.delenv("RBMLAB_FAULT")
    messages = []
    run(tmp_path / "failed", *args, "resume=true", echo=messages.append)
    assert any(f"at epoch {stop}" in m for m in messages)
    assert_same_run(straight, tmp_path / "failed")


# ----------------------------------------------------------------- bad values
@pytest.mark.parametrize(
    "overrides, needle",
    [
        (["train.stop_rule=sometimes"], "train.stop_rule: expected one of none, gap, valid"),
        (["train.stop_rule=valid", "train.patience=0"], "train.patience: must be >= 1"),
        (["train.stop_rule=valid"], "train.stop_metric: stop_rule=valid needs a metric of the valid split"),
        (
            ["train.stop_rule=valid", "train.stop_metric=test_log_likelihood"],
            "train.stop_metric: stop_rule=valid needs a metric of the valid split",
        ),
        (
            ["train.stop_rule=valid", "train.stop_metric=valid_pixel_error", "evaluator.splits=[valid]"],
            "train.stop_metric: evaluator=exact",
        ),
        (
            ["train.stop_rule=valid", "train.stop_metric=valid_log_likelihood"],  # the valid split not scored
            "train.stop_metric: evaluator=exact with splits ['test'] does not record valid_log_likelihood",
        ),
        (["train.stop_rule=gap"], "train.stop_rule: gap reads the train − valid gap"),
        (["train.stop_rule=gap", "evaluator=pl", "evaluator.splits=[train,valid]"], "train.stop_rule: gap"),
        (["train.stop_rule=gap", "train.trials=2", "learner=cd"], "train.stop_rule: gap stops one model"),
        (["train.stop_rule=gap", "train.eval_every=0"], "train.stop_rule: gap judges evaluation points"),
    ],
)
def test_bad_stop_options_are_one_line(overrides, needle, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HYDRA_FULL_ERROR", "0")
    with pytest.raises(SystemExit) as exit_info:
        main(
            [
                "run",
                "dataset=bars_stripes",
                "model.n_hidden=4",
                "evaluator=exact",
                "train.progress=false",
                *overrides,
            ]
        )
    lines = [ln for ln in capsys.readouterr().err.splitlines() if ln.strip()]
    assert exit_info.value.code == 2 and len(lines) == 1, lines
    assert lines[0].startswith(f"rbmlab: error: {needle}"), lines[0]
    assert not list(tmp_path.rglob("summary.json"))  # refused before any work


def test_an_unnormalised_likelihood_cannot_be_the_stop_metric(tmp_path):
    from tests.test_cli import rbmlab  # noqa: PLC0415

    proc = rbmlab(
        "run",
        "dataset=caltech101",
        "evaluator=free_energy",
        "train.eval_every=1",
        "train.stop_rule=valid",
        "train.stop_metric=valid_log_likelihood_unnormalised",
        "hydra.run.dir=bad",
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "train.stop_metric: valid_log_likelihood_unnormalised omits log Z" in proc.stderr


def test_the_gap_record_carries_the_metrics_of_the_point_it_selects():
    import pandas as pd  # noqa: PLC0415

    from rbmlab.run.early_stopping import select_from_rows  # noqa: PLC0415

    gaps = [1.0, 1.1, 1.2, 1.3, 5.0, 6.0]
    rows = pd.DataFrame(
        {
            "epoch": range(6),
            "train_log_likelihood": [-100 + g for g in gaps],
            "valid_log_likelihood": [-100.0] * 6,
            "test_error": [9, 8, 7, 6, 5, 4],
        }
    )
    record = select_from_rows(rows)
    assert record["epoch"] == 3 and record["test_error"] == 6 and record["valid_log_likelihood"] == -100


@pytest.mark.parametrize("option", ["train.patience=3", "train.stop_metric=valid_log_likelihood"])
def test_the_valid_rules_options_without_it_are_a_one_line_error(tmp_path, option):
    from tests.test_cli import rbmlab  # noqa: PLC0415

    proc = rbmlab(
        "run",
        "dataset=bars_stripes",
        "train.stop_rule=gap",
        option,
        "hydra.run.dir=bad",
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1
    assert "is read by train.stop_rule=valid only; stop_rule is gap" in proc.stderr


@needs_caltech
def test_a_run_that_diverges_after_its_selected_point_finishes_on_it(reference, tmp_path, monkeypatch):
    """Training declared diverged at epoch 6 (forced): under the valid rule the run is not lost;
    its final evaluation is of the best of epochs 0-5 (selected.npz), and summary.json says
    where training diverged. Without a rule the same run is recorded as diverged."""
    import rbmlab.run.runner as runner

    real_check, real_epoch = runner.newly_diverged, runner.train_epoch
    trained = [0]  # the epoch the loop has just trained

    def counted_epoch(run_, record, p):
        real_epoch(run_, record, p)
        trained[0] = p.epoch

    def diverge_at_6(finite, rows, diverged):  # the parameters' check after each epoch
        return [0] if finite and trained[0] >= 6 and not diverged else real_check(finite, rows, diverged)

    monkeypatch.setattr(runner, "newly_diverged", diverge_at_6)
    monkeypatch.setattr(runner, "train_epoch", counted_epoch)
    ref = metrics_of(reference).iloc[:6]
    best = int(ref.epoch[ref.valid_log_likelihood.idxmax()])
    assert best > 0  # the selected model is a trained one
    out = run(
        tmp_path / "valid",
        "train.stop_rule=valid",
        "train.stop_metric=valid_log_likelihood",
        "train.patience=20",
        "train.epochs=30",
    )
    summary = summary_of(out)
    assert summary["status"] == "completed" and summary["epochs_done"] == 6
    assert summary["stopped"]["diverged_epoch"] == 6 and summary["stopped"]["selected_epoch"] == best
    assert_selected_is_the_snapshot(out, best)
    pd.testing.assert_frame_equal(metrics_of(out), ref)  # epoch 6 was not evaluated
    assert summary["final"]["valid_log_likelihood"] == pytest.approx(
        ref.valid_log_likelihood.max(), rel=1e-12
    )
    trained[0] = 0
    plain = summary_of(run(tmp_path / "plain", "train.epochs=30"))
    assert plain["status"] == "diverged" and plain["epochs_done"] == 6 and plain["final"] == {}
