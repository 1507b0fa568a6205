"""Run records: everything a run directory holds, written so that a kill loses nothing.

    config.yaml      the resolved configuration
    overrides.yaml   the command-line overrides that produced it
    metrics.csv      one row per evaluation point (and trial): epoch, updates, wall_time, metrics...
    summary.json     status (running | completed | diverged | failed), final metrics
    checkpoint.npz   the model and learner state at the last saved epoch (rbmlab.checkpoint)
"""
from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import OmegaConf

from rbmlab.checkpoint import load_checkpoint, save_checkpoint
from rbmlab.errors import RbmlabError
from rbmlab.validation import to_plain

FIXED_COLUMNS = ["epoch", "updates", "wall_time", "trial"]


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
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(json_safe(obj), indent=2, sort_keys=True, allow_nan=False) + "\n")
    tmp.replace(path)


class MetricsLog:
    """metrics.csv, appended one row per evaluation point; truncated to a checkpoint on resume."""

    def __init__(self, path: Path):
        self.path = path
        self.columns: list[str] | None = None

    def truncate(self, last_epoch: int) -> None:
        if not self.path.exists():
            return
        with open(self.path, newline="") as f:
            reader = csv.DictReader(f)
            self.columns = reader.fieldnames
            rows = [r for r in reader if int(r["epoch"]) <= last_epoch]
        if self.columns is None:   # an empty file
            return
        self._write(rows, mode="w")

    def append(self, row: dict[str, float]) -> None:
        if self.columns is None:
            self.columns = ([k for k in FIXED_COLUMNS if k in row]
                            + sorted(k for k in row if k not in FIXED_COLUMNS))
            self._write([], mode="w")
        self._write([row], mode="a")

    def _write(self, rows, mode: str) -> None:
        with open(self.path, mode, newline="") as f:
            writer = csv.DictWriter(f, fieldnames=self.columns, extrasaction="ignore")
            if mode == "w":
                writer.writeheader()
            writer.writerows(rows)


class RunRecord:
    """The files of one run directory."""

    def __init__(self, out: Path):
        self.out = out
        out.mkdir(parents=True, exist_ok=True)
        self.checkpoint = out / "checkpoint.npz"
        self.summary_path = out / "summary.json"
        self.metrics = MetricsLog(out / "metrics.csv")

    def previous_summary(self) -> dict[str, Any]:
        if not self.summary_path.exists():
            return {}
        try:
            summary = json.loads(self.summary_path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise RbmlabError(f"resume: {self.summary_path} is unreadable; move the run aside") from None
        return summary if isinstance(summary, dict) else {}

    def start(self, cfg, overrides: list[str]) -> None:
        """A fresh run: configuration files written, any earlier metrics.csv removed."""
        (self.out / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(to_plain(cfg))))
        (self.out / "overrides.yaml").write_text(OmegaConf.to_yaml(list(overrides or [])))
        if self.metrics.path.exists():
            self.metrics.path.unlink()

    def write_summary(self, summary: dict[str, Any]) -> None:
        write_json(self.summary_path, summary)

    def save(self, model, state: dict, meta: dict[str, Any], to_numpy) -> None:
        save_checkpoint(self.checkpoint, model.map(to_numpy), meta=meta,
                        state={k: to_numpy(v) for k, v in state.items()})

    def load(self, config_hash: str):
        """(model, meta, state) of the checkpoint, refusing one of another configuration."""
        model, meta, state = load_checkpoint(self.checkpoint)
        if meta.get("config_hash") != config_hash:
            raise RbmlabError(f"resume: {self.checkpoint} was written by a different configuration "
                              f"(hash {meta.get('config_hash')} ≠ {config_hash})")
        return model, meta, state
