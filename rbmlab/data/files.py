"""Finding data files on disk and checking their sha256.

Search roots, in order: each entry of ``RBMLAB_DATA`` (colon-separated), then
``<repo root>/../shared/datasets`` (skipped when ``RBMLAB_NO_SHARED=1``), then the cache dir
(``RBMLAB_CACHE`` or ``~/.cache/rbmlab``). A file is looked up by its relative path under each root.

Hashing a file is remembered twice: in-process, and as a sidecar in ``<cache>/verified/`` keyed by
the file's path, size and mtime, so a large file is hashed once, not on every load.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from rbmlab.errors import RbmlabError

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_ROOT = REPO_ROOT.parent / "shared" / "datasets"
SOURCES_NOTE = "shared/datasets/SOURCES.md"

_verified: set[tuple[str, int, int, str]] = set()


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
    """``<repo root>/../shared/datasets`` if it exists and ``RBMLAB_NO_SHARED`` is not set."""
    if os.environ.get("RBMLAB_NO_SHARED", "") not in ("", "0"):
        return None
    return SHARED_ROOT if SHARED_ROOT.is_dir() else None


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


def _stat_key(path: Path, sha256: str) -> tuple[str, int, int, str]:
    st = path.stat()
    return (str(path.resolve()), st.st_size, st.st_mtime_ns, sha256)


def _sidecar(key: tuple[str, int, int, str]) -> Path:
    name = hashlib.sha256(key[0].encode()).hexdigest()[:24]
    return cache_dir() / "verified" / f"{name}-{key[3][:16]}.sha256ok"


def _sidecar_text(key: tuple[str, int, int, str]) -> str:
    return f"{key[0]}\t{key[1]}\t{key[2]}\t{key[3]}\n"


def mark_verified(path: Path, sha256: str) -> None:
    """Record that ``path`` (as it is now) has checksum ``sha256``; sidecar is best effort."""
    key = _stat_key(path, sha256)
    _verified.add(key)
    sidecar = _sidecar(key)
    try:
        sidecar.parent.mkdir(parents=True, exist_ok=True)
        tmp = sidecar.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(_sidecar_text(key))
        os.replace(tmp, sidecar)
    except OSError:
        pass  # read-only cache: the in-process memo still holds


def is_verified(path: Path, sha256: str) -> bool:
    """True if ``path`` was hashed before with this size and mtime and matched ``sha256``."""
    key = _stat_key(path, sha256)
    if key in _verified:
        return True
    try:
        ok = _sidecar(key).read_text() == _sidecar_text(key)
    except OSError:
        return False
    if ok:
        _verified.add(key)
    return ok


def verify(path: Path, f: DataFile, dataset: str) -> None:
    """Check the sha256 of ``path`` against ``f`` (cached); one-line RbmlabError if it differs."""
    if is_verified(path, f.sha256):
        return
    actual = sha256_of(path)
    if actual != f.sha256:
        raise RbmlabError(
            f"dataset {dataset}: file {path} has sha256 {actual}, expected {f.sha256} "
            f"(corrupt or wrong version); replace it with {f.relpath} from {f.homepage}"
        )
    mark_verified(path, f.sha256)


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
