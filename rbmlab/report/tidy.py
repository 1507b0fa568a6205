"""A report re-rendered from its own committed data: ``<stem>_runs.csv`` and ``<stem>_curves.csv``.

The run directories of a committed artefact live on the machine that made them; the repository
keeps the report's two tidy files (one row per run with its final values; each group's mean curve
with std and n). ``report_only=true`` where the runs are absent renders the table and figure
again from those files, so a change of presentation (names, paper layout, header) reaches every
committed artefact without training anything. The numbers are the files' own: a run's final
values from the runs table, a group's curve as it was aggregated then (its mean over the runs
that stood at each x, partial runs included where the file says so).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from rbmlab.errors import RbmlabError
from rbmlab.report.layout import norm, shown
from rbmlab.report.load import RECORD_PREFIXES, TEXT_COLUMNS, unreadable

RUNS_SUFFIX = "_runs.csv"
CURVES_SUFFIX = "_curves.csv"
CURVE_COLUMNS = ("mean", "std", "n")  # a curves CSV's own columns besides the group keys and x
NOTE = (
    "Re-rendered from the committed {runs} and {curves} (the run directories are not here): "
    "final values per run from the runs table; curves as they were aggregated then."
)


@dataclass(frozen=True)
class Committed:
    """A report's committed tidy files as the source of a report (``make_report``'s root):
    ``stem`` is the report's path without suffix (results/dcp/figure-3_reduced)."""

    stem: Path
    constants: Mapping[str, Any] = field(default_factory=dict)
    experiments: tuple[str, ...] = ()  # the experiments whose runs it reports, when several


def tidy_files(stem: Path) -> dict[str, Path]:
    """The two tidy files of the report ``<stem>``.{md,png}."""
    return {
        "runs": stem.with_name(stem.name + RUNS_SUFFIX),
        "curves": stem.with_name(stem.name + CURVES_SUFFIX),
    }


def has_tidy_files(stem: Path) -> bool:
    """Whether the report ``stem`` has its runs CSV (the curves CSV is optional: a table of
    records has none worth the name)."""
    return tidy_files(stem)["runs"].is_file()


def read_committed_csv(path: Path) -> pd.DataFrame:
    """A committed runs, curves or points CSV (commits and run paths as text); unreadable: one line."""
    try:
        return pd.read_csv(path, dtype=TEXT_COLUMNS)
    except (OSError, ValueError) as exc:  # ParserError, EmptyDataError, UnicodeDecodeError
        raise unreadable(path, exc) from None


def _from_run_dirs(
    runs: pd.DataFrame, variants: Collection[str], experiments: Collection[str]
) -> pd.DataFrame:
    """The ``experiment`` and ``variant`` keys a run's path gives (as rbmlab.report.load reads
    them: ``[<experiment>/]<variant>/...``), where the file lacks them because they took one value."""
    paths = runs["run_dir"]
    if "experiment" not in runs.columns and experiments:
        found = paths.map(lambda p: next((e for e in experiments if p.startswith(e + "/")), None))
        if found.notna().all():
            runs = runs.assign(experiment=found)
            paths = pd.Series([p[len(e) + 1 :] for p, e in zip(paths, found)], index=runs.index)
    if "variant" not in runs.columns and variants:
        first = paths.str.split("/").str[0]
        if first.isin(list(variants)).all():
            runs = runs.assign(variant=first)
    return runs


def load_tidy(
    stem: Path,
    constants: Mapping[str, Any] | None = None,
    variants: Collection[str] = (),
    experiments: Collection[str] = (),
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs, group curves) of the committed report ``stem``.

    runs: the runs CSV, its ``final.<record>`` column (the report's metric, when a run record
    such as ``early_stopping.test_pixel_error`` or ``wall_time``) back under the record's name, and
    ``constants`` (config values the file does not list because they did not vary: the header's
    keys, composed from the experiment's jobs) added where absent, and the ``experiment`` and
    ``variant`` its run paths give (``variants``, ``experiments``: the names). Group curves: the curves CSV
    as written (group keys, x, mean, std, n[, partial, runs]), empty when there is none."""
    files = tidy_files(stem)
    runs = read_committed_csv(files["runs"])
    if "run_dir" not in runs.columns or "status" not in runs.columns:
        raise RbmlabError(
            f"report: {files['runs']} is not a report's runs table (no run_dir or status column)"
        )
    runs["run_dir"] = runs["run_dir"].astype(str)
    records = {
        c: c[len("final.") :]
        for c in runs.columns
        if c.startswith("final.")
        and (c[len("final.") :].startswith(RECORD_PREFIXES) or c == "final.wall_time")
    }
    runs = runs.rename(columns={c: r for c, r in records.items() if r not in runs.columns})
    runs = _from_run_dirs(runs, variants, experiments)
    for key, value in (constants or {}).items():
        if key not in runs.columns:
            runs[key] = value
    curves = read_committed_csv(files["curves"]) if files["curves"].is_file() else pd.DataFrame()
    lacking = [c for c in CURVE_COLUMNS if c not in curves.columns]
    if len(curves.columns) and lacking:
        raise RbmlabError(
            f"report: {files['curves']} is not a report's curves table (no {', '.join(lacking)} column)"
        )
    return runs, curves


def tidy_curve(
    stored: pd.DataFrame,
    groups: pd.DataFrame,
    group_keys: list[str],
    x: str,
    runs: pd.DataFrame,
    gids: pd.Series,
) -> pd.DataFrame:
    """The stored group curves matched to this report's groups (gid, x, mean, std, n, partial,
    runs); empty when the file's group keys are not this layout's (the figure then shows final
    values only). ``runs``: how many runs stand at each point, from the runs table where the
    file does not say."""
    columns = ["gid", x, "mean", "std", "n", "partial", "runs"]
    if stored.empty or x not in stored.columns or not set(group_keys) <= set(stored.columns):
        return pd.DataFrame(columns=columns)
    key_of = {tuple(row): g for g, row in enumerate(shown(groups[group_keys]).itertuples(index=False))}
    stored_keys = shown(stored[group_keys]) if group_keys else pd.DataFrame(index=stored.index)
    gid = (
        [key_of.get(tuple(row)) for row in stored_keys.itertuples(index=False)]
        if group_keys
        else [0] * len(stored)
    )
    curve = stored.assign(gid=gid).dropna(subset=["gid"])
    curve["gid"] = curve["gid"].astype(int)
    if "partial" not in curve.columns:
        curve["partial"] = 0
    if "runs" not in curve.columns:
        counted = runs.assign(gid=runs["run_dir"].map(gids), **{x: runs[x]} if x in runs.columns else {})
        if x in runs.columns:
            counts = counted.groupby(["gid", counted[x].map(norm)]).size()
            curve["runs"] = [
                counts.get((g, norm(v)), n) for g, v, n in zip(curve["gid"], curve[x], curve["n"])
            ]
        else:
            curve["runs"] = curve["n"]
    return curve[columns].reset_index(drop=True)


def grew(curve: pd.DataFrame, runs: pd.DataFrame, gids: pd.Series, x: str) -> bool:
    """Whether a stored curve over the runs-table key ``x`` holds a point no run of its group
    stands at: a model that grew during training contributed its rows at the sizes it had then."""
    if curve.empty or x not in runs.columns:
        return False
    stands = set(zip(runs["run_dir"].map(gids), runs[x].map(norm)))
    return any((g, norm(v)) not in stands for g, v in zip(curve["gid"], curve[x]))


def missing_records_note(marks: list[dict[str, Any]], runs: pd.DataFrame, runs_file: str) -> str:
    """The vertical lines at a summary record (``vlines: [{summary: ...}]``) that a committed runs
    CSV does not hold, and so are not drawn; '' when none."""
    missing = {m["summary"]: m["label"] for m in marks if "summary" in m and m["summary"] not in runs.columns}
    return "".join(
        f" The committed {runs_file} does not hold {record}: its vertical lines ({label}) are not drawn."
        for record, label in missing.items()
    )
