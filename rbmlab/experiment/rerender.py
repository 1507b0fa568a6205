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
        name = f"{runs_csv.parent.name}/{match['artefact']}" if match else None
        if name not in known:
            raise RbmlabError(
                f"report rerender: {runs_csv} is no experiment's report "
                "(<artefact>_<tier>[-<part>]_runs.csv of experiments/<paper>/<artefact>.yaml)"
            )
        found.append(
            CommittedReport(name, match["tier"], runs_csv.with_name(runs_csv.name[: -len("_runs.csv")]))
        )
    return found


def rerender(results_root: Path | str = "results", paper: str | None = None) -> list[dict[str, Any]]:
    """Render every committed sweep report of ``paper`` (all) again; returns make_report's dicts."""
    from rbmlab.experiment.kinds import kind_of  # noqa: PLC0415
    from rbmlab.experiment.spec import load_spec  # noqa: PLC0415
    from rbmlab.experiment.sweep import render_committed  # noqa: PLC0415

    results = []
    for report in committed_reports(results_root, paper):
        spec = load_spec(report.name)
        if kind_of(spec, report.name).name != "sweep":
            continue
        results.append(render_committed(report.name, spec, report.tier, report.stem))
    return results
