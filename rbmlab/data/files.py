"""Finding data files on disk and checking their sha256.

Search roots, in order: each entry of ``RBMLAB_DATA`` (colon-separated), then
``<checkout>/../shared/datasets`` (a checkout's only; skipped when ``RBMLAB_NO_SHARED=1``), then the cache dir
(``RBMLAB_CACHE`` or ``~/.cache/rbmlab``). A file is looked up by its relative path under each root.

A match is remembered twice, in-process and as a sidecar in ``<cache>/verified/``, so a large file
is hashed once, not on every load. Both are keyed on the file's content identity: device, inode,
size, mtime_ns and ctime_ns. An in-place edit cannot keep that key even when it keeps the size and
sets the mtime back (``os.utime`` itself moves the ctime, which no user can set); a file changed
less than ``RACY_NS`` ago is not remembered, as a further write within the same timestamp tick
would keep its ctime. ``rehash`` (``rbmlab data verify``) ignores what was remembered.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from rbmlab.errors import RbmlabError
from rbmlab.resources import checkout_root
from rbmlab.storage.fileio import atomic_write

CHECKOUT = checkout_root()  # None in an installed wheel: no shared/ beside it
SHARED_ROOT = CHECKOUT.parent / "shared" / "datasets" if CHECKOUT is not None else None
SOURCES_NOTE = "shared/datasets/SOURCES.md"

RACY_NS = 2 * 10**9  # timestamps as coarse as 2 s (FAT): a younger file is hashed, not remembered

ContentKey = tuple[int, int, int, int, int, str]  # dev, inode, size, mtime_ns, ctime_ns, sha256
_verified: set[ContentKey] = set()


@dataclass(frozen=True)
class DataFile:
    """A file a dataset needs: where it sits under a root, its checksum, where to get it."""

    relpath: str
    sha256: str
    homepage: str
    note: str = ""  # e.g. "npz converted from the original; see shared/datasets/SOURCES.md"


def cache_dir() -> Path:
    """Writable cache: ``$RBMLAB_CACHE`` or ``~/.cache/rbmlab`` (not created here)."""
    env = os.environ.get("RBMLAB_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "rbmlab"


def shared_root() -> Path | None:
    """``<checkout>/../shared/datasets`` if it exists and ``RBMLAB_NO_SHARED`` is not set."""
    if os.environ.get("RBMLAB_NO_SHARED", "") not in ("", "0"):
        return None
    return SHARED_ROOT if SHARED_ROOT is not None and SHARED_ROOT.is_dir() else None


def search_roots() -> list[Path]:
    """The roots searched for data files, in order."""
    env = os.environ.get("RBMLAB_DATA", "")
    roots = [Path(p).expanduser() for p in env.split(":") if p]
    shared = shared_root()
    if shared is not None:
        roots.append(shared)
    roots.append(cache_dir())
    return roots


def describe_roots() -> str:
    """The searched roots in words, for error messages."""
    env = os.environ.get("RBMLAB_DATA", "")
    parts = [f"RBMLAB_DATA ({env or 'unset'})"]
    shared = shared_root()
    parts.append(str(shared) if shared is not None else "../shared/datasets (not available)")
    return f"{', '.join(parts)} or {cache_dir()}"


def find_file(f: DataFile) -> Path | None:
    """The first existing ``root/relpath``, or None."""
    for root in search_roots():
        path = root / f.relpath
        if path.is_file():
            return path
    return None


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def settled(ctime_ns: int) -> bool:
    """Whether what was read of a file whose status changed at ``ctime_ns`` may be remembered by
    its stat: not when that was less than ``RACY_NS`` ago (a further write within the same
    timestamp tick would keep the stat)."""
    return time.time_ns() - ctime_ns >= RACY_NS


def _content_key(st: os.stat_result, sha256: str) -> ContentKey:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, sha256)


def _sidecar(path: Path, sha256: str) -> Path:
    name = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:24]
    return cache_dir() / "verified" / f"{name}-{sha256[:16]}.sha256ok"


def _sidecar_text(key: ContentKey) -> str:
    return "\t".join(map(str, key)) + "\n"


def mark_verified(path: Path, sha256: str, before: os.stat_result | None = None) -> None:
    """Remember that ``path`` (as it is now) has checksum ``sha256``; the sidecar is best effort.

    ``before``: the file's stat taken before it was hashed. Nothing is remembered if the file
    changed since, or less than ``RACY_NS`` ago.
    """
    st = path.stat()
    key = _content_key(st, sha256)
    if before is not None and _content_key(before, sha256) != key:
        return
    if not settled(st.st_ctime_ns):
        return
    _verified.add(key)
    sidecar = _sidecar(path, sha256)
    try:
        sidecar.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(sidecar, _sidecar_text(key))
    except (OSError, RbmlabError):
        pass  # read-only cache: the in-process memo still holds


def forget(path: Path, sha256: str) -> None:
    """Drop what was remembered about ``path`` and ``sha256`` (in-process and sidecar)."""
    _verified.discard(_content_key(path.stat(), sha256))
    try:
        _sidecar(path, sha256).unlink(missing_ok=True)
    except OSError:
        pass


def is_verified(path: Path, sha256: str) -> bool:
    """True if ``path``, with its current content identity, was hashed before and matched ``sha256``."""
    key = _content_key(path.stat(), sha256)
    if key in _verified:
        return True
    try:
        ok = _sidecar(path, sha256).read_text() == _sidecar_text(key)
    except OSError:
        return False
    if ok:
        _verified.add(key)
    return ok


def rehash(path: Path, f: DataFile) -> str:
    """The sha256 of ``path`` hashed afresh; remembered if it matches ``f``, forgotten if not."""
    before = path.stat()
    actual = sha256_of(path)
    if actual == f.sha256:
        mark_verified(path, f.sha256, before)
    else:
        forget(path, f.sha256)
    return actual


def verify(path: Path, f: DataFile, dataset: str) -> None:
    """Check the sha256 of ``path`` against ``f`` (cached); one-line RbmlabError if it differs."""
    if is_verified(path, f.sha256):
        return
    actual = rehash(path, f)
    if actual != f.sha256:
        raise RbmlabError(
            f"dataset {dataset}: file {path} has sha256 {actual}, expected {f.sha256} "
            f"(corrupt or wrong version); replace it with {f.relpath} from {f.homepage}"
        )


def missing_message(f: DataFile, dataset: str) -> str:
    """One line: which file is missing, its sha256, where we looked, where to get it."""
    note = f" ({f.note})" if f.note else ""
    return (
        f"dataset {dataset}: file {f.relpath} (sha256 {f.sha256}) not found in {describe_roots()}; "
        f"get it from {f.homepage}{note} and put it under one of these roots as {f.relpath}"
    )


def require(f: DataFile, dataset: str) -> Path:
    """Find and verify ``f``; one-line RbmlabError if it is missing or corrupt."""
    path = find_file(f)
    if path is None:
        raise RbmlabError(missing_message(f, dataset))
    verify(path, f, dataset)
    return path


def provenance(files: dict[str, Path], specs: dict[str, DataFile]) -> list[dict[str, str]]:
    """``info['files']`` entries: path used, relative path and sha256 of each file."""
    return [
        {"role": role, "path": str(path), "relpath": specs[role].relpath, "sha256": specs[role].sha256}
        for role, path in files.items()
    ]
