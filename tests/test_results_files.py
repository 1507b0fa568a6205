"""The committed files under results/ (issue 53, item 7): no path of the machine that made them,
and every runs CSV names the commit of the code that produced its runs.

- No text file under results/ holds an absolute path (rbmlab.storage.portable.ABSOLUTE_PATH:
  ``/work/...``, ``/tmp/...``, ``/home/...``, a drive letter, any path from ``/`` that is not a URL)
  but a system program at its standard place (``/usr/bin/time``: the same on every machine).
  Writers spell paths through rbmlab.storage.portable; READMEs are held to it too (no exceptions).
- Every ``*_runs.csv`` has a ``source`` column, filled for every run, never ``+dirty``. The files
  that do not yet are listed in ``KNOWN_SOURCELESS`` with their reason; the list can only shrink
  (a listed file that passes fails the test until it is removed from the list).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from rbmlab.storage.portable import ABSOLUTE_PATH, SYSTEM_PROGRAMS

RESULTS = Path(__file__).resolve().parent.parent / "results"
PRE_SOURCE = "produced before 6082600 recorded the commit; re-run pending"
# results/<...>_runs.csv -> why it has no source column, or a +dirty or empty source
KNOWN_SOURCELESS: dict[str, str] = {
    "dcp/figure-1_paper_runs.csv": PRE_SOURCE,
    "dcp/figure-2_paper_runs.csv": PRE_SOURCE,
}


def _text_files() -> list[Path]:
    """Every file under results/ that is text (UTF-8, no NUL): PNGs and .npz are not."""
    found = []
    for path in sorted(RESULTS.rglob("*")):
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if "\0" not in text:
            found.append(path)
    return found


# a looser net than the writers' own pattern (ABSOLUTE_PATH), so that what it misses is caught here:
# a machine's top folders wherever they start (after markup, a colon, a quote), a home folder, a drive
MACHINE_PATH = re.compile(
    r"(?:(?<![\w.])~/|/(?:work|tmp|root|home|opt|mnt|var|srv|Users|private)/|\b[A-Z]:\\)"
)


def test_no_committed_result_holds_a_path_of_the_machine_that_made_it():
    found = []
    for path in _text_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            found += [
                f"{path.relative_to(RESULTS.parent)}:{number}: {p}"
                for p in ABSOLUTE_PATH.findall(line)
                if not p.startswith(SYSTEM_PROGRAMS)
            ]
            found += [
                f"{path.relative_to(RESULTS.parent)}:{number}: "
                f"…{line[max(0, m.start() - 20) : m.end() + 30]}…"
                for m in MACHINE_PATH.finditer(line)
            ]
    assert not found, (
        f"{len(found)} absolute path(s) under results/ (write them through "
        "rbmlab.storage.portable):\n" + "\n".join(found[:30])
    )


def _source_problem(path: Path) -> str | None:
    runs = pd.read_csv(path, dtype=str, keep_default_na=False)
    if "source" not in runs.columns:
        return "no source column"
    if (runs["source"].str.strip() == "").any():
        return "a run with no source"
    dirty = sorted(s for s in set(runs["source"]) if "dirty" in s)
    return f"source {', '.join(dirty)}" if dirty else None


RUNS_CSVS = sorted(RESULTS.rglob("*_runs.csv"))


@pytest.mark.parametrize("path", RUNS_CSVS, ids=lambda p: p.relative_to(RESULTS).as_posix())
def test_every_runs_csv_names_the_commit_that_produced_its_runs(path):
    name = path.relative_to(RESULTS).as_posix()
    problem = _source_problem(path)
    if name in KNOWN_SOURCELESS:
        assert problem is not None, f"results/{name} has a clean source now: remove it from KNOWN_SOURCELESS"
        pytest.xfail(f"{problem}: {KNOWN_SOURCELESS[name]}")
    assert problem is None, f"results/{name}: {problem} (runs CSVs carry the commit of a clean checkout)"


def test_every_known_sourceless_file_exists():
    """A listed file that was removed or renamed leaves the list too."""
    gone = [name for name in KNOWN_SOURCELESS if not (RESULTS / name).is_file()]
    assert not gone, f"KNOWN_SOURCELESS lists files that are not under results/: {', '.join(gone)}"
