"""The numbers of a report: which metric, each group's mean curve, final values and summary row.

A group's curve is the mean and standard deviation (ddof=1, pandas' default) of the metric over
its runs at each x value, with ``n`` the number of runs evaluated at that x and ``partial`` how
many of them did not complete (running, failed, diverged: their curves stop early). Rows where the
metric is NaN or infinite are dropped per metric, so runs on different evaluation schedules
aggregate without special cases. Final values, and the table's summaries of a curve (best, x at
best, fraction-of-max marker), come only from completed runs: a killed or diverged run is left out
of them, with its reason (``left_out``). With a runs-table key on the x axis
(``model.n_hidden``), each completed run contributes one point: its final value at its key's value.
Which direction is better comes from the evaluators' declared metrics (``rbmlab.evaluators.metrics``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from rbmlab.errors import RbmlabError
from rbmlab.evaluators.metrics import badness
from rbmlab.report.layout import MISSING, norm, sort_key
from rbmlab.report.load import RECORD_PREFIXES, SCHEDULE_COLUMNS, UNREADABLE, bad_final_values, to_float

COMPLETED = "completed"  # the one summary.json status whose final values a report uses
REASONS = {UNREADABLE: "summary.json unreadable"}  # a left-out run's reason, where not its status
DEFAULT_METRICS = ("test_log_likelihood", "test_pseudo_log_likelihood", "test_reconstruction_error")


def available_metrics(runs: pd.DataFrame, curves: pd.DataFrame) -> list[str]:
    """Metric names found in metrics.csv columns or summary.json finals, sorted; and the run
    records a report may use as metrics (``run_columns``)."""
    from_curves = [
        c
        for c in curves.columns
        if c not in SCHEDULE_COLUMNS and c not in runs.columns and pd.api.types.is_numeric_dtype(curves[c])
    ]
    from_finals = [c[len("final.") :] for c in runs.columns if c.startswith("final.")]
    return sorted(set(from_curves) | set(from_finals) | set(run_columns(runs)))


def run_columns(runs: pd.DataFrame) -> list[str]:
    """The runs-table records that serve as metrics: ``wall_time``, training seconds (a cost
    table: seconds against model.n_hidden; a grown run's metrics rows give its seconds to each
    size), and summary.json's ``early_stopping.*`` (a model-size table). Their directions are
    declared in rbmlab.evaluators.metrics.RUN_METRICS."""
    return [c for c in runs.columns if c == "wall_time" or c.startswith(RECORD_PREFIXES)]


def curve_behind(metric: str, curves: pd.DataFrame) -> str | None:
    """The metrics.csv column a run record summarises, when the curves have it: ``test_pixel_error``
    for ``early_stopping.test_pixel_error`` (its value at the selected epoch); else None."""
    for prefix in RECORD_PREFIXES:
        column = metric[len(prefix) :] if metric.startswith(prefix) else None
        if column and column in curves.columns and pd.api.types.is_numeric_dtype(curves[column]):
            return column
    return None


def _final_column(runs: pd.DataFrame, metric: str) -> str:
    """The runs-table column holding a run's final ``metric``."""
    return metric if metric in run_columns(runs) else f"final.{metric}"


def resolve_metric(metric: str | None, available: Sequence[str]) -> str:
    """The requested metric, or the first default present; unknown -> RbmlabError."""
    listing = ", ".join(available) or "none"
    if metric is None:
        for name in DEFAULT_METRICS:
            if name in available:
                return name
        if not available:
            raise RbmlabError("report: the runs have no metrics (metrics.csv or summary.json final)")
        return available[0]
    if metric not in available:
        raise RbmlabError(f"report: unknown metric {metric!r}; available: {listing}")
    return metric


def _point_stats(
    rows: pd.DataFrame, gids: pd.Series, metric: str, x: str, **more: tuple[str, str]
) -> pd.DataFrame:
    """Per (gid, x) of ``rows`` (run_dir, x, metric, ...; rows without x or metric dropped): mean,
    std (ddof=1) and n of the metric, and the named aggregations ``more``."""
    rows = rows.dropna(subset=[x, metric])
    rows = rows.assign(gid=rows["run_dir"].map(gids))
    stats = rows.groupby(["gid", x], sort=True).agg(
        mean=(metric, "mean"), std=(metric, "std"), n=(metric, "count"), **more
    )
    return stats.reset_index()


def aggregate_curves(curves: pd.DataFrame, gids: pd.Series, metric: str, x: str) -> pd.DataFrame:
    """Per (gid, x): mean, std (ddof=1) and n of the metric over runs, NaN rows dropped, and
    ``partial``: how many of those n runs did not complete."""
    if metric not in curves.columns:
        return pd.DataFrame(columns=["gid", x, "mean", "std", "n", "partial"])
    rows = curves[["run_dir", x, metric]].assign(partial=curves["status"] != COMPLETED)
    return _point_stats(rows, gids, metric, x, partial=("partial", "sum"))


def final_values(runs: pd.DataFrame, curves: pd.DataFrame, metric: str) -> pd.Series:
    """Per run_dir: a completed run's summary.json final.<metric> (for a run record such as
    wall_time or early_stopping.n_hidden: that record, ``run_columns``), else, when summary.json
    has no final <metric>, its last evaluated metrics row; NaN for every run that did not complete
    (running, failed, diverged, unknown, unreadable) and for a final <metric> that summary.json
    holds but is not a number (null, NaN, text): the last row is an earlier or another evaluation
    than the final one, so it is never put in its place (``left_out`` says why it is missing)."""
    index = runs["run_dir"].to_numpy()
    col = _final_column(runs, metric)
    final = pd.Series(runs[col].to_numpy(float) if col in runs.columns else np.nan, index=index)
    if metric in curves.columns:
        last = curves[["run_dir", metric]].dropna().groupby("run_dir")[metric].last().reindex(final.index)
        if col.startswith("final."):
            last[list(bad_final_values(runs, metric))] = np.nan
        final = final.fillna(last)
    completed = runs["status"].to_numpy() == COMPLETED
    return final.where(completed).rename(metric)


def left_out(runs: pd.DataFrame, finals: pd.Series) -> pd.Series:
    """Per run_dir: why the run has no final value of ``finals.name`` (its status, 'summary.json
    unreadable', 'final <metric> not a number' or 'completed without a value'); NaN for the runs
    whose final values count."""
    status = pd.Series(runs["status"].to_numpy(), index=runs["run_dir"].to_numpy())
    reason = status.map(lambda s: REASONS.get(s, s))
    reason = reason.where(status != COMPLETED, "completed without a value")
    bad = [r for r in bad_final_values(runs, str(finals.name)) if status.get(r) == COMPLETED]
    reason[bad] = f"final {finals.name} not a number"
    return reason.where(finals.reindex(status.index).isna())


def record_problems(runs: pd.DataFrame, finals: pd.Series) -> list[str]:
    """'<run_dir>: <what is wrong>' for each run left out for its records: an unreadable
    summary.json, or a final <metric> there that is not a number (named, with the value read)."""
    problems = [
        f"{r}: {p}"
        for r, p in zip(runs["run_dir"], runs.get("problem", [None] * len(runs)))
        if isinstance(p, str)
    ]
    completed = set(runs.loc[runs["status"] == COMPLETED, "run_dir"])
    problems += [
        f"{r}: summary.json holds final {finals.name} = {json.dumps(v, default=repr)}, not a number"
        for r, v in bad_final_values(runs, str(finals.name)).items()
        if r in completed
    ]
    return problems


def x_values(column: pd.Series) -> pd.Series:
    """A runs-table column as x values: floats when every value present is a number (booleans are
    not), else display strings; a missing value is NaN."""
    if pd.api.types.is_numeric_dtype(column) and not pd.api.types.is_bool_dtype(column):
        return column
    text = column.map(norm)
    present = text != MISSING
    numbers = column.map(lambda v: math.nan if isinstance(v, (bool, np.bool_)) else to_float(v))
    if numbers[present].notna().all():
        return numbers.astype(float).where(present)
    return text.where(present)


def x_order(values: pd.Series) -> list[Any]:
    """The distinct x values, sorted: numbers numerically, strings numbers first (sort_key)."""
    distinct = list(values.dropna().unique())
    return sorted(distinct, key=None if pd.api.types.is_numeric_dtype(values) else sort_key)


def size_column(curves: pd.DataFrame, x: str) -> str | None:
    """The metrics.csv column that records a growing model's ``x`` per row (``n_hidden`` for
    ``model.n_hidden``: rbmlab.run.runner writes the sizes a learner grows), or None."""
    name = x.rsplit(".", 1)[-1]
    return name if x.startswith("model.") and name in curves.columns else None


def run_points(
    runs: pd.DataFrame,
    curves: pd.DataFrame,
    finals: pd.Series,
    metric: str,
    x: str,
    select: str | None = None,
) -> pd.DataFrame:
    """run_dir, x, the metric (and ``select``, the metric that picks among seeds) of each point.

    A run contributes its final values at its value of the runs-table key ``x``; a completed run
    whose model grew (its metrics rows record ``x``) contributes every evaluated row at the size it
    had then, its final values at the size it ended at (they replace that row's)."""
    metrics = [metric, *([select] if select and select != metric else [])]
    final = pd.DataFrame({m: final_values(runs, curves, m) if m != metric else finals for m in metrics})
    points = pd.DataFrame(
        {
            "run_dir": runs["run_dir"].to_numpy(),
            x: x_values(runs[x]).to_numpy(),
            **{m: final[m].reindex(runs["run_dir"]).to_numpy() for m in metrics},
        }
    )
    size = size_column(curves, x)
    have = [m for m in metrics if m in curves.columns]
    if size is None or not have:
        return points
    rows = curves[(curves["status"] == COMPLETED) & curves[size].notna()]
    rows = rows[rows[have].notna().any(axis=1)]
    grown = pd.DataFrame(
        {
            "run_dir": rows["run_dir"],
            x: rows[size].astype(float),
            **{m: rows[m] if m in rows.columns else np.nan for m in metrics},
        }
    )
    grown = grown[~grown.set_index(["run_dir", x]).index.isin(points.set_index(["run_dir", x]).index)]
    return pd.concat([points, grown], ignore_index=True)


def aggregate_points(
    points: pd.DataFrame,
    gids: pd.Series,
    metric: str,
    x: str,
    select: str | None = None,
    selected_gids: set[int] | None = None,
) -> pd.DataFrame:
    """Per (gid, value of the runs-table key x) where runs stand (``run_points``): mean, std (ddof=1)
    and n of their final values (completed runs only; n = 0 and no mean when every run there is
    left out), and ``runs``, how many runs stand there; in x order within each group.

    ``select``: of the runs at each (gid, x), only the one with the best ``select`` value counts
    (best of the seeds on the validation set: n = 1, no std) — in the groups ``selected_gids``
    only, when given (the others: mean ± std over their runs)."""
    placed = points.dropna(subset=[x])
    counts = placed.assign(gid=placed["run_dir"].map(gids)).groupby(["gid", x]).size()
    if select:
        chosen = (
            placed["run_dir"].map(gids).isin(selected_gids)
            if selected_gids is not None
            else pd.Series(True, index=placed.index)
        )
        placed = pd.concat(
            [_best_per_point(placed[chosen], gids, x, select), placed[~chosen]], ignore_index=True
        )
    curve = (
        counts.rename("runs")
        .reset_index()
        .merge(_point_stats(placed, gids, metric, x), on=["gid", x], how="left")
    )
    curve["n"] = curve["n"].fillna(0).astype(int)
    rank = {v: i for i, v in enumerate(x_order(points[x]))}
    order = np.lexsort((curve[x].map(rank).to_numpy(), curve["gid"].to_numpy()))
    return curve.iloc[order].reset_index(drop=True)


def _best_per_point(points: pd.DataFrame, gids: pd.Series, x: str, select: str) -> pd.DataFrame:
    """The row with the best ``select`` value at each (gid, x); points without it are dropped."""
    ranked = points.dropna(subset=[select]).assign(gid=lambda p: p["run_dir"].map(gids))
    ranked = ranked.assign(_badness=badness(select, ranked[select]))
    best = ranked.sort_values("_badness", kind="stable").groupby(["gid", x]).head(1)
    return best.drop(columns=["gid", "_badness"])


def epoch_to_fraction_of_max(x: Sequence[float], y: Sequence[float], fraction: float) -> float | None:
    """First x where y reaches y[0] + fraction·(max(y) − y[0]); None if never (or no data).

    NaN points are ignored; y[0] is the first non-NaN value.
    """
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = ~(np.isnan(xs) | np.isnan(ys))
    xs, ys = xs[keep], ys[keep]
    if ys.size == 0:
        return None
    target = ys[0] + fraction * (ys.max() - ys[0])
    tol = 1e-12 * max(1.0, abs(target))
    hits = np.nonzero(ys >= target - tol)[0]
    return float(xs[hits[0]]) if hits.size else None


def _best(x: np.ndarray, y: np.ndarray, metric: str) -> tuple[float, Any]:
    """(best value, x at best) of a curve of ``metric``; NaNs when empty."""
    if y.size == 0:
        return math.nan, math.nan
    i = int(np.argmin(badness(metric, y)))
    return float(y[i]), x[i] if isinstance(x[i], str) else float(x[i])


def _curve_stats(part: pd.DataFrame, x: str, metric: str, fraction: float | None) -> dict[str, Any]:
    """Best of a group's mean curve, the x there, and the x where it reaches the fraction of the
    way from its first value to its best (points without a mean, where every run was left out,
    ignored)."""
    part = part.dropna(subset=["mean"])
    xs, ys = part[x].to_numpy(), part["mean"].to_numpy(float)
    best, at = _best(xs, ys, metric)
    row = {"best": best, f"{x}_at_best": at}
    if fraction is not None:
        hit = epoch_to_fraction_of_max(xs.astype(float), -badness(metric, ys), fraction)
        row[f"{x}_to_fraction"] = math.nan if hit is None else hit
    return row


def _final_stats(finals: pd.Series, members: pd.Index) -> dict[str, Any]:
    """Mean, std and count of the final values of a group's runs."""
    vals = finals.reindex(members).dropna()
    return {
        "final_mean": float(vals.mean()) if len(vals) else math.nan,
        "final_std": float(vals.std()) if len(vals) > 1 else math.nan,
        "final_n": len(vals),
    }


def completed_curves(curves: pd.DataFrame, gids: pd.Series, metric: str, x: str) -> pd.DataFrame:
    """``aggregate_curves`` over the completed runs' rows only: the curves the table summarises."""
    return aggregate_curves(curves[curves["status"] == COMPLETED], gids, metric, x)


def summarize_groups(
    runs: pd.DataFrame,
    groups: pd.DataFrame,
    gids: pd.Series,
    curve: pd.DataFrame,
    metric: str,
    x: str,
    fraction: float | None = None,
    finals: pd.Series | None = None,
) -> pd.DataFrame:
    """One row per group: n, diverged, final mean/std (when ``finals`` are given: an x other than
    a runs-table key), best of the mean curve, x at best and, with ``fraction``, the marker x.

    ``curve`` holds completed runs only (``completed_curves``, or ``aggregate_points``, whose means
    are completed runs' final values): a group without completed runs has NaN best and x at best."""
    status = runs.set_index("run_dir")["status"]
    rows = []
    for g in range(len(groups)):
        members = gids.index[gids.to_numpy() == g]
        row = {"n": len(members), "diverged": int((status.reindex(members) == "diverged").sum())}
        row.update(_final_stats(finals, members) if finals is not None else {})
        row.update(_curve_stats(curve[curve["gid"] == g], x, metric, fraction))
        rows.append(row)
    return pd.concat([groups.reset_index(drop=True), pd.DataFrame(rows)], axis=1)
