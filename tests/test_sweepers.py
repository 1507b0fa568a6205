"""Sampling sweepers (``-m hydra/sweeper=optuna``): what is checked before the sweep, the value each
job returns, the best value reported after it; and the tags that tell a sweep's jobs apart."""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from rbmlab.errors import RbmlabError
from rbmlab.hydra_app import check_hydra_overrides, plan_sweep, run_command, validated_run_config
from rbmlab.run import sweepers

SMALL = [
    "dataset=bars_stripes",
    "model.n_hidden=4",
    "evaluator=exact",
    "learner.k=2",
    "learner.batch_size=full",
    "train.progress=false",
]
OPTUNA = ["hydra/sweeper=optuna", "hydra.sweeper.n_trials=4"]


def rbmlab(*args: str, cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "rbmlab", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, **(env or {})},
    )


def plan(*overrides: str) -> sweepers.Sweep:
    return plan_sweep(list(overrides), check_hydra_overrides(list(overrides), multirun=True))


def test_a_sampled_sweep_checks_what_it_can_list_and_runs_n_trials():
    sweep = plan(*SMALL, *OPTUNA, "learner.lr=interval(0.01,0.1)", "train.epochs=range(1,3)")
    assert sweep.sampler == "OptunaSweeper" and sweep.n_jobs == 4  # n_trials, not a product
    jobs = [dict(o.split("=", 1) for o in job) for job in sweep.jobs]
    assert {(job["learner.lr"], job["train.epochs"]) for job in jobs} == {  # both interval ends x
        (lr, n) for lr in ("0.01", "0.1") for n in ("1", "2", "3")
    }  # each range value, its stop
    assert len(jobs) == 6 and all(job["dataset"] == "bars_stripes" for job in jobs)
    # the job tag names the swept keys only
    assert (
        "hydra.job.config.override_dirname.exclude_keys=['dataset','evaluator','learner.batch_size',"
        "'learner.k','model.n_hidden','train.progress']" in sweep.hydra_overrides
    )


def test_the_basic_sweeper_still_runs_every_listed_job():
    sweep = plan(*SMALL, "learner=cd,pcd", "seed=0,1")
    assert sweep.sampler is None and sweep.n_jobs == 4 and len(sweep.jobs) == 4


def test_the_direction_follows_the_headline_metric_unless_given():
    exact = validated_run_config([*SMALL])
    recon = validated_run_config([*SMALL, "evaluator=reconstruction"])
    assert sweepers.direction_overrides([exact], []) == ["hydra.sweeper.direction=maximize"]
    assert sweepers.direction_overrides([recon], []) == ["hydra.sweeper.direction=minimize"]
    assert sweepers.direction_overrides([recon], ["hydra.sweeper.direction=maximize"]) == []
    with pytest.raises(RbmlabError, match="different headline metrics"):
        sweepers.direction_overrides([exact, recon], [])


def test_bad_sampled_sweeps_fail_before_any_job(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(RbmlabError, match=r"learner\.lr.*\(sweep job learner\.lr=-1\.0\)"):
        run_command(["-m", *SMALL, *OPTUNA, "learner.lr=interval(-1,0.1)"])
    with pytest.raises(RbmlabError, match=r"resume: a sampling sweep \(OptunaSweeper\) proposes new values"):
        run_command(["-m", *SMALL, *OPTUNA, "learner.lr=interval(0.01,0.1)", "resume=true"])
    with pytest.raises(RbmlabError, match="cannot check ahead"):
        plan(*SMALL, *OPTUNA, "dataset=glob(bars*)")
    with pytest.raises(RbmlabError, match="a setting of a sweep; add -m"):
        check_hydra_overrides(OPTUNA, multirun=False)
    with pytest.raises(RbmlabError, match=r"a sweeper samples this one \(-m hydra/sweeper=optuna\)"):
        run_command([*SMALL, "learner.lr=interval(0.01,0.1)"])
    assert not (tmp_path / "outputs").exists()


def test_a_job_returns_its_final_headline_metric_or_none():
    cfg = validated_run_config([*SMALL])
    done = {"status": "completed", "final": {"test_log_likelihood": -6.25, "log_z": 3.0}}
    assert sweepers.returned_value(cfg, done) == -6.25
    # not completed, or not finite: None, which optuna records as a failed trial (NaN would stop it)
    assert sweepers.returned_value(cfg, {**done, "status": "failed"}) is None
    assert sweepers.returned_value(cfg, {"status": "diverged", "final": {}}) is None
    assert sweepers.returned_value(cfg, {**done, "final": {"test_log_likelihood": math.nan}}) is None


def test_the_best_line_reads_the_sweepers_results(tmp_path):
    cfg = validated_run_config([*SMALL])
    assert sweepers.best_line(tmp_path, [cfg]) is None
    (tmp_path / "optimization_results.yaml").write_text(
        yaml.safe_dump({"name": "optuna", "best_params": {"learner.lr": 0.0125}, "best_value": -6.2385197})
    )
    assert sweepers.best_line(tmp_path, [cfg]) == (
        f"rbmlab: best test_log_likelihood -6.23852 with learner.lr=0.0125 "
        f"({tmp_path / 'optimization_results.yaml'})"
    )


@pytest.mark.slow
def test_an_optuna_sweep_reports_the_best_of_its_trials(tmp_path):
    proc = rbmlab(
        "run",
        "-m",
        *SMALL,
        "train.epochs=3",
        *OPTUNA,
        "hydra.sweeper.sampler.seed=7",
        "learner.lr=interval(0.01,0.1)",
        "hydra.sweep.dir=sweep",
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    runs = sorted((tmp_path / "sweep").glob("*/summary.json"))
    assert [r.parent.name for r in runs] == ["0", "1", "2", "3"]
    finals = {r.parent: json.loads(r.read_text())["final"]["test_log_likelihood"] for r in runs}
    lrs = {run: yaml.safe_load((run / "overrides.yaml").read_text()) for run in finals}
    lrs = {
        run: float(next(o for o in ov if o.startswith("learner.lr=")).split("=")[1])
        for run, ov in lrs.items()
    }
    assert len(set(lrs.values())) == 4 and all(0.01 <= lr <= 0.1 for lr in lrs.values())
    best = max(finals, key=finals.get)
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("rbmlab: best ")]
    value, lr = re.match(r"rbmlab: best test_log_likelihood (\S+) with learner\.lr=(\S+) ", line).groups()
    assert float(value) == pytest.approx(finals[best], rel=1e-6)
    assert float(lr) == lrs[best]
    for run, final in finals.items():  # each job's result line carries its tag
        assert (
            f"[job {run.name} learner.lr={lrs[run]!r}] test log-likelihood (exact): {final:.4f} nats"
            in proc.stdout
        )


def test_sweep_jobs_tag_their_result_lines(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    run_command(["-m", *SMALL, "learner=cd,pcd", "train.epochs=1", "hydra.sweep.dir=sweep"])
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("[job")]
    assert [re.sub(r"(sweep/\d|time: training).*|: \S+ nats$", r"\1", ln) for ln in lines] == [
        "[job 0 learner=cd] run directory: " + str(tmp_path / "sweep/0"),
        "[job 0 learner=cd] time: training",
        "[job 0 learner=cd] test log-likelihood (exact)",
        "[job 1 learner=pcd] run directory: " + str(tmp_path / "sweep/1"),
        "[job 1 learner=pcd] time: training",
        "[job 1 learner=pcd] test log-likelihood (exact)",
    ]


@pytest.mark.slow
def test_parallel_jobs_tag_their_result_and_failure_lines(tmp_path):
    # train.epochs=3 jobs fail at epoch 2 (an injected fault); train.epochs=1 jobs complete
    proc = rbmlab(
        "run",
        "-m",
        *SMALL,
        "learner=cd,pcd",
        "train.epochs=1,3",
        "hydra/launcher=joblib",
        "hydra.launcher.n_jobs=2",
        "hydra.sweep.dir=sweep",
        cwd=tmp_path,
        env={"RBMLAB_FAULT": "raise_after_epoch:2"},
    )
    assert proc.returncode == 2
    results = [ln for ln in proc.stdout.splitlines() if "test log-likelihood" in ln]
    assert sorted(re.sub(r": \S+ nats$", "", ln) for ln in results) == [
        "[job 0 learner=cd train.epochs=1] test log-likelihood (exact)",
        "[job 2 learner=pcd train.epochs=1] test log-likelihood (exact)",
    ]
    failed = sorted(ln for ln in proc.stderr.splitlines() if " failed: " in ln and ln.startswith("[job"))
    assert failed == [
        f"[job {n} learner={lr} train.epochs=3] failed: InjectedFault: injected fault raise_after_epoch:2"
        for n, lr in ((1, "cd"), (3, "pcd"))
    ]
    assert "rbmlab: error: 2 of 4 job(s) of the sweep failed" in proc.stderr
