"""Run records: everything a run directory holds, written so that a kill loses nothing.

    config.yaml      the resolved configuration
    overrides.yaml   the command-line overrides that produced it
    metrics.csv      one row per evaluation point (and trial): epoch, updates, wall_time, metrics...
    summary.json     status (running | completed | diverged | failed | interrupted), final metrics
    checkpoint.npz   the model and learner state at the last saved epoch (rbmlab.run.checkpoint)
    selected.npz     train.stop_rule: the model of the evaluation point the rule selects (so far)
    snapshots/       model-only epoch_<e>.npz every train.snapshot_every epochs (kept)
    .rbmlab.lock     held by the one process that owns the directory (rbmlab.storage.locking)

Every file but metrics.csv is replaced atomically (rbmlab.storage.fileio). metrics.csv grows by appends
while the run trains; on resume it is cut back to the checkpoint's epoch by an atomic rewrite, so
a row that a kill tore in half (after the checkpoint, by construction) never survives.
"""

from __future__ import annotations

import csv
import io
import json
import time
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import OmegaConf

from rbmlab.errors import RbmlabError
from rbmlab.run.checkpoint import load_checkpoint, save_checkpoint
from rbmlab.storage.faults import injected_os_error
from rbmlab.storage.fileio import atomic_write, remove_stale_temporaries
from rbmlab.storage.locking import DirectoryLock, is_held
from rbmlab.validation import to_plain

FIXED_COLUMNS = ["epoch", "updates", "wall_time", "trial"]
RECORD_FILES = ("summary.json", "metrics.csv", "checkpoint.npz", "selected.npz")  # the work a run did
CONFIG_FILES = ("config.yaml", "overrides.yaml")
# summary.json statuses of a run that trained to its end: "capped" ended at train.epochs before the
# last compute point of train.budgets (the points it reached are scored; summary budget.unreached)
DONE = ("completed", "capped")
FINISHED = (*DONE, "diverged")  # a diverged run is a recorded outcome, not a failure
SNAPSHOTS = "snapshots"  # model-only snapshots/epoch_<e>.npz (train.snapshot_every)


class RunDirectoryRefused(RbmlabError):
    """The run directory belongs to another process or holds work this run must not replace;
    nothing in it was touched (so nothing may be recorded there either)."""


def json_safe(obj: Any) -> Any:
    """NaN and ±inf (e.g. an AIS interval end of −inf) become null: the file stays valid JSON."""
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def write_json(path: Path, obj: Any) -> None:
    atomic_write(path, json.dumps(json_safe(obj), indent=2, sort_keys=True, allow_nan=False) + "\n")


def read_summary(path: Path) -> dict[str, Any]:
    """A summary.json as a dict; one-line error when it is not a readable JSON object."""
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise RbmlabError(
            f"resume: {path} is unreadable; move the run aside or pass overwrite=true"
        ) from None
    if not isinstance(summary, dict):
        raise RbmlabError(f"resume: {path} is not a JSON object; move the run aside or pass overwrite=true")
    return summary


def observed_status(run_dir: Path, summary: dict[str, Any]) -> str:
    """The status of a run as it stands: summary.json's, except that a run which says it is
    running while no live process holds its lock was killed (kill -9, a lost node, a launcher
    that took its workers down) and is reported as interrupted."""
    status = str(summary.get("status", "unknown"))
    if status == "running" and not is_held(Path(run_dir)):
        return "interrupted"
    return status


def describe_work(run_dir: Path) -> str | None:
    """What earlier work ``run_dir`` holds ("a completed run", "a partial run ..."), None if none.
    Called with the run's lock held, so a summary that says running was left by a dead writer."""
    present = [name for name in RECORD_FILES if (run_dir / name).exists()]
    if not present:
        return None
    try:
        summary = read_summary(run_dir / "summary.json")
        status = summary.get("status")
    except RbmlabError:
        summary, status = {}, None
    if status in ("running", "interrupted"):
        return f"an interrupted run (checkpoint of epoch {summary.get('epochs_done', 0)})"
    return f"a {status} run" if status in (*FINISHED, "failed") else f"a partial run ({', '.join(present)})"


def clear_records(run_dir: Path) -> None:
    """Remove the files an earlier run left in ``run_dir`` (its owner's lock held): only rbmlab's
    own record files, never anything else in the directory."""
    for name in (*RECORD_FILES, *CONFIG_FILES):
        (run_dir / name).unlink(missing_ok=True)
    for snapshot in (run_dir / SNAPSHOTS).glob("epoch_*.npz"):
        snapshot.unlink()


class MetricsLog:
    """metrics.csv, appended one row per evaluation point; cut back to a checkpoint on resume."""

    def __init__(self, path: Path):
        self.path = path
        self.columns: list[str] | None = None

    def truncate(self, last_epoch: int) -> None:
        """Keep the whole rows of epochs <= ``last_epoch``; rewritten atomically."""
        if not self.path.exists():
            return
        try:
            with open(self.path, newline="", encoding="utf-8") as f:
                reader = csv.DictReader(f)
                columns = reader.fieldnames
                rows = [
                    r
                    for r in reader
                    if None not in r.values() and None not in r and float(r["epoch"]) <= last_epoch
                ]
        except (UnicodeDecodeError, ValueError, KeyError, csv.Error) as e:
            raise RbmlabError(
                f"resume: {self.path} is unreadable ({type(e).__name__}); move the run "
                "aside or pass overwrite=true"
            ) from None
        if columns is None:  # an empty file
            return
        self.columns = list(columns)
        atomic_write(self.path, self._text(rows, header=True))

    def header(self) -> list[str]:
        """The column names of the file written so far (none before its first row)."""
        if not self.path.exists():
            return []
        with open(self.path, newline="", encoding="utf-8") as f:
            return next(csv.reader(f), [])

    def rows(self) -> list[dict[str, float | None]]:
        """The whole rows written so far, values as floats (None where empty); a float column
        reads back exactly what was appended (written as its repr)."""
        if not self.path.exists():
            return []
        with open(self.path, newline="", encoding="utf-8") as f:
            return [
                {k: float(v) if v not in ("", None) else None for k, v in r.items()}
                for r in csv.DictReader(f)
                if None not in r.values() and None not in r
            ]

    def append(self, row: dict[str, float]) -> None:
        if self.columns is None:
            self.columns = [k for k in FIXED_COLUMNS if k in row] + sorted(
                k for k in row if k not in FIXED_COLUMNS
            )
            atomic_write(self.path, self._text([], header=True))
        try:
            injected_os_error(self.path.name)
            with open(self.path, "a", newline="", encoding="utf-8") as f:
                f.write(self._text([row], header=False))
        except OSError as e:
            raise RbmlabError(f"{self.path}: cannot write ({e.strerror})") from None

    def _text(self, rows, header: bool) -> str:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=self.columns, extrasaction="ignore")
        if header:
            writer.writeheader()
        writer.writerows(rows)
        return buffer.getvalue()


class RunRecord:
    """The files of one run directory, owned (locked) from :meth:`open` to :meth:`close`."""

    def __init__(self, out: Path):
        self.out = Path(out)
        self.checkpoint = self.out / "checkpoint.npz"
        self.selected = self.out / "selected.npz"
        self.summary_path = self.out / "summary.json"
        self.metrics = MetricsLog(self.out / "metrics.csv")
        self._lock: DirectoryLock | None = None

    @classmethod
    def open(
        cls, out: Path, *, resume: bool = False, overwrite: bool = False, lock_wait: float = 0.0
    ) -> RunRecord:
        """Take ownership of ``out``: its lock first, then the check that earlier work in it is
        continued (resume) or replaced on request (overwrite), never silently overwritten."""
        record = cls(out)
        if record.out.exists() and not record.out.is_dir():
            raise RunDirectoryRefused(f"hydra.run.dir: {record.out} is a file, not a directory")
        try:
            record._lock = DirectoryLock.for_run(record.out, wait=lock_wait).acquire()
            record._check(resume, overwrite)
        except RbmlabError as e:
            record.close()
            raise RunDirectoryRefused(str(e)) from None
        remove_stale_temporaries(record.out)
        if overwrite:
            clear_records(record.out)
        return record

    def _check(self, resume: bool, overwrite: bool) -> None:
        """Earlier work is continued (resume) or replaced on request (overwrite), never silently
        overwritten; a record file's name taken by a directory is refused."""
        taken = next((self.out / n for n in (*RECORD_FILES, *CONFIG_FILES) if (self.out / n).is_dir()), None)
        if taken is not None:
            raise RbmlabError(f"hydra.run.dir: {taken} is a directory where rbmlab keeps a file")
        work = describe_work(self.out)
        if work and not (resume or overwrite):
            raise RbmlabError(
                f"hydra.run.dir: {self.out} holds {work}; pass resume=true to "
                "continue it or overwrite=true to replace it"
            )

    def close(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    def __enter__(self) -> RunRecord:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def previous_summary(self) -> dict[str, Any]:
        return read_summary(self.summary_path) if self.summary_path.exists() else {}

    def start(self, cfg, overrides: list[str]) -> None:
        """A fresh run: configuration files written, any earlier metrics.csv removed."""
        atomic_write(self.out / "config.yaml", OmegaConf.to_yaml(OmegaConf.create(to_plain(cfg))))
        atomic_write(self.out / "overrides.yaml", OmegaConf.to_yaml(list(overrides or [])))
        self.metrics.path.unlink(missing_ok=True)

    def write_summary(self, summary: dict[str, Any]) -> None:
        write_json(self.summary_path, summary)

    def fail(self, summary: dict[str, Any], message: str) -> None:
        """Record a failure, keeping what the summary says; a run trained to its end is left alone. Best
        effort: where even that cannot be written (a full disk), the summary stays as it was."""
        try:
            previous = read_summary(self.summary_path) if self.summary_path.exists() else {}
        except RbmlabError:
            previous = {}
        if previous.get("status") in DONE:
            return
        try:
            self.write_summary(
                {"epochs_done": 0, "final": {}, **summary, **previous, "status": "failed", "error": message}
            )
        except RbmlabError:
            pass

    def interrupt(self, summary: dict[str, Any], signal_name: str) -> None:
        """Record that a signal stopped the run: status interrupted, with the signal and the
        epoch of the last checkpoint (what summary.json last said, written with it), which
        ``resume=true`` continues from. A finished run is left alone; best effort, like
        :meth:`fail`."""
        try:
            previous = read_summary(self.summary_path) if self.summary_path.exists() else {}
        except RbmlabError:
            previous = {}
        if previous.get("status") in FINISHED:
            return
        if not previous and not (self.out / "config.yaml").exists():  # stopped before it started
            return
        record = {"epochs_done": 0, "final": {}, **summary, **previous}
        record.pop("error", None)
        checkpoint = record["epochs_done"] if self.checkpoint.exists() else None
        try:
            self.write_summary(
                {
                    **record,
                    "status": "interrupted",
                    "interrupted": {
                        "signal": signal_name,
                        "checkpoint_epoch": checkpoint,
                        "at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                    },
                }
            )
        except RbmlabError:
            pass

    def save(self, model, state: dict, meta: dict[str, Any], to_numpy) -> None:
        save_checkpoint(
            self.checkpoint, model.map(to_numpy), meta=meta, state={k: to_numpy(v) for k, v in state.items()}
        )

    def save_snapshot(self, model, meta: dict[str, Any], to_numpy) -> None:
        """The model alone as ``snapshots/epoch_<e>.npz`` (loadable by ``model.init``)."""
        (self.out / SNAPSHOTS).mkdir(exist_ok=True)
        save_checkpoint(self.out / SNAPSHOTS / f"epoch_{meta['epoch']}.npz", model.map(to_numpy), meta=meta)

    def save_selected(self, model, meta: dict[str, Any], to_numpy) -> None:
        """The model alone as ``selected.npz`` (a snapshot's format, loadable by ``model.init``)."""
        save_checkpoint(self.selected, model.map(to_numpy), meta=meta)

    def load(self, config_hash: str):
        """(model, meta, state) of the checkpoint, refusing one of another configuration."""
        model, meta, state = load_checkpoint(self.checkpoint)
        if meta.get("config_hash") != config_hash:
            raise RbmlabError(
                f"resume: {self.checkpoint} was written by a different configuration "
                f"(hash {meta.get('config_hash')} ≠ {config_hash})"
            )
        return model, meta, state
