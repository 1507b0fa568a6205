"""The rbmlab command end to end: runs, sweeps, resume, evaluate, errors, experiments.

Every test works in its own temporary directory (outputs/ and results/ are created there).
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
from tests.test_bad_input import Case, assert_one_error_line

REPO = Path(__file__).resolve().parent.parent
SMALL = [
    "dataset=bars_stripes",
    "model.n_hidden=4",
    "evaluator=exact",
    "learner.k=2",
    "learner.batch_size=full",
    "learner.lr=0.1",
    "train.progress=false",
]


def rbmlab(*args: str, cwd: Path, check: bool = True, timeout: int = 120) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "rbmlab", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "HYDRA_FULL_ERROR": "0"},
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"rbmlab {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}")
    return proc


def run_dirs(root: Path) -> list[Path]:
    return sorted(p.parent for p in root.rglob("summary.json"))


def test_run_writes_its_records(tmp_path):
    proc = rbmlab("run", *SMALL, "train.epochs=20", "train.eval_every=1", cwd=tmp_path)
    assert "test log-likelihood (exact)" in proc.stdout
    (run,) = run_dirs(tmp_path / "outputs" / "runs")
    for name in ("config.yaml", "overrides.yaml", "metrics.csv", "summary.json", "checkpoint.npz"):
        assert (run / name).is_file(), name
    from rbmlab.run.checkpoint import load_checkpoint

    with np.load(run / "checkpoint.npz") as saved:  # the family and its unit types travel along
        assert (str(saved["family"]), str(saved["visible"]), str(saved["hidden"])) == (
            "rbm",
            "bernoulli",
            "bernoulli",
        )
        model, meta, _ = load_checkpoint(run / "checkpoint.npz")
        np.testing.assert_array_equal(model.W, saved["W"])
    assert model.W.shape == (9, 4) and meta["epoch"] == 20
    metrics = pd.read_csv(run / "metrics.csv")
    assert list(metrics.epoch) == list(range(21))
    assert {"updates", "wall_time", "test_log_likelihood", "log_z"} <= set(metrics.columns)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["status"] == "completed"
    assert summary["final"]["test_log_likelihood"] == pytest.approx(metrics.test_log_likelihood.iloc[-1])
    assert summary["final"]["test_log_likelihood"] <= -np.log(14) + 1e-9  # can't beat uniform on 14
    head = subprocess.run(
        ["git", "-C", str(REPO), "rev-parse", "--short=7", "HEAD"], capture_output=True, text=True
    )
    if head.returncode == 0:  # a git checkout: the run names the commit that produced it
        assert summary["source"].split("+")[0] == head.stdout.strip()
        assert summary["source"] in (head.stdout.strip(), head.stdout.strip() + "+dirty")


@pytest.mark.slow
def test_sweep_gives_every_job_its_own_directory(tmp_path):
    rbmlab("run", "-m", *SMALL, "train.epochs=3", "learner=cd,pcd", "seed=0,1", cwd=tmp_path)
    runs = run_dirs(tmp_path / "outputs" / "sweeps")
    assert len(runs) == 4
    configs = {
        (
            json.loads((r / "summary.json").read_text())["learner"],
            json.loads((r / "summary.json").read_text())["seed"],
        )
        for r in runs
    }
    assert configs == {("cd", 0), ("cd", 1), ("pcd", 0), ("pcd", 1)}


@pytest.mark.slow
def test_parallel_runs_started_together_do_not_collide(tmp_path):
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "rbmlab", "run", *SMALL, "train.epochs=2"],
            cwd=tmp_path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(3)
    ]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    assert len(run_dirs(tmp_path / "outputs" / "runs")) == 3


@pytest.mark.parametrize(
    "args, key",
    [
        (["learner.lrr=0.1"], "learner.lrr"),
        (["learner.lr=abc"], "learner.lr"),
        (["learner=nope"], "learner"),
        (["train.epochs=-1"], "train.epochs"),
        (["dataset=bars_stripes", "dataset.size=99"], "dataset.size"),
        (["learner.lr=inf"], "learner.lr"),
        (["learner.optimizer.momentum=2"], "learner.optimizer.momentum"),
        (["learner/optimizer=nope"], "learner/optimizer=nope"),
        (["learner/optimizer=adam", "learner.optimizer.momentum=0.5"], "learner.optimizer.momentum"),
        (["learner.sampler=nope"], "learner.sampler.name"),
        (["model.hidden_units=tanh"], "model.hidden_units"),
        (["model=ising", "dataset=ising_samples", "model.spins=xx"], "model.spins"),
        (["model=ising", "dataset=ising_samples", "evaluator=ais"], "evaluator=ais"),
        (["model=ising", "dataset=ising_samples", "learner=cg"], "learner=cg"),
        (["model=ising", "dataset=ising_samples", "learner.sampler=block_gibbs"], "learner=pcd"),
        (["dataset=ising_samples", "dataset.structure=torus"], "dataset.structure"),
        (
            ["dataset=bars_stripes", "model.n_hidden=4", "model.hidden_units=spin", "train.epochs=1"],
            "evaluator=ais",
        ),
    ],
)
def test_bad_overrides_give_one_line_errors(tmp_path, monkeypatch, capsys, args, key):
    """In this process (main, as the command calls it; the process's own exit status and stderr:
    the next test)."""
    assert_one_error_line(main, Case(key, ["run", *args], key), tmp_path, monkeypatch, capsys)


def test_a_bad_override_ends_the_process_with_status_2_and_one_line(tmp_path):
    proc = rbmlab("run", "learner.lrr=0.1", cwd=tmp_path, check=False)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and proc.stdout == ""
    assert len(lines) == 1 and lines[0].startswith("rbmlab: error: learner.lrr:"), proc.stderr


def test_bad_value_in_a_sweep_fails_before_any_job(tmp_path):
    proc = rbmlab("run", "-m", *SMALL, "learner.lr=0.1,abc", cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "learner.lr" in proc.stderr
    assert not (tmp_path / "outputs").exists()


def test_divergence_is_recorded_and_the_sweep_goes_on(tmp_path):
    rbmlab(
        "run",
        "-m",
        *SMALL,
        "train.epochs=100",
        "learner.lr=1e38,0.1",
        "learner.optimizer.momentum=0.9",
        "backend.dtype=float32",
        cwd=tmp_path,
    )
    statuses = sorted(
        json.loads((r / "summary.json").read_text())["status"] for r in run_dirs(tmp_path / "outputs")
    )
    assert statuses == ["completed", "diverged"]


def test_a_runaway_run_is_recorded_as_diverged_not_completed(tmp_path):
    """lr=1e38 without momentum stays finite (weights ~1e37) but is no trained model."""
    rbmlab("run", *SMALL, "train.epochs=5", "learner.lr=1e38", "hydra.run.dir=run", cwd=tmp_path)
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["status"] == "diverged"


def test_an_overflowing_run_says_diverged_once_without_numpys_warnings(tmp_path):
    """lr=1e300 overflows in the first update: the run's one line says so (issue 57), numpy's
    overflow and invalid-value warnings do not come before it."""
    proc = rbmlab("run", *SMALL, "train.epochs=3", "learner.lr=1e300", "hydra.run.dir=run", cwd=tmp_path)
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["status"] == "diverged"
    assert "diverged at epoch 1" in proc.stderr + proc.stdout
    assert "Warning" not in proc.stderr + proc.stdout


def test_zero_epochs_evaluates_and_saves_the_untrained_model(tmp_path):
    rbmlab("run", *SMALL, "train.epochs=0", "hydra.run.dir=run", cwd=tmp_path)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["epochs_done"] == 0
    out = rbmlab(
        "evaluate", "checkpoint=run/checkpoint.npz", "dataset=bars_stripes", "evaluator=exact", cwd=tmp_path
    )
    assert json.loads(out.stdout)["mean_log_likelihood"] == pytest.approx(
        summary["final"]["test_log_likelihood"], rel=1e-6
    )


def straight_and_resumed(tmp_path: Path, args: list[str], kill_after_epoch: int):
    """``rbmlab run args`` straight through, and once more killed (SIGKILL) after epoch
    ``kill_after_epoch`` then resumed in place: (straight run dir, resumed run dir, the killed
    run's summary, the resume's CompletedProcess)."""
    straight = tmp_path / "straight"
    straight.mkdir()
    rbmlab("run", *args, cwd=straight)
    (ref,) = run_dirs(straight)
    killed = tmp_path / "killed"
    killed.mkdir()
    env = {**os.environ, "RBMLAB_FAULT": f"after_epoch:{kill_after_epoch}"}
    proc = subprocess.run(
        [sys.executable, "-m", "rbmlab", "run", *args], cwd=killed, env=env, capture_output=True, timeout=300
    )
    assert proc.returncode == -signal.SIGKILL
    (run,) = run_dirs(killed)
    state = json.loads((run / "summary.json").read_text())
    out = rbmlab("run", *args, "resume=true", cwd=killed)
    assert run_dirs(killed) == [run]
    return ref, run, state, out


RESUME_CASES = {
    # persistent chains + momentum buffers in the checkpoint, exact evaluation every 50 epochs
    "pcd-exact": ["learner=pcd", "learner.optimizer.momentum=0.5", "train.eval_every=50"],
    # checkpoints every 7 epochs (metrics rows after the checkpoint are dropped and redone),
    # AIS (forward and reverse) at every evaluation point and at the end
    "cd-ais": [
        "learner=cd",
        "evaluator=ais",
        "evaluator.schedule=linear",
        "evaluator.n_temperatures=200",
        "evaluator.curve_n_temperatures=50",
        "evaluator.n_chains=20",
        "evaluator.reverse=true",
        "train.eval_every=20",
        "train.checkpoint_every=7",
    ],
    # batched trials with centered offsets in the learner state, d = 2 updates per epoch
    "csdcp-trials": [
        "learner=csdcp",
        "learner.d=2",
        "train.trials=4",
        "train.eval_every=50",
        "train.checkpoint_every=3",
    ],
}


@pytest.mark.parametrize(
    "case", ["pcd-exact", *(pytest.param(c, marks=pytest.mark.slow) for c in ("cd-ais", "csdcp-trials"))]
)
def test_killed_and_resumed_run_equals_an_uninterrupted_one(tmp_path, case):
    """kill -9 at a fixed point (epoch 61: after the checkpoint of epoch 60 or 56, with metrics
    rows written after it), then resume=true: the same metrics and finals as a straight run."""
    args = [*SMALL, "learner.k=20", "train.epochs=130", "seed=5", *RESUME_CASES[case]]
    ref, run, state, out = straight_and_resumed(tmp_path, args, kill_after_epoch=61)
    assert state["status"] == "running" and 0 < state["epochs_done"] <= 61
    assert "resuming" in out.stdout
    a = json.loads((ref / "summary.json").read_text())
    b = json.loads((run / "summary.json").read_text())
    assert b["status"] == "completed" and b["epochs_done"] == 130
    assert b["updates"] == a["updates"] == 130 * (2 if "learner.d=2" in args else 1)
    assert b["final"] == a["final"]
    ma, mb = pd.read_csv(ref / "metrics.csv"), pd.read_csv(run / "metrics.csv")
    pd.testing.assert_frame_equal(ma.drop(columns="wall_time"), mb.drop(columns="wall_time"))


def test_evaluate_a_hand_written_checkpoint(tmp_path):
    rng = np.random.default_rng(0)
    W, b_v, b_h = rng.normal(size=(9, 4)), rng.normal(size=9), rng.normal(size=4)
    np.savez(tmp_path / "hand.npz", W=W, b_v=b_v, b_h=b_h)
    proc = rbmlab(
        "evaluate",
        "checkpoint=hand.npz",
        "dataset=bars_stripes",
        "evaluator=exact",
        "out=result.json",
        cwd=tmp_path,
    )
    result = json.loads((tmp_path / "result.json").read_text())
    assert json.loads(proc.stdout) == result
    assert result["dtype"] == "float64"  # evaluated in the precision it was saved in
    # brute force: log Z over all 2^9 visible states with the hidden units summed out
    V = ((np.arange(512)[:, None] >> np.arange(9)) & 1).astype(float)
    neg_f = V @ b_v + np.logaddexp(0, V @ W + b_h).sum(1)
    log_z = np.logaddexp.reduce(neg_f)
    from rbmlab.data import load_dataset

    test = load_dataset("bars_stripes").test.astype(float)
    ll = (test @ b_v + np.logaddexp(0, test @ W + b_h).sum(1)).mean() - log_z
    assert result["log_z"] == pytest.approx(log_z, rel=1e-9)
    assert result["mean_log_likelihood"] == pytest.approx(ll, rel=1e-9)
    assert result["n_examples"] == 14
    named = rbmlab(
        "evaluate",
        "checkpoint=hand.npz",
        "dataset=bars_stripes",
        "evaluator=exact",
        "backend.dtype=float32",
        cwd=tmp_path,
    )
    assert json.loads(named.stdout)["dtype"] == "float32"
    assert json.loads(named.stdout)["log_z"] == pytest.approx(log_z, rel=1e-5)


def test_evaluate_a_plain_rbm_with_tap(tmp_path):
    """evaluator=tap on a plain binary RBM checkpoint writes log_z and mean_log_likelihood; with weak
    couplings both are within 1e-3 of the exact values (tap issue acceptance)."""
    rng = np.random.default_rng(1)
    W, b_v, b_h = rng.normal(0, 0.1, (9, 4)), rng.normal(0, 0.5, 9), rng.normal(0, 0.5, 4)
    np.savez(tmp_path / "hand.npz", W=W, b_v=b_v, b_h=b_h)
    rbmlab(
        "evaluate",
        "checkpoint=hand.npz",
        "dataset=bars_stripes",
        "evaluator=tap",
        "out=tap.json",
        cwd=tmp_path,
    )
    rbmlab(
        "evaluate",
        "checkpoint=hand.npz",
        "dataset=bars_stripes",
        "evaluator=exact",
        "out=exact.json",
        cwd=tmp_path,
    )
    tap, exact = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("tap", "exact"))
    assert tap["evaluator"] == "tap" and tap["tap_solutions"] == 1
    assert tap["log_z"] == pytest.approx(exact["log_z"], abs=1e-3)
    assert tap["mean_log_likelihood"] == pytest.approx(exact["mean_log_likelihood"], abs=1e-3)


def test_evaluate_errors_are_one_line(tmp_path):
    np.savez(tmp_path / "bad.npz", W=np.zeros((9, 4)))
    np.savez(tmp_path / "ising.npz", J=np.triu(np.ones((9, 9)), 1), h=np.zeros(9), spins=np.array("01"))
    (tmp_path / "adir").mkdir()
    for args, needle in [
        (["checkpoint=missing.npz", "dataset=bars_stripes"], "missing.npz"),
        (["checkpoint=bad.npz", "dataset=bars_stripes"], "b_v"),
        (["checkpoint=ising.npz", "dataset=bars_stripes"], "symmetric"),
        (["checkpoint=adir", "dataset=bars_stripes"], "directory"),
        (["dataset=bars_stripes"], "checkpoint"),
    ]:
        proc = rbmlab("evaluate", *args, "evaluator=exact", cwd=tmp_path, check=False)
        assert proc.returncode == 2
        assert len(proc.stderr.strip().splitlines()) == 1 and needle in proc.stderr, proc.stderr


def markdown_rows(text: str) -> list[dict[str, str]]:
    """The rows of the first markdown table in ``text``, as {column header: cell}."""
    lines = [ln for ln in text.splitlines() if ln.startswith("|")]
    cells = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in lines]
    header, body = cells[0], cells[2:]  # cells[1] is the |---| rule
    return [dict(zip(header, row)) for row in body]


def test_experiment_runs_sweep_and_report_at_smoke_scale(tmp_path):
    proc = rbmlab("experiment", "demo/bars-cd-vs-pcd", "scale=smoke", cwd=tmp_path, timeout=300)
    # a smoke tier is a pipeline check: its files go to outputs/results/, never results/, and the
    # command says where it wrote each
    assert not (tmp_path / "results").exists()
    wrote = [ln.split(": wrote ", 1)[1] for ln in proc.stdout.splitlines() if ": wrote " in ln]
    assert wrote == [
        f"outputs/results/demo/bars-cd-vs-pcd_smoke{end}"
        for end in (".md", ".png", "_curves.csv", "_runs.csv")
    ]
    runs = run_dirs(tmp_path / "outputs" / "experiments" / "demo" / "bars-cd-vs-pcd" / "smoke")
    assert len(runs) == 6
    table = (tmp_path / "outputs" / "results" / "demo" / "bars-cd-vs-pcd_smoke.md").read_text()
    assert "scale: smoke" in table
    # one row per learner, each over its 3 seeds, with the mean of those runs' final values
    finals: dict[str, list[float]] = {}
    for r in runs:
        summary = json.loads((r / "summary.json").read_text())
        finals.setdefault(summary["learner"], []).append(summary["final"]["test_log_likelihood"])
    # in words: the column and the learners as the experiment names them (report.names)
    rows = {row["learner"].lower(): row for row in markdown_rows(table)}
    assert sorted(rows) == sorted(finals) == ["cd", "pcd"]
    for learner, row in rows.items():
        assert row["n"] == "3" and row["diverged"] == "0", row
        mean = float(row["final test log-likelihood (nats): mean ± std"].split("±")[0])
        assert mean == pytest.approx(np.mean(finals[learner]), abs=1e-4), (learner, row)
    png = tmp_path / "outputs" / "results" / "demo" / "bars-cd-vs-pcd_smoke.png"
    assert png.read_bytes()[:4] == b"\x89PNG"
    curves = pd.read_csv(tmp_path / "outputs" / "results" / "demo" / "bars-cd-vs-pcd_smoke_curves.csv")
    assert set(curves["n"]) == {3}


@pytest.mark.slow
def test_batched_trials_are_replicates_in_records_report_and_evaluate(tmp_path):
    rbmlab(
        "run",
        *SMALL,
        "learner=sdcp",
        "learner.d=2",
        "train.trials=3",
        "train.epochs=10",
        "train.eval_every=5",
        cwd=tmp_path,
    )
    (run,) = run_dirs(tmp_path / "outputs")
    metrics = pd.read_csv(run / "metrics.csv")
    assert list(metrics.columns[:4]) == ["epoch", "updates", "wall_time", "trial"]
    assert sorted(zip(metrics.epoch, metrics.trial)) == [(e, t) for e in (0, 5, 10) for t in range(3)]
    assert list(metrics.updates.unique()) == [0, 10, 20]  # d = 2 updates per full batch
    summary = json.loads((run / "summary.json").read_text())
    per_trial = [f["test_log_likelihood"] for f in summary["final_trials"]]
    assert len(set(per_trial)) == 3  # own initialisations
    assert summary["final"]["test_log_likelihood"] == pytest.approx(np.mean(per_trial))
    rbmlab("report", str(run), cwd=tmp_path)
    curves = pd.read_csv(run / "report" / "test_log_likelihood_curves.csv")
    assert set(curves["n"]) == {3}
    out = rbmlab(
        "evaluate",
        f"checkpoint={run / 'checkpoint.npz'}",
        "dataset=bars_stripes",
        "evaluator=exact",
        "trial=2",
        cwd=tmp_path,
    )
    assert json.loads(out.stdout)["dtype"] == "float32"  # the precision the run trained in
    assert json.loads(out.stdout)["mean_log_likelihood"] == pytest.approx(per_trial[2], abs=1e-5)
    proc = rbmlab(
        "evaluate",
        f"checkpoint={run / 'checkpoint.npz'}",
        "dataset=bars_stripes",
        "evaluator=exact",
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 2 and "trial=N" in proc.stderr and len(proc.stderr.splitlines()) == 1


@pytest.mark.slow
def test_dcp_figure_experiment_at_smoke_scale(tmp_path):
    rbmlab("experiment", "dcp/figure-1", "scale=smoke", cwd=tmp_path, timeout=300)
    curves = pd.read_csv(tmp_path / "outputs" / "results" / "dcp" / "figure-1_smoke_curves.csv")
    assert set(curves["learner.name"]) == {"cd", "pcd", "cg", "sdcp", "csdcp"}
    assert set(curves["learner.lr"]) == {0.3, 0.5} and set(curves["n"]) == {2}  # 2 trials each
    table = (tmp_path / "outputs" / "results" / "dcp" / "figure-1_smoke.md").read_text()
    assert "-3.15" in table  # the paper's plateau beside ours
    # report_only re-renders the report from the runs in outputs/, without training
    (tmp_path / "outputs" / "results" / "dcp" / "figure-1_smoke.md").unlink()
    proc = rbmlab("experiment", "dcp/figure-1", "scale=smoke", "report_only=true", cwd=tmp_path)
    assert "run directory" not in proc.stdout
    assert (tmp_path / "outputs" / "results" / "dcp" / "figure-1_smoke.md").read_text() == table


def test_unknown_experiment_lists_the_available_ones(tmp_path):
    proc = rbmlab("experiment", "demo/nope", cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "demo/bars-cd-vs-pcd" in proc.stderr


def test_data_list_names_every_dataset(tmp_path):
    out = rbmlab("data", "list", cwd=tmp_path).stdout
    for name in (
        "mnist",
        "binarized_mnist",
        "caltech101",
        "omniglot",
        "cbcl_faces",
        "ocr_letters",
        "bars_stripes",
        "shifting_bar",
    ):
        assert name in out


def test_sweep_values_without_multirun_flag_are_refused(tmp_path):
    proc = rbmlab("run", *SMALL, "learner.lr=0.1,0.2", cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "-m" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_infeasible_evaluator_fails_before_training(tmp_path):
    proc = rbmlab(
        "run",
        "dataset=shifting_bar",
        "evaluator=pl",
        "evaluator.n_units=20",
        "train.progress=false",
        cwd=tmp_path,
        check=False,
    )
    assert proc.returncode == 2 and "evaluator.n_units" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_evaluate_refuses_a_npy_file_in_one_line(tmp_path):
    np.save(tmp_path / "w.npy", np.zeros((9, 4)))
    proc = rbmlab(
        "evaluate", "checkpoint=w.npy", "dataset=bars_stripes", "evaluator=exact", cwd=tmp_path, check=False
    )
    assert proc.returncode == 2 and ".npz" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_an_experiment_with_a_bad_override_moves_nothing(tmp_path):
    sweep = tmp_path / "outputs" / "experiments" / "demo" / "bars-cd-vs-pcd" / "smoke"
    (sweep / "0").mkdir(parents=True)
    proc = rbmlab(
        "experiment", "demo/bars-cd-vs-pcd", "scale=smoke", "learner.k=-1", cwd=tmp_path, check=False
    )
    assert proc.returncode == 2 and "learner.k" in proc.stderr
    assert (sweep / "0").is_dir() and not sweep.with_name("smoke.1").exists()


@pytest.mark.parametrize("args", [["experiment", "list"], ["doctor", "--help"], ["data", "list"]])
def test_a_reader_that_closes_the_pipe_ends_the_command_quietly(args, tmp_path):
    """`rbmlab experiment list | head`: stdout closed before anything is written is exit 141
    (128 + SIGPIPE, as a shell reports a program killed by it) with nothing on stderr."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "rbmlab", *args],
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tmp_path,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (128 + signal.SIGPIPE, "")


def test_version_names_the_release_and_the_checkouts_commit(capsys, monkeypatch):
    from rbmlab import __version__
    from rbmlab.storage import provenance

    main(["--version"])
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"rbmlab {__version__} (checkout ") and line.endswith(")")
    monkeypatch.setattr(provenance, "source_revision", lambda: f"rbmlab {__version__}")  # an installed wheel
    main(["-V"])
    assert capsys.readouterr().out.strip() == f"rbmlab {__version__}"


def test_progress_bars_only_where_stderr_is_a_terminal(tmp_path, monkeypatch, capsys):
    """train.progress=auto (the default): no bar frames into a pipe or a log; true draws them there too."""
    from rbmlab.validation import progress_bars

    run = [
        "run",
        "dataset=bars_stripes",
        "model.n_hidden=4",
        "learner=cd",
        "evaluator=exact",
        "train.epochs=3",
    ]
    main([*run, f"hydra.run.dir={tmp_path / 'auto'}"])
    assert "train cd" not in capsys.readouterr().err  # captured: not a terminal
    main([*run, "train.progress=true", f"hydra.run.dir={tmp_path / 'on'}"])
    assert "train cd" in capsys.readouterr().err
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert progress_bars("auto") and progress_bars(True) and not progress_bars(False)
    log = (tmp_path / "auto" / "rbmlab.log").read_text().splitlines()  # the run's lines, one per epoch
    assert [line.split(" - ")[1].split(":")[0] for line in log if " - epoch " in line] == [
        "epoch 1/3",
        "epoch 2/3",
        "epoch 3/3",
    ]
    assert any(line.endswith(f"run directory: {tmp_path / 'auto'}") for line in log)


def test_a_sweeps_jobs_draw_no_bars_at_auto_even_on_a_terminal(tmp_path, monkeypatch, capsys):
    """Jobs of a sweep (their lines tagged) would interleave their bars: auto draws none there."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    run = [
        "run",
        "-m",
        "dataset=bars_stripes",
        "model.n_hidden=4",
        "learner=cd",
        "evaluator=exact",
        "train.epochs=2",
    ]
    main([*run, "seed=0,1", f"hydra.sweep.dir={tmp_path / 'sweep'}"])
    assert "train cd" not in capsys.readouterr().err
    main([*run, "seed=0", "train.progress=true", f"hydra.sweep.dir={tmp_path / 'on'}"])
    assert "train cd" in capsys.readouterr().err
