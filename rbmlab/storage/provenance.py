"""Which source produced a run: the git commit of the rbmlab checkout, with ``+dirty`` when its
code (rbmlab/, conf/, experiments/) differs from that commit, or the package's version where there
is no checkout (an installed wheel). Recorded in every summary.json and in the runs tables of
results/. And where it ran: each process that trained it (the first, then each resume), with
its host and, under SLURM, its job, array job and index, and restart count."""

from __future__ import annotations

import functools
import os
import socket
import subprocess
import time
from pathlib import Path

from rbmlab import __version__
from rbmlab.resources import SHIPPED, checkout_root


@functools.cache
def source_revision() -> str:
    """Short commit hash of the checkout holding this package (``+dirty`` if its code has
    uncommitted changes or new files), or ``rbmlab <version>`` when the package is not the top of
    a git checkout (an installed wheel, even inside some other repository) or git is missing."""
    installed = f"rbmlab {__version__}"
    repo = checkout_root()
    if repo is None:
        return installed

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True, timeout=10
        ).stdout.strip()

    try:
        if Path(git("rev-parse", "--show-toplevel")).resolve() != repo:
            return installed
        commit = git("rev-parse", "--short=7", "HEAD")
        dirty = git("status", "--porcelain", "--", "rbmlab", *SHIPPED)
    except (OSError, subprocess.SubprocessError):
        return installed
    return f"{commit}+dirty" if dirty else commit


def merge_sources(previous: str | None, current: str | None) -> str | None:
    """The ``source`` of a resumed run: every commit that trained it, in order, comma-separated."""
    sources = [s for s in (previous or "").split(",") if s]
    if current and (not sources or sources[-1] != current):
        sources.append(current)
    return ",".join(sources) or None


# summary.json's names for the SLURM variables of a job's environment
SLURM_VARIABLES = {
    "job_id": "SLURM_JOB_ID",
    "array_job_id": "SLURM_ARRAY_JOB_ID",
    "array_task_id": "SLURM_ARRAY_TASK_ID",
    "restart_count": "SLURM_RESTART_COUNT",
    "partition": "SLURM_JOB_PARTITION",
}


def placement(from_epoch: int) -> dict:
    """Where this process trains a run, from epoch ``from_epoch`` on: host, pid, start time and,
    in a SLURM job, its ids."""
    here = {
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "from_epoch": int(from_epoch),
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    slurm = {name: os.environ[var] for name, var in SLURM_VARIABLES.items() if os.environ.get(var)}
    return {**here, "slurm": slurm} if slurm else here


def merge_placements(previous: dict, current: list[dict]) -> list[dict]:
    """The ``ran_on`` of a resumed run: the earlier processes, the last of them with how it ended
    (the interruption summary.json recorded, or the status it was left in), then this one."""
    ran = previous.get("ran_on")  # read from a file: anything but a list of records is dropped
    earlier = [dict(p) for p in ran if isinstance(p, dict)] if isinstance(ran, list) else []
    if earlier:
        earlier[-1]["ended"] = previous.get("interrupted") or {"status": previous.get("status")}
    return earlier + current
