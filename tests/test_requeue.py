"""Jobs that survive a cluster (rbmlab.run.cluster): on submitit's timeout and preemption signal
a job records its run as interrupted, hands the signal to submitit, which stores the job's
``checkpoint()`` (the same job with ``resume=true``) and requeues it; the restarted job resumes
and ends identical to an uninterrupted run. Exercised here through submitit's local executor,
whose requeue restarts the process (SLURM's, on a real cluster: tests/test_cluster_slurm.py).
And where a run trained: summary.json's ``ran_on`` (rbmlab.storage.provenance).
"""

from __future__ import annotations

import json
import os
import signal
import socket

import pandas as pd
import pytest

pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="the [slurm] extra is not installed")

from hydra_plugins.rbmlab_launcher import LocalLauncher
from rbmlab.errors import RbmlabError
from rbmlab.hydra_app import compose
from rbmlab.run import cluster, cluster_schema, signals
from rbmlab.storage.provenance import merge_placements, placement
from tests.test_faults import EPOCHS, SMALL, metrics, rbmlab, reference, start, summary, wait_for

__all__ = ["reference"]  # the fixture, shared with tests/test_faults.py

LOCAL = [
    "hydra/launcher=submitit_local",
    "hydra.launcher._target_=hydra_plugins.rbmlab_launcher.LocalLauncher",
]


def test_a_restarted_job_resumes_and_the_launcher_backend_fills_in_only_where_unset():
    job = ["learner=pcd", "overwrite=true"]
    assert cluster.resumed(job) == ["learner=pcd", "resume=true"]
    assert cluster.resumed(["resume=false", "seed=2"]) == ["seed=2", "resume=true"]
    assert cluster.job_overrides(job, None, restart=False) == job
    assert cluster.job_overrides(job, "cupy", restart=False) == [*job, "backend=cupy"]
    assert cluster.job_overrides(["backend=numpy"], "cupy", restart=False) == ["backend=numpy"]
    assert cluster.job_overrides(["seed=1"], "cupy", restart=True) == [
        "seed=1",
        "backend=cupy",
        "resume=true",
    ]


@pytest.mark.parametrize("count, expected", [(None, False), ("0", False), ("1", True), ("3", True)])
def test_slurm_restart_count_says_whether_a_job_was_requeued(monkeypatch, count, expected):
    monkeypatch.delenv("SLURM_RESTART_COUNT", raising=False)
    if count is not None:
        monkeypatch.setenv("SLURM_RESTART_COUNT", count)
    assert cluster.restarted() is expected


def test_the_checkpoint_is_the_same_job_resumed():
    launcher = LocalLauncher(submitit_folder="unused")
    args = (["learner=cd"], "hydra.sweep.dir", 3, "job_id_for_3", {})
    delayed = launcher.checkpoint(*args)
    assert delayed.function is launcher
    assert delayed.args == (["learner=cd", "resume=true"], *args[1:])


def test_the_launcher_configs_compose_with_their_settings_and_refuse_a_misspelt_one():
    launcher = compose(
        "config", ["hydra/launcher=slurm_gpu", "hydra.launcher.partition=gpu"], hydra_config=True
    ).hydra.launcher
    assert launcher._target_ == "hydra_plugins.rbmlab_launcher.SlurmLauncher"
    assert (launcher.backend, launcher.gpus_per_node, launcher.partition) == ("cupy", 1, "gpu")
    assert launcher.max_num_timeout == cluster_schema.REQUEUES
    cpu = compose("config", ["hydra/launcher=slurm"], hydra_config=True).hydra.launcher
    assert cpu.backend is None and cpu.gpus_per_node is None and cpu.timeout_min == 240
    with pytest.raises(Exception, match="partiton"):
        compose("config", ["hydra/launcher=slurm", "hydra.launcher.partiton=gpu"], hydra_config=True)


def test_a_slurm_launcher_without_the_extra_says_what_to_install(monkeypatch):
    monkeypatch.setattr(cluster, "installed", lambda: False)
    with pytest.raises(
        RbmlabError,
        match=r"hydra/launcher=slurm_gpu: needs hydra-submitit-launcher; pip install 'rbmlab\[slurm\]'",
    ):
        compose("config", ["hydra/launcher=slurm_gpu"], hydra_config=True)
    compose("config", ["hydra/launcher=basic"], hydra_config=True)


def test_placement_names_the_host_and_the_slurm_job(monkeypatch):
    for var in cluster_vars():
        monkeypatch.delenv(var, raising=False)
    here = placement(0)
    assert here["host"] == socket.gethostname() and here["pid"] == os.getpid() and "slurm" not in here
    monkeypatch.setenv("SLURM_JOB_ID", "1042")
    monkeypatch.setenv("SLURM_ARRAY_JOB_ID", "1040")
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "2")
    monkeypatch.setenv("SLURM_RESTART_COUNT", "1")
    assert placement(7)["slurm"] == {
        "job_id": "1042",
        "array_job_id": "1040",
        "array_task_id": "2",
        "restart_count": "1",
    }
    assert placement(7)["from_epoch"] == 7


def cluster_vars():
    from rbmlab.storage.provenance import SLURM_VARIABLES

    return SLURM_VARIABLES.values()


def test_a_resumed_run_keeps_where_it_ran_before_and_how_that_ended():
    first, second = {"host": "a", "from_epoch": 0}, {"host": "b", "from_epoch": 10}
    interrupted = {"signal": "SIGUSR2", "checkpoint_epoch": 10}
    ran = merge_placements({"ran_on": [first], "interrupted": interrupted}, [second])
    assert ran == [{**first, "ended": interrupted}, second]
    killed = merge_placements({"ran_on": [first], "status": "running"}, [second])  # kill -9
    assert killed[0]["ended"] == {"status": "running"}
    assert merge_placements({}, [second]) == [second]  # a run from before ran_on
    for garbled in (7, "host", {"host": "a"}, [3, None]):  # an edited summary.json
        assert merge_placements({"ran_on": garbled}, [second]) == [second]


def test_only_a_launcher_that_takes_interruptions_over_keeps_its_worker_alive(monkeypatch):
    monkeypatch.setattr(signals, "_CLI_PID", None)  # a worker
    assert signals.ends_when_interrupted()
    with signals.taken_over_by_launcher():
        assert not signals.ends_when_interrupted()
    assert signals.ends_when_interrupted()


@pytest.mark.slow  # ~20 s; make test-cluster checks the same on a real SLURM
def test_a_preempted_job_is_requeued_resumes_and_ends_identical(tmp_path, reference):
    """USR2 (SLURM's signal before the time limit, and a preemption's) reaches the job at epoch
    10, after that epoch's checkpoint: the run is recorded interrupted, submitit requeues the
    job (its local executor restarts the process) with resume=true, and the restarted job ends
    with the uninterrupted run's metrics rows and final values."""
    proc = start(
        "run",
        "-m",
        *SMALL,
        f"train.epochs={EPOCHS}",
        "train.checkpoint_every=5",
        *LOCAL,
        "hydra.sweep.dir=sweep",
        cwd=tmp_path,
        fault="stall_after_epoch:10",
    )
    run = tmp_path / "sweep" / "0"
    wait_for(run / "summary.json", lambda p: json.loads(p.read_text()).get("epochs_done") == 10, timeout=120)
    first = summary(run)
    os.kill(first["pid"], signal.SIGUSR2)
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err[-3000:]
    record = summary(run)
    assert record["status"] == "completed", record
    pd.testing.assert_frame_equal(metrics(run), metrics(reference))
    assert record["final"] == summary(reference)["final"]
    assert [p["from_epoch"] for p in record["ran_on"]] == [0, 10]
    assert record["ran_on"][0]["ended"]["signal"] == "SIGUSR2"
    assert record["ran_on"][0]["ended"]["checkpoint_epoch"] == 10
    assert record["ran_on"][1]["pid"] != first["pid"]


@pytest.mark.slow
def test_a_signal_other_than_submitits_still_ends_the_job_interrupted(tmp_path):
    """SIGTERM (scancel, or a preemption without requeue) is not submitit's to checkpoint: the
    run is recorded interrupted, the job ends, and the sweep names it."""
    proc = start(
        "run",
        "-m",
        *SMALL,
        "train.epochs=20",
        *LOCAL,
        "hydra.sweep.dir=sweep",
        cwd=tmp_path,
        fault="stall_after_epoch:3",
    )
    run = tmp_path / "sweep" / "0"
    wait_for(run / "summary.json", lambda p: json.loads(p.read_text()).get("epochs_done") == 3, timeout=120)
    os.kill(summary(run)["pid"], signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2, err[-2000:]
    assert summary(run)["status"] == "interrupted" and summary(run)["interrupted"]["signal"] == "SIGTERM"
    assert "interrupted (by SIGTERM)" in err
    code, _, err = rbmlab(
        "run", "-m", *SMALL, "train.epochs=20", "hydra.sweep.dir=sweep", "resume=true", cwd=tmp_path
    )
    assert code == 0, err
    assert summary(run)["status"] == "completed"


@pytest.mark.slow
def test_a_run_stopped_before_its_first_checkpoint_starts_over_and_keeps_where_it_ran(tmp_path, reference):
    """No checkpoint to continue from (checkpoint_every=50 > the 2 epochs done): resume=true starts
    the run over, and ran_on keeps the process that was stopped, ended with no checkpoint."""
    args = [*SMALL, f"train.epochs={EPOCHS}", "train.checkpoint_every=50", "hydra.run.dir=run"]
    proc = start("run", *args, cwd=tmp_path, fault="stall_after_epoch:2")
    wait_for(tmp_path / "run" / "metrics.csv", lambda p: "\n2," in p.read_text())  # epoch 2's row
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    code, _, err = rbmlab("run", *args, "resume=true", cwd=tmp_path)
    assert code == 0, err
    record = summary(tmp_path / "run")
    assert [p["from_epoch"] for p in record["ran_on"]] == [0, 0]
    assert record["ran_on"][0]["ended"] == {
        **record["ran_on"][0]["ended"],
        "signal": "SIGTERM",
        "checkpoint_epoch": None,
    }
    pd.testing.assert_frame_equal(metrics(tmp_path / "run"), metrics(reference))
