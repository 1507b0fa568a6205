"""Output directories: moving a sweep aside, taking one over, counting its failed jobs; never
while another process owns one of its runs."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rbmlab.errors import RbmlabError
from rbmlab.run.outputs import failed_jobs, find_run_to_resume, move_aside, take_over_sweep
from rbmlab.storage.locking import DirectoryLock


def write_run(run: Path, status: str, **extra) -> None:
    run.mkdir(parents=True, exist_ok=True)
    (run / "summary.json").write_text(json.dumps({"status": status, **extra}))
    (run / "metrics.csv").write_text("epoch\n0\n")


def hold_lock(run: Path) -> subprocess.Popen:
    """Another process owning ``run`` (its lock taken) until killed."""
    code = (
        "import sys, time; from rbmlab.storage.locking import DirectoryLock; "
        "DirectoryLock.for_run(sys.argv[1]).acquire(); print('held', flush=True); time.sleep(600)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code, str(run)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_an_earlier_sweep_is_moved_aside_to_the_first_free_number(tmp_path):
    sweep = tmp_path / "reduced"
    for n in (1, 2):
        write_run(sweep / "cd" / "0", "completed", n=n)
        assert move_aside(sweep, "experiment x") == tmp_path / f"reduced.{n}" and not sweep.exists()
    assert json.loads((tmp_path / "reduced.1" / "cd" / "0" / "summary.json").read_text())["n"] == 1
    assert json.loads((tmp_path / "reduced.2" / "cd" / "0" / "summary.json").read_text())["n"] == 2


def test_a_sweep_with_a_run_in_use_is_neither_moved_nor_cleared(tmp_path):
    sweep = tmp_path / "smoke"
    write_run(sweep / "0", "completed")
    write_run(sweep / "1", "running")
    holder = hold_lock(sweep / "1")
    try:
        with pytest.raises(RbmlabError, match=f"is in use by process {holder.pid}"):
            move_aside(sweep, "experiment x")
        with pytest.raises(RbmlabError, match=f"is in use by process {holder.pid}"):
            take_over_sweep(sweep, "hydra.sweep.dir", resume=False, overwrite=True)
        assert (sweep / "0" / "summary.json").exists() and (sweep / "1" / "metrics.csv").exists()
    finally:
        holder.kill()
        holder.wait()
    take_over_sweep(sweep, "hydra.sweep.dir", resume=False, overwrite=True)  # the holder is gone
    assert not (sweep / "0" / "summary.json").exists() and not (sweep / "1" / "metrics.csv").exists()


def test_overwrite_clears_only_rbmlab_records_of_the_job_directories(tmp_path):
    write_run(tmp_path / "0", "completed")
    (tmp_path / "0" / "notes.txt").write_text("mine")
    (tmp_path / "precious.txt").write_text("mine")
    write_run(tmp_path / "outputs" / "runs" / "a", "completed")  # not a job of this sweep
    with pytest.raises(RbmlabError, match="overwrite=true"):
        take_over_sweep(tmp_path, "hydra.sweep.dir", resume=False, overwrite=False)
    take_over_sweep(tmp_path, "hydra.sweep.dir", resume=False, overwrite=True)
    assert sorted(p.name for p in (tmp_path / "0").iterdir()) == [".rbmlab.lock", "notes.txt"]
    assert (tmp_path / "precious.txt").exists()
    assert (tmp_path / "outputs" / "runs" / "a" / "summary.json").exists()


def test_failed_jobs_counts_failed_killed_and_missing_jobs(tmp_path):
    write_run(tmp_path / "0", "completed")
    write_run(tmp_path / "1", "diverged")
    write_run(tmp_path / "2", "failed", error="boom")
    write_run(tmp_path / "3", "running")  # nothing holds its lock: killed
    write_run(tmp_path / "4", "running")
    write_run(tmp_path / "5", "interrupted")
    with DirectoryLock.for_run(tmp_path / "4"):  # a live holder: still running
        problems = failed_jobs(tmp_path, n_jobs=7)
    assert len(problems) == 5
    assert problems[0].endswith("failed: boom")
    assert problems[1].endswith("3: interrupted (killed?); resume=true continues it")
    assert problems[2].endswith("4: still running (another process holds it)")
    assert problems[3].endswith("5: interrupted (killed?); resume=true continues it")
    assert "left no summary.json" in problems[4]


def test_resume_finds_the_newest_unfinished_run_and_skips_unreadable_records(tmp_path):
    write_run(tmp_path / "a", "running", config_hash="h")
    time.sleep(0.01)
    write_run(tmp_path / "b", "failed", config_hash="h")
    write_run(tmp_path / "c", "completed", config_hash="h")
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "summary.json").write_bytes(b"\xff[[[")
    (tmp_path / "e").mkdir()
    (tmp_path / "e" / "summary.json").write_text("[1, 2]")
    assert find_run_to_resume("h", tmp_path) == tmp_path / "b"
    assert find_run_to_resume("other", tmp_path) is None
