"""A table artefact in the paper's layout: rows × (condition × metric), ours beside the paper's.

An experiment file's ``report.table`` names the config keys that make the rows (the paper's
methods) and the columns (its conditions, optional), and the metrics shown side by side under
each condition (crbm_bp's All | Changed)::

    table:
      rows: variant
      columns: task.rate
      metrics:
        - {metric: early_stopping.test_pixel_error, label: All}
        - {metric: early_stopping.test_changed_error, label: Changed, paper: [{match: ..., value: ...}]}

A metric without ``paper`` takes ``report.paper`` when it is ``report.metric``; ``metrics``
left out is ``report.metric`` alone. Each cell is ``ours ± std (n)`` over the completed runs
of the cell (each run's final value, ``aggregate.final_values``), with the paper's number and
Δ = ours − paper beside it; the best of ours and the best of the paper's in each column are
bold. A paper entry that is text (a setting, an initialisation's name) is shown in one text
column after the row's name, with no Δ. Rows and columns follow the order of
``report.names.<key>.values``, then the values' own order.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rbmlab.errors import RbmlabError
from rbmlab.evaluators.metrics import badness, ranking
from rbmlab.report.aggregate import final_values
from rbmlab.report.layout import MISSING, norm, sort_key
from rbmlab.report.load import config_columns, to_float
from rbmlab.report.names import Names
from rbmlab.report.paper import constant_values, match_paper
from rbmlab.report.render import _md_table, _signed, fmt_number

TABLE_KEYS = ("rows", "columns", "metrics", "bold")
METRIC_KEYS = ("metric", "label", "paper")
DIGITS = 3  # decimals of ours and Δ, as the papers print their tables


@dataclass(frozen=True)
class TableMetric:
    metric: str | None  # None: report.metric
    label: str | None = None  # the paper's column name ("All"); else the metric in words
    paper: Any = None  # entries as report.paper


@dataclass(frozen=True)
class TableSpec:
    rows: tuple[str, ...]
    columns: tuple[str, ...] = ()
    metrics: tuple[TableMetric, ...] = (TableMetric(None),)
    bold: bool = True  # false: rows that are not to be ranked (different data sets)

    @classmethod
    def parse(cls, raw: Any, where: str = "report.table") -> TableSpec | None:
        """``report.table`` checked at the edge: one-line errors ``<where>.<key>: <problem>``."""
        if raw is None:
            return None
        if not isinstance(raw, Mapping):
            raise RbmlabError(f"{where}: expected {{rows, columns, metrics}}, got {raw!r}")
        unknown = sorted(set(raw) - set(TABLE_KEYS))
        if unknown:
            raise RbmlabError(
                f"{where}: unknown key(s) {', '.join(map(str, unknown))}; known: {', '.join(TABLE_KEYS)}"
            )
        if "rows" not in raw:
            raise RbmlabError(f"{where}.rows: missing; the config key(s) whose values make the rows")
        rows, columns = _keys(raw["rows"], f"{where}.rows"), _keys(raw.get("columns"), f"{where}.columns")
        if not rows:
            raise RbmlabError(f"{where}.rows: expected a config key or a list of them, got {raw['rows']!r}")
        if set(rows) & set(columns):
            raise RbmlabError(
                f"{where}.columns: {', '.join(sorted(set(rows) & set(columns)))} already makes the rows"
            )
        bold = raw.get("bold", True)
        if not isinstance(bold, bool):
            raise RbmlabError(f"{where}.bold: expected true or false, got {bold!r}")
        metrics = raw.get("metrics")
        if metrics is None:
            return cls(rows, columns, bold=bold)
        if not isinstance(metrics, Sequence) or isinstance(metrics, str) or not metrics:
            raise RbmlabError(
                f"{where}.metrics: expected a list of {{metric, label, paper}}, got {metrics!r}"
            )
        parsed = tuple(_metric(m, f"{where}.metrics[{i}]") for i, m in enumerate(metrics))
        for i, m in enumerate(parsed):  # a cell is found by its metric: each metric once
            if m.metric in [earlier.metric for earlier in parsed[:i]]:
                raise RbmlabError(f"{where}.metrics[{i}]: {m.metric} is already a column of the table")
        return cls(rows, columns, parsed, bold)

    def resolved(self, metric: str, paper: Any) -> TableSpec:
        """report.metric and report.paper filled in where the table leaves them out."""
        full = tuple(
            TableMetric(
                m.metric or metric,
                m.label,
                m.paper if m.paper is not None or (m.metric or metric) != metric else paper,
            )
            for m in self.metrics
        )
        return TableSpec(self.rows, self.columns, full, self.bold)


def _keys(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    keys = [value] if isinstance(value, str) else value
    if not isinstance(keys, Sequence) or not all(isinstance(k, str) and k for k in keys):
        raise RbmlabError(f"{where}: expected a config key or a list of them, got {value!r}")
    return tuple(keys)


def _metric(entry: Any, where: str) -> TableMetric:
    if isinstance(entry, str):
        return TableMetric(entry)
    if not isinstance(entry, Mapping) or set(entry) - set(METRIC_KEYS) or "metric" not in entry:
        raise RbmlabError(f"{where}: expected a metric or {{metric, label, paper}}, got {entry!r}")
    paper = entry.get("paper")
    if paper is not None and not isinstance(paper, (Mapping, list)):
        raise RbmlabError(f"{where}.paper: expected [{{match: {{key: value}}, value}}], got {paper!r}")
    return TableMetric(
        str(entry["metric"]), None if entry.get("label") is None else str(entry["label"]), paper
    )


def check_table_keys(runs: pd.DataFrame, table: TableSpec) -> None:
    """The rows and columns keys are config keys of the runs (one-line RbmlabError)."""
    known = config_columns(runs)
    for what, keys in (("rows", table.rows), ("columns", table.columns)):
        for key in keys:
            if key not in known:
                raise RbmlabError(f"report.table.{what}: unknown key {key!r}; keys: {', '.join(known)}")


@dataclass(frozen=True)
class TableData:
    """The numbers of a paper table: one record per (row, column, metric) cell, in order."""

    rows: list[tuple[str, ...]]  # the row keys' values, shown (norm)
    columns: list[tuple[str, ...]]  # the column keys' values, shown; [()] without columns
    cells: pd.DataFrame  # row, column, metric, mean, std, n, runs, paper
    unmatched: list[str]  # paper entries that match no cell


def _ordered(values: set[tuple[str, ...]], keys: Sequence[str], names: Names) -> list[tuple[str, ...]]:
    """Value tuples in the order of report.names.<key>.values, then numbers, then text."""

    def rank(t: tuple[str, ...]) -> list[Any]:
        out: list[Any] = []
        for key, v in zip(keys, t):
            declared = list(names.values.get(key, {}))
            out += [(0, declared.index(v), (0, 0.0, "")) if v in declared else (1, 0, sort_key(v))]
        return out

    return sorted(values, key=rank)


def table_cells(
    runs: pd.DataFrame, finals: Mapping[str, pd.Series], table: TableSpec, names: Names
) -> TableData:
    """Per (row, column, metric): mean, std (ddof=1) and n of the completed runs' final values
    (``finals``: metric -> value per run_dir, NaN for a run left out), runs in the cell, and the
    paper's entry for it (a number, a text, or None)."""
    row_of = [tuple(norm(v) for v in r) for r in runs[list(table.rows)].itertuples(index=False)]
    col_of = (
        [tuple(norm(v) for v in r) for r in runs[list(table.columns)].itertuples(index=False)]
        if table.columns
        else [()] * len(runs)
    )
    rows, columns = _ordered(set(row_of), table.rows, names), _ordered(set(col_of), table.columns, names)
    cell_ids = {(r, c): i for i, (r, c) in enumerate((r, c) for r in rows for c in columns)}
    gids = pd.Series([cell_ids[rc] for rc in zip(row_of, col_of)], index=runs["run_dir"].to_numpy())
    groups = pd.DataFrame(
        [
            {
                "line": ", ".join(r),
                "panel": ", ".join(c),
                "label": ", ".join(f"{k}={v}" for k, v in zip((*table.rows, *table.columns), (*r, *c))),
            }
            for r, c in cell_ids
        ]
    )
    groups = groups.assign(line_key=groups["line"], panel_key=groups["panel"], label_key=groups["label"])
    constants = constant_values(runs, gids, len(cell_ids))
    records, unmatched = [], []
    for m in table.metrics:
        paper = [None] * len(cell_ids)
        if m.paper is not None:
            paper, missed = match_paper(m.paper, groups, constants)
            unmatched += [f"{m.label or m.metric}: {entry}" for entry in missed]
        values = finals[m.metric]
        for (r, c), i in cell_ids.items():
            members = gids.index[gids.to_numpy() == i]
            got = values.reindex(members).astype(float)
            got = got[got.map(math.isfinite)]
            records.append(
                {
                    "row": r,
                    "column": c,
                    "metric": m.metric,
                    "label": m.label,
                    "mean": float(got.mean()) if len(got) else math.nan,
                    "std": float(got.std()) if len(got) > 1 else math.nan,
                    "n": len(got),
                    "runs": len(members),
                    "paper": paper[i],
                }
            )
    return TableData(rows, columns, pd.DataFrame(records), unmatched)


def is_number(value: Any) -> bool:
    """A paper entry that is a number (not a text such as "Init 1", not missing: None or NaN)."""
    return not isinstance(value, (str, bool)) and value is not None and not math.isnan(to_float(value))


def _best(metric: str, values: Sequence[float]) -> float | None:
    """The smallest badness (rbmlab.evaluators.metrics.badness) of the finite ``values``, or None."""
    finite = [v for v in values if math.isfinite(v)]
    return float(badness(metric, finite).min()) if finite else None


def _is_best(metric: str, value: float, best: float | None) -> bool:
    return best is not None and math.isfinite(value) and float(badness(metric, value)) == best


def _bold(text: str, on: bool) -> str:
    return f"**{text}**" if on else text


def _ours(cell: Mapping[str, Any]) -> str:
    """'m ± s (n)', 'm ± — (1)', '(n of k)' when runs of the cell were left out, '—' without values."""
    if not cell["n"]:
        return MISSING
    count = str(cell["n"]) if cell["n"] == cell["runs"] else f"{cell['n']} of {cell['runs']}"
    return f"{fmt_number(cell['mean'], DIGITS)} ± {fmt_number(cell['std'], DIGITS)} ({count})"


def condition_label(column: tuple[str, ...], keys: Sequence[str], names: Names) -> str:
    """A column's condition in words, as the paper names it ("10 %"), '' without columns."""
    return ", ".join(names.value(k, v) for k, v in zip(keys, column))


def row_label(row: tuple[str, ...], keys: Sequence[str], names: Names) -> list[str]:
    return [names.value(k, v) for k, v in zip(keys, row)]


def _head(column: tuple[str, ...], m: TableMetric, table: TableSpec, names: Names) -> str:
    """A cell block's heading: its condition and the metric's label ("Noisy (10%) All"); the metric
    in words where it has no label and the condition alone does not name it."""
    condition = condition_label(column, table.columns, names)
    metric = m.label or (names.metric(m.metric) if len(table.metrics) > 1 or not condition else "")
    return " ".join(p for p in (condition, metric) if p)


def paper_table_markdown(data: TableData, table: TableSpec, names: Names) -> str:
    """The markdown table: row names, the paper's text entries (if any), then per condition and
    metric ours | paper | Δ (ours alone where the paper gives no number), and the caption."""
    cells = data.cells
    text = cells[cells["paper"].map(lambda p: isinstance(p, str))]
    header = [names.key(k) for k in table.rows] + (["paper"] if len(text) else [])
    blocks = []  # (column, metric spec, with paper numbers)
    for column in data.columns:
        for m in table.metrics:
            part = cells[(cells["column"] == column) & (cells["metric"] == m.metric)]
            numeric = bool(part["paper"].map(is_number).any())
            header += [f"{_head(column, m, table, names)}: ours"] + (["paper", "Δ"] if numeric else [])
            best = (
                (
                    _best(m.metric, part["mean"].tolist()),
                    _best(m.metric, [to_float(p) for p in part["paper"] if is_number(p)]),
                )
                if table.bold
                else (None, None)
            )
            blocks.append((column, m.metric, numeric, best))
    body = []
    for row in data.rows:
        line = row_label(row, table.rows, names)
        if len(text):
            line.append(
                "; ".join(dict.fromkeys(str(p) for p in text[text["row"] == row]["paper"])) or MISSING
            )
        for column, metric, numeric, (best_ours, best_paper) in blocks:
            cell = cells[
                (cells["row"] == row) & (cells["column"] == column) & (cells["metric"] == metric)
            ].iloc[0]
            line.append(_bold(_ours(cell), cell["n"] > 0 and _is_best(metric, cell["mean"], best_ours)))
            if numeric:
                paper = to_float(cell["paper"]) if is_number(cell["paper"]) else math.nan
                line += [
                    _bold(norm(cell["paper"]), _is_best(metric, paper, best_paper))
                    if is_number(cell["paper"])
                    else MISSING,
                    _signed(cell["mean"] - paper, DIGITS),
                ]
        body.append(line)
    numbers = any(numeric for _, _, numeric, _ in blocks)
    return _md_table(header, body) + "\n\n" + caption(table, names, numbers, bool(len(text)))


def caption(table: TableSpec, names: Names, numbers: bool, texts: bool) -> str:
    """What a cell is and what is bold (``numbers``/``texts``: the paper gives numbers / texts)."""
    directions = "; ".join(
        f"{m.label or names.metric(m.metric)}: {ranking(m.metric).direction}" for m in table.metrics
    )
    paper = ("; paper = the paper's number; Δ = ours − paper" if numbers else "") + (
        "; the paper column: the paper's own words for the row (it gives no number)" if texts else ""
    )
    of_paper = ", and the best of the paper's" if numbers else ""
    bold = f" **Bold**: the best of ours in each column{of_paper} ({directions})." if table.bold else ""
    return (
        "Each cell: ours = mean ± std (ddof=1) over the completed runs of the cell (how many in "
        f"brackets) of each run's final value{paper}.{bold}"
    )


def paper_table_report(
    runs: pd.DataFrame, curves: pd.DataFrame, table: TableSpec, names: Names, available: Sequence[str]
) -> tuple[str, TableData, pd.DataFrame]:
    """The table artefact's markdown table (with caption), its cells (for the dot chart,
    rbmlab.report.table_figure; ``unmatched``: the paper entries that match no cell), and ``runs``
    with a final.<metric> column per table metric (for the runs CSV)."""
    check_table_keys(runs, table)
    finals = {}
    for i, m in enumerate(table.metrics):
        if m.metric not in available:
            raise RbmlabError(
                f"report.table.metrics[{i}]: unknown metric {m.metric!r}; "
                f"available: {', '.join(available) or 'none'}"
            )
        finals[m.metric] = final_values(runs, curves, m.metric)
    data = table_cells(runs, finals, table, names)
    return (
        paper_table_markdown(data, table, names),
        data,
        runs.assign(**{f"final.{m}": runs["run_dir"].map(v) for m, v in finals.items()}),
    )
