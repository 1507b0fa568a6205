"""rbmlab on a real SLURM cluster (make test-cluster): a private single-node cluster brought up on
this machine for the module (tests/slurm_cluster.py; it installs slurm-wlm and munge where they
are missing and removes them after). A sweep through submitit's SLURM launcher ends with the basic
launcher's numbers, an experiment's smoke tier runs end to end with its report, and a job longer
than its time limit is requeued, resumes from its checkpoint and ends identical to an
uninterrupted run. Where SLURM cannot be installed, every test skips with the reason.

Without accounting submitit cannot read job states (``sacct`` fails), only each job's result
file: every submitting command runs under a timeout, and a timeout's message shows the jobs'
logs and the queue.
"""

from __future__ import annotations

import importlib.util
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tests.slurm_cluster import PARTITION, ClusterUnavailable, slurm_cluster
from tests.test_faults import SMALL, metrics, summary

pytestmark = [
    pytest.mark.cluster,
    pytest.mark.skipif(
        importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is None,
        reason="hydra-submitit-launcher not installed (pip install .[slurm])",
    ),
]

ON_SLURM = [
    "hydra/launcher=submitit_slurm",
    f"hydra.launcher.partition={PARTITION}",
    "hydra.launcher.cpus_per_task=1",
    "hydra.launcher.mem_gb=1",
]
SWEEP = [*SMALL, "train.epochs=6", "train.checkpoint_every=2", "learner=cd,pcd", "seed=1,2"]


@pytest.fixture(scope="module")
def cluster():
    try:
        with slurm_cluster() as env:
            yield env
    except ClusterUnavailable as e:
        pytest.skip(str(e))


def rbmlab(
    *args: str, cwd: Path, env: dict[str, str], timeout: float = 300, fault: str | None = None
) -> subprocess.CompletedProcess:
    """One rbmlab command on the cluster's environment; its jobs' logs and the queue on failure."""
    env = {**env, "HYDRA_FULL_ERROR": "0", "OMP_NUM_THREADS": "1"}
    env.pop("RBMLAB_FAULT", None)
    if fault:
        env["RBMLAB_FAULT"] = fault
    try:
        done = subprocess.run(
            [sys.executable, "-m", "rbmlab", *args],
            cwd=cwd,
            env=env,
            text=True,
            capture_output=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        err = (e.stderr or b"")[-3000:].decode(errors="replace")  # bytes, whatever text= says
        pytest.fail(f"rbmlab {' '.join(args)}: no end within {timeout} s\n{err}\n{diagnosis(cwd, env)}")
    assert done.returncode == 0, f"{done.stderr[-3000:]}\n{diagnosis(cwd, env)}"
    return done


def diagnosis(cwd: Path, env: dict[str, str]) -> str:
    queue = subprocess.run(
        ["squeue", "-a", "-o", "%i %T %r %M %l"], env=env, capture_output=True, text=True, timeout=30
    ).stdout
    logs = [
        f"--- {p.relative_to(cwd)}\n{p.read_text(errors='replace')[-1500:]}"
        for p in sorted(cwd.rglob(".submitit/*/*_log.*"))
    ]
    return "\n".join(["squeue:", queue, *logs])


def ended(job_id: str, env: dict[str, str], timeout: float = 120) -> str:
    """``scontrol show job`` once the job has ended (its result written, the job still winds down)."""
    deadline = time.monotonic() + timeout
    while True:
        job = subprocess.run(
            ["scontrol", "-o", "show", "job", job_id], env=env, capture_output=True, text=True, timeout=30
        ).stdout
        state = job.split("JobState=")[1].split()[0] if "JobState=" in job else "?"
        if state not in ("PENDING", "RUNNING", "REQUEUED", "COMPLETING") or time.monotonic() > deadline:
            return job
        time.sleep(0.5)


def job_dirs(sweep: Path) -> list[Path]:
    return sorted((p for p in sweep.iterdir() if p.name.isdigit()), key=lambda p: int(p.name))


def test_a_sweep_on_slurm_ends_with_the_basic_launchers_numbers(tmp_path, cluster):
    rbmlab("run", "-m", *SWEEP, "hydra.sweep.dir=basic", cwd=tmp_path, env=cluster)
    done = rbmlab("run", "-m", *SWEEP, *ON_SLURM, "hydra.sweep.dir=slurm", cwd=tmp_path, env=cluster)
    assert "Submitit 'slurm' sweep" in done.stderr + done.stdout
    basic, slurm = job_dirs(tmp_path / "basic"), job_dirs(tmp_path / "slurm")
    assert [p.name for p in slurm] == [p.name for p in basic] == ["0", "1", "2", "3"]
    for ours, theirs in zip(slurm, basic):
        assert summary(ours)["status"] == "completed", summary(ours)
        assert summary(ours)["final"] == summary(theirs)["final"], ours.name
        pd.testing.assert_frame_equal(metrics(ours), metrics(theirs))
    # one array job, a task per job: where each ran, as its summary records it
    where = [summary(p)["ran_on"] for p in slurm]
    assert all(len(w) == 1 and w[0]["host"] == socket.gethostname() for w in where), where
    assert [w[0]["slurm"]["array_task_id"] for w in where] == ["0", "1", "2", "3"], where
    assert len({w[0]["slurm"]["array_job_id"] for w in where}) == 1, where
    assert len(list((tmp_path / "slurm" / ".submitit").glob("*_*/*_result.pkl"))) == 4


def test_an_experiments_smoke_tier_runs_on_slurm_with_its_report(tmp_path, cluster):
    results = tmp_path / "results"
    done = rbmlab(
        "experiment",
        "demo/bars-cd-vs-pcd",
        "scale=smoke",
        *ON_SLURM,
        f"results_root={results}",
        cwd=tmp_path,
        env=cluster,
    )
    sweep = tmp_path / "outputs" / "experiments" / "demo" / "bars-cd-vs-pcd" / "smoke"
    assert "Submitit 'slurm' sweep" in done.stderr + done.stdout
    runs = job_dirs(sweep)
    assert len(runs) == 6 and all(summary(r)["status"] == "completed" for r in runs)
    report = results / "demo"
    for end in (".md", ".png", "_curves.csv", "_runs.csv"):
        assert (report / f"bars-cd-vs-pcd_smoke{end}").stat().st_size > 0, end
    table = pd.read_csv(report / "bars-cd-vs-pcd_smoke_runs.csv")
    assert len(table) == 6 and set(table["status"]) == {"completed"}
    assert "scale: smoke" in (report / "bars-cd-vs-pcd_smoke.md").read_text()


# SLURM's controller checks time limits every 30 s and signals USR2 at the first check less than
# signal_delay_s + 30 s before the one-minute limit: here 20 to 50 s into each attempt. Each epoch
# sleeps SLEEP s, so the run (EPOCHS * SLEEP s) needs one requeue or more whatever the machine's
# speed; a requeued job restarts about 12 s later (cred_expire=10).
EPOCHS, SLEEP, SIGNAL_DELAY_S = 9, 6, 10


def test_a_job_past_its_time_limit_is_requeued_resumes_and_ends_identical(tmp_path, cluster):
    args = [*SMALL, f"train.epochs={EPOCHS}", "train.checkpoint_every=1", "seed=4"]
    rbmlab("run", "-m", *args, "hydra.sweep.dir=basic", cwd=tmp_path, env=cluster)
    rbmlab(
        "run",
        "-m",
        *args,
        "hydra/launcher=slurm",
        f"hydra.launcher.partition={PARTITION}",
        "hydra.launcher.cpus_per_task=1",
        "hydra.launcher.mem_gb=1",
        "hydra.launcher.timeout_min=1",
        f"hydra.launcher.signal_delay_s={SIGNAL_DELAY_S}",
        "hydra.sweep.dir=slurm",
        cwd=tmp_path,
        env=cluster,
        fault=f"sleep_after_epoch:{SLEEP}",
        timeout=540,
    )
    run, reference = tmp_path / "slurm" / "0", tmp_path / "basic" / "0"
    record = summary(run)
    assert record["status"] == "completed", record
    pd.testing.assert_frame_equal(metrics(run), metrics(reference))
    assert record["final"] == summary(reference)["final"]
    ran_on = record["ran_on"]
    assert len(ran_on) >= 2, ran_on  # requeued at least once
    for before, after in zip(ran_on, ran_on[1:]):
        assert before["ended"]["signal"] == "SIGUSR2", ran_on
        assert after["from_epoch"] == before["ended"]["checkpoint_epoch"], ran_on
        assert after["slurm"]["job_id"] == before["slurm"]["job_id"], ran_on
        assert int(after["slurm"].get("restart_count", 0)) > int(before["slurm"].get("restart_count", 0))
    job = ended(ran_on[0]["slurm"]["job_id"], cluster)
    restarts = int(job.split("Restarts=")[1].split()[0])
    assert "JobState=COMPLETED" in job and restarts >= len(ran_on) - 1 >= 1, job
