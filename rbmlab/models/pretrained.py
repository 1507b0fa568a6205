"""``model.init=<checkpoint>``: a saved model as the starting point of any learner.

The checkpoint's family must be the configured one and its data dimension the dataset's; its
sizes replace the config's (so ``model.n_hidden`` is ignored) and ``train.trials`` copies it to
every trial. Problems are one line naming ``model.init``, found before any work (the runner asks
for the sizes first). A checkpoint of a whole run (``checkpoint.npz``) or a model-only snapshot
(``snapshots/epoch_<e>.npz``) both load; only the model is taken, never the learner state.
"""
from __future__ import annotations

from pathlib import Path

from rbmlab.checkpoint import load_checkpoint
from rbmlab.errors import RbmlabError


def load_initial(config, model_class: type, n_visible: int):
    """The model of ``config.init`` (numpy arrays, saved dtype), checked against the run."""
    path = Path(config.init)
    try:
        model, _, _ = load_checkpoint(path)
    except RbmlabError as e:
        raise RbmlabError(f"model.init: {str(e).removeprefix('checkpoint: ')}") from None
    if type(model) is not model_class:
        raise RbmlabError(f"model.init: {path} holds a {model.family} model; the run's model is "
                          f"{model_class.family} (model={model.family} to continue it)")
    if model.n_trials:
        raise RbmlabError(f"model.init: {path} holds {model.n_trials} batched trials; save one "
                          "trial (e.g. the best) as its own checkpoint to start from it")
    dimension = next(iter(model.model_sizes().values()))
    if dimension != n_visible:
        raise RbmlabError(f"model.init: {path} models {dimension}-dimensional data; the dataset "
                          f"has {n_visible} dimensions")
    return model


def initial_sizes(config, model_class: type, n_visible: int) -> dict[str, int]:
    """The sizes a run of ``config`` starts with: the checkpoint's when ``init`` is set."""
    if config.init:
        return load_initial(config, model_class, n_visible).model_sizes()
    return model_class.sizes(config, n_visible)


def start_model(config, model_class: type, n_visible: int, *, xp, dtype, trials: int = 0):
    """The checkpoint's model on the backend in ``dtype``, copied ``trials`` times if > 0."""
    model = load_initial(config, model_class, n_visible).astype(dtype)
    if trials:
        model = model.map(lambda a: a[None].repeat(trials, axis=0))
    return model.map(xp.asarray)
