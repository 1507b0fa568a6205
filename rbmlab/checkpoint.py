"""Checkpoint files: one ``.npz`` holding a model, metadata and learner state.

Format (documented in README.md):
    <params>   the family's parameter arrays (RBM: W, b_v, b_h; Ising: J, h), with a leading
               trial axis T for batched trials
    family     optional 0-d string naming the model family; without it the family is the one
               whose parameter names the file holds (so hand-written W/b_v/b_h files load)
    <settings> optional 0-d strings of the family's non-array settings (Ising: spins)
    meta       optional 0-d string: JSON (epoch, updates, config, config_hash, ...)
    state.*    optional learner state arrays (persistent chains, optimizer buffers, offsets)
"""
from __future__ import annotations

import json
import os
import zipfile
import zlib
from pathlib import Path
from typing import Any

import numpy as np

from rbmlab.errors import RbmlabError

STATE_PREFIX = "state."


def save_checkpoint(path: str | Path, model, meta: dict[str, Any] | None = None,
                    state: dict[str, np.ndarray] | None = None) -> Path:
    """Write atomically (temporary file, then rename): a kill never leaves a torn checkpoint."""
    path = Path(path)
    arrays = {k: np.asarray(v) for k, v in model.arrays().items()}
    arrays["family"] = np.array(model.family)
    arrays.update({k: np.array(str(v)) for k, v in model.settings().items()})
    arrays.update({STATE_PREFIX + k: np.asarray(v) for k, v in (state or {}).items()})
    arrays["meta"] = np.array(json.dumps(meta or {}))
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def _read(path: Path) -> dict[str, np.ndarray]:
    if not path.is_file():
        what = "is a directory, not a file" if path.is_dir() else "file not found"
        raise RbmlabError(f"checkpoint: {what}: {path}")
    try:
        loaded = np.load(path, allow_pickle=False)
        if not isinstance(loaded, np.lib.npyio.NpzFile):
            raise RbmlabError(f"checkpoint: {path} is a single array (.npy), not an .npz")
        with loaded as z:
            return {k: z[k] for k in z.files}
    except (OSError, ValueError, zipfile.BadZipFile, EOFError, zlib.error, MemoryError) as e:
        raise RbmlabError(f"checkpoint: cannot read {path} as .npz ({type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else 'corrupt'})") from None


def _family(data: dict[str, np.ndarray], path: Path):
    from rbmlab.models import MODELS  # noqa: PLC0415 - the registry imports the families

    if "family" in data:
        return MODELS.get(str(data["family"]), f"checkpoint: {path}: family")
    for _, cls in MODELS.items():
        if all(k in data for k in cls.PARAMS):
            return cls
    raise RbmlabError(f"checkpoint: {path} holds none of the model families' parameter sets "
                      f"(arrays: {', '.join(sorted(data)) or 'none'}; an RBM needs W, b_v, b_h)")


def load_checkpoint(path: str | Path):
    """(model as numpy arrays, meta dict, learner state); one-line errors for any bad file."""
    path = Path(path)
    data = _read(path)
    cls = _family(data, path)
    arrays = {k: data[k] for k in cls.PARAMS}
    if not all(a.dtype.kind in "fiu" for a in arrays.values()):
        raise RbmlabError(f"checkpoint: {path} arrays {', '.join(cls.PARAMS)} must be numeric")
    meta: dict[str, Any] = {}
    if "meta" in data:
        try:
            meta = json.loads(str(data["meta"]))
        except (json.JSONDecodeError, RecursionError):
            meta = None
        if not isinstance(meta, dict):
            raise RbmlabError(f"checkpoint: {path} has a 'meta' entry that is not a JSON object")
    settings = {k: str(v) for k, v in data.items()
                if v.ndim == 0 and v.dtype.kind == "U" and k not in ("meta", "family")}
    state = {k[len(STATE_PREFIX):]: v for k, v in data.items() if k.startswith(STATE_PREFIX)}
    dtype = next(iter(arrays.values())).dtype
    dtype = dtype if dtype.kind == "f" else np.dtype(np.float64)
    try:
        model = cls.from_arrays({k: a.astype(dtype) for k, a in arrays.items()}, settings)
    except RbmlabError as e:
        raise RbmlabError(f"checkpoint: {path}: {str(e).removeprefix('checkpoint: ')}") from None
    return model, meta, state
