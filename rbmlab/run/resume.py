"""``resume=true``: the checkpoint a run continues from, checked against the run before training.

rbmlab.run.checkpoint.load_checkpoint has checked the file and the model's arrays against the
family's declaration; a file of the run's configuration (its hash) can still hold a model or a
learner state that does not fit the run — a file damaged or edited by hand — and training would
fail inside a matrix product several calls later. Here every such mismatch is one line naming
``resume`` and the file: the family, the sizes the run was set up with (those the learner
grows excepted), the number of trials, the epoch counters, and every learner state entry a fresh
start creates (its shape, or with the model's trial axis in front), and the optimizer's buffers
(velocities, Adam's moments) of the parameters' shapes.
"""

from __future__ import annotations

import numbers
from pathlib import Path

import numpy as np

from rbmlab.errors import RbmlabError


def _bad(path: Path, problem: str) -> RbmlabError:
    return RbmlabError(
        f"resume: {path}: {problem}; the checkpoint does not fit this run "
        "(rerun with overwrite=true to start again)"
    )


def _check_model(path: Path, model, run) -> None:
    if model.family != run.model_class.family:
        raise _bad(path, f"holds a {model.family} model, the run trains {run.model_class.family}")
    grows = set(run.learner.grows)
    have = model.model_sizes()
    differ = [k for k, v in run.sizes.items() if k not in grows and have.get(k) != v]
    if differ:
        raise _bad(
            path,
            "holds a model with "
            + ", ".join(f"{k}={have.get(k)}" for k in differ)
            + ", the run's has "
            + ", ".join(f"{k}={run.sizes[k]}" for k in differ),
        )
    trials = run.cfg.train.trials if run.cfg.train.trials > 1 else 0
    if model.n_trials != trials:
        held = f"{model.n_trials} trials" if model.n_trials else "a single model (no trial axis)"
        raise _bad(path, f"holds {held}, the run has train.trials={run.cfg.train.trials}")


def _check_meta(path: Path, meta: dict) -> None:
    for key in ("epoch", "updates"):
        value = meta.get(key)
        if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 0:
            raise _bad(path, f"its meta entry {key} is {value!r}, not a count")
    for key, wall in (("wall_time", meta.get("wall_time")), ("eval_time", meta.get("eval_time", 0.0))):
        if not isinstance(wall, numbers.Real) or isinstance(wall, bool) or not np.isfinite(wall):
            raise _bad(path, f"its meta entry {key} is {wall!r}, not a number of seconds")
    if not isinstance(meta.get("diverged_trials", {}), dict):
        raise _bad(path, "its meta entry diverged_trials is not a mapping of trial to epoch")


def _check_state(path: Path, model, state: dict, run) -> None:
    """Each entry of a fresh learner state must be in the file, numeric, of its shape (or with the
    model's trial axis in front: persistent chains of batched trials gain one)."""
    fresh = run.learner.init_state(model.map(run.backend.asarray), run.train, run.backend.rng(0))
    for key, value in fresh.items():
        if key not in state:
            raise _bad(path, f"learner state state.{key} is missing")
        saved, want = state[key], tuple(np.shape(value))
        if saved.dtype.kind not in "fiub":
            raise _bad(path, f"learner state state.{key} has dtype {saved.dtype}, not a number")
        allowed = {want} | ({(model.n_trials, *want)} if model.n_trials else set())
        if tuple(saved.shape) not in allowed:
            raise _bad(
                path,
                f"learner state state.{key} has shape {tuple(saved.shape)}, expected "
                + " or ".join(str(s) for s in sorted(allowed, key=len)),
            )
    optimizer = getattr(run.learner, "optimizer", None)
    buffers = optimizer.buffers(model) if optimizer is not None else {}
    for key, want in buffers.items():  # the optimizer's own entries, once it has stepped
        if key in state and tuple(np.shape(state[key])) != want:
            raise _bad(
                path,
                f"optimizer state state.{key} has shape {tuple(np.shape(state[key]))}, "
                f"expected {want} (the parameter's)",
            )


def check_resumed(run, path: Path, model, meta: dict, state: dict) -> None:
    """One-line ``RbmlabError`` if the checkpoint at ``path`` (already read: ``model`` as numpy
    arrays, ``meta``, learner ``state``) cannot continue ``run`` (rbmlab.run.runner.Setup)."""
    _check_model(path, model, run)
    _check_meta(path, meta)
    _check_state(path, model, state, run)
