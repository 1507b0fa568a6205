"""Which source produced a run: the git commit of the rbmlab checkout, with ``+dirty`` when its
code (rbmlab/, conf/, experiments/) differs from that commit, or the package's version where there
is no checkout (an installed wheel). Recorded in every summary.json and in the runs tables of
results/."""
from __future__ import annotations

import functools
import subprocess
from pathlib import Path

from rbmlab import __version__
from rbmlab.resources import SHIPPED, checkout_root


@functools.cache
def source_revision() -> str:
    """Short commit hash of the checkout holding this package (``+dirty`` if its code has
    uncommitted changes or new files), or ``rbmlab <version>`` when the package is not the top of
    a git checkout (an installed wheel, even inside some other repository) or git is missing."""
    installed = f"rbmlab {__version__}"
    repo = checkout_root()
    if repo is None:
        return installed

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              check=True, timeout=10).stdout.strip()

    try:
        if Path(git("rev-parse", "--show-toplevel")).resolve() != repo:
            return installed
        commit = git("rev-parse", "--short=7", "HEAD")
        dirty = git("status", "--porcelain", "--", "rbmlab", *SHIPPED)
    except (OSError, subprocess.SubprocessError):
        return installed
    return f"{commit}+dirty" if dirty else commit


def merge_sources(previous: str | None, current: str | None) -> str | None:
    """The ``source`` of a resumed run: every commit that trained it, in order, comma-separated."""
    sources = [s for s in (previous or "").split(",") if s]
    if current and (not sources or sources[-1] != current):
        sources.append(current)
    return ",".join(sources) or None
