"""Ratio rows of a report over a runs-table key: one line's value (or several lines' summed) over
another's, at each x; e.g. the cost claims of frank_wolfe, (FW to n units + CD from there) / CD.

``ratios: [{label: text, of: [line, ...], to: line}]`` in an experiment's report names lines as
the config spells them (``lines: variant`` → the variant name). Within each panel, at each x where
every named line has a value: sum of the ``of`` lines' means / the ``to`` line's mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from rbmlab.errors import RbmlabError
from rbmlab.report.layout import norm
from rbmlab.report.names import Names

FORMAT = "report: ratios entries must be {'label': text, 'of': [line, ...], 'to': line}"


def check_ratios(ratios: Any) -> list[dict[str, Any]]:
    """Validate the ``ratios`` entries: [{'label', 'of': line or [lines], 'to': line}], each line
    named once in an entry."""
    if ratios is None:
        return []
    if not isinstance(ratios, list):
        raise RbmlabError(f"{FORMAT}, got {ratios!r}")
    out = []
    for item in ratios:
        if not isinstance(item, dict) or set(item) - {"label", "of", "to"} or not {"of", "to"} <= set(item):
            raise RbmlabError(f"{FORMAT}, got {item!r}")
        of = [item["of"]] if isinstance(item["of"], str) else item["of"]
        to = item["to"]
        if (
            not isinstance(of, list)
            or not of
            or not all(isinstance(name, str) for name in [*of, to])
            or len({*of, to}) != len(of) + 1
        ):
            raise RbmlabError(f"{FORMAT}, each line once, got {item!r}")
        out.append({"label": str(item.get("label") or f"({' + '.join(of)}) / {to}"), "of": of, "to": to})
    return out


def ratio_rows(
    curve: pd.DataFrame, groups: pd.DataFrame, ratios: list[dict[str, Any]], x: str
) -> pd.DataFrame:
    """panel, label, x and ratio for each ratio at each x of each panel where every line it names
    has a mean (``curve``: aggregate_points' per-group points). A name that is no line: one line."""
    lines = set(groups["line_key"])
    for ratio in ratios:
        for name in [*ratio["of"], ratio["to"]]:
            if name not in lines:
                raise RbmlabError(
                    f"report.ratios: {ratio['label']!r} names {name!r}, which is no line; "
                    f"lines: {', '.join(sorted(lines))}"
                )
    means = curve.dropna(subset=["mean"]).merge(
        groups[["panel", "line_key"]], left_on="gid", right_index=True
    )
    rows = []
    for panel, part in means.groupby("panel", sort=False):
        table = part.pivot_table(index=x, columns="line_key", values="mean", aggfunc="first")
        for ratio in ratios:
            names = [*ratio["of"], ratio["to"]]
            if not set(names) <= set(table.columns):
                continue
            for at, row in table[names].dropna().iterrows():
                value = sum(row[n] for n in ratio["of"]) / row[ratio["to"]] if row[ratio["to"]] else math.nan
                rows.append({"panel": panel, "label": ratio["label"], x: at, "ratio": value})
    return pd.DataFrame(rows, columns=["panel", "label", x, "ratio"])


def ratios_table(rows: pd.DataFrame, x: str, order: Sequence[Any], names: Names | None = None) -> str:
    """The ratio rows as markdown: one row per (panel, ratio), one column per x of ``order``
    (only the x where some ratio stands; headed in words, ``names``); empty text when there are none."""
    if rows.empty:
        return ""
    names = names or Names()
    present = {norm(v) for v in rows[x]}
    columns = [v for v in order if norm(v) in present]
    panels = rows["panel"].ne("").any()
    header = [*(["panel"] if panels else []), "ratio", *(names.pair(x, v) for v in columns)]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for (panel, label), part in rows.groupby(["panel", "label"], sort=False):
        at = {norm(v): r for v, r in zip(part[x], part["ratio"])}
        cells = [
            f"{at[norm(v)]:.2f}" if norm(v) in at and not math.isnan(at[norm(v)]) else "—" for v in columns
        ]
        lines.append("| " + " | ".join([*([panel] if panels else []), label, *cells]) + " |")
    return "\n".join(lines)
