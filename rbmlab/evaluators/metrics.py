"""Declared metrics: what a metric column means, its unit, and which direction is better.

A metric is better higher, lower, or (``best_at``: a signed error, best at 0) closer to a target;
every ranking of metric values (best group, bold cell, index headline, early stopping, a
sweeper's objective) goes through :meth:`MetricSpec.badness`.

Evaluators declare the metrics they write (:class:`MetricSpec`); the runner, ``rbmlab evaluate``
and the report read those declarations instead of guessing from a column's name. Per-split
metrics appear in metrics.csv as ``<split>_<name>`` (``test_log_likelihood``); model-level ones
under their bare name (``log_z``). A run records its evaluator's declarations in summary.json
(:func:`declarations_record`), and a report over runs that all did reads them there
(:func:`declared`), importing no evaluator.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

import numpy as np

SPLITS = ("train", "valid", "test")


@dataclass(frozen=True)
class MetricSpec:
    name: str  # column name without the split prefix
    unit: str  # "nats", "squared error", "pixels", ...
    higher_is_better: bool
    per_split: bool = True  # written once per evaluated split as <split>_<name>
    description: str = ""
    summary_name: str | None = None  # name in `rbmlab evaluate` JSON (default: name)
    label: str = ""  # the metric in words, without split or unit ("log-likelihood")
    best_at: float | None = None  # the best value (a signed error: 0): closer is better, and
    # higher_is_better is then ignored for ranking

    def badness(self, values) -> np.ndarray:
        """The ranking key of values of this metric, smaller is better: |v − best_at| for a
        target, else −v (higher is better) or v; NaN stays NaN."""
        v = np.asarray(values, dtype=np.float64)
        if self.best_at is not None:
            return np.abs(v - self.best_at)
        return -v if self.higher_is_better else v

    @property
    def best_word(self) -> str:
        """The best value in words: 'max', 'min' or 'closest to 0'."""
        if self.best_at is not None:
            return f"closest to {self.best_at:g}"
        return "max" if self.higher_is_better else "min"

    @property
    def direction(self) -> str:
        """Which values are better, in words: 'higher is better', 'lower is better',
        'closest to 0 is best'."""
        if self.best_at is not None:
            return f"{self.best_word} is best"
        return f"{'higher' if self.higher_is_better else 'lower'} is better"


def split_prefix(column: str) -> tuple[str | None, str]:
    """(split, bare name) of a metric column: 'test_log_likelihood' -> ('test', 'log_likelihood')."""
    for split in SPLITS:
        if column.startswith(split + "_"):
            return split, column[len(split) + 1 :]
    return None, column


# What the runner (and the evaluation step, for every model) records: a report may use it as a metric.
RUN_METRICS = (
    MetricSpec(
        "wall_time",
        "seconds",
        higher_is_better=False,
        per_split=False,
        description="training time, evaluations excluded (summary.json; a growing model's "
        "metrics rows: the seconds it took to reach that size; batched trials "
        "share their run's)",
        label="wall-clock time",
    ),
    MetricSpec(
        "theta",
        "coupling",
        higher_is_better=True,
        per_split=False,
        description="the one coupling of a tied Ising model (model.tie=uniform), recorded "
        "with every evaluation (rbmlab.run.evaluation)",
        label="coupling θ",
    ),
    MetricSpec(
        "early_stopping.n_hidden",
        "hidden units",
        higher_is_better=True,
        per_split=False,
        description="the size early stopping selects (summary.json early_stopping)",
        label="hidden units selected by early stopping",
    ),
    MetricSpec(
        "inference_converged",
        "%",
        higher_is_better=True,
        per_split=False,
        description="training instances of the last epoch on which the learner's inference "
        "converged (a conditional learner's diagnostics)",
        label="training inferences converged",
    ),
)


def part_metric(spec: MetricSpec, part: str) -> MetricSpec:
    """``spec`` as a later part of evaluator=combined writes it: ``<part>.<name>``."""
    return dataclasses.replace(
        spec,
        name=f"{part}.{spec.name}",
        summary_name=spec.summary_name and f"{part}.{spec.summary_name}",
        label=spec.label and f"{spec.label} ({part})",
    )


def _declared(specs, column: str) -> MetricSpec | None:
    split, bare = split_prefix(column)
    return next((s for s in specs if s.name == (bare if s.per_split and split else column)), None)


# ---------------------------------------------------------------- declarations a run records
RECORD_KEY = "metric_declarations"  # summary.json: {metric name: its declaration's other fields}
_FIELDS = tuple(f.name for f in dataclasses.fields(MetricSpec))


def declarations_record(specs: Iterable[MetricSpec]) -> dict[str, dict]:
    """``specs`` as summary.json records them: {name: {unit, higher_is_better, ...}}."""
    return {s.name: {k: v for k, v in dataclasses.asdict(s).items() if k != "name"} for s in specs}


def declarations_from_record(record: Mapping[str, Mapping]) -> tuple[MetricSpec, ...]:
    """The declarations a run recorded (:func:`declarations_record`); fields a later rbmlab added
    take their defaults, fields it no longer has are dropped."""
    return tuple(
        MetricSpec(str(name), **{k: v for k, v in fields.items() if k in _FIELDS and k != "name"})
        for name, fields in record.items()
    )


_IN_FORCE: ContextVar[tuple[MetricSpec, ...] | None] = ContextVar("metric_declarations", default=None)


@contextmanager
def declared(specs: Iterable[MetricSpec] | None) -> Iterator[None]:
    """Within it, a metric column is declared by the runner's metrics and ``specs`` (the runs'
    recorded declarations) alone, and no evaluator is imported; ``specs`` None: by every
    registered evaluator, as outside it."""
    token = _IN_FORCE.set(None if specs is None else tuple(specs))
    try:
        yield
    finally:
        _IN_FORCE.reset(token)


def metric_spec(column: str) -> MetricSpec | None:
    """The declaration of a metrics.csv column by the runner or an evaluator, or None: the
    declarations in force (:func:`declared`), else every registered evaluator's; a later part's
    column of evaluator=combined (``test_tap.log_likelihood``, ``tap.log_z``) by its evaluator's
    declaration (recorded under its ``<part>.<name>``)."""
    for spec in RUN_METRICS:
        if spec.name == column:
            return spec
    if column.startswith("early_stopping."):  # a metric at the early-stopping point
        column = column[len("early_stopping.") :]
    in_force = _IN_FORCE.get()
    if in_force is not None:
        return _declared(in_force, column)
    from rbmlab.evaluators import EVALUATORS, declared_metrics  # noqa: PLC0415 - rbmlab.evaluators imports this module

    split, bare = split_prefix(column)
    part, dot, own = (bare if split else column).partition(".")
    if dot and part in EVALUATORS:
        spec = _declared(EVALUATORS.get(part).metrics, f"{split}_{own}" if split else own)
        return spec and part_metric(spec, part)
    return _declared(declared_metrics(), column)


UNDECLARED = MetricSpec("", "", higher_is_better=True)  # how an undeclared column ranks


def ranking(column: str) -> MetricSpec:
    """The declaration a metric column ranks by (:meth:`MetricSpec.badness`, ``best_word``,
    ``direction``); an undeclared column is taken as higher-is-better."""
    return metric_spec(column) or UNDECLARED


def badness(column: str, values) -> np.ndarray:
    """The ranking key of a metric column's values, smaller is better (:meth:`MetricSpec.badness`)."""
    return ranking(column).badness(values)


def higher_is_better(column: str) -> bool:
    """The declared direction of a metric column (True when undeclared); not a ranking: a metric
    with a target (``best_at``) ranks by :func:`badness`."""
    return ranking(column).higher_is_better
