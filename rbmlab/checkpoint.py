"""Checkpoint files: one ``.npz`` holding a plain binary RBM, metadata and learner state.

Format (documented in README.md):
    W    float (n_visible, n_hidden)    or (T, n_visible, n_hidden) for T batched trials
    b_v  float (n_visible,)             or (T, n_visible)
    b_h  float (n_hidden,)              or (T, n_hidden)
    meta      optional 0-d string: JSON (epoch, updates, config, config_hash, ...)
    state.*   optional learner state arrays (persistent chains, momentum, offsets)
Energy E(v, h) = −vᵀWh − b_vᵀv − b_hᵀh with units in {0, 1}. A file written by hand with just
W, b_v and b_h is a valid checkpoint.
"""
from __future__ import annotations

import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from rbmlab.errors import RbmlabError
from rbmlab.models.rbm import RBM

STATE_PREFIX = "state."


def save_checkpoint(path: str | Path, rbm: RBM, meta: dict[str, Any] | None = None,
                    state: dict[str, np.ndarray] | None = None) -> Path:
    """Write atomically (temporary file, then rename): a kill never leaves a torn checkpoint."""
    path = Path(path)
    arrays = {"W": np.asarray(rbm.W), "b_v": np.asarray(rbm.b_v), "b_h": np.asarray(rbm.b_h)}
    arrays.update({STATE_PREFIX + k: np.asarray(v) for k, v in (state or {}).items()})
    arrays["meta"] = np.array(json.dumps(meta or {}))
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    return path


def load_checkpoint(path: str | Path) -> tuple[RBM, dict[str, Any], dict[str, np.ndarray]]:
    """(rbm as numpy arrays, meta dict, learner state); one-line errors for any bad file."""
    path = Path(path)
    if not path.is_file():
        raise RbmlabError(f"checkpoint: file not found: {path}")
    try:
        loaded = np.load(path, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as e:
        raise RbmlabError(f"checkpoint: cannot read {path} as .npz ({type(e).__name__})") from None
    if not isinstance(loaded, np.lib.npyio.NpzFile):
        raise RbmlabError(f"checkpoint: {path} is a single array (.npy), not an .npz with W, b_v, b_h")
    with loaded as z:
        data = {k: z[k] for k in z.files}
    missing = [k for k in ("W", "b_v", "b_h") if k not in data]
    if missing:
        raise RbmlabError(f"checkpoint: {path} lacks array(s) {', '.join(missing)} "
                          "(needs W (n_visible, n_hidden), b_v (n_visible,), b_h (n_hidden,))")
    W, b_v, b_h = data["W"], data["b_v"], data["b_h"]
    lead = W.shape[:-2]   # () for one model, (T,) for T batched trials (train.trials)
    if W.ndim not in (2, 3) or b_v.shape != lead + W.shape[-2:-1] or b_h.shape != lead + W.shape[-1:]:
        raise RbmlabError(f"checkpoint: {path} has inconsistent shapes W{W.shape}, b_v{b_v.shape}, "
                          f"b_h{b_h.shape}; expected W (m, n), b_v (m,), b_h (n,) "
                          "(or with a leading trial axis T)")
    if not all(np.issubdtype(a.dtype, np.floating) or np.issubdtype(a.dtype, np.integer)
               for a in (W, b_v, b_h)):
        raise RbmlabError(f"checkpoint: {path} arrays W, b_v, b_h must be numeric")
    meta: dict[str, Any] = {}
    if "meta" in data:
        try:
            meta = json.loads(str(data["meta"]))
        except json.JSONDecodeError:
            meta = None
        if not isinstance(meta, dict):
            raise RbmlabError(f"checkpoint: {path} has a 'meta' entry that is not a JSON object")
    state = {k[len(STATE_PREFIX):]: v for k, v in data.items() if k.startswith(STATE_PREFIX)}
    dtype = W.dtype if W.dtype.kind == "f" else np.float64
    return RBM(W.astype(dtype), b_v.astype(dtype), b_h.astype(dtype)), meta, state
