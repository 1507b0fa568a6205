"""The catalogue of experiments: what each file reproduces and what each tier was measured to cost.

What an artefact is comes from its file (``title``, the tiers under ``scales``); what it costs
from the committed record of its runs, ``results/<paper>/README.md``, whose tables give each
command with the wall time it took: ``make <paper>-<artefact> [SCALE=<tier>]`` (or ``rbmlab
experiment <paper>/<artefact> [scale=<tier>] ...``) followed by ``(≈ 30 min on 2 cores)``, or a
"wall time" column beside the command; a tier the README does not time but whose committed runs
CSVs record each run's ``cost_seconds`` (reports written since runs record it) costs their sum
(a wheel carries the READMEs, not the CSVs: a README's cost lists the same installed). An experiment that
only reports or draws the runs of others (no tiers of its own) costs what those runs cost at that
tier. A tier no README times is "not measured"; nothing here is typed twice.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass, field
from pathlib import Path

from rbmlab.experiment.arguments import SCALE_TIERS, CommandLine, parse_command_line
from rbmlab.experiment.spec import available, load_spec
from rbmlab.resources import checkout_root, experiments_dir, results_readmes_dir

RESULTS_DIR = results_readmes_dir()
DEFAULT_TIER = CommandLine().scale  # what runs without scale=
NOT_MEASURED = "not measured"
DURATION = re.compile(r"\d\s*(?:s|min|h|hours?|CPU-hours?|GPU-hours?|CPU-min)\b|\bseconds\b")
MAKE_COMMAND = re.compile(r"`make ([^`]+)`")
RBMLAB_COMMAND = re.compile(r"`rbmlab experiment ([a-z0-9_]+/[\w-]+)((?: [^`]*)?)`")
WITH_ARGUMENTS = re.compile(r"\s*with\s+`([^`]+)`")  # `make X` with `'seed=0,1,2'` (≈ ...)
# `A ...`, then `B` likewise (or `A` and `B`) (≈ ...): one cost for both (B: a command, or a name)
THEN = re.compile(
    r"(?:,\s*then|\s+and)\s+`(?:rbmlab experiment |make )?([a-z0-9_]+[/-][\w-]+)[^`]*`(?:\s+likewise)?"
)
PARTS = re.compile(r"^PARTS\.([\w-]+)\s*:=\s*((?:[^\n]*\\\n)*[^\n]*)", re.MULTILINE)


@dataclass
class Entry:
    name: str  # <paper>/<artefact>
    title: str
    tiers: tuple[str, ...]  # the tiers its file defines (none: any)
    reads: tuple[str, ...] = ()  # experiments whose runs it reports or draws
    draws_only: bool = False  # a figure or gallery of those runs, no runs of its own at any tier
    costs: dict[str, str] = field(default_factory=dict)  # tier -> measured cost (README text)

    @property
    def target(self) -> str:
        """Its make target: ``make <paper>-<artefact>``."""
        return self.name.replace("/", "-", 1)

    def cost(self, tier: str) -> str:
        return self.costs.get(tier, NOT_MEASURED)

    def cost_line(self) -> str:
        """Its measured tiers with their costs, then the others (a tierless one: the tiers whose
        runs it reads are measured, then any other)."""
        if not self.tiers:
            reads = f"from the runs of {', '.join(self.reads) or 'other experiments'}"
            measured = [f"{t}: {self.costs[t]}" for t in SCALE_TIERS if t in self.costs]
            return " · ".join(measured + [f"{'any other' if measured else 'any'} tier: {reads} at that tier"])
        measured = [f"{t}: {self.costs[t]}" for t in self.tiers if t in self.costs]
        others = [t for t in self.tiers if t not in self.costs]
        return " · ".join(measured + ([f"{', '.join(others)}: {NOT_MEASURED}"] if others else []))


def _tiers(spec: dict) -> tuple[str, ...]:
    """The tiers a file defines: under ``scales``, or its kind section's ``scales``."""
    defined = set(spec.get("scales") or {})
    for section in ("bench", "figure", "inference"):
        defined |= set((spec.get(section) or {}).get("scales") or {})
    return tuple(t for t in SCALE_TIERS if t in defined)


def reads(spec: dict) -> tuple[str, ...]:
    """The experiments whose runs a file reports (``runs_of``) or draws (a gallery's rows, a
    figure's ``source``)."""
    runs_of = spec.get("runs_of") or []
    named = [runs_of] if isinstance(runs_of, str) else list(runs_of)
    named += [
        row["run"]["experiment"]
        for row in (spec.get("gallery") or {}).get("rows", [])
        if isinstance(row.get("run"), dict) and "experiment" in row["run"]
    ]
    figure = spec.get("figure")
    if isinstance(figure, dict) and isinstance(figure.get("source"), str):
        named.append(figure["source"])
    return tuple(dict.fromkeys(named))


def draws_only(spec: dict) -> bool:
    """Whether a file draws the runs of others and runs none itself: a figure with a ``source``,
    a gallery."""
    figure = spec.get("figure")
    return bool(spec.get("gallery")) or (isinstance(figure, dict) and isinstance(figure.get("source"), str))


def make_target_name(target: str) -> str | None:
    """The experiment ``<paper>/<artefact>`` of a per-file make target, or None."""
    paper, _, artefact = target.partition("-")
    return f"{paper}/{artefact}" if artefact else None


def _parenthesis(text: str, start: int) -> str | None:
    """The balanced ``( ... )`` opening at ``text[start]`` (spaces before it skipped), without
    its brackets, or None."""
    i = len(text) - len(text[start:].lstrip())
    if i >= len(text) or text[i] != "(":
        return None
    depth = 0
    for j in range(i, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return text[i + 1 : j]
    return None


def table_cells(line: str) -> list[str]:
    """The cells of a markdown table row (an escaped ``\\|`` stays inside its cell)."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def is_table_rule(line: str) -> bool:
    """The ``|---|---|`` line under a markdown table's header."""
    return bool(re.match(r"^\|[\s|:-]+\|$", line))


def readme_costs(text: str, composites: dict[str, list[str]] | None = None) -> dict[tuple[str, str], str]:
    """``{(make target, tier): cost}`` from a results README: the parenthesis after a `make ...`
    command, or else the row's "wall time" column, where it holds a duration. A command of several
    targets (a composite target: the ones ``composites`` names) times them together (the cost names
    the others), and so does ``A``, then ``B`` likewise (≈ ...); the first mention of a pair counts."""
    composites = composites or {}
    costs: dict[tuple[str, str], str] = {}
    wall_column = None
    lines = text.splitlines()
    for n, line in enumerate(lines):
        if line.startswith("|") and n + 1 < len(lines) and is_table_rule(lines[n + 1]):
            header = [c.lower() for c in table_cells(line)]  # a table starts: its wall-time column
            wall_column = next((i for i, c in enumerate(header) if "wall time" in c), None)
        elif not line.startswith("|"):
            wall_column = None
        cells = table_cells(line) if line.startswith("|") else []
        wall = cells[wall_column] if wall_column is not None and wall_column < len(cells) else ""
        for match, tier, targets, extra in _commands(line):
            end = match.end()
            if given := WITH_ARGUMENTS.match(line, end):
                extra, end = extra + given.group(1).split(), given.end()
            while then := THEN.match(line, end):
                targets, end = [*targets, then.group(1).replace("/", "-", 1)], then.end()
            targets = [part for t in targets for part in composites.get(t, [t])]
            cost = _parenthesis(line, end)
            cost = (
                cost
                if cost is not None and DURATION.search(cost)
                else wall
                if DURATION.search(wall)
                else None
            )
            if cost is None:
                continue
            cost = cost.replace("`", "") + (f", for {' '.join(extra)}" if extra else "")
            for target in targets:
                others = [t for t in targets if t != target]
                costs.setdefault(
                    (target, tier), cost + (f", together with {', '.join(others)}" if others else "")
                )
    return costs


def _commands(line: str):
    """Each command of a README line that runs experiments: ``(match, tier, make targets,
    the arguments besides the tier)``, in the order they stand (`make ...` and `rbmlab experiment
    ...`)."""
    found = []
    for match in MAKE_COMMAND.finditer(line):
        words = match.group(1).split()
        tier = next((w.split("=", 1)[1] for w in words if w.startswith("SCALE=")), DEFAULT_TIER)
        extra = [w for w in words if "=" in w and not w.startswith("SCALE=")]
        found.append((match, tier, [w for w in words if "=" not in w], extra))
    for match in RBMLAB_COMMAND.finditer(line):
        words = match.group(2).split()
        tier = next((w.split("=", 1)[1] for w in words if w.startswith("scale=")), DEFAULT_TIER)
        extra = [w for w in words if not w.startswith("scale=")]
        found.append((match, tier, [match.group(1).replace("/", "-", 1)], extra))
    return sorted(found, key=lambda f: f[0].start())


def paper_title(paper: str) -> str:
    """The paper, as the first heading of results/<paper>/README.md names it (after ``<paper> —``)."""
    readme = RESULTS_DIR / paper / "README.md"
    if not readme.is_file():
        return ""
    heading = next((ln for ln in readme.read_text().splitlines() if ln.startswith("# ")), "")
    return re.sub(rf"^{re.escape(paper)}\s*[:—]\s*", "", heading[2:].strip())


def papers() -> list[str]:
    return sorted({name.split("/")[0] for name in available()})


def make_composites() -> dict[str, list[str]]:
    """The composite make targets, ``PARTS.<target> := <parts>`` in experiments/composites.mk (which
    the Makefile includes and an install carries)."""
    parts_file = experiments_dir() / "composites.mk"
    if not parts_file.is_file():
        return {}
    return {t: parts.replace("\\\n", " ").split() for t, parts in PARTS.findall(parts_file.read_text())}


def paper_costs(paper: str) -> dict[tuple[str, str], str]:
    """:func:`readme_costs` of results/<paper>/README.md (none when it is absent)."""
    readme = RESULTS_DIR / paper / "README.md"
    return readme_costs(readme.read_text(), make_composites()) if readme.is_file() else {}


def tier_runs_files(name: str, tier: str) -> list[Path]:
    """The committed runs CSVs of ``name`` at ``tier``: ``<artefact>_<tier>_runs.csv`` and its
    labelled parts ``<artefact>_<tier>-<part>_runs.csv`` (none in an install)."""
    paper, artefact = name.split("/", 1)
    folder = RESULTS_DIR / paper
    whole = folder / f"{artefact}_{tier}_runs.csv"
    return [*([whole] if whole.is_file() else []), *sorted(folder.glob(f"{artefact}_{tier}-*_runs.csv"))]


def duration(seconds: float) -> str:
    """'40 s', '25 min', '3.2 h'."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def csv_columns(path: Path) -> list[str]:
    """The column names of a CSV file (its first row; none for an empty file)."""
    with path.open(newline="") as f:
        return next(csv.reader(f), [])


def runs_cost(name: str, tier: str) -> str | None:
    """A tier's cost from its committed runs CSVs (:func:`tier_runs_files`), each run's
    ``cost_seconds`` (rbmlab.report.load.run_cost: its training and evaluations) summed: '12
    runs, 1.4 h in all (the runs' training and evaluation seconds)'; None when a file lacks the
    column (runs recorded before it, whose cost the README states) or no run has a time."""
    files = tier_runs_files(name, tier)
    if not files:
        return None
    from rbmlab.report.load import RUN_COST  # noqa: PLC0415 - pandas, only where there are runs
    from rbmlab.report.tidy import read_committed_csv  # noqa: PLC0415

    if any(RUN_COST not in csv_columns(f) for f in files):
        return None
    runs = [read_committed_csv(f) for f in files]
    seconds = [s for table in runs for s in table[RUN_COST].astype(float)]
    timed = [s for s in seconds if s == s]  # not NaN
    if not timed:
        return None
    count = len({d.split("#")[0] for table in runs for d in table["run_dir"]})  # trials of a run: one run
    untimed = len(seconds) - len(timed)
    return (
        f"{count} run{'s' if count != 1 else ''}, {duration(sum(timed))} in all "
        "(the runs' training and evaluation seconds"
        + (f"; {untimed} of {len(seconds)} rows without one" if untimed else "")
        + ")"
    )


def entry(name: str, costs: dict[tuple[str, str], str] | None = None) -> Entry:
    """One experiment's entry; ``costs``: its paper's :func:`paper_costs`, when already read. A
    tier the README does not time takes its cost from its committed runs CSVs where they record
    each run's (:func:`runs_cost`), so that an installed wheel, which carries the READMEs only,
    lists what a checkout does wherever the README states the cost."""
    spec = load_spec(name)
    found = Entry(name, str(spec.get("title", name)).strip(), _tiers(spec), reads(spec), draws_only(spec))
    costs = paper_costs(name.split("/")[0]) if costs is None else costs
    found.costs = {tier: cost for (target, tier), cost in costs.items() if target == found.target}
    for tier in found.tiers or SCALE_TIERS:
        if tier in found.costs:  # the README's word first: a wheel carries the READMEs, not the CSVs
            continue
        if measured := runs_cost(name, tier):
            found.costs[tier] = ("the runs it reports: " if found.reads else "") + measured
    return found


def entries(paper: str | None = None) -> list[Entry]:
    """The catalogue (of one paper): every experiment file with its measured costs."""
    from rbmlab.errors import RbmlabError  # noqa: PLC0415

    if paper is not None and paper not in papers():
        raise RbmlabError(f"experiment list: unknown paper {paper!r}; papers: {', '.join(papers())}")
    out = []
    for p in [paper] if paper else papers():
        costs = paper_costs(p)
        out += [entry(name, costs) for name in available() if name.split("/")[0] == p]
    return with_sources_costs(out)


def with_sources_costs(listed: list[Entry]) -> list[Entry]:
    """Each entry that only reports or draws the runs of others (tierless, or a figure or gallery
    whose tiers are its sources') given, at each tier where every experiment it reads is measured,
    the cost of those runs (its own drawing aside)."""
    known = {e.name: e for e in listed}
    for e in listed:
        if not e.reads or (e.tiers and not e.draws_only):
            continue
        sources = [known.get(name) or entry(name) for name in e.reads]
        for tier in SCALE_TIERS:
            if tier not in e.costs and all(tier in s.costs for s in sources):
                e.costs[tier] = "the runs it draws on: " + "; ".join(
                    f"{s.name} {s.costs[tier]}" for s in sources
                )
    return listed


def render(paper: str | None = None, targets: bool = False) -> str:
    """``rbmlab experiment list``: per paper, each artefact, what it reproduces and its cost per
    tier; ``targets``: one line per make target and its title (``make experiments``)."""
    listed = entries(paper)
    if targets:
        width = max(len(e.target) for e in listed)
        return "\n".join(f"  {e.target:<{width}}  {e.title}" for e in listed)
    lines = []
    for p in [paper] if paper else papers():
        readme = RESULTS_DIR / p / "README.md"
        lines.append(f"{p}: {paper_title(p)}" + (f"  [{readme_path(readme)}]" if readme.is_file() else ""))
        for e in (e for e in listed if e.name.split("/")[0] == p):
            lines.append(f"  {e.name}  (make {e.target})  {e.title}")
            lines.append(f"      {e.cost_line()}")
    return "\n".join(lines)


def readme_path(readme: Path) -> str:
    """Where a reader finds a results README: results/<paper>/README.md in a checkout; the
    file inside the package in an install (its working directory's results/ is its own runs')."""
    return str(readme.relative_to(RESULTS_DIR.parent) if checkout_root() is not None else readme)


def tier_notice(name: str, argv: list[str]) -> str | None:
    """The line ``rbmlab experiment NAME`` prints when ``argv`` gives no ``scale=``: the tier it
    runs and its measured cost; None when a scale is given."""
    load_spec(name)  # an unknown experiment: its own one line
    if "scale" in parse_command_line(argv).given:
        return None
    cost = with_sources_costs([entry(name)])[0].cost(DEFAULT_TIER)
    measured = f"measured {cost}" if cost != NOT_MEASURED else "its cost is not measured"
    return (
        f"rbmlab: scale not given: running the {DEFAULT_TIER} tier ({measured}); "
        "scale=smoke for a pipeline check in seconds, scale=paper for the paper's settings"
    )
