"""Output directories of runs and sweeps: finding a run to resume, taking a sweep over (its
earlier runs continued, replaced or moved aside, never silently overwritten), and reading what a
finished sweep's jobs recorded.

Everything that moves or replaces an earlier sweep first takes the lock of every run in it
(rbmlab.storage.locking), so a run that another process is still writing is never moved or cleared.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

from rbmlab.errors import RbmlabError
from rbmlab.run.records import FINISHED, clear_records, describe_work, observed_status, read_summary
from rbmlab.storage.locking import LOCK_NAME, DirectoryLock


def run_dirs(root: Path, depth: int | None = None) -> list[Path]:
    """The run directories under ``root`` (holding a summary.json or a run lock): at any depth,
    or ``depth`` levels down (1: a sweep's job directories)."""
    if not root.is_dir():
        return []
    pattern = "/".join(["*"] * depth) + "/" if depth else "**/"
    return sorted({p.parent for name in ("summary.json", LOCK_NAME) for p in root.glob(pattern + name)})


def find_run_to_resume(config_hash: str, root: Path = Path("outputs/runs")) -> Path | None:
    """The newest unfinished run under ``root`` with the same configuration (status running,
    interrupted or failed; a diverged run would diverge again). Whether another process still owns it is for
    its lock to say when the run starts."""
    candidates = []
    for path in root.glob("*/summary.json"):
        try:
            summary = read_summary(path)
        except RbmlabError:
            continue
        if summary.get("config_hash") == config_hash and summary.get("status") in (
            "running",
            "failed",
            "interrupted",
        ):
            candidates.append(path.parent)
    return max(candidates, key=lambda p: p.stat().st_mtime) if candidates else None


@contextlib.contextmanager
def runs_owned(sweep_dir: Path, key: str, depth: int | None = None) -> Iterator[list[Path]]:
    """Hold the lock of every run in ``sweep_dir`` (none may be in use by another process)."""
    with contextlib.ExitStack() as stack:
        runs = run_dirs(sweep_dir, depth)
        for run in runs:
            stack.enter_context(DirectoryLock.for_run(run, key))
        yield runs


def take_over_sweep(sweep_dir: Path, key: str, resume: bool, overwrite: bool) -> None:
    """Before a sweep runs in ``sweep_dir`` (its sweep lock held): the earlier runs in its job
    directories are continued (resume), their records cleared (overwrite: rbmlab's own files
    only), or the sweep is refused."""
    with runs_owned(sweep_dir, key, depth=1) as runs:
        work = any(describe_work(run) for run in runs)
        if work and not (resume or overwrite):
            raise RbmlabError(
                f"{key}: {sweep_dir} holds earlier runs; pass resume=true to continue "
                "them or overwrite=true to replace them"
            )
        if overwrite:
            for run in runs:
                clear_records(run)


def move_aside(sweep_dir: Path, key: str) -> Path:
    """Rename an earlier sweep to ``<name>.<n>`` (first free n) so that a fresh one loses
    nothing (its sweep lock held, and every run lock in it)."""
    with runs_owned(sweep_dir, key):
        n = 1
        while (kept := sweep_dir.with_name(f"{sweep_dir.name}.{n}")).exists():
            n += 1
        sweep_dir.rename(kept)
    return kept


def failed_jobs(sweep_dir: Path, n_jobs: int) -> list[str]:
    """One line per job of a finished sweep that did not finish (failed, killed, or no record
    at all), read from the jobs' summary.json files, so it holds for any launcher."""
    problems = []
    runs = [p.parent for p in sorted(sweep_dir.rglob("summary.json"))] if sweep_dir.is_dir() else []
    for run in runs:
        try:
            summary = read_summary(run / "summary.json")
        except RbmlabError:
            summary = {"status": "unreadable"}
        status = observed_status(run, summary)
        if status not in FINISHED:
            signalled = (summary.get("interrupted") or {}).get("signal") if status == "interrupted" else None
            what = {
                "running": "still running (another process holds it)",
                "interrupted": f"interrupted ({f'by {signalled}' if signalled else 'killed?'}); "
                "resume=true continues it",
            }.get(status, status)
            problems.append(f"{run}: {what}" + (f": {summary['error']}" if summary.get("error") else ""))
    problems += [f"a job left no summary.json in {sweep_dir}"] * max(0, n_jobs - len(runs))
    return problems
