"""The companion figure of a paper table: a dot chart, never a curve over a single x.

One panel per condition × metric of the table; one row per table row (the paper's methods, top
to bottom as in the table); ours as a filled dot with a ± std error bar, the paper's number as a
black ×, so the two read apart in grey scale too. Every label comes from ``Names``.
"""

from __future__ import annotations

import math
import textwrap
from typing import Any

from rbmlab.report.figure_text import top_texts
from rbmlab.report.load import to_float
from rbmlab.report.names import Names
from rbmlab.report.paper_table import TableData, TableSpec, condition_label, is_number, row_label
from rbmlab.report.plot import png_bytes


def dot_chart(
    data: TableData, table: TableSpec, names: Names, title: str = "", header: str | None = None
) -> bytes:
    """The dot chart of ``data`` as PNG bytes."""
    return png_bytes(dot_figure(data, table, names, title, header), dpi=120)


def dot_figure(
    data: TableData, table: TableSpec, names: Names, title: str = "", header: str | None = None
) -> Any:
    """The dot chart of ``data``: a matplotlib Figure (``header``: its first line, above the title)."""
    from matplotlib.figure import Figure  # noqa: PLC0415 - no pyplot: no global backend or display

    panels = [(c, m.metric) for c in data.columns for m in table.metrics]
    labels = [", ".join(row_label(r, table.rows, names)) for r in data.rows]
    ncols = min(len(panels), 4)
    nrows = math.ceil(len(panels) / ncols)
    fig = Figure(
        figsize=(3.2 * ncols + 1.6, 0.9 + 0.32 * len(labels) * nrows + 0.8 * nrows), layout="constrained"
    )
    axes = fig.subplots(nrows, ncols, squeeze=False, sharey=True).ravel()
    ys = list(range(len(labels)))[::-1]  # the first row at the top, as in the table
    for ax, (column, metric) in zip(axes, panels):
        part = data.cells[(data.cells["column"] == column) & (data.cells["metric"] == metric)]
        part = part.set_index(part["row"].map(data.rows.index)).sort_index()
        ax.errorbar(
            part["mean"],
            ys,
            xerr=part["std"].fillna(0.0),
            fmt="o",
            color="C0",
            markersize=5,
            capsize=3,
            label="ours (mean ± std)",
        )
        paper = part["paper"].map(lambda p: to_float(p) if is_number(p) else math.nan)
        if paper.notna().any():
            ax.plot(paper, ys, "x", color="black", markersize=8, markeredgewidth=2, label="paper")
        first = part.iloc[0]
        condition = condition_label(column, table.columns, names)
        ax.set_title(" · ".join(p for p in (condition, first["label"] or "") if p) or None, fontsize="medium")
        ax.set_xlabel(textwrap.fill(names.metric(metric), width=40))
        ax.set_yticks(ys, labels)
        ax.set_ylim(-0.6, len(labels) - 0.4)
        ax.margins(x=0.08)
        ax.locator_params(axis="x", nbins=4)
        ax.grid(True, axis="x", alpha=0.3)
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    axes[0].set_ylabel(", ".join(names.key(k) for k in table.rows))
    entries: dict[str, Any] = {}  # every panel's entries once: the first panel may have no paper numbers
    for ax in axes[: len(panels)]:
        for handle, text in zip(*ax.get_legend_handles_labels()):
            entries.setdefault(text, handle)
    legend = sorted(entries, key=lambda text: text == "paper")  # ours first
    handles = [entries[text] for text in legend]
    fig.legend(handles, legend, loc="outside lower center", ncols=len(legend), frameon=False)
    top_texts(fig, title or None, header, title_size="medium")
    return fig
