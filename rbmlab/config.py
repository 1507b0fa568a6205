"""Typed run configuration, validated at the edge.

Hydra composes a plain DictConfig from ``conf/``; :func:`parse_run_config` turns it into the
dataclasses below (OmegaConf's structured merge checks keys and types) and every problem becomes
one :class:`RbmlabError` line naming the bad key.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field, fields
from typing import Any

from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import OmegaConfBaseException

from rbmlab.errors import RbmlabError

SCALES = ("custom", "smoke", "reduced", "paper")


def _check(cond: bool, key: str, msg: str) -> None:
    if not cond:
        raise RbmlabError(f"{key}: {msg}")


@dataclass
class TrainConfig:
    epochs: int = 5
    eval_every: int = 1          # epochs between rows of metrics.csv (and epoch 0); 0 = last epoch only
    checkpoint_every: int = 1    # epochs between checkpoints (the last epoch is always saved)
    progress: bool = True        # tqdm bars
    trials: int = 1              # independent models trained as one batched computation

    def __post_init__(self) -> None:
        _check(self.trials >= 1, "train.trials", f"must be >= 1, got {self.trials}")
        _check(self.epochs >= 0, "train.epochs", f"must be >= 0, got {self.epochs}")
        _check(self.eval_every >= 0, "train.eval_every", f"must be >= 0, got {self.eval_every}")
        _check(self.checkpoint_every >= 1, "train.checkpoint_every",
               f"must be >= 1, got {self.checkpoint_every}")


@dataclass
class ModelConfig:
    name: str = "rbm"
    n_hidden: int = 500
    weight_std: float = 0.01          # W ~ N(0, weight_std²)
    visible_bias: str = "base_rate"   # base_rate: logit(train mean) | zero

    def __post_init__(self) -> None:
        _check(self.name == "rbm", "model.name", f"unknown model {self.name!r}; available: rbm")
        _check(self.n_hidden >= 1, "model.n_hidden", f"must be >= 1, got {self.n_hidden}")
        _check(self.weight_std >= 0, "model.weight_std", f"must be >= 0, got {self.weight_std}")
        _check(self.visible_bias in ("base_rate", "zero"), "model.visible_bias",
               f"must be base_rate or zero, got {self.visible_bias!r}")


@dataclass
class BackendConfig:
    name: str = "numpy"      # numpy | cupy
    dtype: str = "float32"   # float32 | float64

    def __post_init__(self) -> None:
        from rbmlab.backend import get_backend  # noqa: PLC0415

        get_backend(self.name, self.dtype)   # one-line error for an unknown name or dtype, or no GPU


@dataclass
class LearnerConfig:
    """Hyperparameters every learner shares (plain SGD on the log-likelihood gradient)."""

    name: str = "cd"
    lr: float = 0.01
    batch_size: Any = 100        # int, or "full" for full-batch training
    momentum: float = 0.0
    weight_decay: float = 0.0    # L2 penalty on W

    def __post_init__(self) -> None:
        _check(self.lr > 0, "learner.lr", f"must be > 0, got {self.lr}")
        bs = self.batch_size
        ok = bs == "full" or (isinstance(bs, int) and not isinstance(bs, bool) and bs >= 1)
        _check(ok, "learner.batch_size", f"must be a positive integer or 'full', got {bs!r}")
        _check(0 <= self.momentum < 1, "learner.momentum", f"must be in [0, 1), got {self.momentum}")
        _check(self.weight_decay >= 0, "learner.weight_decay", f"must be >= 0, got {self.weight_decay}")


@dataclass
class EvaluatorConfig:
    """What is measured at each evaluation point and at the end of training."""

    name: str = "ais"                # exact | ais | pl | reconstruction
    splits: list[str] = field(default_factory=lambda: ["test"])
    # ais
    n_chains: int = 100
    schedule: str = "salakhutdinov"  # salakhutdinov (14,500 temperatures) | linear
    n_temperatures: int = 14500      # intervals of the linear schedule
    curve_n_temperatures: int = 1000  # cheaper linear schedule at intermediate points (0: same as final)
    reverse: bool = False            # also run reverse AIS (Burda et al. 2015)
    # pl
    n_units: int = 0                 # 0: exact pseudo-likelihood over all units; k: k random units
    max_examples: int = 0            # 0: score every example of a split; n: its first n
    progress: bool = True

    def __post_init__(self) -> None:
        names = ("exact", "ais", "pl", "reconstruction")
        _check(self.name in names, "evaluator.name",
               f"unknown evaluator {self.name!r}; choose one of {', '.join(names)}")
        _check(len(self.splits) > 0, "evaluator.splits", "must name at least one split")
        for s in self.splits:
            _check(s in ("train", "valid", "test"), "evaluator.splits",
                   f"unknown split {s!r}; choose from train, valid, test")
        _check(self.n_chains >= 2, "evaluator.n_chains", f"must be >= 2, got {self.n_chains}")
        _check(self.schedule in ("salakhutdinov", "linear"), "evaluator.schedule",
               f"must be salakhutdinov or linear, got {self.schedule!r}")
        _check(self.n_temperatures >= 1, "evaluator.n_temperatures", "must be >= 1")
        _check(self.curve_n_temperatures >= 0, "evaluator.curve_n_temperatures", "must be >= 0")
        _check(self.n_units >= 0, "evaluator.n_units", "must be >= 0")
        _check(self.max_examples >= 0, "evaluator.max_examples", "must be >= 0")


@dataclass
class RunConfig:
    seed: int
    scale: str
    resume: bool
    train: TrainConfig
    model: ModelConfig
    backend: BackendConfig
    learner: LearnerConfig
    evaluator: EvaluatorConfig
    dataset: dict[str, Any]   # validated by rbmlab.data.load_dataset (options differ per dataset)
    tags: list[str] = field(default_factory=list)

    def hash(self) -> str:
        """Identity of the run's settings (everything but ``resume``), for finding runs to resume."""
        d = to_plain(self)
        d.pop("resume", None)
        d["train"].pop("progress", None)
        d["evaluator"].pop("progress", None)
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]


def to_plain(obj: Any) -> Any:
    """Dataclasses → nested dicts of plain Python values."""
    if hasattr(obj, "__dataclass_fields__"):
        return {f.name: to_plain(getattr(obj, f.name)) for f in fields(obj)}
    if isinstance(obj, dict):
        return {k: to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    return obj


def structured(cls: type, node: Any, prefix: str):
    """Validate ``node`` against dataclass ``cls`` (unknown keys, types, __post_init__ checks)."""
    try:
        merged = OmegaConf.merge(OmegaConf.structured(cls), node)
        return OmegaConf.to_object(merged)
    except OmegaConfBaseException as e:
        key = f"{prefix}.{e.full_key}" if getattr(e, "full_key", None) else prefix
        msg = str(e).splitlines()[0]
        raise RbmlabError(f"{key}: {msg}") from None
    except RbmlabError:
        raise
    except (TypeError, ValueError) as e:
        raise RbmlabError(f"{prefix}: {str(e).splitlines()[0]}") from None


def _learner_config_class(name: str) -> type:
    from rbmlab.learners import LEARNERS  # noqa: PLC0415 - registry imports learner modules

    if name not in LEARNERS:
        raise RbmlabError(f"learner.name: unknown learner {name!r}; choose one of {', '.join(sorted(LEARNERS))}")
    return LEARNERS[name].config_class


def check_seed(seed: Any) -> int:
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise RbmlabError(f"seed: must be a non-negative integer, got {seed!r}")
    return seed


def _tags(tags: Any) -> list[str]:
    if not OmegaConf.is_list(tags) and not isinstance(tags, list):
        raise RbmlabError(f"tags: must be a list, e.g. tags=[a,b], got {tags!r}")
    return [str(t) for t in tags]


def parse_run_config(cfg: DictConfig | dict) -> RunConfig:
    """Hydra's composed config → :class:`RunConfig`, or a one-line :class:`RbmlabError`."""
    if not isinstance(cfg, DictConfig):
        cfg = OmegaConf.create(cfg)
    allowed = {"seed", "scale", "resume", "train", "model", "backend", "learner", "evaluator",
               "dataset", "tags", "hydra"}
    for key in cfg:
        if key not in allowed:
            raise RbmlabError(f"{key}: unknown config key (known: {', '.join(sorted(allowed - {'hydra'}))})")
    for key in ("learner", "dataset", "evaluator"):
        if key not in cfg or not isinstance(cfg[key], DictConfig) or "name" not in cfg[key]:
            raise RbmlabError(f"{key}: missing config group (e.g. {key}=<name>)")
    learner_cls = _learner_config_class(cfg.learner.name)
    scale = cfg.get("scale", "custom")
    scale = scale.get("name") if isinstance(scale, DictConfig) else scale
    if scale not in SCALES:
        raise RbmlabError(f"scale: unknown scale {scale!r}; choose one of {', '.join(SCALES)}")
    seed = check_seed(cfg.get("seed", 0))
    resume = cfg.get("resume", False)
    if not isinstance(resume, bool):
        raise RbmlabError(f"resume: must be true or false, got {resume!r}")
    dataset = OmegaConf.to_container(cfg.dataset, resolve=True)
    from rbmlab.data import validate_dataset_options  # noqa: PLC0415

    validate_dataset_options(dataset)
    return RunConfig(
        seed=seed,
        scale=scale,
        resume=resume,
        train=structured(TrainConfig, cfg.get("train", {}), "train"),
        model=structured(ModelConfig, cfg.get("model", {}), "model"),
        backend=structured(BackendConfig, cfg.get("backend", {}), "backend"),
        learner=structured(learner_cls, cfg.learner, "learner"),
        evaluator=structured(EvaluatorConfig, cfg.evaluator, "evaluator"),
        dataset=dataset,
        tags=_tags(cfg.get("tags", [])),
    )
