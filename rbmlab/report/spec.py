"""What an experiment file's ``report:`` section asks of a report: one object, its keys its fields.

An experiment hands its ``report:`` mapping over whole (``ReportSpec.parse``); a new report
option is a field here and its use in :func:`rbmlab.report.make_report`, and nothing else: the
experiment runner neither lists nor forwards the keys one by one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from typing import Any

from rbmlab.errors import RbmlabError


@dataclass(frozen=True)
class ReportSpec:
    metric: str | None = None  # metrics.csv column or summary record
    x: str = "epoch"  # metrics.csv column or runs-table key
    lines: str | Sequence[str] | None = None  # config keys that make lines
    panels: str | Sequence[str] | None = None  # config keys that make panels
    paper: Any = None  # the paper's numbers: [{match: {...}, value}]
    hlines: Sequence[Mapping[str, Any]] | None = None
    markers: Mapping[str, Any] | None = None
    logx: bool = False
    select: str | None = None  # at each x keep the run best on this metric
    select_where: Mapping[str, Any] | None = None  # select among these runs only ({key: value or [values]})
    vlines: Sequence[Mapping[str, Any]] | None = None
    table_x: Sequence[Any] | None = None
    ratios: Sequence[Mapping[str, Any]] | None = None
    where: Mapping[str, Any] | None = None  # only the runs with these config values
    derive: Mapping[str, Any] | None = None  # runs-table columns made from other keys
    names: Mapping[str, Any] | None = None  # keys and values in words (rbmlab.report.names)
    table: Mapping[str, Any] | None = None  # the paper's table layout (rbmlab.report.paper_table)

    @classmethod
    def keys(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def parse(cls, report: Any, where_from: str) -> ReportSpec:
        """An experiment file's ``report:`` mapping (``None``: the defaults); unknown keys and
        values of the wrong kind are one-line errors naming ``where_from``."""
        from rbmlab.report.names import Names  # noqa: PLC0415
        from rbmlab.report.paper_table import TableSpec  # noqa: PLC0415
        from rbmlab.report.ratios import check_ratios  # noqa: PLC0415

        if report is None:
            return cls()
        if not isinstance(report, Mapping):
            raise RbmlabError(
                f"{where_from}: report must be a mapping of {', '.join(cls.keys())}, got {report!r}"
            )
        unknown = set(report) - set(cls.keys())
        if unknown:
            raise RbmlabError(
                f"{where_from}: unknown report key(s) {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(cls.keys()))}"
            )
        try:
            check_ratios(report.get("ratios"))
        except RbmlabError as e:
            raise RbmlabError(f"{where_from}: {e}") from None
        Names.parse(report.get("names"), f"{where_from}: report.names")
        TableSpec.parse(report.get("table"), f"{where_from}: report.table")
        if not isinstance(report.get("where", {}), Mapping):
            raise RbmlabError(f"{where_from}: report.where must be {{key: value}}, got {report['where']!r}")
        if "select_where" in report:
            if not isinstance(report["select_where"], Mapping) or not report["select_where"]:
                raise RbmlabError(
                    f"{where_from}: report.select_where must be {{key: value or [values]}}, "
                    f"got {report['select_where']!r}"
                )
            if report.get("select") is None:
                raise RbmlabError(f"{where_from}: report.select_where applies with select only")
        return replace(cls(), **{**report, "logx": bool(report.get("logx", False))})
