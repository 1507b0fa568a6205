"""Which source produced a run: the git commit of the rbmlab checkout, with ``+dirty`` when its
tracked files differ from that commit. Recorded in every summary.json and results/ runs table."""
from __future__ import annotations

import functools
import subprocess
from pathlib import Path


@functools.cache
def source_revision() -> str | None:
    """Short commit hash of the checkout holding this package (``+dirty`` if modified), or None
    outside a git checkout (an installed wheel) or without git."""
    repo = Path(__file__).resolve().parent.parent

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True,
                              check=True, timeout=10).stdout.strip()

    try:
        commit = git("rev-parse", "--short=7", "HEAD")
        dirty = git("status", "--porcelain", "--untracked-files=no", "--", "rbmlab", "conf",
                    "experiments")
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{commit}+dirty" if dirty else commit
