"""Typed run configuration, validated at the edge.

Hydra composes a plain DictConfig from ``conf/``; :func:`parse_run_config` turns it into the
dataclasses below, each group through its registry (the model family, learner, evaluator and
their nested optimizer and sampler choose their own config classes), and every problem becomes
one :class:`RbmlabError` line naming the bad key (rbmlab.validation).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from rbmlab.errors import RbmlabError
from rbmlab.limits import EPOCHS, TRIALS
from rbmlab.validation import (
    PROGRESS,
    Config,
    invalid,
    is_default,
    option,
    parse_options,
    to_plain,
    without_neutral,
)


def flatten(node: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """A saved config (nested mapping) as {'a.b.c': leaf}; lists become JSON strings so values
    stay hashable."""
    flat: dict[str, Any] = {}
    for key, value in node.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(flatten(value, name + "."))
        elif isinstance(value, (list, tuple)):
            flat[name] = json.dumps(list(value), default=str)
        else:
            flat[name] = value
    return flat


SCALES = ("custom", "smoke", "reduced", "paper")
STOP_RULES = ("none", "gap", "valid")  # rbmlab.run.early_stopping.StopRule
BUDGET_UNITS = ("none", "seconds", "gmac")  # rbmlab.run.budget


@dataclass
class TrainConfig(Config):
    epochs: int = option(40, "passes over the training set", lo=0, hi=EPOCHS, label="epochs")
    eval_every: int = option(
        10,
        "epochs between rows of metrics.csv (and epoch 0); 0: last only",
        lo=0,
        hi=EPOCHS,
        label="epochs between evaluations",
    )
    checkpoint_every: int = option(
        1,
        "epochs between checkpoints (the last is always saved)",
        lo=1,
        hi=EPOCHS,
        label="epochs between checkpoints",
    )
    snapshot_every: int = option(
        0,
        "epochs between model-only snapshots/epoch_<e>.npz, kept "
        "(0: none); e.g. every 20 units of a frank_wolfe run",
        lo=0,
        hi=EPOCHS,
        label="epochs between snapshots",
    )
    progress: bool | str = option(
        "auto", "tqdm progress bars: auto (where stderr is a terminal), true, false", choices=PROGRESS
    )
    trials: int = option(1, "independent models trained as one batched computation", lo=1, hi=TRIALS)
    gap_kappa: float = option(
        3.0,
        "early stopping: a jump of the train − valid gap above kappa × "
        "the median earlier jump (rbmlab.run.early_stopping)",
        lo=0,
        open_lo=True,
    )
    gap_warmup: int = option(
        3, "early stopping: evaluation intervals before a jump may count", lo=1, hi=EPOCHS
    )
    stop_rule: str = option(
        "none",
        "early stopping during training: none (run train.epochs), gap "
        "(the train − valid gap rule at each evaluation point), valid "
        "(train.stop_metric not improved for train.patience points)",
        choices=STOP_RULES,
        neutral="none",
        label="stopping rule",
    )
    stop_metric: str | None = option(
        None,
        "stop_rule=valid: the metrics.csv column it watches, e.g. valid_pixel_error or valid_log_likelihood",
        neutral=None,
        label="early-stopping metric",
    )
    patience: int = option(
        5,
        "stop_rule=valid: evaluation points without improvement before training stops",
        lo=1,
        hi=EPOCHS,
        neutral=5,
        label="patience (evaluations)",
    )
    budget_unit: str = option(
        "none",
        "what train.budgets count: none, seconds (training wall clock, "
        "evaluations excluded) or gmac (10^9 multiply-adds of the learner's "
        "matrix products: the same on every machine)",
        choices=BUDGET_UNITS,
        neutral="none",
        label="compute unit",
    )
    budgets: list[float] = option(
        [],
        "compute points in train.budget_unit, ascending: the model is "
        "scored (final-evaluation settings) at each, and training ends at "
        "the last (train.epochs caps it)",
        neutral=[],
        label="compute budget",
    )

    def check(self) -> None:
        self.check_budgets()
        if self.stop_rule != "valid":  # the options only stop_rule=valid reads
            for key, value, default in (
                ("stop_metric", self.stop_metric, None),
                ("patience", self.patience, 5),
            ):
                if value != default:
                    raise invalid(
                        key, f"is read by train.stop_rule=valid only; stop_rule is {self.stop_rule}"
                    )
        if self.stop_rule == "none":
            return
        if self.trials > 1:
            raise invalid(
                "stop_rule",
                f"{self.stop_rule} stops one model; with train.trials="
                f"{self.trials} use seeds (-m seed=0,1,2) instead",
            )
        if self.eval_every == 0:
            raise invalid(
                "stop_rule", f"{self.stop_rule} judges evaluation points; needs train.eval_every >= 1"
            )
        if self.stop_rule == "valid" and (self.stop_metric or "").endswith("_unnormalised"):
            raise invalid(
                "stop_metric",
                f"{self.stop_metric} omits log Z, which changes from epoch "
                "to epoch: it cannot rank models (stop_rule=gap reads its difference)",
            )
        if self.stop_rule == "valid" and not (self.stop_metric or "").startswith("valid_"):
            raise invalid(
                "stop_metric",
                "stop_rule=valid needs a metric of the valid split, e.g. "
                f"train.stop_metric=valid_log_likelihood; got {self.stop_metric!r}",
            )

    def check_budgets(self) -> None:
        """train.budgets with their unit: positive, ascending, one model, no early stopping."""
        if self.budget_unit == "none":
            if self.budgets:
                raise invalid("budgets", "needs train.budget_unit=seconds or gmac")
            return
        points = self.budgets
        if not points:
            raise invalid(
                "budgets",
                f"train.budget_unit={self.budget_unit} needs at least one "
                "compute point, e.g. train.budgets=[10,40]",
            )
        if not all(isinstance(b, (int, float)) and not isinstance(b, bool) and b > 0 for b in points):
            raise invalid("budgets", f"must be positive numbers, got {points!r}")
        if any(b <= a for a, b in zip(points, points[1:])):
            raise invalid("budgets", f"must be strictly ascending, got {points!r}")
        if self.stop_rule != "none":
            raise invalid(
                "stop_rule",
                f"{self.stop_rule} judges epochs; a run with train.budgets "
                "ends at its last compute point (leave stop_rule=none)",
            )
        if self.trials > 1:
            raise invalid(
                "budgets",
                f"count the compute of one model; with train.trials={self.trials} "
                "use seeds (-m seed=0,1,2) instead",
            )


@dataclass
class BackendConfig(Config):
    name: str = option("numpy", "array library", choices=("numpy", "cupy"))
    dtype: str = option("float32", "float type of parameters and data", choices=("float32", "float64"))

    def check(self) -> None:
        from rbmlab.backend import get_backend  # noqa: PLC0415 - imports cupy lazily

        try:
            get_backend(self.name, self.dtype)  # no GPU for cupy: one line
        except RbmlabError as e:
            raise invalid("name", str(e).split(": ", 1)[-1]) from None


@dataclass
class RunConfig:
    seed: int
    scale: str
    resume: bool
    overwrite: bool
    lock_wait: float
    train: TrainConfig
    model: Any
    backend: BackendConfig
    learner: Any
    evaluator: Any
    dataset: dict[str, Any]  # validated by rbmlab.data (options differ per dataset)
    tags: list[str] = field(default_factory=list)
    task: Any = None  # rbmlab.data.tasks: none (the splits as they are), flip, occlude

    def hash(self) -> str:
        """Identity of the run's settings (all but how the run is started and progress bars). An
        option at its declared identity-neutral value is left out: runs from before it keep theirs."""
        from rbmlab.data.registry import dataset_identity  # noqa: PLC0415

        d = to_plain(self)
        for key in ("resume", "overwrite", "lock_wait"):
            d.pop(key, None)
        if d.get("task") in (None, {"name": "none"}):  # runs from before tasks keep their identity
            d.pop("task", None)
        d["train"].pop("progress", None)
        d["evaluator"].pop("progress", None)
        d = without_neutral(d, self)
        d["dataset"] = dataset_identity(d["dataset"])
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]


def check_seed(seed: Any) -> int:
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise RbmlabError(f"seed: must be a non-negative integer, got {seed!r}")
    return seed


def _tags(tags: Any) -> list[str]:
    if not isinstance(tags, list):
        raise RbmlabError(f"tags: must be a list, e.g. tags=[a,b], got {tags!r}")
    return [str(t) for t in tags]


def _flag(node: dict, key: str) -> bool:
    value = node.get(key, False)
    if not isinstance(value, bool):
        raise RbmlabError(f"{key}: must be true or false, got {value!r}")
    return value


ALLOWED = {
    "seed",
    "scale",
    "resume",
    "overwrite",
    "lock_wait",
    "train",
    "model",
    "backend",
    "learner",
    "evaluator",
    "dataset",
    "task",
    "tags",
    "hydra",
}


def resolved(cfg: DictConfig) -> dict:
    """``cfg`` as plain containers with every ``${...}`` resolved; a bad one names its key."""
    try:
        return OmegaConf.to_container(cfg, resolve=True)
    except OmegaConfBaseException as e:
        raise RbmlabError(f"{e.full_key or 'config'}: {str(e).splitlines()[0]}") from None


def parse_run_config(cfg: DictConfig | dict) -> RunConfig:
    """Hydra's composed config → :class:`RunConfig`, or a one-line :class:`RbmlabError`."""
    from rbmlab.data import resolve_dataset  # noqa: PLC0415
    from rbmlab.data.tasks import TASKS  # noqa: PLC0415
    from rbmlab.evaluators import EVALUATORS  # noqa: PLC0415
    from rbmlab.learners import LEARNERS  # noqa: PLC0415
    from rbmlab.models import MODELS  # noqa: PLC0415

    node = resolved(cfg) if isinstance(cfg, DictConfig) else dict(cfg)
    node.pop("hydra", None)
    for key in node:
        if key not in ALLOWED:
            raise RbmlabError(f"{key}: unknown config key (known: {', '.join(sorted(ALLOWED - {'hydra'}))})")
    for key in ("learner", "dataset", "evaluator"):
        if not isinstance(node.get(key), dict) or "name" not in node[key]:
            raise RbmlabError(f"{key}: missing config group (e.g. {key}=<name>)")
    scale = node.get("scale", "custom")
    scale = scale.get("name") if isinstance(scale, dict) else scale
    if scale not in SCALES:
        raise RbmlabError(f"scale: unknown scale {scale!r}; choose one of {', '.join(SCALES)}")
    resume, overwrite = _flag(node, "resume"), _flag(node, "overwrite")
    if resume and overwrite:
        raise RbmlabError("overwrite: resume=true continues a run, overwrite=true replaces it; choose one")
    lock_wait = node.get("lock_wait", 0)
    if isinstance(lock_wait, bool) or not isinstance(lock_wait, (int, float)) or not 0 <= lock_wait < 1e7:
        raise RbmlabError(f"lock_wait: must be a number of seconds >= 0, got {lock_wait!r}")
    node["dataset"] = resolve_dataset(node["dataset"])  # a user's file: its absolute path, sha256
    parsed = {  # cheapest first: the backend's check imports its array library (cupy: seconds)
        "seed": check_seed(node.get("seed", 0)),
        "train": parse_options(TrainConfig, node.get("train", {}), "train"),
        "model": MODELS.parse(node.get("model", {"name": "rbm"})),
        "learner": LEARNERS.parse(node["learner"]),
        "evaluator": EVALUATORS.parse(node["evaluator"]),
        "tags": _tags(node.get("tags", [])),
        "task": TASKS.parse(node.get("task", {"name": "none"})),
    }
    for key, why in parsed["learner"].model_unread(parsed["model"]).items():  # refused, not ignored
        if not is_default(parsed["model"], key):
            raise RbmlabError(f"model.{key}: {why}; remove it")
    for key, why in parsed["learner"].unread_given(parsed["model"]).items():
        if not is_default(parsed["learner"], key):
            raise RbmlabError(f"learner.{key}: {why}; remove it")
    return RunConfig(
        scale=scale,
        resume=resume,
        overwrite=overwrite,
        lock_wait=float(lock_wait),
        backend=parse_options(BackendConfig, node.get("backend", {}), "backend"),
        dataset=node["dataset"],
        **parsed,
    )
