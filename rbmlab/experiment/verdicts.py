"""The verdicts table of a paper's README, held to its evidence.

Each ``results/<paper>/README.md`` keeps one table with the columns of :data:`COLUMNS`: per claim,
the paper's own words (a verbatim quote and its place), the artefact that tests it, its tier,
data and epochs, the seeds it rests on, ours beside the paper's number, and the verdict. This
module reads that table and lists what is wrong with it, so that ``rbmlab report index --check``
and a test refuse a verdict that outruns its evidence:

- every column present and filled (``—`` where nothing applies);
- the quote occurs in the paper's text (``../shared/papers/``: case, whitespace, line-end
  hyphenation and quote/dash styles aside; ``...`` elides) and names its place (Sec., Fig., ...);
- seeds: an integer, ``exact`` (deterministic evidence) or ``—`` (nothing run);
- ``reproduced``, ``reproduced in shape`` and ``fails`` rest on ≥ :data:`MIN_SEEDS` seeds or on
  exact evidence;
- seeds never exceed what the artefact's committed ``_runs.csv`` holds at that tier for each of
  its methods (distinct seeds, times distinct batched trials ``#k`` of a run directory; the
  fewest of any method).

``python -m rbmlab.experiment.verdicts results/<paper>/README.md ...`` prints the problems.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from rbmlab.errors import RbmlabError
from rbmlab.report.load import read_text

VERDICTS = ("reproduced", "reproduced in shape", "not reproduced at this scale", "fails", "not testable here")
NO_VERDICT = ("—", "no verdict yet")
# a verdict that says something about the claim, for or against, needs this many seeds
MIN_SEEDS = 3
JUDGING = ("reproduced", "reproduced in shape", "fails")
COLUMNS = ("artefact", "the paper's words", "tier", "data, epochs", "seeds", "ours", "paper", "verdict")
TIERS = ("reduced", "paper", "test", "bench", "—")
EXACT = "exact"
NONE = "—"
PLACE = re.compile(
    r"\((?:[^()]|\([^()]*\))*(?:§|\b(?:Abstract|Sec\.|Fig\.|Figs\.|Table|Alg\.|Eq\.|Eqs\."
    r"|Prop\.|Thm\.|App\.|Appendix|Discussion|Conclusion|Introduction))(?:[^()]|\([^()]*\))*\)\s*$"
)
# a quote: "..." (straight, may hold “...”) or “...” (curly, may hold one level of “...”)
QUOTED = re.compile(r'"([^"]+)"|“((?:[^“”]|“[^“”]*”)+)”')
MIN_QUOTE_WORDS = 3


@dataclass(frozen=True)
class VerdictRow:
    """One row of a verdicts table (cells by :data:`COLUMNS`), with its line number."""

    line: int
    cells: dict[str, str]

    @property
    def artefact(self) -> str:
        return artefact_name(self.cells["artefact"])

    @property
    def verdict(self) -> str:
        return self.cells["verdict"].strip().strip("*").strip()

    @property
    def seeds(self) -> int | str:
        cell = self.cells["seeds"].strip()
        return int(cell) if re.fullmatch(r"[0-9]+", cell) else cell


def artefact_name(cell: str) -> str:
    """`table-1`, [table-1](...) or table-1 -> table-1."""
    return re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", cell).replace("`", "").strip()


# ---------------------------------------------------------------- reading the table
def verdict_tables(text: str) -> list[tuple[int, list[str], list[tuple[int, list[str]]]]]:
    """Every markdown table of ``text`` with a ``verdict`` column: (header line, lower-cased
    header cells, [(line, cells)])."""
    from rbmlab.experiment.catalog import is_table_rule, table_cells  # noqa: PLC0415

    lines, tables = text.splitlines(), []
    n = 0
    while n < len(lines):
        if lines[n].startswith("|") and n + 1 < len(lines) and is_table_rule(lines[n + 1]):
            header = [c.lower() for c in table_cells(lines[n])]
            body, m = [], n + 2
            while m < len(lines) and lines[m].startswith("|"):
                body.append((m + 1, table_cells(lines[m])))
                m += 1
            if "verdict" in header:
                tables.append((n + 1, header, body))
            n = m
        else:
            n += 1
    return tables


def verdict_rows(text: str) -> tuple[list[VerdictRow], list[str]]:
    """The rows of the README's verdicts table and the problems of its shape (no table, a column
    missing, a row of another width)."""
    tables = verdict_tables(text)
    if not tables:
        return [], ["no verdicts table (a table with the columns " + ", ".join(COLUMNS) + ")"]
    problems, rows = [], []
    for start, header, body in tables:
        missing = [c for c in COLUMNS if c not in header]
        if missing:
            problems.append(f"line {start}: the verdicts table lacks the column(s) {', '.join(missing)}")
            continue
        for line, cells in body:
            if len(cells) != len(header):
                problems.append(f"line {line}: {len(cells)} cells, the header has {len(header)}")
                continue
            rows.append(VerdictRow(line, {c: cells[header.index(c)] for c in COLUMNS}))
    return rows, problems


# ---------------------------------------------------------------- the quote against the paper
def normalised(text: str) -> str:
    """Text as quotes are compared with the paper: NFKC, line-end hyphenation joined, quote marks
    dropped, lower case, every run of characters other than letters and digits (of any script:
    θ stays θ) one space, with a space at both ends so that words match whole."""
    text = unicodedata.normalize("NFKC", text)
    text = re.sub(r"[‐‑‒–—―−]", "-", text)
    text = re.sub(r"[‘’´`“”\"']", "", text)
    text = re.sub(r"(\w)-[ \t]*\n\s*(\w)", r"\1\2", text)
    return " " + re.sub(r"[\W_]+", " ", text.lower()).strip() + " "


def quote_fragments(cell: str) -> list[str]:
    """The quoted words of a cell, split at ``...`` / ``…`` elisions."""
    quotes = [a or b for a, b in QUOTED.findall(cell)]
    return [f.strip() for q in quotes for f in re.split(r"\.\.\.|…", q) if f.strip()]


def found_in(fragments: list[str], text: str) -> str | None:
    """The first fragment that is not in ``text`` (normalised) as whole words, after the
    fragment before it; None when all are. A fragment's last word may be the start of a longer
    one: the papers' texts glue the source of a formula to it (``θ=0.5𝜃0.5\\theta=0.5``,
    ``20thsuperscript20th``)."""
    at = 0
    for fragment in fragments:
        words = normalised(fragment).rstrip()
        where = text.find(words, at) if words.strip() else -1
        if where < 0:
            return fragment
        at = where + len(words)
    return None


def quote_problem(cell: str, paper_texts: list[str] | None) -> str | None:
    """What is wrong with a "the paper's words" cell, or None. ``paper_texts``: the normalised
    texts the quote may come from (None: not available, the quote is not looked up)."""
    if cell.count('"') % 2 or cell.count("“") != cell.count("”"):
        return "its quote marks do not pair up"
    fragments = quote_fragments(cell)
    if not fragments:
        return 'no quote of the paper\'s words ("...")'
    if sum(len(normalised(f).split()) for f in fragments) < MIN_QUOTE_WORDS:
        return f"a quote of fewer than {MIN_QUOTE_WORDS} words says nothing checkable"
    if not PLACE.search(cell):
        return "the quote names no place in the paper, e.g. (Sec. 5.3) or (Fig. 7(a))"
    if paper_texts is not None:
        misses = [found_in(fragments, t) for t in paper_texts]
        if all(m is not None for m in misses):
            return f'not in the paper\'s text (as whole words, in this order): "{misses[0][:60]}"'
    return None


# ---------------------------------------------------------------- seeds against the runs
def seeds_in_runs(runs_csv: Path) -> int | None:
    """Independent completed runs that every method of a committed ``_runs.csv`` (or a table
    with a ``seed`` column) holds: per method (its ``variant``, else its ``run_dir``
    before the job number; a bare job number is the one method), the distinct seeds times the
    batched trials (``<run_dir>#<k>``); the fewest of
    any method, since a row compares them. None without a seed column. A failed run is no seed."""
    import pandas as pd  # noqa: PLC0415

    from rbmlab.report.aggregate import COMPLETED  # noqa: PLC0415
    from rbmlab.report.tidy import read_committed_csv  # noqa: PLC0415

    runs = read_committed_csv(runs_csv)
    if "seed" not in runs.columns:
        return None
    run_dir = runs["run_dir"].astype(str) if "run_dir" in runs.columns else None
    method = (
        runs["variant"].astype(str)
        if "variant" in runs.columns
        else run_dir.map(lambda d: d.rpartition("/")[0])
        if run_dir is not None
        else pd.Series("", index=runs.index)
    )
    trial = run_dir.str.extract(r"#(\d+)$")[0].fillna("0") if run_dir is not None else "0"
    keys = runs[["seed"]].assign(trial=trial, method=method)
    if "status" in runs.columns:  # every method counts, its failed runs as no seed
        keys = keys[runs["status"] == COMPLETED]
    per_method = keys.drop_duplicates().groupby("method").size().reindex(method.unique(), fill_value=0)
    return int(per_method.min()) if len(per_method) else 0


def replicates(path: Path) -> int | None:
    """Independent replicates a committed file holds: a runs CSV's seeds × trials
    (:func:`seeds_in_runs`), a table's distinct ``seed`` values, or an inference folder's
    independent chains (``metrics.json``: ``config.n_samples``); None when it says none."""
    import json  # noqa: PLC0415

    if path.is_dir():
        metrics = path / "metrics.json"
        if not metrics.is_file():
            return None
        n = (json.loads(metrics.read_text()).get("config") or {}).get("n_samples")
        return int(n) if isinstance(n, int) else None
    return seeds_in_runs(path)


def runs_files(folder: Path, artefact: str, tier: str) -> list[Path]:
    """The committed files a row's seeds are counted from: the artefact's own runs CSV, table
    or folder (``<artefact>_<tier>_runs.csv``, ``<artefact>_<tier>.csv``, ``<artefact>_<tier>/``),
    else the runs CSVs of the experiments it draws from (a figure of another experiment's runs)."""
    own = [
        p
        for p in (
            folder / f"{artefact}_{tier}_runs.csv",
            folder / f"{artefact}_{tier}.csv",
            folder / f"{artefact}_{tier}",
        )
        if p.exists()
    ]
    if own:
        return own[:1]
    from rbmlab.experiment.catalog import reads  # noqa: PLC0415
    from rbmlab.experiment.spec import available, load_spec  # noqa: PLC0415

    name = f"{folder.name}/{artefact}"
    if name not in available():
        return []
    return [
        p
        for source in reads(load_spec(name))
        if (p := folder.parent / source.split("/")[0] / f"{source.split('/')[1]}_{tier}_runs.csv").is_file()
    ]


def row_problems(row: VerdictRow, folder: Path, paper_texts: list[str] | None) -> list[str]:
    """What is wrong with one row of the verdicts table of ``folder``/README.md."""
    out = []
    for column in COLUMNS:
        if not row.cells[column].strip():
            out.append(f"empty {column!r} (— where nothing applies)")
    verdict, seeds, tier = row.verdict, row.seeds, row.cells["tier"].strip()
    if verdict not in VERDICTS + NO_VERDICT:
        out.append(f"verdict {verdict!r} is not one of {', '.join(VERDICTS + NO_VERDICT)}")
    if tier not in TIERS:
        out.append(f"tier {tier!r} is not one of {', '.join(TIERS)}")
    if (problem := quote_problem(row.cells["the paper's words"], paper_texts)) is not None:
        out.append(problem)
    if not (isinstance(seeds, int) and seeds >= 1) and seeds not in (EXACT, NONE):
        out.append(f"seeds {row.cells['seeds']!r}: a number of seeds, {EXACT!r} or {NONE!r}")
    elif seeds == NONE and verdict in VERDICTS and verdict != "not testable here":
        out.append(f"{verdict!r} with no seeds (—): nothing was run")
    elif isinstance(seeds, int) and verdict in JUDGING and seeds < MIN_SEEDS:
        out.append(
            f"{verdict!r} on {seeds} seed(s): a stochastic verdict needs ≥ {MIN_SEEDS} "
            f"(or 'no verdict yet' until they are run)"
        )
    if isinstance(seeds, int) and tier in ("reduced", "paper"):
        held = {f.name: replicates(f) for f in runs_files(folder, row.artefact, tier)}
        counted = {name: n for name, n in held.items() if n is not None}
        if not counted and verdict in JUDGING:
            out.append(
                f"{verdict!r} on {seeds} seeds, but no committed runs CSV of {row.artefact} at "
                f"{tier} tier counts them"
            )
        for name, n in counted.items():
            if seeds > n:
                out.append(f"{seeds} seeds, but {name} holds {n}")
    return out


# ---------------------------------------------------------------- the papers' texts
def paper_files(papers_dir: Path) -> dict[str, Path]:
    """{short name: text file} from the papers' index (``papers_dir``/README.md)."""
    index = papers_dir / "README.md"
    if not index.is_file():
        return {}
    pairs = re.findall(r"^\|\s*`([a-z0-9_]+)`\s*\|\s*`([^`]+\.txt)`", index.read_text(), flags=re.M)
    return {name: papers_dir / file for name, file in pairs if (papers_dir / file).is_file()}


def default_papers_dir() -> Path | None:
    """``<checkout>/../shared/papers`` if this is a checkout with the shared folder beside it."""
    from rbmlab.resources import checkout_root  # noqa: PLC0415

    root = checkout_root()
    papers = root.parent / "shared" / "papers" if root is not None else None
    return papers if papers is not None and papers.is_dir() else None


def readme_problems(readme: Path, papers_dir: Path | None = None) -> list[str]:
    """Every problem of ``readme``'s verdicts table, as ``<readme>:<line>: <problem>``. The quotes
    are looked up in the paper of the README's folder (a folder that is no paper, such as the
    leaderboard: in any paper); without the papers' texts they are not looked up."""
    files = paper_files(papers_dir) if papers_dir is not None else {}
    paper = readme.parent.name
    chosen = [files[paper]] if paper in files else list(files.values())
    texts = [normalised(f.read_text(errors="replace")) for f in chosen] if papers_dir is not None else None
    rows, problems = verdict_rows(read_text(readme, "report index"))
    name = f"{readme.parent.parent.name}/{paper}/{readme.name}"  # results/<paper>/README.md
    out = [f"{name}: {p}" for p in problems]
    for row in rows:
        out += [f"{name}:{row.line}: {row.artefact}: {p}" for p in row_problems(row, readme.parent, texts)]
    return out


def results_problems(results: Path, papers_dir: Path | None) -> list[str]:
    """The problems of every verdicts table under ``results``: each paper's README (which must
    have one) and every other README that keeps one (the leaderboard's)."""
    if papers_dir is None or not paper_files(papers_dir):
        why = (
            "not found beside this checkout"
            if papers_dir is None
            else "no paper texts in its README.md index"
        )
        return [f"../shared/papers: {why}: no quote can be looked up"]
    papers = set(paper_files(papers_dir))
    out = []
    for readme in sorted(results.glob("*/README.md")):
        if readme.parent.name in papers or verdict_tables(read_text(readme, "report index")):
            out += readme_problems(readme, papers_dir)
    return out


def main(argv: list[str]) -> int:
    """``python -m rbmlab.experiment.verdicts README.md ...``: the problems, exit 1 if any; exit 2
    when the papers' texts are not found (a quote that cannot be looked up is not passed)."""
    papers_dir = default_papers_dir()
    if papers_dir is None:
        print(
            "rbmlab: error: ../shared/papers: not beside this checkout, so no quote can be looked up",
            file=sys.stderr,
        )
        return 2
    try:
        problems = [p for arg in argv for p in readme_problems(Path(arg), papers_dir)]
    except RbmlabError as exc:  # a README that is missing or not UTF-8 text
        print(f"rbmlab: error: {exc}", file=sys.stderr)
        return 2
    print("\n".join(problems) if problems else f"{len(argv)} README(s): no problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
