"""Atomic file writes: a file rbmlab writes is either its old content or its new content.

Every record a run or a report writes goes through :func:`atomic_write`: the bytes go to a
temporary file with a unique name in the same directory (``.<name>.<random>.tmp``), are flushed
and fsync'ed, the temporary file is renamed over the target (atomic on POSIX), and the directory
is fsync'ed so the rename itself survives a power cut. A kill at any point leaves the target
untouched (at worst a stray ``.*.tmp`` file, which :func:`remove_stale_temporaries` clears);
a full or read-only disk becomes one :class:`~rbmlab.errors.RbmlabError` line naming the file.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from rbmlab.errors import RbmlabError
from rbmlab.faults import fault_point, injected_os_error

TMP_SUFFIX = ".tmp"


def fsync_directory(directory: Path) -> None:
    """Make a rename in ``directory`` durable (a no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_error(path: Path, e: OSError, what: str | None = None) -> RbmlabError:
    """``<what or path>: cannot write <path> (<reason>)`` on one line."""
    reason = e.strerror or type(e).__name__
    return RbmlabError(f"{what or path}: cannot write {path} ({reason})")


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w", what: str | None = None) -> Iterator[IO]:
    """A file object whose content replaces ``path`` atomically when the block ends without error.

    ``mode`` is "w" (text, UTF-8) or "wb". An OSError (full disk, read-only, no permission)
    becomes a one-line RbmlabError naming ``what`` (default: the path); the target is untouched.
    """
    path = Path(path)
    tmp: Path | None = None
    try:
        fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
        tmp = Path(name)
        with os.fdopen(fd, mode, **({"encoding": "utf-8", "newline": ""} if "b" not in mode else {})) as f:
            injected_os_error(path.name)
            yield f
            f.flush()
            os.fsync(f.fileno())
        fault_point("write", path.name)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
        tmp = None
        fsync_directory(path.parent)
    except OSError as e:
        raise write_error(path, e, what) from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()


def atomic_write(path: str | Path, data: str | bytes, what: str | None = None) -> Path:
    """Replace ``path`` by ``data`` (str: UTF-8 text) atomically; see :func:`atomic_writer`."""
    with atomic_writer(path, "wb" if isinstance(data, bytes) else "w", what) as f:
        f.write(data)
    return Path(path)


def atomic_save(path: str | Path, save: Callable[[IO], None], what: str | None = None) -> Path:
    """``save(file_object)`` (np.savez, fig.savefig, DataFrame.to_csv ...) into ``path`` atomically."""
    with atomic_writer(path, "wb", what) as f:
        save(f)
    return Path(path)


def remove_stale_temporaries(directory: Path) -> None:
    """Delete the ``.<name>.<random>.tmp`` files that killed writers left in ``directory``.

    Call only while holding the directory's lock (rbmlab.locking): another process's write in
    progress would otherwise lose its temporary file.
    """
    for tmp in directory.glob(f".*{TMP_SUFFIX}"):
        with contextlib.suppress(OSError):
            tmp.unlink()
