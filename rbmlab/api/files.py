"""The estimator in the CLI's checkpoint format (rbmlab.run.checkpoint), both ways.

``save`` writes the model's arrays, the learner state and a ``meta`` with what a run's checkpoint
holds (epoch, updates, the configuration groups, rbmlab_version), so ``rbmlab evaluate
checkpoint=...`` scores it, plus the estimator's arguments and the training mean (AIS's base
rate). ``load`` reads those back, or rebuilds the arguments from the ``config`` of a run's
checkpoint (``rbmlab run``), or takes a hand-written W, b_v, b_h file with the defaults.
"""

from __future__ import annotations

import numbers
import typing
from typing import Any

from rbmlab.errors import RbmlabError
from rbmlab.validation import to_plain

FIXED = {"learner": ("name", "lr", "batch_size"), "model": ("name", "n_hidden", "init")}


def checkpoint_meta(
    params: dict[str, Any], seed: int, configs: dict[str, Any], epochs: int, updates: int, data_mean
) -> dict[str, Any]:
    """``meta`` of a saved estimator: a run checkpoint's keys, its arguments, the training mean."""
    from rbmlab import __version__  # noqa: PLC0415

    state = params["random_state"]
    plain = {
        **params,
        "random_state": state if isinstance(state, numbers.Integral) or state is None else seed,
    }
    config = {"seed": seed, **{group: to_plain(c) for group, c in configs.items()}}
    return {
        "epoch": epochs,
        "updates": updates,
        "config": config,
        "rbmlab_version": __version__,
        "estimator": to_plain(plain),
        "data_mean": [float(v) for v in data_mean],
    }


def arguments_of(meta: dict[str, Any], model, names) -> dict[str, Any]:
    """The estimator's arguments (those of ``names``) for a checkpoint's ``meta`` and model."""
    if isinstance(meta.get("estimator"), dict):
        return {k: v for k, v in meta["estimator"].items() if k in names}
    dtype = str(model.dtype) if str(model.dtype) in ("float32", "float64") else "float32"
    sizes, settings = model.model_sizes(), model.settings()
    found: dict[str, Any] = {"n_components": sizes.get("n_hidden"), "dtype": dtype}
    config = meta.get("config")
    if not isinstance(config, dict):  # a hand-written file: its settings are the model's options
        types = typing.get_type_hints(type(model).config_class)
        options = {
            key: int(settings[setting]) if types.get(key) is int else settings[setting]
            for key, setting in type(model).CONFIG_SETTINGS.items()
        }  # Potts q: saved as text
        return {k: v for k, v in {**found, "model_options": options}.items() if k in names}
    learner, model_cfg = config.get("learner", {}), config.get("model", {})
    found.update(
        {
            "learner": learner.get("name", "cd"),
            "learning_rate": learner.get("lr"),
            "batch_size": learner.get("batch_size"),
            "n_iter": config.get("train", {}).get("epochs", 0),
            "learner_options": {k: v for k, v in learner.items() if k not in FIXED["learner"]},
            "model_options": {k: v for k, v in model_cfg.items() if k not in FIXED["model"]},
            "backend": config.get("backend", {}).get("name", "numpy"),
            "random_state": config.get("seed", 0),
        }
    )
    return {k: v for k, v in found.items() if k in names}


def single(model, state: dict, trial, path, family: str):
    """(model, learner state) of a checkpoint's model of ``family``, or of its trial ``trial`` if
    batched. None for no state (a hand-written file; a batched run's, which is not split): a
    later partial_fit makes a fresh one."""
    from rbmlab.evaluate import _single  # noqa: PLC0415 - `rbmlab evaluate`'s choice of a trial

    if model.family != family:
        raise RbmlabError(
            f"checkpoint: {path} holds a model of family {model.family}; this "
            f"estimator reads {family} checkpoints"
        )
    return _single(model, trial, path), (state if state and not model.n_trials else None)
