"""Runs stopped from outside: a signal (SIGTERM, SIGINT, SIGHUP, SIGUSR2), a timeout, a killed
launcher, kill -9. Each leaves ``interrupted`` in summary.json (or, for kill -9, is reported as
interrupted because nothing holds its lock), the report lists it as interrupted, never as running,
and ``resume=true`` ends identical to an uninterrupted run.

Every rbmlab process is a subprocess; ``stall_after_epoch:<e>`` (rbmlab.storage.faults) holds a
run at epoch e, after that epoch's checkpoint, until the signal arrives.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from rbmlab.report import make_report
from rbmlab.run.outputs import failed_jobs
from rbmlab.run.records import describe_work, observed_status
from rbmlab.storage.locking import DirectoryLock, is_held
from tests.test_faults import (
    EPOCHS,
    SMALL,
    metrics,
    no_temporaries,
    one_error_line,
    rbmlab,
    reference,
    start,
    summary,
    wait_for,
)

__all__ = ["reference"]  # the fixture, shared with tests/test_faults.py

ARGS = [*SMALL, f"train.epochs={EPOCHS}", "train.checkpoint_every=5", "hydra.run.dir=run"]


def at_epoch(epoch: int):
    return lambda path: json.loads(path.read_text()).get("epochs_done") == epoch


def stopped_by(sig: int, tmp_path: Path, stall: int = 10) -> tuple[int, str]:
    """Start a run, hold it at epoch ``stall`` and send ``sig``: (exit status, stderr)."""
    proc = start("run", *ARGS, cwd=tmp_path, fault=f"stall_after_epoch:{stall}")
    wait_for(tmp_path / "run" / "summary.json", at_epoch(stall))
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    return proc.returncode, err


def resumes_to_reference(tmp_path: Path, reference: Path) -> None:
    code, _, err = rbmlab("run", *ARGS, "resume=true", cwd=tmp_path)
    assert code == 0, err
    run = tmp_path / "run"
    pd.testing.assert_frame_equal(metrics(run), metrics(reference))
    assert summary(run)["final"] == summary(reference)["final"]
    assert summary(run)["status"] == "completed" and "interrupted" not in summary(run)
    no_temporaries(run)


@pytest.mark.parametrize(
    "sig",
    [
        signal.SIGTERM,  # the others take the same path: slow set
        pytest.param(signal.SIGINT, marks=pytest.mark.slow),
        pytest.param(signal.SIGHUP, marks=pytest.mark.slow),
        pytest.param(signal.SIGUSR2, marks=pytest.mark.slow),
    ],
    ids=lambda s: signal.Signals(s).name,
)
def test_a_signal_leaves_interrupted_and_resume_ends_identical(tmp_path, reference, sig):
    code, err = stopped_by(sig, tmp_path)
    name = signal.Signals(sig).name
    assert code == 128 + sig, err
    one_error_line(err, f"interrupted by {name}")
    record = summary(tmp_path / "run")
    assert record["status"] == "interrupted", record
    assert record["interrupted"]["signal"] == name and record["interrupted"]["checkpoint_epoch"] == 10
    assert record["epochs_done"] == 10 and "error" not in record
    assert describe_work(tmp_path / "run").startswith("an interrupted run (checkpoint of epoch 10)")
    code, _, err = rbmlab("run", *ARGS, cwd=tmp_path)  # no silent overwrite
    assert code == 2
    one_error_line(err, "holds an interrupted run")
    resumes_to_reference(tmp_path, reference)


@pytest.mark.slow
def test_a_timeout_stops_the_run_as_interrupted(tmp_path, reference):
    """``timeout`` (coreutils), as a scheduler's wall-clock limit does, sends SIGTERM."""
    env = {**os.environ, "HYDRA_FULL_ERROR": "0", "RBMLAB_FAULT": "stall_after_epoch:10"}
    proc = subprocess.run(
        ["timeout", "-s", "TERM", "20", sys.executable, "-m", "rbmlab", "run", *ARGS],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 124, proc.stderr  # timeout's own status: it fired
    record = summary(tmp_path / "run")
    assert record["status"] == "interrupted" and record["interrupted"]["signal"] == "SIGTERM"
    resumes_to_reference(tmp_path, reference)


def test_a_run_killed_without_a_handler_is_reported_interrupted_never_running(tmp_path, reference):
    """kill -9 leaves status running in the file; nothing holds the lock, so every reader
    (report, sweep check, run-directory check) says interrupted. A live run stays running."""
    live = start(
        "run",
        *[a if a != "hydra.run.dir=run" else "hydra.run.dir=live" for a in ARGS],
        cwd=tmp_path,
        fault="stall_after_epoch:10",
    )
    code, _, _ = rbmlab("run", *ARGS, cwd=tmp_path, fault="after_epoch:12")
    assert code == -signal.SIGKILL
    wait_for(tmp_path / "live" / "summary.json", at_epoch(10))
    try:
        dead, alive = tmp_path / "run", tmp_path / "live"
        assert summary(dead)["status"] == "running" == summary(alive)["status"]
        assert observed_status(dead, summary(dead)) == "interrupted"
        assert observed_status(alive, summary(alive)) == "running"
        assert is_held(alive) and not is_held(dead)
        make_report(tmp_path, out_dir=tmp_path / "report", metric="test_log_likelihood")
        runs = pd.read_csv(tmp_path / "report" / "test_log_likelihood_runs.csv").set_index("run_dir")
        assert runs.loc["run", "status"] == "interrupted" and runs.loc["live", "status"] == "running"
        text = (tmp_path / "report" / "test_log_likelihood.md").read_text()
        assert "1 interrupted" in text and "1 running" in text
        assert "interrupted (killed?)" in " ".join(failed_jobs(tmp_path, 2))
    finally:
        live.kill()
        live.wait(timeout=60)
    code, _, err = rbmlab("run", *ARGS, cwd=tmp_path)  # the run-directory check, under its lock
    assert code == 2
    one_error_line(err, "holds an interrupted run (checkpoint of epoch 10)")
    resumes_to_reference(tmp_path, reference)


@pytest.mark.slow
def test_a_killed_launcher_leaves_its_jobs_interrupted(tmp_path):
    """SIGTERM to the process group of a joblib sweep (what a scheduler or a closed session
    sends): the launcher and both workers stop, and each job's summary says interrupted."""
    env = {**os.environ, "HYDRA_FULL_ERROR": "0", "RBMLAB_FAULT": "stall_after_epoch:3"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rbmlab",
            "run",
            "-m",
            *SMALL,
            "train.epochs=10",
            "seed=1,2",
            "hydra/launcher=joblib",
            "hydra.launcher.n_jobs=2",
            "hydra.sweep.dir=sweep",
        ],
        cwd=tmp_path,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    for job in ("0", "1"):
        wait_for(tmp_path / "sweep" / job / "summary.json", at_epoch(3), timeout=120)
    os.killpg(proc.pid, signal.SIGTERM)
    proc.communicate(timeout=120)
    deadline = time.monotonic() + 60
    while any(is_held(tmp_path / "sweep" / j) for j in ("0", "1")):  # the workers' exit
        assert time.monotonic() < deadline
        time.sleep(0.1)
    for job in ("0", "1"):  # each worker recorded its own interruption
        record = summary(tmp_path / "sweep" / job)
        assert record["status"] == "interrupted" and record["interrupted"]["signal"] == "SIGTERM", record
    code, _, err = rbmlab(
        "run",
        "-m",
        *SMALL,
        "train.epochs=10",
        "seed=1,2",
        "hydra.sweep.dir=sweep",
        "resume=true",
        cwd=tmp_path,
    )
    assert code == 0, err
    assert all(summary(tmp_path / "sweep" / j)["status"] == "completed" for j in ("0", "1"))


@pytest.mark.slow
def test_a_signal_to_the_launching_process_alone_stops_its_workers_too(tmp_path):
    """``kill PID`` of a joblib sweep's command (not its process group): the command passes the
    signal on to its workers, which record their runs as interrupted, and ends with one line and
    status 128 + 15; no worker trains on as an orphan."""
    env = {**os.environ, "HYDRA_FULL_ERROR": "0", "RBMLAB_FAULT": "stall_after_epoch:3"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "rbmlab",
            "run",
            "-m",
            *SMALL,
            "train.epochs=10",
            "seed=1,2",
            "hydra/launcher=joblib",
            "hydra.launcher.n_jobs=2",
            "hydra.sweep.dir=sweep",
        ],
        cwd=tmp_path,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    for job in ("0", "1"):
        wait_for(tmp_path / "sweep" / job / "summary.json", at_epoch(3), timeout=120)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    # the one line; after it multiprocessing's resource tracker may warn of loky's semaphores
    assert err.startswith("rbmlab: error: interrupted by SIGTERM") and "Traceback" not in err, err
    for job in ("0", "1"):
        run = tmp_path / "sweep" / job
        assert not is_held(run) and summary(run)["status"] == "interrupted", summary(run)


@pytest.mark.slow
def test_an_ignored_hangup_stays_ignored(tmp_path, reference):
    """Under nohup (SIGHUP ignored) a closed terminal does not stop the run."""
    env = {**os.environ, "HYDRA_FULL_ERROR": "0", "RBMLAB_FAULT": "stall_after_epoch:10"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "rbmlab", "run", *ARGS],
        cwd=tmp_path,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN),
    )
    wait_for(tmp_path / "run" / "summary.json", at_epoch(10))
    proc.send_signal(signal.SIGHUP)
    time.sleep(1.0)
    assert proc.poll() is None and summary(tmp_path / "run")["status"] == "running"
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert summary(tmp_path / "run")["interrupted"]["signal"] == "SIGTERM"
    resumes_to_reference(tmp_path, reference)


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("hydra_plugins.hydra_submitit_launcher") is None,
    reason="hydra-submitit-launcher not installed (pip install .[slurm])",
)
def test_a_submitit_timeout_leaves_the_job_interrupted(tmp_path):
    """submitit's local launcher sends USR2 30 s before its time limit (its timeout and
    preemption signal on SLURM too), then SIGINT and SIGKILL at the limit; the job's process
    records the run as interrupted and ends, and the sweep names it."""
    env = {**os.environ, "HYDRA_FULL_ERROR": "0", "RBMLAB_FAULT": "stall_after_epoch:3"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rbmlab",
            "run",
            "-m",
            *SMALL,
            "train.epochs=10",
            "seed=1",
            "hydra/launcher=submitit_local",
            "hydra.launcher.timeout_min=1",
            "hydra.sweep.dir=sweep",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    run = tmp_path / "sweep" / "0"
    record = summary(run)
    assert record["status"] == "interrupted" and record["interrupted"]["signal"] == "SIGUSR2", (
        record,
        proc.stderr[-2000:],
    )
    assert proc.returncode == 2 and "sweep/0: interrupted (by SIGUSR2)" in proc.stderr, proc.stderr


def test_a_live_lock_probe_neither_creates_nor_keeps_anything(tmp_path):
    assert not is_held(tmp_path / "nowhere") and not (tmp_path / "nowhere").exists()
    with DirectoryLock.for_run(tmp_path / "r"):
        assert is_held(tmp_path / "r")
    assert not is_held(tmp_path / "r")
    with DirectoryLock.for_run(tmp_path / "r"):  # the probe left no lock behind
        pass


@pytest.mark.slow
def test_a_report_killed_while_writing_leaves_the_old_one_and_the_next_cleans_up(tmp_path, reference):
    """RBMLAB_FAULT=write:<file> kills a report after its four temporaries are written and
    before any rename: the old report stays whole; the next report removes the temporaries."""
    out = tmp_path / "report"
    make_report(reference, out_dir=out, metric="test_log_likelihood")
    before = {p.name: p.read_bytes() for p in out.iterdir() if not p.name.startswith(".")}
    code, _, _ = rbmlab(
        "report",
        str(reference),
        "--out",
        str(out),
        "--metric",
        "test_reconstruction_error",
        cwd=tmp_path,
        fault="write:test_reconstruction_error_runs.csv",
    )
    assert code == -signal.SIGKILL
    assert {p.name: p.read_bytes() for p in out.iterdir() if not p.name.startswith(".")} == before
    assert len(list(out.glob(".*.tmp"))) == 4
    code, _, err = rbmlab(
        "report", str(reference), "--out", str(out), "--metric", "test_reconstruction_error", cwd=tmp_path
    )
    assert code == 0, err
    no_temporaries(out)
    assert (out / "test_reconstruction_error.md").exists()


def test_a_probe_is_not_a_holder_and_a_holder_is_refused_at_once(tmp_path):
    """is_held's shared lock lasts microseconds: an acquire that meets one waits it out (a
    second), while an exclusive holder is refused at once with wait=0."""
    import fcntl  # noqa: PLC0415
    import threading  # noqa: PLC0415

    from rbmlab.errors import RbmlabError  # noqa: PLC0415

    (tmp_path / "r").mkdir()
    lock = tmp_path / "r" / ".rbmlab.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_SH)  # a probe, released 0.3 s later
    threading.Timer(0.3, lambda: fcntl.flock(fd, fcntl.LOCK_UN)).start()
    with DirectoryLock.for_run(tmp_path / "r"):
        pass
    fcntl.flock(fd, fcntl.LOCK_EX)  # a real holder
    t0 = time.monotonic()
    with pytest.raises(RbmlabError, match="is in use by"):
        DirectoryLock.for_run(tmp_path / "r").acquire()
    assert time.monotonic() - t0 < 0.5
    os.close(fd)


def test_a_report_into_a_folder_not_made_yet_makes_it(tmp_path):
    from rbmlab.storage.publish import publish  # noqa: PLC0415

    publish({tmp_path / "new" / "deeper" / "a.md": "x"})
    assert (tmp_path / "new" / "deeper").is_dir() and (
        tmp_path / "new" / "deeper" / "a.md"
    ).read_text() == "x"
