"""What every evaluator shares: config fields, the evaluation context, and the protocol.

An evaluator class has ``config_class``, ``requires`` (model capabilities), ``metrics`` (the
MetricSpecs it writes), and

    check(model_class, sizes)              one-line RbmlabError, before any work, if infeasible
    evaluate(model, splits, context)       {metric column: float}; splits: name → Batch
    headline(metrics, split)               the line printed at the end of a run
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from rbmlab.backend import to_numpy
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.inference import INFERENCE
from rbmlab.limits import EXAMPLES, MARGINAL_UNITS
from rbmlab.models.base import supports
from rbmlab.units.requirements import NAMES
from rbmlab.validation import PROGRESS, Config, invalid, option

SPLIT_NAMES = ("train", "valid", "test")


@dataclass
class EvaluatorConfig(Config):
    name: str = option("", "evaluator")
    splits: list[str] = option(
        ["test"], "splits scored at every evaluation point", choices=SPLIT_NAMES, label="splits scored"
    )
    max_examples: int = option(0, "0: every example of a split; n: its first n", lo=0, hi=EXAMPLES)
    progress: bool | str = option(
        "auto",
        "progress bars of long evaluations: auto (where stderr is a terminal), true, false",
        choices=PROGRESS,
    )

    # False: the evaluator scores the model alone (its log Z, its parameters, its sampler's
    # times) and reads no example, so max_examples does not apply
    reads_examples: ClassVar[bool] = True

    def check(self) -> None:
        if not self.splits:
            raise invalid("splits", "must name at least one split")

    def unread(self) -> dict[str, str]:
        if self.reads_examples:
            return {}
        return {"max_examples": f"evaluator={self.name} scores the model alone; it reads no example"}


@dataclass
class Context:
    """What an evaluation may need beyond the model and the splits."""

    rng: Any  # random stream of this evaluation
    final: bool  # the end of training (full AIS schedule, reverse AIS)
    progress: bool = False
    train: Any = None  # the training Batch (reverse AIS chains start there; classifiers fit on it)
    data_mean: Any = None  # mean of the training inputs (AIS base-rate model); None: no data
    inference_iterations: int | None = None  # the learner's inference budget now (crbm_bp's T)
    truth: Any = None  # the dataset's ground-truth model (host), for evaluators that need it


def sampler_for(config, model_class: type, evaluator: str):
    """The inference method ``config`` names (None: ``model_class``'s default sampler), checked
    against the family's capabilities; one-line errors naming ``evaluator``."""
    if config is None:
        default = getattr(model_class, "default_sampler", None)
        if default is None:
            raise RbmlabError(
                f"evaluator={evaluator}: model {model_class.family} has no default "
                "sampler; set evaluator.sampler"
            )
        config = INFERENCE.parse(default, "evaluator.sampler")
    sampler = INFERENCE.build(config)
    for capability in sampler.requires:
        if not supports(model_class, capability):
            raise RbmlabError(
                f"evaluator={evaluator}: model {model_class.family} lacks "
                f"{capability.__name__} (needed by its sampler {sampler.config.name})"
            )
    return sampler


class Evaluator:
    config_class = EvaluatorConfig
    requires: tuple[type, ...] = ()
    metrics: tuple[MetricSpec, ...] = ()
    needs_truth = False  # reads Context.truth: the run's dataset must have a ground truth
    without_data: str | None = (
        None  # what it gives with no dataset (rbmlab evaluate's note); None: needs data
    )
    units: dict[str, tuple[str, ...]] = {}  # unit types it is written for (rbmlab.units.requirements)
    epoch_cost: tuple[str, ...] = ()  # its options that set the cost of an evaluation at epochs

    def __init__(self, config):
        self.config = config

    def samplers(self, model_class: type) -> list:
        """The inference methods it draws with from a model of ``model_class``: its ``sampler``
        option's (null: the family's default), none when it has no such option (the settings'
        check before any work asks them too: rbmlab.units.requirements)."""
        if "sampler" not in {f.name for f in dataclasses.fields(self.config)}:
            return []
        return [sampler_for(self.config.sampler, model_class, self.config.name)]

    def settings_problem(self, settings, model_class: type) -> str | None:
        """Why it cannot score a model of ``model_class`` with these settings together (unit types
        as Model.settings names them, per-layer ones written out per layer), in words, or None
        (rbmlab.units.requirements asks before any work)."""
        return None

    def check(self, model_class: type, sizes: dict[str, int]) -> None:
        for capability in self.requires:
            if not supports(model_class, capability):
                raise RbmlabError(
                    f"evaluator={self.config.name}: model {model_class.family} lacks {capability.__name__}"
                )

    def evaluate(self, model, splits: dict[str, Any], context: Context) -> dict[str, float]:
        raise NotImplementedError

    def headline(self, metrics: dict[str, float], split: str) -> str:
        spec = self.metrics[0]
        value = metrics[self.headline_column(split)]
        return f"{split} {spec.name.replace('_', ' ')}: {value:.4f} {spec.unit}"

    def curve_estimate(self) -> str | None:
        """How an evaluation at epochs estimates the headline where it differs from the final
        evaluation (the epoch lines' label), else None."""
        return None

    def headline_column(self, split: str) -> str:
        """The column of the run's headline value (the progress bar's, a sweeper's objective):
        the first declared metric, of ``split`` when per split."""
        spec = self.metrics[0]
        return f"{split}_{spec.name}" if spec.per_split else spec.name


def mean(x) -> float:
    return float(np.mean(to_numpy(x), dtype=np.float64))


def mean_log_unnormalized(model, x, chunk: int = 4096) -> float:
    """Average of log p̃(x) over the rows of ``x`` (float64 accumulation), chunked."""
    return mean_of_rows(model.log_unnormalized, x, chunk)


def mean_of_rows(per_row, x, chunk: int = 4096) -> float:
    """Average of ``per_row(rows)`` (one value per row) over the rows of ``x``, by chunks of rows,
    accumulated in float64."""
    total = 0.0
    for i in range(0, x.shape[0], chunk):
        total += mean(per_row(x[i : i + chunk])) * min(chunk, x.shape[0] - i)
    return total / x.shape[0]


def require_units(model, evaluator: str, units: dict[str, tuple[str, ...]]) -> None:
    """The model's unit types must be those the evaluator declares (``units``, as
    ``Evaluator.units``): the first (epoch-0) evaluation refuses others before any training."""
    for layer, allowed in units.items():
        if getattr(model, layer, "bernoulli") not in allowed:
            kinds = " or ".join(NAMES.get(a, a) for a in allowed)
            raise RbmlabError(
                f"evaluator={evaluator}: written for {kinds} {layer} units; this RBM "
                f"has visible={model.visible}, hidden={model.hidden}; use evaluator=exact"
            )


MAX_MARGINAL_UNITS = MARGINAL_UNITS  # log p̃(x) by enumeration: 2^k latent states per row (rbmlab.limits)


def check_marginal(evaluator: str, model_class: type, sizes: dict[str, int]) -> None:
    """log p̃(x) of a family that sums its latent units out by enumeration (a DBM declares
    ``marginal_enumeration_size``) costs 2^k per row: refused above MAX_MARGINAL_UNITS, before
    any work. Families with a closed form (RBM, Ising) declare nothing."""
    size = getattr(model_class, "marginal_enumeration_size", None)
    k = size(sizes) if size is not None else 0
    if k > MAX_MARGINAL_UNITS:
        raise RbmlabError(
            f"evaluator={evaluator}: log p̃(x) of a {model_class.family} model enumerates "
            f"2^{k} hidden states per row; at most 2^{MAX_MARGINAL_UNITS}"
        )


def truth_for(evaluator, dataset: dict, build: bool = True):
    """The ground truth of ``dataset`` (its config, with its name) when ``evaluator`` reads one,
    else None; a one-line error when it needs one the dataset does not have. ``build=False``:
    only the check."""
    from rbmlab.data import ground_truth, has_ground_truth  # noqa: PLC0415

    if not evaluator.needs_truth:
        return None
    if not has_ground_truth(dataset["name"]):
        raise RbmlabError(
            f"evaluator={evaluator.config.name}: needs a dataset sampled from a known "
            f"model (ising_samples); dataset {dataset['name']} has none"
        )
    return ground_truth(**dataset) if build else None
