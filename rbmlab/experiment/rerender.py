"""``rbmlab report rerender [PAPER]`` (``make results-rerender``): every committed report's table
and figure rendered again from its own tidy files, nothing run.

A committed report is ``results/<paper>/<artefact>_<tier>[-<what>]_runs.csv`` of a sweep
experiment (``-<what>``: a labelled part of a tier, such as pmp's ``_paper-gwg``); its table and
figure are drawn again by the current code (names, paper layout, header) from that file and its
``_curves.csv`` (rbmlab.report.tidy), and its CSVs stay as they are. Reports of other kinds
(galleries, figures, timings) read run directories or time the machine and are not re-rendered
here; the listing says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rbmlab.errors import RbmlabError
from rbmlab.experiment.arguments import SCALE_TIERS

_STEM = re.compile(rf"^(?P<artefact>.+)_(?P<tier>{'|'.join(SCALE_TIERS)})(?P<part>-[\w-]+)?$")


@dataclass(frozen=True)
class CommittedReport:
    name: str  # <paper>/<artefact>
    tier: str
    stem: Path  # results/<paper>/<artefact>_<tier>[-<part>]


def committed_reports(results_root: Path | str, paper: str | None = None) -> list[CommittedReport]:
    """The committed sweep reports under ``results_root`` (of ``paper``), in path order; a runs
    CSV that names no experiment is one line."""
    from rbmlab.experiment.spec import available  # noqa: PLC0415

    known = set(available())
    if paper is not None and not any(name.startswith(paper + "/") for name in known):
        raise RbmlabError(
            f"report rerender: unknown paper {paper!r}; papers: "
            f"{', '.join(sorted({name.split('/')[0] for name in known}))}"
        )
    found = []
    for runs_csv in sorted(Path(results_root).glob(f"{paper or '*'}/*_runs.csv")):
        match = _STEM.match(runs_csv.name[: -len("_runs.csv")])
        name = _experiment_of(runs_csv.parent, match)
        if name not in known:
            raise RbmlabError(
                f"report rerender: {runs_csv} is no experiment's report "
                "(<artefact>_<tier>[-<part>]_runs.csv of experiments/<paper>/<artefact>.yaml)"
            )
        found.append(
            CommittedReport(name, match["tier"], runs_csv.with_name(runs_csv.name[: -len("_runs.csv")]))
        )
    return found


def _experiment_of(paper_dir: Path, match: re.Match | None) -> str | None:
    """``<paper>/<artefact>`` of a report file's stem matched by _STEM (None: no match)."""
    return f"{paper_dir.name}/{match['artefact']}" if match else None


def rerender(results_root: Path | str = "results", paper: str | None = None) -> list[dict[str, Any]]:
    """Render every committed sweep report of ``paper`` (all) again; returns make_report's dicts.
    A sweep report (.md) whose runs CSV is gone, or no sweep report at all, is one line: a
    rerender that draws nothing says so instead of leaving stale files looking current."""
    from rbmlab.experiment.kinds import kind_of  # noqa: PLC0415
    from rbmlab.experiment.spec import load_spec  # noqa: PLC0415
    from rbmlab.experiment.sweep import render_committed  # noqa: PLC0415

    specs = {r: load_spec(r.name) for r in committed_reports(results_root, paper)}
    reports = {r: spec for r, spec in specs.items() if kind_of(spec, r.name).name == "sweep"}
    orphans = _reports_without_runs(Path(results_root), paper)
    if orphans:
        raise RbmlabError(
            f"report rerender: {orphans[0]} is a sweep's report whose runs CSV "
            f"({orphans[0].name[: -len('.md')]}_runs.csv) is gone: it cannot be drawn again"
            + (f" ({len(orphans) - 1} more such)" if len(orphans) > 1 else "")
        )
    if not reports:
        where = f"{results_root}/{paper}" if paper else str(results_root)
        raise RbmlabError(
            f"report rerender: no sweep report under {where} (<artefact>_<tier>_runs.csv): nothing to draw"
        )
    return [render_committed(r.name, spec, r.tier, r.stem) for r, spec in reports.items()]


def _reports_without_runs(results_root: Path, paper: str | None) -> list[Path]:
    """The ``<artefact>_<tier>[-<part>].md`` of sweep experiments under ``results_root`` whose
    ``_runs.csv`` is not beside them (a report that can no longer be drawn again)."""
    from rbmlab.experiment.kinds import kind_of  # noqa: PLC0415
    from rbmlab.experiment.spec import available, load_spec  # noqa: PLC0415

    known = set(available())
    out = []
    for md in sorted(results_root.glob(f"{paper or '*'}/*.md")):
        name = _experiment_of(md.parent, _STEM.match(md.stem))
        if name in known and not md.with_name(f"{md.stem}_runs.csv").is_file():
            if kind_of(load_spec(name), name).name == "sweep":
                out.append(md)
    return out
