"""Reports over run directories: a markdown table, tidy CSVs and a plot of one metric.

``make_report`` reads every run under a directory (``load``), groups the runs into lines and
panels by their varying config keys (``layout``), averages the metric per group (``aggregate``),
matches the paper's own numbers to the groups (``paper``), renders the table, the CSVs
(``render``) and the figure (``plot``) in memory, and writes the four files together
(``rbmlab.storage.publish``): a failure or a kill part-way leaves the old report whole.

Final values, and the table's best, x at best and markers, come only from completed runs; the
table says how many runs it used and why the others were left out (running, interrupted,
failed, diverged), and names each run left out for its records: an unreadable summary.json, or a
final value there that is not a number (never replaced by the run's last metrics row).
The plotted curves and the curves CSV also show runs that did not complete, marked partial.

The x axis is a metrics.csv column (``epoch``, ``updates``): each group's mean curve over it; or
a key of the runs table (``model.n_hidden``, any flattened config key): each completed run's
final value at that key's value, one line per group of the remaining keys; a model that grew
during training (frank_wolfe) contributes every evaluated row at the size it had then. There,
``select`` keeps at each point only the run best on another metric (best of the seeds on the
validation set), ``vlines`` marks sizes (a number, or a summary.json record such as the size
early stopping picked), and ``table_x`` names the sizes the table shows (the plot shows all).

A table artefact's ``table`` (``rbmlab.report.paper_table``) replaces the group table with the
paper's layout (rows × condition × metric, ours beside the paper's) and the plot with a dot chart
(``rbmlab.report.table_figure``); the CSVs stay.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd

from rbmlab.errors import RbmlabError
from rbmlab.evaluators.metrics import declared, higher_is_better
from rbmlab.report.aggregate import (
    aggregate_curves,
    aggregate_points,
    available_metrics,
    completed_curves,
    curve_behind,
    epoch_to_fraction_of_max,
    final_values,
    left_out,
    record_problems,
    resolve_metric,
    run_columns,
    run_points,
    size_column,
    summarize_groups,
    x_values,
)
from rbmlab.report.header import report_header
from rbmlab.report.layout import assign_groups, choose_layout, norm, varying_keys
from rbmlab.report.load import (
    DECLARATIONS,
    SCHEDULE_COLUMNS,
    config_columns,
    find_run_dirs,
    load_runs,
)
from rbmlab.report.names import Names
from rbmlab.report.paper import constant_values, match_paper
from rbmlab.report.paper_table import TableSpec, paper_table_report
from rbmlab.report.plot import check_hlines, check_markers, check_vlines, place_vlines, plot_curves
from rbmlab.report.ratios import check_ratios, ratio_rows, ratios_table
from rbmlab.report.render import (
    curves_csv,
    markdown_report,
    markdown_table,
    method_note,
    points_table,
    runs_csv,
    selected_at_last_note,
    table_order,
    vlines_note,
)
from rbmlab.report.spec import ReportSpec
from rbmlab.report.table_figure import dot_chart
from rbmlab.report.tidy import (
    NOTE as TIDY_NOTE,
)
from rbmlab.report.tidy import (
    Committed,
    grew,
    load_tidy,
    missing_records_note,
    tidy_curve,
    tidy_files,
)
from rbmlab.storage.fileio import write_error
from rbmlab.storage.publish import publish

__all__ = [
    "make_report",
    "report_main",
    "load_runs",
    "find_run_dirs",
    "varying_keys",
    "epoch_to_fraction_of_max",
    "higher_is_better",
]


def _x_is_key(runs: pd.DataFrame, curves: pd.DataFrame, x: str) -> bool:
    """False for a metrics.csv column (epoch, updates, wall_time), True for a runs-table key."""
    if x in curves.columns and (x not in runs.columns or x in SCHEDULE_COLUMNS):
        return False
    if x in runs.columns and x != "run_dir":
        return True
    have = ", ".join(c for c in SCHEDULE_COLUMNS if c in curves.columns) or "none"
    vary = ", ".join(varying_keys(runs)) or "none"
    raise RbmlabError(
        f"report.x: unknown key {x!r}; use a metrics.csv column ({have}) "
        f"or a key of the runs table (varying: {vary})"
    )


def _check_numeric_x(runs: pd.DataFrame, x: str, logx: bool, fraction: float | None) -> None:
    """logx and fraction_of_max markers need a key whose values are numbers."""
    if (logx or fraction is not None) and not pd.api.types.is_numeric_dtype(x_values(runs[x])):
        raise RbmlabError(
            f"report.x: {x} takes values that are not numbers; logx and fraction_of_max markers need numbers"
        )


def _output_paths(out_dir: str | Path, stem: str) -> dict[str, Path]:
    """The four files of a report, in ``out_dir`` (created; a one-line RbmlabError when it is not
    a directory or cannot be created)."""
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise RbmlabError(f"report: cannot write {out} (exists and is not a directory)") from None
    except OSError as exc:
        raise write_error(out, exc, "report") from None
    return {
        "table": out / f"{stem}.md",
        "plot": out / f"{stem}.png",
        "curves": out / f"{stem}_curves.csv",
        "runs": out / f"{stem}_runs.csv",
    }


def make_report(
    root: str | Path | Mapping[str, Path] | Committed,
    out_dir: str | Path,
    spec: ReportSpec | None = None,
    *,
    title: str | None = None,
    filename_stem: str | None = None,
    variants: Sequence[str] = (),
    outputs_root: str | Path | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Write <stem>.md, <stem>_curves.csv, <stem>_runs.csv and <stem>.png into ``out_dir``.

        What to report is a :class:`~rbmlab.report.spec.ReportSpec` (an experiment file's ``report:``
        section), with ``options`` (its field names: ``metric=...``, ``lines=...``) replacing fields of
        it; ``title``, ``filename_stem`` and ``variants`` say where the runs and the files are. The
        table and the figure begin with the runs' header line (tier, data size, epochs, seeds, commit:
        rbmlab.report.header).
        A path among the runs' config values (``model.init``: another run's checkpoint) is written
        relative to ``outputs_root`` (an experiment's outputs root; default the working directory), as
        every committed file writes one (rbmlab.storage.portable).

        ``x``: a metrics.csv column (default epoch; updates, wall_time), or a key of the runs table
        such as ``model.n_hidden``: then each completed run contributes its final value at that key's
        value (a grown model: every evaluated row at its size then) and the table has one column per
        value (``table_x``: these values only). ``variants``: an experiment's variant names; a run
        under ``<root>/<variant>/`` gets that ``variant`` key (for ``lines: variant``). ``select``: a
        metric; at each x only the group's run best on it counts. ``vlines``: [{x: number | summary:
        'early_stopping.n_hidden', label: text}], vertical lines over a runs-table key. ``ratios``:
        [{label, of: [line, ...], to: line}], rows of summed line values over another line's at each
        x of a runs-table key (``rbmlab.report.ratios``). ``root``: a directory, or {experiment name:
        directory} (each run gets an ``experiment`` key), or a report's committed tidy files
        (:class:`~rbmlab.report.tidy.Committed`: table and figure rendered again from them; the CSVs
        stay as they are). ``where``: {key: value}, only the runs with
        these config values (``variant: fw``). ``derive``: {column: [{where: {key: value}, key, values:
    {value: new}}]}, a runs-table column made from another key per group of runs (optionally mapped),
    e.g. an x axis shared by methods whose budgets are different keys (:func:`derive_columns`).
    Final values, best and x at best come only from
        completed runs; the table says how many were left out and why. The four files are written
        together: when one cannot be written, a one-line RbmlabError, and every file stays as it
        was. Returns {'table', 'plot', 'curves', 'runs': Path, 'summary': DataFrame of the groups}.
        Metrics rank by the declarations the runs recorded (rbmlab.evaluators.metrics.declared);
        runs made before runs recorded them, and committed tidy files, by the evaluators'.
    """
    try:
        spec = replace(spec or ReportSpec(), **options)
    except TypeError:
        raise RbmlabError(
            f"report: unknown option(s) {', '.join(sorted(set(options) - set(ReportSpec.keys())))}; "
            f"known: {', '.join(ReportSpec.keys())}"
        ) from None
    committed = root if isinstance(root, Committed) else None
    if committed is not None:  # re-rendered from the report's own tidy files
        runs, stored = load_tidy(committed.stem, committed.constants, variants, committed.experiments)
        x = spec.x
        curves = pd.DataFrame(columns=["run_dir", "status", *([] if x in runs.columns else [x])])
        recorded = None  # tidy files hold no declarations: the evaluators'
    else:
        runs, curves = load_runs(root if isinstance(root, Mapping) else Path(root), variants, outputs_root)
        stored, recorded = None, runs.attrs.get(DECLARATIONS)
    with declared(recorded):
        return _render(runs, curves, stored, committed, spec, out_dir, title, filename_stem)


def _render(
    runs: pd.DataFrame,
    curves: pd.DataFrame,
    stored: pd.DataFrame | None,
    committed: Committed | None,
    spec: ReportSpec,
    out_dir: str | Path,
    title: str | None,
    filename_stem: str | None,
) -> dict[str, Any]:
    """make_report's files from the runs and curves loaded (``stored``: a committed report's
    curves), within the metric declarations in force."""
    x, table_x = spec.x, spec.table_x
    names = Names.parse(spec.names)
    where, derive = spec.where, spec.derive
    if committed is not None:  # its runs CSV was written after both: a key it lacks was one value
        where = {k: v for k, v in (where or {}).items() if k in runs.columns}
        derive = {k: v for k, v in (derive or {}).items() if k not in runs.columns}
    if where:
        runs, curves = _where(runs, curves, where)
    if derive:
        runs = derive_columns(runs, derive)
    metrics = available_metrics(runs, curves)
    metric = resolve_metric(spec.metric, metrics)
    select = None if spec.select is None else resolve_metric(spec.select, metrics)
    if spec.select_where is not None and select is None:
        raise RbmlabError("report.select_where: applies with select only")
    by_key = _x_is_key(runs, curves, x)
    ref_lines, fraction, marks = (
        check_hlines(spec.hlines),
        check_markers(spec.markers),
        check_vlines(spec.vlines),
    )
    wanted_ratios = check_ratios(spec.ratios)
    if (select or marks or table_x or wanted_ratios) and not by_key:
        raise RbmlabError(
            f"report: select, vlines, table_x and ratios need a runs-table key on the x axis "
            f"(such as model.n_hidden), not {x}"
        )
    if by_key:
        _check_numeric_x(runs, x, spec.logx or bool(marks), fraction)
    layout = choose_layout(runs, spec.lines, spec.panels, x if by_key and x in config_columns(runs) else None)
    groups, gids = assign_groups(runs, layout, names)
    selected_gids = _selected_groups(runs, gids, layout.group_keys, spec.select_where, committed is not None)
    finals = final_values(runs, curves, metric)
    if committed is not None:
        # a run record's stored curves are those of the column behind it: its CSV's, not its plot's
        behind_only = not by_key and metric in run_columns(runs)
        curve = tidy_curve(
            stored.iloc[0:0] if behind_only else stored, groups, layout.group_keys, x, runs, gids
        )
        summary = summarize_groups(runs, groups, gids, curve, metric, x, fraction, None if by_key else finals)
    elif by_key:
        curve = aggregate_points(
            run_points(runs, curves, finals, metric, x, select), gids, metric, x, select, selected_gids
        )
        summary = summarize_groups(runs, groups, gids, curve, metric, x, fraction)
    else:
        curve = aggregate_curves(curves, gids, metric, x)  # plotted: partial runs too
        summary = summarize_groups(
            runs, groups, gids, completed_curves(curves, gids, metric, x), metric, x, fraction, finals
        )
    unmatched: list[str] = []
    if spec.paper is not None:
        summary["paper"], unmatched = match_paper(
            spec.paper, groups, constant_values(runs, gids, len(groups))
        )

    title = title or f"{names.metric(metric)} vs {names.key(x)}"
    placed = place_vlines(marks, runs, groups, gids)
    table = (
        points_table(
            summary,
            curve,
            layout,
            metric,
            x,
            fraction,
            spec.paper is not None,
            table_x,
            select,
            names,
            selected_gids,
        )
        if by_key
        else markdown_table(summary, layout, metric, x, fraction, spec.paper is not None, names)
    )
    if wanted_ratios:
        table += _ratios_text(ratio_rows(curve, groups, wanted_ratios, x), x, table_x, curve, names)
    grown = by_key and (
        size_column(curves, x) is not None if committed is None else grew(curve, runs, gids, x)
    )
    record = metric in run_columns(runs)
    behind = None if by_key else curve_behind(metric, curves)
    # the curves CSV of a record such as early_stopping.test_pixel_error: its per-epoch column
    csv_curve = curve if behind is None else aggregate_curves(curves, gids, behind, x)
    note = (
        method_note(metric, x, by_key, select, grown, record, behind, names, spec.select_where)
        + vlines_note(placed, x, names)
        + selected_at_last_note(runs, metric)
    )
    header = report_header(runs)
    if spec.table is not None:  # the paper's layout, and a dot chart (rbmlab.report.paper_table)
        table_spec = TableSpec.parse(spec.table).resolved(metric, spec.paper)
        table, cells, runs = paper_table_report(runs, curves, table_spec, names, metrics)
        png, unmatched = dot_chart(cells, table_spec, names, title, header), cells.unmatched
        note = (
            "Rows and columns as in the paper's table; the runs CSV holds every run's final values."
            + selected_at_last_note(runs, metric)
        )
    else:
        png = plot_curves(
            summary,
            curve,
            layout,
            metric,
            x,
            title=title,
            hlines=ref_lines,
            fraction=fraction,
            logx=spec.logx,
            by_key=by_key,
            vlines=placed,
            names=names,
            header=header,
        )
    if committed is not None:
        names_of = {k: p.name for k, p in tidy_files(committed.stem).items()}
        note += missing_records_note(marks, runs, names_of["runs"]) + " " + TIDY_NOTE.format(**names_of)
        if not by_key and (pd.to_numeric(curve["partial"]) > 0).any():
            note += (
                " Best and x at best are of those stored means, which include the runs that did "
                "not complete where the curves CSV counts them."
            )
    text = f"_{header}_\n\n" + markdown_report(
        title, runs, table, note, left_out(runs, finals), unmatched, record_problems(runs, finals)
    )
    paths = _output_paths(out_dir, filename_stem or metric)
    files = {paths["table"]: text, paths["plot"]: png}
    if committed is None:  # a re-render leaves the data it was rendered from as they are
        files.update(
            {
                paths["curves"]: curves_csv(csv_curve, groups, layout, x),
                paths["runs"]: runs_csv(
                    runs, finals, metric, [m["summary"] for m in marks if "summary" in m]
                ),
            }
        )
    publish(files, what="report")
    return {**paths, "summary": summary}


def derive_columns(runs: pd.DataFrame, derive: Mapping[str, Any]) -> pd.DataFrame:
    """``derive``: {column: [{where: {key: value}, key: source, values: {value: new} (optional)}]}.
    Each rule sets ``column`` for the runs matching ``where`` to their ``source`` value, mapped by
    ``values`` when given (pmp Figure 2's persistent panels: Gibbs's single-site steps per update,
    learner.k, and PMP's chains, learner.n_chains, mapped to the steps they are matched to). Every
    run must get a value; one-line RbmlabError otherwise."""
    if not isinstance(derive, Mapping):
        raise RbmlabError(f"report.derive must be {{column: [rules]}}, got {derive!r}")
    runs = runs.copy()
    for column, rules in derive.items():
        if column in runs.columns:
            raise RbmlabError(f"report.derive: {column} is already a key of the runs table")
        values = pd.Series([None] * len(runs), index=runs.index, dtype=object)
        for rule in rules if isinstance(rules, list) else [rules]:
            if (
                not isinstance(rule, Mapping)
                or not {"where", "key"} <= set(rule)
                or set(rule) - {"where", "key", "values"}
            ):
                raise RbmlabError(
                    f"report.derive.{column}: each rule is {{where: {{key: value}}, key, values}}, "
                    f"got {rule!r}"
                )
            if rule["key"] not in runs.columns:
                raise RbmlabError(f"report.derive.{column}: unknown key {rule['key']!r}")
            mask = runs_matching(runs, rule["where"], f"report.derive.{column}")
            source = runs.loc[mask, rule["key"]]
            if "values" in rule:
                mapping = {norm(k): v for k, v in rule["values"].items()}
                missing = sorted({str(v) for v in source.map(norm) if v not in mapping})
                if missing:
                    raise RbmlabError(
                        f"report.derive.{column}: {rule['key']} = {', '.join(missing)} has no entry in values"
                    )
                source = source.map(lambda v: mapping[norm(v)])  # noqa: B023 - mapped now
            values[mask] = source
        if values.isna().any():
            raise RbmlabError(
                f"report.derive.{column}: no rule matches run {runs.loc[values.isna(), 'run_dir'].iloc[0]}"
            )
        numeric = values.map(lambda v: pd.api.types.is_number(v) and not isinstance(v, bool)).all()
        runs[column] = pd.to_numeric(values) if numeric else values
    return runs


def _selected_groups(
    runs: pd.DataFrame,
    gids: pd.Series,
    group_keys: Sequence[str],
    select_where: Mapping[str, Any] | None,
    committed: bool,
) -> set[int] | None:
    """The groups ``select`` picks in (:func:`aggregate_points`): those of the runs matching
    ``select_where`` (None: every group). Its keys must be the lines' or panels' keys, so that a
    group is wholly in or out (the index's headline picks by run: rbmlab.experiment.index). A
    committed runs CSV leaves out a key every run shares: that key is no condition there."""
    if select_where is None:
        return None
    if not isinstance(select_where, Mapping):
        raise RbmlabError(f"report.select_where must be {{key: value or [values]}}, got {select_where!r}")
    if committed:
        select_where = {k: v for k, v in select_where.items() if k in runs.columns}
    outside = sorted(set(select_where) - set(group_keys))
    if outside:
        raise RbmlabError(
            f"report.select_where: {', '.join(outside)} must be a key of the lines or panels "
            f"({', '.join(group_keys) or 'none'})"
        )
    return set(runs.loc[runs_matching(runs, select_where, "report.select_where"), "run_dir"].map(gids))


def _where(
    runs: pd.DataFrame, curves: pd.DataFrame, where: Mapping[str, Any]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The runs (and their metrics rows) whose keys take the values of ``where``."""
    if not isinstance(where, Mapping):
        raise RbmlabError(f"report.where must be {{key: value}}, got {where!r}")
    keep = runs_matching(runs, where, "report.where")
    if not keep.any():
        raise RbmlabError(f"report.where: no run has {dict(where)}")
    return runs[keep].reset_index(drop=True), curves[curves["run_dir"].isin(runs.loc[keep, "run_dir"])]


def runs_matching(runs: pd.DataFrame, where: Mapping[str, Any], what: str) -> pd.Series:
    """The runs whose config keys take the values of ``where`` (a value, or a list of values any
    of which matches) as a boolean mask; a one-line RbmlabError naming ``what`` for a key that is
    not a config key."""
    keys = config_columns(runs)
    mask = pd.Series(True, index=runs.index)
    for key, value in where.items():
        if key not in keys:
            raise RbmlabError(f"{what}: unknown key {key!r}; keys: {', '.join(keys)}")
        values = [norm(v) for v in value] if isinstance(value, list) else [norm(value)]
        mask &= runs[key].map(norm).isin(values)
    return mask


def _ratios_text(
    rows: pd.DataFrame, x: str, table_x: Sequence[Any] | None, curve: pd.DataFrame, names: Names
) -> str:
    """The ratio rows under the group table (at the table's x values), or nothing."""
    text = ratios_table(rows, x, table_order(curve, x, table_x), names)
    return (
        "\n\nRatios of the values above (sums of lines over a line, "
        f"at each value of {names.key(x)}):\n\n{text}"
        if text
        else ""
    )


def report_main(
    root: str,
    out: str | None = None,
    metric: str | None = None,
    lines: str | Sequence[str] | None = None,
    panels: str | Sequence[str] | None = None,
) -> dict[str, Any]:
    """CLI helper: report into ``out`` (default <root>/report) and print each path written."""
    out_dir = Path(out) if out else Path(root) / "report"
    result = make_report(root, out_dir, metric=metric, lines=lines, panels=panels)
    for key in ("table", "plot", "curves", "runs"):
        print(result[key])
    return result
