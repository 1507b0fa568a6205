"""Which source produced a run: the git commit of the rbmlab checkout, with ``+dirty`` when its
code (rbmlab/, conf/, experiments/) differs from that commit. Recorded in every summary.json and
in the runs tables of results/."""
from __future__ import annotations

import functools
import subprocess
from pathlib import Path


@functools.cache
def source_revision() -> str | None:
    """Short commit hash of the checkout holding this package (``+dirty`` if its code has
    uncommitted changes or new files), or None when the package is not the top of a git checkout
    (an installed wheel, even inside some other repository) or git is missing."""
    repo = Path(__file__).resolve().parents[2]   # rbmlab/storage/provenance.py -> the checkout

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              check=True, timeout=10).stdout.strip()

    try:
        if Path(git("rev-parse", "--show-toplevel")).resolve() != repo:
            return None
        commit = git("rev-parse", "--short=7", "HEAD")
        dirty = git("status", "--porcelain", "--", "rbmlab", "conf", "experiments")
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{commit}+dirty" if dirty else commit


def merge_sources(previous: str | None, current: str | None) -> str | None:
    """The ``source`` of a resumed run: every commit that trained it, in order, comma-separated."""
    sources = [s for s in (previous or "").split(",") if s]
    if current and (not sources or sources[-1] != current):
        sources.append(current)
    return ",".join(sources) or None
