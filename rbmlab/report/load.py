"""Reading run directories: summary.json, metrics.csv, config.yaml and overrides.yaml.

A run directory is any directory holding ``summary.json`` (see ``rbmlab.run.runner``). A run of T
batched trials (``train.trials``) becomes T replicates ``<run_dir>#<t>``, like seeds.

A damaged record never drops a run silently: a run whose summary.json cannot be read keeps its
row, with status ``unreadable`` and the reason in ``problem`` (the report counts it as left out
and names it); a final value that summary.json holds but that is not a number (null, NaN, text)
is kept in ``bad_final`` ({metric: the value as read}) and the run left out of that metric's
final values, never replaced by its last metrics row (an earlier or another evaluation). Only
when no run under a root has a readable summary.json is the report one line.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from rbmlab.config import flatten
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.metrics import RECORD_KEY, declarations_from_record
from rbmlab.run.records import observed_status
from rbmlab.storage.portable import portable_path, portable_text

SCHEDULE_COLUMNS = ("epoch", "updates", "wall_time")
RUN_COST = "cost_seconds"  # a run's row: the seconds it took, training and evaluations (run_cost)
# the commit that produced runs made before runs recorded one (rbmlab.storage.provenance), as the
# git history names it: a column added by hand to such a committed runs CSV, never a ``source``
HISTORY_COMMIT = "commit_from_history"
RUN_INFO_COLUMNS = (
    "run_dir",
    "status",
    "epochs_done",
    "wall_time",
    RUN_COST,
    "overrides",
    "source",
    HISTORY_COMMIT,
    "problem",
    "bad_final",
)
UNREADABLE = "unreadable"  # the status of a run whose summary.json cannot be read
RESERVED_METRICS_COLUMNS = ("run_dir", "status")  # joined into the curves from the runs table
# summary.json records beside the config: final values, and the early-stopping choice of a run
RECORD_PREFIXES = ("early_stopping.",)  # a run's records a report may use as metrics
SUMMARY_PREFIXES = ("final.", *RECORD_PREFIXES)

# columns of a committed runs / points CSV that are text whatever they look like: a commit such as
# 3e64572 read as a number is inf, and 1234567 loses nothing only by luck
TEXT_COLUMNS = {"source": str, "run_dir": str, HISTORY_COMMIT: str}


def one_line(exc: BaseException) -> str:
    """An exception's message on one line."""
    return " ".join(str(exc).split())


def to_float(value: Any) -> float:
    """float(value), NaN when it is not a number."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def unreadable(path: Path, exc: BaseException, command: str = "report") -> RbmlabError:
    """``<command>: cannot read <path>: <reason>`` on one line."""
    if isinstance(exc, UnicodeDecodeError):
        reason = "not UTF-8 text"
    elif isinstance(exc, RecursionError):
        reason = "nested too deeply"
    else:
        reason = one_line(exc)
    return RbmlabError(f"{command}: cannot read {path}: {reason}")


def read_text(path: Path, command: str = "report") -> str:
    """A file's UTF-8 text; one line naming ``command`` and the file when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, OSError) as exc:
        raise unreadable(path, exc, command) from None


def _read_yaml(path: Path, default: Any) -> Any:
    """Parsed YAML file, or ``default`` when the file is absent."""
    if not path.exists():
        return default
    try:
        return yaml.safe_load(read_text(path))
    except (yaml.YAMLError, RecursionError) as exc:
        raise unreadable(path, exc) from None


def read_summary(path: Path) -> dict[str, Any]:
    """summary.json as a dict; ``report: cannot read <path>: <reason>`` (one line) when it is not
    a readable JSON object."""
    try:
        data = json.loads(read_text(path))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise unreadable(path, exc) from None
    if not isinstance(data, dict):
        raise RbmlabError(f"report: {path} is not a JSON object")
    return data


def _read_metrics(path: Path) -> pd.DataFrame:
    """metrics.csv with numeric columns; non-finite values and text become NaN. Empty when absent.

    Text that is not UTF-8 or not CSV, and the column names the report adds (run_dir, status),
    are one-line RbmlabErrors.
    """
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame(columns=list(SCHEDULE_COLUMNS))
    try:
        frame = pd.read_csv(path)
    except (ValueError, OSError) as exc:  # ParserError, EmptyDataError, UnicodeDecodeError
        raise unreadable(path, exc) from None
    for name in RESERVED_METRICS_COLUMNS:
        if name in frame.columns:
            raise RbmlabError(f"report: cannot read {path}: column {name} is reserved for the report")
    frame = frame.apply(pd.to_numeric, errors="coerce")
    return frame.replace([np.inf, -np.inf], np.nan)


def find_run_dirs(root: Path) -> list[Path]:
    """Every directory under ``root`` (itself included) that holds a summary.json, sorted; one
    that cannot be read (a directory of that name, a dangling link) counts too: the report leaves
    its run out, by name, rather than not seeing it."""
    return sorted({Path(top) for top, dirs, files in os.walk(root) if "summary.json" in (*files, *dirs)})


def run_cost(summary: Mapping[str, Any]) -> float:
    """The seconds a run cost (its row's ``cost_seconds``, the runs CSV's record of what a re-run
    takes): its training (summary.json ``wall_time``; of a pack that trained as one computation,
    ``packed_runs``, its share: the pack's time over the runs it started with) and its evaluations
    (``eval_time``, at epochs, and ``final_eval_time``). NaN when summary.json records no training
    time (a run that failed before it, or one made before runs recorded it)."""
    training = to_float(summary.get("wall_time"))
    packed = to_float(summary.get("packed_runs"))
    share = training / packed if packed > 1 else training
    evaluations = [to_float(summary.get(key)) for key in ("eval_time", "final_eval_time")]
    return share + sum(e for e in evaluations if not math.isnan(e))


def _split_trials(
    row: dict[str, Any], curve: pd.DataFrame, summary: Mapping[str, Any]
) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """A run of T batched trials (train.trials) as T replicates ``<run_dir>#<t>``, like seeds."""
    finals = summary.get("final_trials")
    finals = finals if isinstance(finals, list) else []
    out = []
    trials = sorted(int(t) for t in curve["trial"].dropna().unique())
    for t in trials:
        trial_row = {k: v for k, v in row.items() if not k.startswith("final.") and k != "bad_final"}
        trial_row["run_dir"] = f"{row['run_dir']}#{t}"
        trial_row[RUN_COST] = row[RUN_COST] / len(trials)  # the trials trained as one
        final = finals[t] if t < len(finals) and isinstance(finals[t], Mapping) else {}
        if final.get("status") == "diverged":
            trial_row["status"] = "diverged"
            final = {}
        values, bad = _finals(final)
        trial_row.update(values)
        if bad:
            trial_row["bad_final"] = bad
        part = curve[curve["trial"] == t].drop(columns="trial").copy()
        part["run_dir"] = trial_row["run_dir"]
        out.append((trial_row, part))
    return out


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _finals(final: Any) -> tuple[dict[str, float], str | None]:
    """({final.<metric>: value} of a summary.json ``final`` mapping, the JSON text of {metric:
    value as read} of the values that are not numbers (null, NaN, text, true), or None)."""
    if not isinstance(final, Mapping):
        return {}, None
    values = {
        f"final.{k}": to_float(v) if _is_number(v) else math.nan for k, v in final.items() if k != "trial"
    }
    bad = {str(k): v for k, v in final.items() if k != "trial" and not (_is_number(v) and not math.isnan(v))}
    return values, (json.dumps(bad, default=repr) if bad else None)


def bad_final_values(runs: pd.DataFrame, metric: str) -> dict[str, Any]:
    """{run_dir: the value as read} of the runs whose summary.json holds a final ``metric`` that is
    not a number (their ``bad_final``)."""
    if "bad_final" not in runs.columns:
        return {}
    found = {}
    for run_dir, text in zip(runs["run_dir"], runs["bad_final"]):
        bad = json.loads(text) if isinstance(text, str) else {}
        if metric in bad:
            found[run_dir] = bad[metric]
    return found


def _portable(value: Any, roots: tuple[Path, ...]) -> Any:
    """A config value that is an absolute path (``model.init``, ``dataset.path``) as committed
    files write it (rbmlab.storage.portable: relative to the outputs root); others as they are."""
    return portable_path(value, roots) if isinstance(value, str) else value


def _run_row(
    rel: str,
    summary: Mapping[str, Any],
    config: Mapping[str, Any],
    overrides: Any,
    variant: str | None = None,
    roots: tuple[Path, ...] = (),
) -> dict[str, Any]:
    """A run's row of the runs table: status, its experiment variant (when it has one), flattened
    config, run info, final.* values and early_stopping.* (numbers only). A path in the config or
    the overrides is written relative to ``roots`` (the outputs root), as every committed file
    writes one (rbmlab.storage.portable).

    A model size that summary.json records (``n_hidden``: the size the model ended at) replaces
    the config's ``model.<size>``: a growing learner's model ends at another size than configured.
    """
    row: dict[str, Any] = {"run_dir": rel, "status": str(summary.get("status", "unknown"))}
    if variant is not None:
        row["variant"] = variant
    row.update({k: _portable(v, roots) for k, v in flatten(config).items() if k not in RUN_INFO_COLUMNS})
    for key, value in summary.items():
        if f"model.{key}" in row and _is_number(value) and summary.get("status") == "completed":
            row[f"model.{key}"] = value
    for key in ("scale", "seed"):
        if key not in row and key in summary:
            row[key] = summary[key]
    row["epochs_done"] = summary.get("epochs_done")
    row["wall_time"] = to_float(summary.get("wall_time"))
    row[RUN_COST] = run_cost(summary)
    row["source"] = summary.get("source")  # the commit that produced the run (rbmlab.storage.provenance)
    row["overrides"] = (
        " ".join(portable_text(str(o), roots) for o in overrides)
        if isinstance(overrides, list)
        else str(overrides)
    )
    values, bad = _finals(summary.get("final") or {})
    row.update(values)
    if bad:
        row["bad_final"] = bad
    stopping = summary.get("early_stopping") or {}
    if isinstance(stopping, Mapping):
        row.update({f"early_stopping.{k}": float(v) for k, v in stopping.items() if _is_number(v)})
    return row


UNREAD = object()  # the record of a run whose summary.json could not be read
DECLARATIONS = "metric_declarations"  # load_runs' runs.attrs key: the runs' recorded declarations


def _load_run(
    run_dir: Path,
    root: Path,
    variants: Collection[str] = (),
    experiment: str | None = None,
    roots: tuple[Path, ...] = (),
) -> tuple[list[tuple[dict[str, Any], pd.DataFrame]], Any]:
    """(one run's rows of the runs table and its metrics rows, one pair per trial; the metric
    declarations its summary.json recorded: None for none, UNREAD when it could not be read).
    Under one of several roots, ``experiment`` names the root (its runs' key; their run_dir is
    ``<experiment>/<path under the root>``, the variant the first directory of that path)."""
    rel = run_dir.relative_to(root).as_posix()
    try:
        summary, problem = read_summary(run_dir / "summary.json"), None
    except RbmlabError as e:  # left out, counted and named by the report (its other files at best effort)
        summary, problem = {"status": UNREADABLE}, str(e).removeprefix("report: ")
    else:
        summary = {**summary, "status": observed_status(run_dir, summary)}  # a dead run is not running
    record = UNREAD if problem else summary.get(RECORD_KEY)
    config = _best_effort(problem, lambda: _read_config(run_dir), {})
    overrides = _best_effort(problem, lambda: _read_yaml(run_dir / "overrides.yaml", []) or [], [])
    first = rel.split("/", 1)[0]
    row = _run_row(rel, summary, config, overrides, first if first in variants else None, roots)
    if problem:
        row["problem"] = problem
    if experiment is not None:
        rel = row["run_dir"] = f"{experiment}/{rel}"
        row = {"experiment": experiment, **row}
    curve = _best_effort(
        problem, lambda: _read_metrics(run_dir / "metrics.csv"), pd.DataFrame(columns=list(SCHEDULE_COLUMNS))
    )
    curve.insert(0, "run_dir", rel)
    if "trial" in curve.columns:
        return _split_trials(row, curve, summary), record
    return [(row, curve)], record


def merged_declarations(records: Iterable[Any]):
    """The metric declarations runs recorded (summary.json), merged, the first run's of a name
    kept; None when a run that could be read recorded none (made before runs recorded them), so
    that the report reads the registered evaluators' instead (rbmlab.evaluators.metrics.declared).
    Unreadable runs are left out (the report names them)."""
    found: dict[str, Any] = {}
    for record in records:
        if record is UNREAD:
            continue
        if not isinstance(record, Mapping):
            return None
        found.update({k: v for k, v in record.items() if k not in found})
    return declarations_from_record(found)


def _read_config(run_dir: Path) -> Mapping[str, Any]:
    config = _read_yaml(run_dir / "config.yaml", {}) or {}
    if not isinstance(config, Mapping):
        raise RbmlabError(f"report: {run_dir / 'config.yaml'} is not a mapping")
    return config


def _best_effort(problem: str | None, read, default: Any) -> Any:
    """``read()``; for a run already left out for ``problem`` (its summary.json unreadable), a
    damaged file of its own is ``default`` rather than the end of the whole report."""
    if problem is None:
        return read()
    try:
        return read()
    except RbmlabError:
        return default


def _order_run_columns(columns: Iterable[str]) -> list[str]:
    """run_dir, status, config keys (first-seen order), run info, then sorted final.* and
    early_stopping.* columns."""
    cols = list(dict.fromkeys(columns))
    finals = sorted(c for c in cols if c.startswith(SUMMARY_PREFIXES))
    info = [c for c in RUN_INFO_COLUMNS[2:] if c in cols]
    config = [c for c in cols if c not in RUN_INFO_COLUMNS and c not in finals]
    return ["run_dir", "status", *config, *info, *finals]


def config_columns(runs: pd.DataFrame) -> list[str]:
    """The flattened config keys (and ``variant``) among the columns of a runs table."""
    return [c for c in runs.columns if c not in RUN_INFO_COLUMNS and not c.startswith(SUMMARY_PREFIXES)]


def load_runs(
    root: Path | Mapping[str, Path], variants: Collection[str] = (), outputs_root: str | Path | None = None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs, curves) for every run directory under ``root``, or under each root of a mapping
    {experiment name: directory} (each run then has an ``experiment`` key; run_dir starts with it).

    runs: one row per run (per trial for batched trials, run_dir ``<dir>#<t>``): run_dir (relative
    to root), status, ``variant`` (the first directory under the root when it is one of ``variants``,
    an experiment's variant names: its sweep runs each variant into ``<root>/<variant>/``),
    flattened config keys,
    epochs_done, wall_time, overrides, final.<metric>. curves: every metrics.csv row with
    run_dir, status and the run's config keys joined in. ``runs.attrs[DECLARATIONS]``: the metric
    declarations the runs recorded (:func:`merged_declarations`), read with their summaries.

    A path among the config values and overrides (``model.init``: another run's checkpoint) is
    relative to ``outputs_root`` (an experiment's: outputs/experiments; default the working
    directory), as every committed file writes one (rbmlab.storage.portable).
    """
    roots = (Path(outputs_root if outputs_root is not None else Path.cwd()),)
    tops = (
        {name: Path(path) for name, path in root.items()} if isinstance(root, Mapping) else {None: Path(root)}
    )
    loaded, records = [], []
    for name, path in tops.items():
        if not path.is_dir():
            raise RbmlabError(f"report: no such directory {path}")
        dirs = find_run_dirs(path)
        if not dirs:
            raise RbmlabError(f"report: no runs (summary.json) under {path}")
        read = [_load_run(d, path, set(variants), name, roots) for d in dirs]
        records += [record for _, record in read]
        found = [pair for pairs, _ in read for pair in pairs]
        if all(row["status"] == UNREADABLE for row, _ in found):  # nothing to report: say why
            raise RbmlabError(
                f"report: {found[0][0]['problem']}"
                + (
                    f" (and {len(found) - 1} more unreadable summary.json under {path})"
                    if len(found) > 1
                    else ""
                )
            )
        loaded += found
    rows = [r for r, _ in loaded]
    columns = _order_run_columns(c for r in rows for c in r)
    runs = pd.DataFrame(rows).reindex(columns=columns)
    metrics = pd.concat([c for _, c in loaded], ignore_index=True)
    joined = [c for c in ["status", *config_columns(runs)] if c not in metrics.columns]
    curves = metrics.merge(runs[["run_dir", *joined]], on="run_dir", how="left")
    runs.attrs[DECLARATIONS] = merged_declarations(records)
    return runs, curves
