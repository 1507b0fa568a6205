"""``rbmlab evaluate``: score any saved model on a dataset split and return a JSON-able dict; with
no dataset, the metrics that need none (log Z by exact, AIS, TAP ...: ``Evaluator.without_data``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import DictConfig, OmegaConf

from rbmlab.backend import get_backend
from rbmlab.config import BackendConfig, check_seed, resolved
from rbmlab.data import dataset_dimension, load_dataset, resolve_dataset
from rbmlab.data.domain import check_saved_model, saved_visible_units
from rbmlab.data.encoding import encoded
from rbmlab.data.tasks import TASKS
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.applicable import applicable, check_applies
from rbmlab.evaluators.base import Context, truth_for
from rbmlab.evaluators.metrics import metric_spec, split_prefix
from rbmlab.run.checkpoint import load_checkpoint
from rbmlab.run.evaluation import evaluate
from rbmlab.storage.portable import portable_path
from rbmlab.units.requirements import check_unit_types, written_per_layer
from rbmlab.validation import parse_options, progress_bars


def resolved_config(cfg: DictConfig) -> DictConfig:
    """``cfg`` with every ``${...}`` resolved (``???`` kept); a bad interpolation names its key."""
    return OmegaConf.create(resolved(cfg))


def check_out(path: Path) -> Path:
    """The ``out=`` path, refused before any work if it cannot be a new or replaced file."""
    try:
        if path.is_dir():
            raise RbmlabError(f"out: {path} is a directory; name a .json file in it")
        if not path.parent.is_dir():  # missing, a file, or a loop of links
            raise RbmlabError(f"out: directory {path.parent} does not exist")
    except OSError as e:  # a name too long
        raise RbmlabError(f"out: cannot write {path} ({e.strerror or type(e).__name__})") from None
    return path


def _check_finite(model, path, trial) -> None:
    """A diverged model (any NaN or inf parameter) would score NaN on every metric: refused."""
    for name, array in model.arrays().items():
        if not np.isfinite(array).all():
            which = f" of trial {trial}" if trial is not None else ""
            raise RbmlabError(
                f"checkpoint: {path}: {name}{which} holds non-finite values (NaN or "
                "inf): a diverged model has no score"
            )


def _check_metrics(metrics: dict[str, float], path, dtype: str) -> None:
    """Finite parameters can still overflow: no result at all rather than one of nulls.
    (An AIS interval end may be infinite: log of a non-positive bound.)"""
    bad = [k for k, v in metrics.items() if not np.isfinite(v) and not k.endswith(("_lower", "_upper"))]
    if bad:
        raise RbmlabError(
            f"checkpoint: {path}: {', '.join(bad)} not finite in {dtype} arithmetic (parameters too large?)"
        )


def _backend_config(node: dict, saved_dtype: str) -> BackendConfig:
    """``backend.dtype: saved`` (conf/evaluate.yaml's default) is the checkpoint's own precision."""
    if node.get("dtype") == "saved":
        node = {**node, "dtype": saved_dtype if saved_dtype in ("float32", "float64") else "float32"}
    return parse_options(BackendConfig, node, "backend")


def _single(model, trial, path):
    if model.n_trials:
        if not isinstance(trial, int) or isinstance(trial, bool) or not 0 <= trial < model.n_trials:
            raise RbmlabError(
                f"trial: {path} holds {model.n_trials} trials; choose one "
                f"with trial=N, N in 0..{model.n_trials - 1} (got {trial!r})"
            )
        return model.trial(trial)
    if trial is not None:
        raise RbmlabError(f"trial: {path} holds a single model; drop trial={trial}")
    return model


def summary_name(column: str) -> str:
    """metrics.csv column → `rbmlab evaluate` JSON key (the split prefix dropped)."""
    spec = metric_spec(column)
    bare = split_prefix(column)[1] if spec is not None and spec.per_split else column
    return (spec.summary_name or bare) if spec is not None else column


def _named(path: Any) -> str:
    """A file as the JSON names it: relative to the working directory (the checkout) where it lies
    under it, otherwise its name (rbmlab.storage.portable), so a committed result means the same
    in another checkout."""
    return portable_path(str(path), [Path.cwd()])


def evaluate_checkpoint(cfg: DictConfig) -> dict[str, Any]:
    """Metrics of the checkpoint's model on one split; with no dataset, what needs none (log Z)."""
    evaluator_cfg = EVALUATORS.parse(OmegaConf.to_container(cfg.evaluator, resolve=True))
    check_seed(cfg.seed)
    if cfg.split not in (None, "train", "valid", "test"):
        raise RbmlabError(f"split: must be train, valid or test, got {cfg.split!r}")
    model_np, meta, _ = load_checkpoint(str(cfg.checkpoint))
    backend_cfg = _backend_config(OmegaConf.to_container(cfg.backend, resolve=True), str(model_np.dtype))
    model_np = _single(model_np, cfg.get("trial"), cfg.checkpoint)
    _check_finite(model_np, cfg.checkpoint, cfg.get("trial"))
    if cfg.get("dataset") is None:
        return _without_data(cfg, model_np, meta, evaluator_cfg, backend_cfg)
    cfg.split = cfg.split or "test"
    options = resolve_dataset(OmegaConf.to_container(cfg.dataset, resolve=True))
    # every check that needs no data (options, sizes, enumeration limits) before any is read or sampled
    dimension = dataset_dimension(options)
    differ = model_np.data_mismatch(dimension)
    if differ:
        raise RbmlabError(
            f"checkpoint: {cfg.checkpoint} is a {model_np.family} model with {differ} "
            f"but dataset {options['name']} has {dimension} dimensions"
        )
    evaluator_cfg.splits = [cfg.split]
    evaluator = _checked_evaluator(cfg, model_np, evaluator_cfg)
    truth_for(evaluator, options, build=False)
    data = load_dataset(**options)
    task = TASKS.build(
        TASKS.parse(OmegaConf.to_container(cfg.task, resolve=True) if "task" in cfg else "none")
    )
    x = data.split(cfg.split)
    check_saved_model(model_np, data.facts(), task, cfg.split, cfg.checkpoint)
    data = encoded(data, saved_visible_units(model_np))  # Potts codes → one-hot columns
    x = data.split(cfg.split)
    backend = get_backend(backend_cfg.name, backend_cfg.dtype)
    # the training set stays on the host: only reverse AIS reads it, for a few chain starts
    context = Context(
        rng=backend.rng(cfg.seed),
        final=True,
        progress=progress_bars(evaluator_cfg.progress),
        train=task.batch(data, "train"),
        data_mean=data.train.mean(axis=0),
        truth=truth_for(evaluator, options),
    )
    metrics = _metrics(
        cfg,
        model_np,
        {cfg.split: task.batch(data, cfg.split).map(backend.asarray)},
        evaluator,
        context,
        backend_cfg,
    )
    n = min(x.shape[0], evaluator_cfg.max_examples or x.shape[0])
    where = (
        {"dataset_path": _named(options["path"]), "dataset_sha256": options["sha256"]}
        if "sha256" in options
        else {}
    )
    result: dict[str, Any] = {
        "checkpoint": _named(cfg.checkpoint),
        "dataset": options["name"],
        **where,
        "split": cfg.split,
        "evaluator": evaluator_cfg.name,
        "n_examples": n,
        "model": model_np.family,
        **model_np.model_sizes(),
        "dtype": backend_cfg.dtype,
    }
    return _finish(result, cfg, meta, evaluator_cfg, metrics)


def _checked_evaluator(cfg: DictConfig, model_np, evaluator_cfg):
    """The evaluator, checked against the saved model's family, sizes and unit types."""
    evaluator = EVALUATORS.build(evaluator_cfg)
    check_applies(evaluator, type(model_np), model_np.model_sizes())
    check_unit_types(
        model_np.settings(),
        evaluator.units,
        f"evaluator={evaluator_cfg.name}",
        lambda setting: f"checkpoint: {cfg.checkpoint}",
    )
    together = written_per_layer(model_np.settings(), type(model_np), getattr(model_np, "depth", None))
    if problem := evaluator.settings_problem(together, type(model_np)):
        raise RbmlabError(f"checkpoint: {cfg.checkpoint}: {problem} (evaluator={evaluator_cfg.name})")
    return evaluator


def _without_data(cfg: DictConfig, model_np, meta, evaluator_cfg, backend_cfg) -> dict[str, Any]:
    """The model-level metrics (log Z) of an evaluator that needs no data (``without_data``); a
    one-line error naming those that apply for one that scores data."""
    sizes = model_np.model_sizes()
    if not EVALUATORS.get(evaluator_cfg.name).without_data:
        free = [n for n in applicable(type(model_np), sizes) if EVALUATORS.get(n).without_data]
        raise RbmlabError(
            f"dataset: missing; evaluator={evaluator_cfg.name} scores data (dataset=NAME, or "
            f"dataset=file dataset.path=FILE); with no dataset, log Z by "
            f"evaluator={' | '.join(free) or '(none applies to this model)'}"
        )
    if cfg.split is not None:
        raise RbmlabError(
            f"split: {cfg.split} of what? no dataset is named; log Z needs none "
            "(score a split with dataset=NAME)"
        )
    task = OmegaConf.to_container(cfg.task, resolve=True) if "task" in cfg else {"name": "none"}
    if TASKS.parse(task).name != "none":
        raise RbmlabError(f"task: {TASKS.parse(task).name} corrupts data; name a dataset (dataset=NAME)")
    if getattr(evaluator_cfg, "reverse", False):
        raise RbmlabError("evaluator.reverse: reverse AIS starts its chains from data; name a dataset")
    evaluator = _checked_evaluator(cfg, model_np, evaluator_cfg)
    backend = get_backend(backend_cfg.name, backend_cfg.dtype)
    context = Context(rng=backend.rng(cfg.seed), final=True, progress=progress_bars(evaluator_cfg.progress))
    metrics = _metrics(cfg, model_np, {}, evaluator, context, backend_cfg)
    result: dict[str, Any] = {
        "checkpoint": _named(cfg.checkpoint),
        "dataset": None,
        "note": f"no dataset: {evaluator.without_data}",
        "evaluator": evaluator_cfg.name,
        "model": model_np.family,
        **sizes,
        "dtype": backend_cfg.dtype,
    }
    return _finish(result, cfg, meta, evaluator_cfg, metrics)


def _metrics(
    cfg: DictConfig, model_np, splits: dict, evaluator, context: Context, backend_cfg
) -> dict[str, float]:
    """The evaluation of the saved model on the backend, with its failures in one line."""
    model = model_np.map(get_backend(backend_cfg.name, backend_cfg.dtype).asarray)
    try:
        with np.errstate(all="ignore"):  # overflow is reported below, in one line
            metrics = evaluate(model, splits, evaluator, context)
    except MemoryError as e:  # what the feasibility checks could not foresee
        raise RbmlabError(f"evaluator={evaluator.config.name}: out of memory ({e})") from None
    _check_metrics(metrics, cfg.checkpoint, backend_cfg.dtype)
    return metrics


def _finish(result: dict[str, Any], cfg: DictConfig, meta: dict, evaluator_cfg, metrics) -> dict[str, Any]:
    if cfg.get("trial") is not None:
        result["trial"] = cfg.trial
    result.update({summary_name(k): v for k, v in metrics.items()})
    if evaluator_cfg.name == "ais":
        result.update(ais_chains=evaluator_cfg.n_chains, ais_schedule=evaluator_cfg.schedule)
    if meta.get("epoch") is not None:
        result["trained_epochs"] = meta["epoch"]
    return result


def usage(overrides: list[str]) -> str:
    """``rbmlab evaluate --help``: the command, its keys and the groups it composes."""
    from rbmlab.help import components_section, groups_section, keys_section  # noqa: PLC0415
    from rbmlab.hydra_app import compose  # noqa: PLC0415

    cfg = OmegaConf.to_container(compose("evaluate", overrides), resolve=False)
    return "\n".join(
        [
            "usage: rbmlab evaluate checkpoint=PATH [GROUP=NAME ...] [KEY=VALUE ...]",
            "",
            "Score a saved model (a run's checkpoint.npz or any .npz in the checkpoint format) on a",
            "dataset split; the metrics are printed as JSON. Composed from conf/evaluate.yaml like",
            "`rbmlab run` (the same groups and KEY=VALUE overrides; `--help` after overrides shows",
            "the options of the components they choose).",
            "",
            "== Keys ==",
            *keys_section("evaluate"),
            "",
            "== Configuration groups: GROUP=NAME ==",
            *groups_section("evaluate"),
            "",
            "== Options of the chosen components: KEY=VALUE (the value now, its meaning) ==",
            *components_section(cfg, "evaluate"),
        ]
    )
