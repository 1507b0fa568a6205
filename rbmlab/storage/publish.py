"""Writing a set of output files (a report's table, plot and CSVs; a figure and its data): all
of them or none, by one writer at a time, and nothing left behind by a writer that was killed.

Reports and figures are written into shared folders (``results/<paper>/``) by whoever renders
them, with no run directory to own. A writer holds the lock of the folder itself (a flock on the
directory, rbmlab.storage.locking; no lock file among committed outputs): a second writer into
the folder waits for the first, and the holder, being the only writer, may delete the
temporaries of its files that an earlier, killed writer left (``.<name>.<random>.tmp``,
rbmlab.storage.fileio).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path

from rbmlab.storage.fileio import atomic_write_all, remove_stale_temporaries, write_error
from rbmlab.storage.locking import DirectoryLock

WAIT_SECONDS = 300.0  # another render of the same files takes seconds; a stuck one is named
_WRITTEN: ContextVar[list[Path] | None] = ContextVar("rbmlab_published", default=None)


@contextlib.contextmanager
def recording() -> Iterator[list[Path]]:
    """The paths :func:`publish` writes inside the block, in order (what ``rbmlab experiment``
    tells its user it wrote)."""
    written: list[Path] = []
    token = _WRITTEN.set(written)
    try:
        yield written
    finally:
        _WRITTEN.reset(token)


def publish(files: dict[Path, bytes | str], what: str = "report") -> dict[Path, bytes | str]:
    """Replace ``files`` together (see :func:`~rbmlab.storage.fileio.atomic_write_all`) under
    their lock, after removing the stale temporaries of those names. Text is written as UTF-8."""
    files = {Path(p): data for p, data in files.items()}
    folders = sorted({p.parent.resolve() for p in files})
    for folder in folders:  # made first: the lock is the folder's own inode
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise write_error(folder, e, what) from None
    with contextlib.ExitStack() as stack:
        for folder in folders:
            stack.enter_context(DirectoryLock.for_directory(folder, what, WAIT_SECONDS))
        for path in files:
            remove_stale_temporaries(path.parent, path.name)
        atomic_write_all({p: d.encode() if isinstance(d, str) else d for p, d in files.items()}, what)
    written = _WRITTEN.get()
    if written is not None:
        written.extend(p for p in files if p not in written)
    return files
