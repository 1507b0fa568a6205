"""Rendering a report: the markdown group table, the report text, and the curves and runs CSVs.

Nothing here writes a file: ``make_report`` writes the rendered files together
(``rbmlab.storage.fileio.atomic_write_all``), so a reader sees the old report or the new one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from rbmlab.evaluators.metrics import ranking
from rbmlab.report.aggregate import x_order
from rbmlab.report.header import HEADER_KEYS, run_count, run_dirs
from rbmlab.report.layout import MISSING, Layout, norm, varying_keys
from rbmlab.report.load import RUN_COST, to_float
from rbmlab.report.names import Names


def fmt_number(value: Any, digits: int = 4) -> str:
    """4 decimals in [1e-3, 1e5), 4 significant digits outside, integers as integers, NaN as —."""
    v = to_float(value)
    if math.isnan(v):
        return MISSING if value is None or isinstance(value, (int, float, np.number)) else str(value)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    if 1e-3 <= abs(v) < 1e5:
        return f"{v:.{digits}f}"
    return f"{v:.{digits}g}"


def _fmt_mean_std(mean: float, std: float, n: int, of: int) -> str:
    """'m ± s', 'm ± —' for a single run, '—' without values; ' (n=k)' when k of ``of`` count."""
    if math.isnan(mean):
        return MISSING
    text = f"{fmt_number(mean)} ± {fmt_number(std)}"
    return text + f" (n={n})" if n != of else text


def _md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _md_table(header: Sequence[Any], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub markdown table."""
    lines = [
        "| " + " | ".join(_md_cell(h) for h in header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    lines += ["| " + " | ".join(_md_cell(c) for c in cells) + " |" for cells in rows]
    return "\n".join(lines)


def _signed(value: float, digits: int = 4) -> str:
    """A difference with its sign: '+0.0123', '-1.2000', '—' when it cannot be formed."""
    return MISSING if math.isnan(value) else ("+" if value >= 0 else "-") + fmt_number(abs(value), digits)


def paper_text(value: Any) -> str:
    """A paper entry in a cell: a number or text as given; points read from the paper's curve
    ({x: y}) as 'x: y' pairs."""
    if isinstance(value, Mapping):
        return "; ".join(f"{fmt_number(x)}: {fmt_number(y)}" for x, y in value.items())
    return norm(value)


def _tail(
    row: dict[str, Any],
    x: str,
    fraction: float | None,
    with_paper: bool,
    fmt_x: Callable[[Any], str] = fmt_number,
    ours: float | None = None,
) -> list[str]:
    """The paper (and, given ``ours``, ours − paper), best, x-at-best and marker cells of a group row."""
    cells = [paper_text(row["paper"])] if with_paper else []
    if with_paper and ours is not None:
        cells.append(_signed(to_float(ours) - to_float(row["paper"])))
    cells += [fmt_number(row["best"]), fmt_x(row[f"{x}_at_best"])]
    return cells + ([fmt_x(row[f"{x}_to_fraction"])] if fraction is not None else [])


def _tail_header(
    metric: str,
    x: str,
    fraction: float | None,
    with_paper: bool,
    over: str,
    names: Names,
    difference: bool = False,
) -> list[str]:
    """Header cells matching ``_tail``, in words (``difference``: it was given ``ours``)."""
    direction = ranking(metric).best_word
    header = (["paper", "ours − paper"] if difference else ["paper"]) if with_paper else []
    header += [f"best ({direction}) {over}", f"{names.key(x)} at best"]
    return header + ([f"{names.key(x)} to {fraction:.0%} of {direction}"] if fraction is not None else [])


def _group_cells(row: dict[str, Any], layout: Layout, names: Names) -> list[str]:
    """A group's key values in words (the paper's names of its methods)."""
    return [names.value(k, row[k]) for k in layout.group_keys]


def markdown_table(
    summary: pd.DataFrame,
    layout: Layout,
    metric: str,
    x: str,
    fraction: float | None,
    with_paper: bool,
    names: Names | None = None,
) -> str:
    """The group table as GitHub markdown: one row per group, its final value (beside the paper's,
    with the difference of the means) and best; keys, values and the metric in words (``names``)."""
    names = names or Names()
    header = [
        *(names.key(k) for k in layout.group_keys),
        "n",
        "diverged",
        f"final {names.metric(metric)}: mean ± std",
        *_tail_header(metric, x, fraction, with_paper, "of mean curve", names, difference=True),
    ]
    rows = []
    for row in summary.to_dict("records"):
        final = _fmt_mean_std(row["final_mean"], row["final_std"], row["final_n"], row["n"])
        rows.append(
            [
                *_group_cells(row, layout, names),
                row["n"],
                row["diverged"],
                final,
                *_tail(row, x, fraction, with_paper, ours=row["final_mean"]),
            ]
        )
    return _md_table(header, rows)


def table_order(curve: pd.DataFrame, x: str, table_x: Sequence[Any] | None) -> list[Any]:
    """The x values a table shows: those of ``table_x`` when any of them has points, else all."""
    order = x_order(curve[x])
    wanted = {norm(v) for v in table_x or ()}
    return [v for v in order if norm(v) in wanted] if any(norm(v) in wanted for v in order) else order


def _point_cell(point: dict[str, Any] | None, select: str | None) -> str:
    """'m ± s (n=k)', or with ``select`` 'm [best of k]' (k runs stood there)."""
    if point is None:
        return MISSING
    if select and not math.isnan(point["mean"]):
        return fmt_number(point["mean"]) + (f" [best of {point['runs']}]" if point["runs"] > 1 else "")
    return _fmt_mean_std(point["mean"], point["std"], point["n"], point["runs"])


def points_table(
    summary: pd.DataFrame,
    curve: pd.DataFrame,
    layout: Layout,
    metric: str,
    x: str,
    fraction: float | None,
    with_paper: bool,
    table_x: Sequence[Any] | None = None,
    select: str | None = None,
    names: Names | None = None,
    selected_gids: set[int] | None = None,
) -> str:
    """The group table for a runs-table key on the x axis: one column per value of the key (those
    of ``table_x`` only, when given and any of them has runs); keys and values in words (``names``;
    the method note above the table names the metric). ``select`` marks the cells of the groups
    ``selected_gids`` (default every group) as a best of their runs."""
    names = names or Names()
    order = table_order(curve, x, table_x)
    header = [
        *(names.key(k) for k in layout.group_keys),
        "n",
        "diverged",
        *(names.pair(x, v) for v in order),
        *_tail_header(metric, x, fraction, with_paper, f"over {names.key(x)}", names),
    ]
    rows = []
    for g, row in enumerate(summary.to_dict("records")):
        points = {p[x]: p for p in curve[curve["gid"] == g].to_dict("records")}
        chosen = select if selected_gids is None or g in selected_gids else None
        cells = [_point_cell(points.get(v), chosen) for v in order]
        rows.append(
            [
                *_group_cells(row, layout, names),
                row["n"],
                row["diverged"],
                *cells,
                *_tail(row, x, fraction, with_paper, norm),
            ]
        )
    return _md_table(header, rows)


def _status_counts(runs: pd.DataFrame) -> str:
    """'12 completed, 1 diverged'."""
    counts = runs["status"].value_counts()
    return ", ".join(f"{n} {s}" for s, n in counts.items())


def _plural(n: int, word: str) -> str:
    """'1 run', '3 runs'."""
    return f"{n} {word}{'s' if n != 1 else ''}"


def final_note(left_out: pd.Series, word: str) -> str:
    """The line under the table: how many runs (``word``: run or replicate) the final values use,
    and why the others are left out, e.g. 'Final values: 12 of 15 runs; 3 left out: 2 running,
    1 diverged.'"""
    total, reasons = len(left_out), left_out.dropna()
    if reasons.empty:
        return f"Final values: {_plural(total, word)}, none left out."
    counts = sorted(reasons.value_counts().items(), key=lambda item: (-item[1], item[0]))
    why = ", ".join(f"{n} {reason}" for reason, n in counts)
    return f"Final values: {total - len(reasons)} of {_plural(total, word)}; {len(reasons)} left out: {why}."


def method_note(
    metric: str,
    x: str,
    by_key: bool,
    select: str | None = None,
    grown: bool = False,
    record: bool = False,
    behind: str | None = None,
    names: Names | None = None,
    select_where: Mapping[str, Any] | None = None,
) -> str:
    """The sentences that say what the table and plot show, in words (``names``), and the metrics
    column the CSVs hold (``grown``: some run's model grew; ``record``: the metric is a run's
    summary.json record, such as early_stopping.n_hidden; ``behind``: the metrics.csv column that
    record summarises, whose curves the CSV holds; ``select_where``: the runs ``select`` picks
    among, the other groups averaged)."""
    names = names or Names()
    shown = _what_is_shown(metric, x, by_key, select, grown, record, behind, names)
    if select and select_where:
        which = "; ".join(
            f"{names.key(k)} " + ", ".join(names.value(k, v) for v in (vs if isinstance(vs, list) else [vs]))
            for k, vs in select_where.items()
        )
        shown = shown[:-1] + (
            f" — for the groups of {which}; the other groups: mean ± std (ddof=1) over their runs."
        )
    return shown + (f" The CSV files name it `{metric}`" + (f" (curves: `{behind}`)." if behind else "."))


def _what_is_shown(
    column: str,
    x: str,
    by_key: bool,
    select: str | None,
    grown: bool,
    record: bool,
    behind: str | None,
    names: Names,
) -> str:
    metric, x = names.metric(column), names.key(x)
    select = select and names.metric(select)
    behind = behind and names.metric(behind)
    if record and not by_key:
        curves = (
            f" The curves CSV holds each group's per-{x} {behind} (mean ± std over its runs)."
            if behind
            else ""
        )
        return (
            f"Each completed run's {metric} (its summary.json record); mean ± std (ddof=1) over "
            f"the runs of each group.{curves}"
        )
    final = (
        "its summary.json record" if record else "summary.json final value, else the run's last evaluated row"
    )
    if by_key:
        grown_note = (
            f"; a model that grew during training contributes every evaluated row at the "
            f"value of {x} it had then"
            if grown
            else ""
        )
        over = (
            f"at each value of {x}, the value of the group's run with the best final {select} (best "
            f"of the k runs there, seeds and trials)"
            if select
            else f"mean ± std (ddof=1) over the runs of each group (seeds, and trials of batched "
            f"runs) at each value of {x}"
        )
        return (
            f"Each completed run contributes its final {metric} ({final}) at its value of "
            f"{x}{grown_note}; {over}."
        )
    return (
        f"Mean ± std (ddof=1) over the runs of each group (seeds, and trials of batched runs); "
        f"curves by {x}, with runs that did not complete drawn faded and labelled '(partial)'. "
        f"Final {metric}: completed runs only ({final}); best, {x} at best and markers: "
        f"the mean curve of the completed runs."
    )


def selected_at_last_note(runs: pd.DataFrame, metric: str) -> str:
    """For an early_stopping.* metric: how many completed runs selected their last epoch (their
    validation curve had not turned: more epochs might have helped)."""
    if not metric.startswith("early_stopping.") or not {"early_stopping.epoch", "epochs_done"} <= set(runs):
        return ""
    done = runs[runs["status"] == "completed"]
    last = int((done["early_stopping.epoch"].astype(float) == done["epochs_done"].astype(float)).sum())
    return (
        f" Selected at the last epoch run (still improving when training ended): {last} of "
        f"{len(done)} completed runs."
    )


def vlines_note(placed: Sequence[dict[str, Any]], x: str, names: Names | None = None) -> str:
    """' Vertical lines: <label> at <x in words> = v (run); ...' or nothing."""
    if not placed:
        return ""
    names = names or Names()
    items = [
        f"{v['label'] or 'line'} at {names.pair(x, fmt_number(v['x']))}"
        + (f" ({v['run']})" if v["run"] else "")
        for v in placed
    ]
    return " Vertical lines: " + "; ".join(items) + "."


def markdown_report(
    title: str,
    runs: pd.DataFrame,
    table: str,
    note: str,
    left_out: pd.Series,
    unmatched: Sequence[str],
    problems: Sequence[str] = (),
) -> str:
    """Title, scale and run-count line, method note, table with its final-values line (and the
    runs left out for their records, ``problems``, by name), and notes."""
    scales = sorted({norm(s) for s in runs["scale"]}) if "scale" in runs.columns else []
    scale = ", ".join(scales) if scales else "unknown"
    count = run_count(runs)
    batched = run_dirs(runs) != len(runs)  # batched trials: replicates = runs × trials
    parts = [
        f"# {title}",
        "",
        f"Scale: {scale} · {count} ({_status_counts(runs)})",
        "",
        note,
        "",
        table,
        "",
        final_note(left_out, "replicate" if batched else "run"),
        "",
    ]
    if problems:
        parts += ["Left out for their records:", "", *(f"- {p}" for p in problems), ""]
    if unmatched:
        parts += [f"Paper entries matching no group: {'; '.join(unmatched)}", ""]
    return "\n".join(parts)


def curves_csv(curve: pd.DataFrame, groups: pd.DataFrame, layout: Layout, x: str) -> bytes:
    """<stem>_curves.csv: group keys, x, mean, std, n, and partial (curves over a metrics.csv
    column: how many of the n runs did not complete) or runs (over a runs-table key: how many runs
    stand at that x)."""
    keyed = curve.merge(groups[layout.group_keys], left_on="gid", right_index=True)
    columns = [*layout.group_keys, x, "mean", "std", "n", *(c for c in ("partial", "runs") if c in curve)]
    return keyed[columns].to_csv(index=False).encode()


def runs_csv(runs: pd.DataFrame, finals: pd.Series, metric: str, records: Sequence[str] = ()) -> bytes:
    """<stem>_runs.csv: run_dir, varying keys, seed, the keys a header reads, status, epochs_done,
    source, cost_seconds (what the run took: rbmlab.report.load.run_cost; ``rbmlab experiment
    list`` sums it for the tier's cost), the selected
    epoch (early_stopping.epoch, where runs record one), the summary ``records`` vertical lines mark
    (early_stopping.n_hidden: a re-render draws them from this file), final.*.

    final.<metric> is the value the report used (empty for a run left out: see its status); the
    other final.* columns are summary.json's.
    """
    runs_out = runs.assign(**{f"final.{metric}": runs["run_dir"].map(finals)})
    run_cols = [
        "run_dir",
        *varying_keys(runs),
        *(["seed"] if "seed" in runs.columns else []),
        *(k for k in HEADER_KEYS if k in runs.columns),  # what the header reads
        "status",
        *(["problem"] if "problem" in runs.columns else []),
        *(["epochs_done"] if "epochs_done" in runs.columns else []),
        *(["source"] if "source" in runs and runs["source"].notna().any() else []),
        *([RUN_COST] if RUN_COST in runs and runs[RUN_COST].notna().any() else []),
        *(["early_stopping.epoch"] if "early_stopping.epoch" in runs_out else []),
        *(r for r in records if r in runs_out.columns),
        *sorted(c for c in runs_out.columns if c.startswith("final.")),
    ]
    return runs_out[list(dict.fromkeys(run_cols))].to_csv(index=False).encode()


def markdown_rows(rows: list[dict]) -> str:
    """A markdown table of ``rows`` (dicts with the same keys, in order): floats to 3 decimals, a
    pipe inside a name or a cell escaped (``max |W|``) so that it stays one cell."""
    text = lambda v: str(v).replace("|", "\\|")  # noqa: E731
    cell = lambda v: f"{v:.3f}" if isinstance(v, float) else text(v)  # noqa: E731
    lines = ["| " + " | ".join(text(k) for k in rows[0]) + " |", "|" + "---|" * len(rows[0])]
    return "\n".join(lines + ["| " + " | ".join(cell(v) for v in row.values()) + " |" for row in rows])
