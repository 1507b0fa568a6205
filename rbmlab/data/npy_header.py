"""What a .npy or .npz file declares, read from its headers alone (a few hundred bytes per array):
shape and dtype of each array, and whether the bytes it declares are there. A user's file is
judged by this before it is hashed or read, so a 100 GB file or a truncated one is refused in
milliseconds instead of after minutes of hashing.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from math import prod
from pathlib import Path
from typing import BinaryIO

import numpy as np
from numpy.lib import format as npy_format

_HEADER_READERS = {(1, 0): npy_format.read_array_header_1_0, (2, 0): npy_format.read_array_header_2_0}


class BadHeader(ValueError):
    """A file (or member) that is no .npy array numpy would read without pickling."""


@dataclass(frozen=True)
class Declared:
    """One array as its header declares it."""

    shape: tuple[int, ...]
    dtype: np.dtype
    truncated: bool  # fewer data bytes follow the header than shape x itemsize

    @property
    def elements(self) -> int:
        return prod(self.shape)


def _declared(fh: BinaryIO, data_bytes: int) -> Declared:
    """The header at ``fh``'s position, ``data_bytes`` being what the stream holds in all."""
    try:
        version = npy_format.read_magic(fh)
    except ValueError as e:
        raise BadHeader(f"no NPY header ({' '.join(str(e).split())})") from None
    reader = _HEADER_READERS.get(version)
    if reader is None:
        raise BadHeader(f"NPY format version {version[0]}.{version[1]}, which rbmlab does not read")
    try:
        shape, _fortran, dtype = reader(fh)
    except ValueError as e:
        raise BadHeader(f"an unreadable NPY header ({' '.join(str(e).split())})") from None
    if dtype.hasobject:
        raise BadHeader("pickled Python objects, not numbers")
    need = prod(shape) * dtype.itemsize
    return Declared(tuple(shape), dtype, truncated=data_bytes - fh.tell() < need)


def declared_arrays(path: Path) -> dict[str, Declared]:
    """{name: Declared} of a .npy (one array, named ``train``) or of each array of a .npz;
    :class:`BadHeader` or OSError when there is no such header to read."""
    if path.suffix.lower() == ".npy":
        with open(path, "rb") as fh:
            return {"train": _declared(fh, path.stat().st_size)}
    try:
        with zipfile.ZipFile(path) as z:
            out = {}
            for info in z.infolist():
                if not info.filename.endswith(".npy"):
                    raise BadHeader(f"a member {info.filename!r} that is no .npy array")
                with z.open(info) as fh:
                    try:
                        out[info.filename[: -len(".npy")]] = _declared(fh, info.file_size)
                    except BadHeader as e:
                        raise BadHeader(f"array {info.filename[:-4]}: {e}") from None
            return out
    except zipfile.BadZipFile as e:
        raise BadHeader(f"not a .npz (zip) archive ({e})") from None
