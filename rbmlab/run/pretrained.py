"""``model.init=<checkpoint>``: a saved model as the starting point of any learner.

The checkpoint's family must be the configured one, its settings the config's (unit types, spin
convention: a family's CONFIG_SETTINGS) and its data dimension the dataset's; its
sizes replace the config's (so ``model.n_hidden`` is ignored) and ``train.trials`` copies it to
every trial. Problems are one line naming ``model.init``, found before any work (the runner asks
for the sizes first). A checkpoint of a whole run (``checkpoint.npz``) or a model-only snapshot
(``snapshots/epoch_<e>.npz``) both load; only the model is taken, never the learner state.

``model.init=<sweep dir>?<key>=<value>&...`` names the one run under a sweep whose config.yaml
has those values, and starts from its checkpoint.npz: ``...?model.n_hidden=${model.n_hidden}&
seed=${seed}`` pairs each job of a sweep with the run of an earlier sweep at the same grid point.
The selector's ``file=<path>`` names another file of that run instead, e.g. ``<sweep>/fw?seed=${seed}&
file=snapshots/epoch_${model.n_hidden}.npz``: a growing model's snapshot, paired by the seed the run
recorded (not by its job number, which a narrowed sweep renumbers).

``model.init=truth`` starts from the model the dataset is sampled from (``dataset=ising_samples``:
its ground truth, built without sampling), e.g. to evaluate the true model with ``train.epochs=0``.
"""

from __future__ import annotations

import math
from pathlib import Path

import yaml

from rbmlab.config import flatten
from rbmlab.errors import RbmlabError
from rbmlab.models.base import PARAMETER_LIMIT
from rbmlab.run.checkpoint import load_checkpoint


def _same(value, wanted: str) -> bool:
    """A config value equals a selector's text (numbers compared as numbers)."""
    if str(value) == wanted:
        return True
    try:
        return math.isclose(float(value), float(wanted), rel_tol=1e-12)
    except (TypeError, ValueError):
        return False


SELECTED_FILE = "file"  # the selector's key naming a file of the selected run (default checkpoint.npz)


def select_run(spec: str) -> Path:
    """The checkpoint of ``<sweep dir>?key=value&...``: the one run under the directory whose
    config.yaml has every value."""
    where, _, query = spec.partition("?")
    pairs = [p.partition("=") for p in query.split("&") if p]
    if not pairs or any(not k or not eq for k, eq, _ in pairs):
        raise RbmlabError(f"model.init: {spec}: the selector after '?' must be key=value&key=value")
    files = [v for k, _, v in pairs if k == SELECTED_FILE]
    pairs = [p for p in pairs if p[0] != SELECTED_FILE]
    if len(files) > 1 or not pairs:
        raise RbmlabError(
            f"model.init: {spec}: the selector names one {SELECTED_FILE}= at most, and at "
            "least one key=value of the run's config"
        )
    root = Path(where)
    if not root.is_dir():
        raise RbmlabError(f"model.init: no sweep directory {root} (run the sweep it names first)")
    hits = []
    for config_file in sorted(root.rglob("config.yaml")):
        try:
            flat = flatten(yaml.safe_load(config_file.read_text()) or {})
        except (OSError, yaml.YAMLError, AttributeError):
            continue
        if all(k in flat and _same(flat[k], v) for k, _, v in pairs):
            hits.append(config_file.parent)
    wanted = ", ".join(f"{k}={v}" for k, _, v in pairs)
    if len(hits) != 1:
        found = "no run" if not hits else f"{len(hits)} runs ({', '.join(h.name for h in hits[:4])})"
        raise RbmlabError(f"model.init: {found} under {root} with {wanted}; the selector must name one run")
    chosen = hits[0] / (files[0] if files else "checkpoint.npz")
    if files and not chosen.is_file():
        raise RbmlabError(f"model.init: the run {hits[0]} with {wanted} has no {files[0]}")
    return chosen


def init_path(config) -> Path:
    """``config.init`` as a checkpoint file (a ``?`` selector resolved by :func:`select_run`)."""
    return select_run(config.init) if "?" in str(config.init) else Path(config.init)


TRUTH = "truth"  # model.init=truth: the dataset's ground-truth model


def _truth(model_class: type, dataset) -> object:
    """The ground truth of the run's dataset (config mapping with its name), checked as a checkpoint's
    arrays would be."""
    from rbmlab.data import ground_truth  # noqa: PLC0415

    if not dataset:
        raise RbmlabError("model.init: truth needs the run's dataset (its ground-truth model)")
    truth = ground_truth(**dataset)
    if truth.family != model_class.family:
        raise RbmlabError(
            f"model.init: truth: dataset {dataset['name']} is sampled from a {truth.family} "
            f"model; the run's model is {model_class.family} (model={truth.family})"
        )
    try:
        return model_class.from_arrays(truth.arrays(), truth.settings())
    except RbmlabError as e:
        raise RbmlabError(f"model.init: truth: {str(e).removeprefix('checkpoint: ')}") from None


def _check_settings(config, model, source: str) -> None:
    """The settings the config fixes (the family's CONFIG_SETTINGS: unit types, spin convention)
    must be the starting model's: a one-line error naming the key, never a silent choice."""
    settings = model.settings()
    for key, setting in type(model).CONFIG_SETTINGS.items():
        have, want = str(settings[setting]), str(getattr(config, key))
        if have != want:
            raise RbmlabError(
                f"model.{key}: {want}, but model.init={source} is a model with "
                f"{setting}={have}; set model.{key}={have}"
            )


def load_initial(config, model_class: type, n_visible: int, dataset=None):
    """The model of ``config.init`` (numpy arrays, saved dtype), checked against the run;
    ``dataset``: the run's dataset config (for ``truth``)."""
    if config.init == TRUTH:
        model = _truth(model_class, dataset)
        _check_settings(config, model, TRUTH)
        return model
    path = init_path(config)
    try:
        model, _, _ = load_checkpoint(path)
    except RbmlabError as e:
        raise RbmlabError(f"model.init: {str(e).removeprefix('checkpoint: ')}") from None
    if model.family != model_class.family:
        raise RbmlabError(
            f"model.init: {path} holds a {model.family} model; the run's model is "
            f"{model_class.family} (model={model.family} to continue it)"
        )
    _check_settings(config, model, str(config.init))
    if model.n_trials:
        raise RbmlabError(
            f"model.init: {path} holds {model.n_trials} batched trials; save one "
            "trial (e.g. the best) as its own checkpoint to start from it"
        )
    if not model.is_finite():
        name = next(k for k, a in model.arrays().items() if not (abs(a) <= PARAMETER_LIMIT).all())
        raise RbmlabError(
            f"model.init: {path}: {name} holds non-finite values or values beyond "
            f"±{PARAMETER_LIMIT:g} (a diverged model); start from a finite one"
        )
    if model.data_dimension != n_visible:
        raise RbmlabError(
            f"model.init: {path} models {model.data_dimension}-dimensional data; the "
            f"dataset has {n_visible} dimensions"
        )
    differ = model.data_mismatch(n_visible)
    if differ:  # another size that is the data's (a CRBM's inputs)
        raise RbmlabError(
            f"model.init: {path} is a model with {differ}; the dataset has {n_visible} dimensions"
        )
    return model


def initial_sizes(config, model_class: type, n_visible: int, dataset=None) -> dict[str, int]:
    """The sizes a run of ``config`` starts with: the checkpoint's when ``init`` is set."""
    if config.init:
        return load_initial(config, model_class, n_visible, dataset).model_sizes()
    return model_class.sizes(config, n_visible)


def start_model(config, model_class: type, n_visible: int, *, xp, dtype, trials: int = 0, dataset=None):
    """The checkpoint's model on the backend in ``dtype``, copied ``trials`` times if > 0."""
    model = load_initial(config, model_class, n_visible, dataset).astype(dtype)
    if trials:
        model = model.map(lambda a: a[None].repeat(trials, axis=0))
    return model.map(xp.asarray)
