"""Names in words for what a report shows: metrics, config keys and their values.

Every label of a table or figure comes from here, never from a config key or a metrics.csv
column as it is spelled. Three sources, the most specific first:

- the experiment file's ``report.names`` (``{key: {label: text, values: {value: text}}}``, or
  ``{key: text}`` for the label alone): how this artefact's paper names its methods and
  conditions (``variant: {label: method, values: {cd1: CD-1}}``);
- declarations: a metric's :class:`~rbmlab.evaluators.metrics.MetricSpec` (its ``label`` and
  ``unit``), a config option's ``label`` (``rbmlab.validation.option``), the schedule columns;
- a readable fallback (``learner.lr`` -> "learner lr"), which a test keeps out of committed
  reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rbmlab.errors import RbmlabError
from rbmlab.report.layout import norm

# columns of metrics.csv / the runs table that are no option of any component
SCHEDULE_LABELS = {
    "epoch": "epoch",
    "updates": "parameter updates",
    "wall_time": "wall-clock time (s)",
    "variant": "method",
    "seed": "seed",
    "experiment": "experiment",
}
# the components a run's config chooses: ``<group>.name`` reads as the group
COMPONENT_LABELS = {
    "dataset": "data set",
    "model": "model",
    "learner": "learner",
    "task": "task",
    "evaluator": "evaluator",
}
# a unit that reads as the quantity's own name adds nothing in brackets
_SILENT_UNITS = frozenset({"", "fraction"})
_SPLIT_WORDS = {"train": "training", "valid": "validation", "test": "test"}


@dataclass(frozen=True)
class Names:
    """The display names of one report: the experiment's own (``report.names``) over the
    declared ones."""

    labels: Mapping[str, str] = field(default_factory=dict)  # key -> label
    values: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # key -> {norm(value): label}

    @classmethod
    def parse(cls, raw: Any, where: str = "report.names") -> Names:
        """``report.names``: {key: text} or {key: {label: text, values: {value: text}}}."""
        if raw is None:
            return cls()
        if not isinstance(raw, Mapping):
            raise RbmlabError(
                f"{where}: expected {{key: {{label: text, values: {{value: text}}}}}}, got {raw!r}"
            )
        labels: dict[str, str] = {}
        values: dict[str, dict[str, str]] = {}
        for key, entry in raw.items():
            if isinstance(entry, str):
                labels[str(key)] = entry
                continue
            if not isinstance(entry, Mapping) or not set(entry) <= {"label", "values"}:
                raise RbmlabError(
                    f"{where}.{key}: expected text or {{label: text, values: {{value: text}}}}, got {entry!r}"
                )
            if "label" in entry:
                labels[str(key)] = str(entry["label"])
            given = entry.get("values") or {}
            if not isinstance(given, Mapping):
                raise RbmlabError(f"{where}.{key}.values: expected {{value: text}}, got {given!r}")
            values[str(key)] = {norm(v): str(text) for v, text in given.items()}
        return cls(labels, values)

    def key(self, key: str) -> str:
        """A config key or runs-table column in words: "hidden units", "learning rate"."""
        return self.labels.get(key) or declared_label(key) or key.rsplit(".", 1)[-1].replace("_", " ")

    def value(self, key: str, value: Any) -> str:
        """A value of ``key`` as the paper names it ("CD-1" for variant cd1), else as shown."""
        shown = norm(value)
        return self.values.get(key, {}).get(shown, shown)

    def pair(self, key: str, value: Any) -> str:
        """A key and its value in words: "hidden units = 20"; a method by its name alone."""
        shown = self.value(key, value)
        return shown if key == "variant" else f"{self.key(key)} = {shown}"

    def metric(self, column: str, unit: bool = True) -> str:
        """A metric column in words, with its unit: "test log-likelihood (nats)"."""
        return metric_label(column, unit)

    def keys(self, keys: list[str]) -> str:
        """Several keys in words, joined: a legend title."""
        return ", ".join(self.key(k) for k in keys)


def declared_label(key: str) -> str | None:
    """A key's label from the declarations: a schedule column, a component's name (``learner.name``
    -> "learner", ``evaluator.sampler.name`` -> the label of ``evaluator.sampler``), an option's
    ``label``, a declared metric; None where none names it (the fallback's words)."""
    if key in SCHEDULE_LABELS:
        return SCHEDULE_LABELS[key]
    if key.endswith(".name"):
        component = key[: -len(".name")]
        return COMPONENT_LABELS.get(component) or option_label(component)
    declared = option_label(key)
    if declared:
        return declared
    return metric_label(key) if metric_spec_of(key) is not None else None


def metric_spec_of(column: str):
    """The MetricSpec declared for a metrics column, or None."""
    from rbmlab.evaluators.metrics import metric_spec  # noqa: PLC0415 - evaluators import the report lazily

    return metric_spec(column)


def metric_label(column: str, unit: bool = True) -> str:
    """'test_log_likelihood' -> 'test log-likelihood (nats)'; 'early_stopping.test_pixel_error'
    -> 'test pixel error (%) at the early-stopping epoch'. An undeclared column in plain words."""
    from rbmlab.evaluators.metrics import split_prefix  # noqa: PLC0415

    stopped = column.startswith("early_stopping.")
    bare_column = column[len("early_stopping.") :] if stopped else column
    spec = metric_spec_of(column)
    split, bare = split_prefix(bare_column)
    if spec is not None and not spec.per_split:
        split, bare = None, bare_column
    words = spec.label if spec is not None and spec.label else bare.replace("_", " ")
    if split is not None:
        words = f"{_SPLIT_WORDS[split]} {words}"
    if unit and spec is not None and spec.unit not in _SILENT_UNITS and spec.unit not in words:
        words += f" ({_short_unit(spec.unit)})"
    if stopped and (spec is None or spec.name != column):
        words += " at the early-stopping epoch"
    return words


def _short_unit(unit: str) -> str:
    """'seconds' -> 's'; other units as declared."""
    return {"seconds": "s"}.get(unit, unit)


def option_label(key: str) -> str | None:
    """The ``label`` a component declares for one of its options (``model.n_hidden`` -> "hidden
    units"), or None where it declares none."""
    from rbmlab.help import declared_option  # noqa: PLC0415 - the help layer finds option declarations

    meta = declared_option(key)
    return None if meta is None else meta.get("label") or None
