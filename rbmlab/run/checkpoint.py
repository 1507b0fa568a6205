"""Checkpoint files: one ``.npz`` holding a model, metadata and learner state.

Format (documented in docs/guide/checkpoints.md):
    <params>   the family's parameter arrays (RBM: W, b_v, b_h; Ising: J, h), with a leading
               trial axis T for batched trials; their shapes as the family's DECLARATION
               relates them (rbmlab.models.declaration), checked on reading
    family     optional 0-d string naming the model family; without it the family is the one
               whose parameter names the file holds (so hand-written W/b_v/b_h files load)
    <settings> optional 0-d strings of the family's non-array settings (Ising: spins)
    meta       optional 0-d string: JSON (epoch, updates, config, config_hash, ...)
    state.*    optional learner state arrays (persistent chains, optimizer buffers, offsets)
"""

from __future__ import annotations

import json
import math
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from rbmlab.backend import memory_bytes
from rbmlab.errors import RbmlabError
from rbmlab.storage.fileio import READ_ERRORS, atomic_save

STATE_PREFIX = "state."


def save_checkpoint(
    path: str | Path, model, meta: dict[str, Any] | None = None, state: dict[str, np.ndarray] | None = None
) -> Path:
    """Write atomically (rbmlab.storage.fileio): a kill never leaves a torn checkpoint."""
    path = Path(path)
    arrays = {k: np.asarray(v) for k, v in model.arrays().items()}
    arrays["family"] = np.array(model.family)
    arrays.update({k: np.array(str(v)) for k, v in model.settings().items()})
    arrays.update({STATE_PREFIX + k: np.asarray(v) for k, v in (state or {}).items()})
    arrays["meta"] = np.array(json.dumps(meta or {}))
    return atomic_save(path, lambda f: np.savez(f, **arrays))


def _member(z: zipfile.ZipFile, name: str, path: Path) -> np.ndarray:
    """One ``<key>.npy`` member, its header checked before any allocation: an object (pickle)
    dtype is refused, and the header's shape must account for exactly the member's bytes (a lying
    header, say of a 40 GB array, or a short member never reaches an allocation)."""
    key = name.removesuffix(".npy")
    info = z.getinfo(name)
    with z.open(info) as f:
        version = np.lib.format.read_magic(f)
        read_header = (
            np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        )
        shape, _, dtype = read_header(f)
        if dtype.hasobject:
            raise RbmlabError(
                f"checkpoint: {path}: {key} is an object array (pickled Python "
                "objects); rbmlab reads numeric and string arrays only"
            )
        need, have = math.prod(shape) * dtype.itemsize, info.file_size - f.tell()
        memory = memory_bytes("numpy")
        if memory is not None and need > memory:  # a compressed member that really is that big
            raise RbmlabError(
                f"checkpoint: {path}: {key} of shape {shape} needs {need / 2**30:.3g} "
                f"GiB, more than this machine's {memory / 2**30:.3g} GiB"
            )
        if need != have:
            raise RbmlabError(
                f"checkpoint: {path}: {key} declares shape {shape} of {dtype} "
                f"({need} bytes) but holds {have} bytes (truncated or corrupt)"
            )
    with z.open(info) as f:  # read in full, so that zipfile checks the CRC-32
        return np.lib.format.read_array(f, allow_pickle=False)


def _read(path: Path) -> dict[str, np.ndarray]:
    try:
        if not path.is_file():
            what = (
                "is a directory, not a file"
                if path.is_dir()
                else "not a regular file"
                if path.exists()
                else "file not found"
            )
            raise RbmlabError(f"checkpoint: {what}: {path}")
        with open(path, "rb") as f:
            if f.read(6) == np.lib.format.MAGIC_PREFIX:
                raise RbmlabError(f"checkpoint: {path} is a single array (.npy), not an .npz")
        with zipfile.ZipFile(path) as z:
            names = z.namelist()
            other = next((n for n in names if not n.endswith(".npy")), None)
            if other is not None:
                raise RbmlabError(f"checkpoint: {path}: member {other!r} is not a .npy array")
            return {name.removesuffix(".npy"): _member(z, name, path) for name in names}
    except READ_ERRORS as e:
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e).partition("\n")[0]
        raise RbmlabError(
            f"checkpoint: cannot read {path} as .npz ({type(e).__name__}: {reason or 'corrupt'})"
        ) from None


def _family(data: dict[str, np.ndarray], path: Path):
    from rbmlab.models import MODELS  # noqa: PLC0415 - the registry imports the families

    if "family" in data:
        return MODELS.get(str(data["family"]), f"checkpoint: {path}: family")
    for _, cls in MODELS.items():
        if all(k in data for k in cls.PARAMS):
            return cls
    raise RbmlabError(
        f"checkpoint: {path} holds none of the model families' parameter sets "
        f"(arrays: {', '.join(sorted(data)) or 'none'}; an RBM needs W, b_v, b_h)"
    )


def load_checkpoint(path: str | Path):
    """(model as numpy arrays, meta dict, learner state); one-line errors for any bad file. The
    model's arrays and settings are checked against its family's declaration
    (rbmlab.models.declaration) before any of them is used."""
    path = Path(path)
    data = _read(path)
    cls = _family(data, path)
    meta: dict[str, Any] = {}
    if "meta" in data:
        try:
            meta = json.loads(str(data["meta"]))
            problem = "is not a JSON object"
        except json.JSONDecodeError as e:
            meta, problem = None, f"is not valid JSON ({e.msg})"
        except RecursionError:
            meta, problem = None, "is JSON nested too deeply"
        if not isinstance(meta, dict):
            raise RbmlabError(f"checkpoint: {path}: its 'meta' entry {problem}")
    state = {k[len(STATE_PREFIX) :]: v for k, v in data.items() if k.startswith(STATE_PREFIX)}
    # every other entry may be a setting: the family's declaration checks those it names
    names = cls.file_arrays(data)
    settings = {
        k: v
        for k, v in data.items()
        if k not in names and k not in ("meta", "family") and not k.startswith(STATE_PREFIX)
    }
    try:
        model = cls.from_arrays({k: data[k] for k in names}, settings)
    except RbmlabError as e:
        raise RbmlabError(f"checkpoint: {path}: {str(e).removeprefix('checkpoint: ')}") from None
    return model, meta, state
