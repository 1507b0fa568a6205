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
import glob
import os
import struct
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from rbmlab.errors import RbmlabError
from rbmlab.storage.faults import fault_point, injected_os_error

TMP_SUFFIX = ".tmp"

# What reading a corrupt, truncated or hand-crafted file can raise from zipfile, zlib or numpy's
# .npy reader (a checkpoint, a user's data file).
READ_ERRORS = (
    OSError,
    ValueError,
    EOFError,
    NotImplementedError,
    RecursionError,
    MemoryError,
    struct.error,
    zipfile.BadZipFile,
    zlib.error,
)


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
    """``<what>: cannot write <path> (<reason>)`` (``<path>: cannot write (<reason>)``) on one line."""
    reason = e.strerror or type(e).__name__
    return RbmlabError(
        f"{what}: cannot write {path} ({reason})" if what else f"{path}: cannot write ({reason})"
    )


def _file_mode(path: Path) -> int:
    """The mode the new file gets: the old file's, else what the umask allows (as open() does)."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def _target(path: str | Path) -> Path:
    """The file to replace: a symbolic link is written through, not replaced by a file."""
    path = Path(path)
    return path.resolve() if path.is_symlink() else path


@contextlib.contextmanager
def atomic_writer(path: str | Path, mode: str = "w", what: str | None = None) -> Iterator[IO]:
    """A file object whose content replaces ``path`` atomically when the block ends without error.

    ``mode`` is "w" (text, UTF-8) or "wb". An OSError (full disk, read-only, no permission)
    becomes a one-line RbmlabError naming ``what`` (default: the path); the target is untouched.
    """
    path = _target(path)
    temporaries: dict[Path, Path] = {}
    try:
        with _synced_temporary(path, mode, temporaries) as f:
            yield f
        fault_point("write", path.name)
        os.replace(temporaries.pop(path), path)
        fsync_directory(path.parent)
    except OSError as e:
        raise write_error(path, e, what) from None
    finally:
        _remove(temporaries.values())


@contextlib.contextmanager
def _synced_temporary(path: Path, mode: str, temporaries: dict[Path, Path]) -> Iterator[IO]:
    """An open temporary file beside ``path`` (recorded in ``temporaries[path]``), flushed and
    fsync'ed when the block ends."""
    temporaries[path] = _temporary(path, mode)
    with open(
        temporaries[path], mode, **({"encoding": "utf-8", "newline": ""} if "b" not in mode else {})
    ) as f:
        injected_os_error(path.name)
        yield f
        f.flush()
        os.fsync(f.fileno())


def _remove(temporaries) -> None:
    for tmp in list(temporaries):
        with contextlib.suppress(OSError):
            tmp.unlink()


def _temporary(path: Path, mode: str) -> Path:
    """A new, empty, uniquely named file beside ``path``, with the mode ``path`` will have."""
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=TMP_SUFFIX, dir=path.parent)
    os.close(fd)
    os.chmod(name, _file_mode(path))
    return Path(name)


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


def atomic_write_all(files: dict[Path, bytes], what: str | None = None) -> None:
    """Replace several files so that a failure leaves all of them as they were: every new content
    is written and synced to its temporary file first; only then are they renamed into place
    (renames within a directory do not run out of space)."""
    temporaries: dict[Path, Path] = {}
    path = next(iter(files))
    try:
        for path, data in files.items():
            path = _target(path)
            with _synced_temporary(path, "wb", temporaries) as f:
                f.write(data)
        for path in list(temporaries):  # a kill here leaves every target as it was
            fault_point("write", path.name)
        for path in list(temporaries):
            os.replace(temporaries.pop(path), path)
        for directory in {p.parent for p in files}:
            fsync_directory(Path(directory))
    except OSError as e:
        raise write_error(path, e, what) from None
    finally:
        _remove(temporaries.values())


def remove_stale_temporaries(directory: Path, name: str | None = None) -> None:
    """Delete the ``.<name>.<random>.tmp`` files that killed writers left in ``directory`` (of
    every name, or of ``name`` only).

    Call only while holding the lock of those files (rbmlab.storage.locking): another process's
    write in progress would otherwise lose its temporary file.
    """
    pattern = f".{glob.escape(name)}.*{TMP_SUFFIX}" if name is not None else f".*{TMP_SUFFIX}"
    for tmp in directory.glob(pattern):
        with contextlib.suppress(OSError):
            tmp.unlink()
