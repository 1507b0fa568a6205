"""The report's figure (matplotlib): one subplot per panel, one line per group.

Over a metrics.csv column (epoch, updates) a line is the group's mean curve with a ± std band,
faded and labelled "(partial)" when runs that did not complete contribute to it; over a
runs-table key (``model.n_hidden``) it joins the group's mean final values, with ± std error
bars, in the key's order (a key with text values is spaced evenly and labelled).

Every word on it comes from :class:`~rbmlab.report.names.Names` (axis labels, legend title, line
and panel names, built from each group's key values), never a config key or metrics column as
spelled. Each line has its own colour, marker shape and dash pattern, so that two equal curves
stay apart and the figure reads in grey scale. The paper's number for a group, where the
experiment file gives one, is a black × at the end of its curve (over a runs-table key: a dotted
black level with a × at its right end; points read off the paper's curve, ``{x: y}``: a dashed
black curve with a × at each), labelled "paper" once.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from rbmlab.errors import RbmlabError
from rbmlab.evaluators.metrics import ranking
from rbmlab.report.aggregate import x_order
from rbmlab.report.figure_text import fit_text, renderer_of, top_texts
from rbmlab.report.layout import Layout, norm
from rbmlab.report.load import to_float
from rbmlab.report.names import Names


def png_bytes(fig: Any, dpi: int, **savefig: Any) -> bytes:
    """A matplotlib figure as PNG bytes (written by the caller, e.g. atomically with its table)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, **savefig)
    return buf.getvalue()


def check_hlines(hlines: Any) -> list[dict[str, Any]]:
    """Validate [{'y': float, 'label': str}, ...]."""
    out = []
    for item in hlines or []:
        if not isinstance(item, Mapping) or math.isnan(to_float(item.get("y"))):
            raise RbmlabError(f"report: hlines entries must be {{'y': number, 'label': text}}, got {item!r}")
        out.append({"y": to_float(item["y"]), "label": str(item.get("label", ""))})
    return out


def check_vlines(vlines: Any) -> list[dict[str, Any]]:
    """Validate [{'x': number, 'label': text} | {'summary': 'early_stopping.n_hidden', 'label': text}]."""
    out = []
    for item in vlines or []:
        ok = isinstance(item, Mapping) and len({"x", "summary"} & set(item)) == 1
        if ok and "x" in item:
            ok = not math.isnan(to_float(item["x"]))
        if not ok:
            raise RbmlabError(
                "report: vlines entries must be {'x': number, 'label': text} or "
                "{'summary': '<summary.json record, e.g. early_stopping.n_hidden>', "
                f"'label': text}}, got {item!r}"
            )
        out.append(
            {
                **({"x": to_float(item["x"])} if "x" in item else {"summary": str(item["summary"])}),
                "label": str(item.get("label", "")),
            }
        )
    return out


def place_vlines(
    marks: list[dict[str, Any]], runs: pd.DataFrame, groups: pd.DataFrame, gids: pd.Series
) -> list[dict[str, Any]]:
    """Each vertical line with its x, label, panel and line (None: every panel, grey): a fixed x, or
    per run that records the summary value (in its group's panel and colour)."""
    placed = []
    for mark in marks:
        if "x" in mark:
            placed.append({"x": mark["x"], "label": mark["label"], "panel": None, "line": None, "run": None})
            continue
        if mark["summary"] not in runs.columns:
            continue
        for run_dir, value in zip(runs["run_dir"], runs[mark["summary"]]):
            if not math.isnan(to_float(value)):
                group = groups.iloc[int(gids[run_dir])]
                placed.append(
                    {
                        "x": to_float(value),
                        "label": mark["label"],
                        "panel": group["panel"],
                        "line": group["line"],
                        "run": run_dir,
                    }
                )
    return placed


def check_markers(markers: Any) -> float | None:
    """The fraction of a {'kind': 'fraction_of_max', 'fraction': f} marker spec, or None."""
    if not markers:
        return None
    if not isinstance(markers, Mapping) or markers.get("kind") != "fraction_of_max":
        raise RbmlabError(
            f"report: markers must be {{'kind': 'fraction_of_max', 'fraction': f}}, got {markers!r}"
        )
    fraction = to_float(markers.get("fraction", 0.9))
    if not 0.0 < fraction <= 1.0:
        raise RbmlabError(f"report: markers.fraction must be in (0, 1], got {markers.get('fraction')!r}")
    return fraction


# per line, in turn: a marker shape and a dash pattern besides the colour (readable in grey scale;
# the gaps of a dashed line drawn over an equal one show the one below)
_MARKERS = ("o", "s", "^", "D", "v", "P", "h", "*")
_DASHES = ("-", "--", "-.", ":")
# the paper's number: black, a × no line uses
_PAPER = {"color": "black", "marker": "x", "markersize": 9, "markeredgewidth": 2, "label": "paper"}
_PANEL_INCHES = 5.0
_PANEL_HEIGHT_INCHES = 3.8
_LEGEND_INCHES = 1.8


def line_text(group: Mapping[str, Any], layout: Layout, names: Names) -> str:
    """A group's line in words, from its key values: "CD-1", or "CD-1, learning rate = 0.1"."""
    parts = [names.value(k, group[k]) for k in layout.lines]
    parts += [f"{names.key(k)} = {names.value(k, group[k])}" for k in layout.extra]
    return ", ".join(parts) or "all runs"


def panel_text(group: Mapping[str, Any], layout: Layout, names: Names) -> str:
    """A group's panel in words: "corruption rate = 0.1" ("" for a figure of one panel)."""
    return ", ".join(f"{names.key(k)} = {names.value(k, group[k])}" for k in layout.panels)


@dataclass(frozen=True)
class _Look:
    """How one line is drawn."""

    color: str
    marker: str
    dashes: Any
    index: int


@dataclass(frozen=True)
class _Style:
    """What every line of the figure needs besides its own data."""

    x: str
    fraction: float | None
    by_key: bool
    shared_legend: bool  # one legend beside the panels: looks are per line name
    look: dict[str, _Look]  # line text -> its colour, marker and dashes
    counts: pd.Series  # line text -> the distinct n of its groups
    order: list[Any]  # the values of a runs-table key on the x axis, sorted
    positions: dict[str, int] | None  # text values of a runs-table key -> x position
    names: Names


def _style(
    summary: pd.DataFrame,
    curve: pd.DataFrame,
    x: str,
    fraction: float | None,
    by_key: bool,
    n_panels: int,
    names: Names,
) -> _Style:
    """A look per line name (the default colour cycle, markers and dashes), legend counts and the x
    positions of key values."""
    import matplotlib as mpl  # noqa: PLC0415 - matplotlib only when a plot is drawn

    line_names = list(dict.fromkeys(summary["_line"]))
    palette = mpl.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
    order = x_order(curve[x]) if by_key else []
    positions = {v: i for i, v in enumerate(order)} if order and isinstance(order[0], str) else None
    look = {
        name: _Look(palette[i % len(palette)], _MARKERS[i % len(_MARKERS)], _DASHES[i % len(_DASHES)], i)
        for i, name in enumerate(line_names)
    }
    return _Style(
        x,
        fraction,
        by_key,
        n_panels > 1,
        look,
        summary.groupby("_line")["n"].unique(),
        order,
        positions,
        names,
    )


def _markevery(n: int, index: int) -> Any:
    """Every point of a short curve; about ten of a long one, shifted per line so that the markers
    of equal curves fall on different points."""
    if n <= 12:
        return None
    step = math.ceil(n / 10)
    return (index * max(1, step // 3) % step, step)


def _draw_line(ax: Any, part: pd.DataFrame, row: pd.Series, style: _Style) -> None:
    """One group: its mean with a ± std band (or error bars), and its marker line; faded and
    labelled "(partial)" when runs that did not complete contribute to it."""
    xs = (part[style.x].map(style.positions) if style.positions else part[style.x]).to_numpy(float)
    mean = part["mean"].to_numpy(float)
    std = part["std"].fillna(0.0).to_numpy(float)
    look = style.look[row["_line"]]
    n = style.counts[row["_line"]]
    label = f"{row['_line']} (n={n[0]})" if not style.shared_legend or len(n) == 1 else row["_line"]
    partial = "partial" in part and bool(part["partial"].any())
    kwargs = {
        "color": look.color,
        "marker": look.marker,
        "markerfacecolor": "none",
        "markeredgewidth": 1.3,
        "linestyle": look.dashes,
        "linewidth": max(1.2, 2.2 - 0.3 * look.index),  # a rim of the line below
        "zorder": 2 + 0.01 * look.index,
    }
    if style.by_key:
        ax.errorbar(xs, mean, yerr=std, markersize=6, capsize=3, label=label, **kwargs)
    else:
        ax.plot(
            xs,
            mean,
            markersize=5,
            markevery=_markevery(len(xs), look.index),
            alpha=0.5 if partial else 0.95,
            label=label + (" (partial)" if partial else ""),
            **kwargs,
        )
        ax.fill_between(xs, mean - std, mean + std, color=look.color, alpha=0.2, linewidth=0)
    if style.fraction is not None and not math.isnan(row[f"{style.x}_to_fraction"]):
        ax.axvline(row[f"{style.x}_to_fraction"], color=look.color, linestyle=":", linewidth=1.2)
    _draw_paper(ax, xs, row, style)


def paper_points(value: Any) -> list[tuple[Any, float]]:
    """A paper value read off the paper's own curve, {x: y} (``{300: 8.1, 500: 7.3}``), as its
    numeric (x, y) points in x order; [] for a single number, a text or nothing."""
    if not isinstance(value, Mapping):
        return []
    points = [(x, to_float(y)) for x, y in value.items()]
    return sorted(((x, y) for x, y in points if not math.isnan(y)), key=lambda p: to_float(p[0]))


def _draw_paper(ax: Any, xs: Any, row: pd.Series, style: _Style) -> None:
    """The paper's number for the group, where it is one: a × at the end of its curve; over a
    runs-table key (the paper names no x) a dotted level across the group's x with a × at its end;
    points read off the paper's curve ({x: y}): a dashed black curve with a × at each."""
    points = paper_points(row.get("paper"))
    if points:
        at = [style.positions.get(norm(x), math.nan) if style.positions else to_float(x) for x, _ in points]
        ax.plot(at, [y for _, y in points], linestyle="--", linewidth=1.0, zorder=4, **_PAPER)
        return
    paper = to_float(row.get("paper"))
    if math.isnan(paper) or len(xs) == 0:
        return
    if style.by_key:
        ax.plot(
            [xs.min(), xs.max()],
            [paper, paper],
            linestyle=":",
            linewidth=1.2,
            markevery=[1],
            zorder=4,
            **_PAPER,
        )
        ax.annotate(
            row["_line"],
            (xs.min(), paper),
            xytext=(2, 2),
            textcoords="offset points",
            fontsize="x-small",
            color="0.2",
        )  # whose level it is
    else:
        ax.plot([xs[-1]], [paper], linestyle="none", zorder=5, **_PAPER)


def _draw_panel(
    ax: Any,
    rows: pd.DataFrame,
    curve: pd.DataFrame,
    style: _Style,
    hlines: list[dict[str, Any]],
    vlines: list[dict[str, Any]],
    panel: str,
) -> None:
    """The lines of one panel and the reference lines."""
    for g, row in rows.iterrows():
        _draw_line(ax, curve[curve["gid"] == g], row, style)
    for i, h in enumerate(hlines):
        ax.axhline(
            h["y"], color=f"{0.15 + 0.2 * (i % 4):.2f}", linestyle="--", linewidth=1, label=h["label"] or None
        )
    for v in vlines:
        if v["panel"] in (None, panel):
            look = style.look.get(v["line"])
            ax.axvline(
                v["x"],
                color=look.color if look else "0.4",
                linestyle="-.",
                linewidth=1.2,
                label=v["label"] or None,
            )


def _draw_finals(ax: Any, rows: pd.DataFrame, style: _Style) -> None:
    """A report without curves (a run record such as early_stopping.n_hidden): each group's final
    mean ± std as a point over its line label, and the paper's number, where it gives one, as ×."""
    for i, (_, row) in enumerate(rows.iterrows()):
        std = row["final_std"] if not math.isnan(row["final_std"]) else 0.0
        look = style.look[row["_line"]]
        ax.errorbar([i], [row["final_mean"]], yerr=[std], color=look.color, marker=look.marker, capsize=3)
        paper = to_float(row.get("paper"))
        if not math.isnan(paper):
            ax.plot([i], [paper], linestyle="none", zorder=5, **_PAPER)
    # the points are named on the axis (the legend keeps only the paper's ×), slanted when many
    labels = [f"{row['_line']} (n={row['final_n']})" for _, row in rows.iterrows()]
    ax.set_xticks(
        range(len(rows)),
        labels=labels,
        rotation=30 if len(rows) > 4 else 0,
        ha="right" if len(rows) > 4 else "center",
    )
    ax.set_xlim(-0.5, len(rows) - 0.5)


def _key_ticks(ax: Any, style: _Style) -> None:
    """A tick at each value of a runs-table key on the x axis (at most 12 numbers), labelled plainly."""
    if style.positions:
        ax.set_xticks(
            list(style.positions.values()), labels=[style.names.value(style.x, v) for v in style.positions]
        )
    elif 0 < len(style.order) <= 12:
        ax.set_xticks([float(v) for v in style.order], labels=[norm(v) for v in style.order])
        ax.minorticks_off()


def _legend(fig: Any, axes: Any, layout: Layout, metric: str, style: _Style, titled: bool = True) -> None:
    """One legend: beside the panels when there are several, else in the only panel; ``titled``:
    headed by the line keys in words (its entries are the lines)."""
    from matplotlib.lines import Line2D  # noqa: PLC0415

    by_label: dict[str, Any] = {}  # the first handle of each label over the panels
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            by_label.setdefault(label, handle)
    if style.fraction is not None:
        by_label[f"{style.fraction:.0%} of {ranking(metric).best_word}"] = Line2D(
            [], [], color="gray", linestyle=":"
        )
    if not by_label:
        return
    if "paper" in by_label:  # after the lines
        by_label["paper"] = by_label.pop("paper")
    kwargs = {
        "fontsize": "small",
        "title": (titled and style.names.keys(layout.lines)) or None,
        "title_fontsize": "small",
    }
    if style.shared_legend:
        fig.legend(list(by_label.values()), list(by_label), loc="outside right upper", **kwargs)
    else:
        axes[0].legend(list(by_label.values()), list(by_label), **kwargs)


def curves_figure(
    summary: pd.DataFrame,
    curve: pd.DataFrame,
    layout: Layout,
    metric: str,
    x: str,
    *,
    title: str | None,
    hlines: list[dict[str, Any]],
    fraction: float | None,
    logx: bool = False,
    by_key: bool = False,
    vlines: list[dict[str, Any]] | None = None,
    names: Names | None = None,
    header: str | None = None,
) -> Any:
    """The matplotlib Figure of :func:`plot_curves`."""
    from matplotlib.figure import Figure  # noqa: PLC0415 - no pyplot: no global backend or display

    names = names or Names()
    summary = summary.assign(
        _line=[line_text(g, layout, names) for g in summary.to_dict("records")],
        _panel=[panel_text(g, layout, names) for g in summary.to_dict("records")],
    )
    # place_vlines names a group by its line and panel as assign_groups spelled them
    shown_line = dict(zip(summary["line"], summary["_line"]))
    shown_panel = dict(zip(summary["panel"], summary["_panel"]))
    vlines = [
        {**v, "line": shown_line.get(v["line"], v["line"]), "panel": shown_panel.get(v["panel"], v["panel"])}
        for v in vlines or []
    ]
    panels = list(dict.fromkeys(summary["_panel"]))
    ncols = min(len(panels), 3)
    nrows = math.ceil(len(panels) / ncols)
    style = _style(summary, curve, x, fraction, by_key, len(panels), names)
    width = _PANEL_INCHES * ncols + (_LEGEND_INCHES if style.shared_legend else 0)
    fig = Figure(figsize=(width, _PANEL_HEIGHT_INCHES * nrows), layout="constrained")
    # over the panels, clear of the legend beside them
    top_texts(
        fig,
        title,
        header,
        title_size="large" if len(panels) > 1 else "medium",
        span=(0.0, _PANEL_INCHES * ncols / width),
    )
    renderer = renderer_of(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    finals_only = not by_key and curve.empty and "final_mean" in summary
    for ax, panel in zip(axes, panels):
        rows = summary[summary["_panel"] == panel]
        if finals_only:
            _draw_finals(ax, rows, style)
        else:
            _draw_panel(ax, rows, curve, style, hlines, vlines, panel)
        xlabel, ylabel = names.keys(layout.lines) if finals_only else names.key(x), names.metric(metric)
        fit_text(ax.set_xlabel(xlabel), xlabel, (_PANEL_INCHES - 1.0) * fig.dpi, renderer)
        fit_text(ax.set_ylabel(ylabel), ylabel, (_PANEL_HEIGHT_INCHES - 1.8) * fig.dpi, renderer)
        if panel:
            fit_text(ax.set_title(panel, fontsize="medium"), panel, (_PANEL_INCHES - 1.0) * fig.dpi, renderer)
        if logx:
            ax.set_xscale("log")
        if by_key:
            _key_ticks(ax, style)
        ax.grid(True, alpha=0.3)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    _legend(
        fig, axes[: len(panels)], layout, metric, style, titled=not finals_only
    )  # finals: the lines are ticks
    return fig


def plot_curves(
    summary: pd.DataFrame,
    curve: pd.DataFrame,
    layout: Layout,
    metric: str,
    x: str,
    *,
    title: str | None,
    hlines: list[dict[str, Any]],
    fraction: float | None,
    logx: bool = False,
    by_key: bool = False,
    vlines: list[dict[str, Any]] | None = None,
    names: Names | None = None,
    header: str | None = None,
) -> bytes:
    """The figure as PNG bytes: one subplot per panel, mean ± std per line, the paper's numbers,
    reference lines and markers, the header and the title on top.

    ``by_key``: x is a runs-table key and ``curve`` holds one point per value (aggregate_points);
    ``vlines``: place_vlines's vertical lines; ``names``: the words of every label (the declared
    ones without); ``header``: one line of small text above the title (tier, data, seeds, commit).
    """
    return png_bytes(
        curves_figure(
            summary,
            curve,
            layout,
            metric,
            x,
            title=title,
            hlines=hlines,
            fraction=fraction,
            logx=logx,
            by_key=by_key,
            vlines=vlines,
            names=names,
            header=header,
        ),
        dpi=120,
    )
