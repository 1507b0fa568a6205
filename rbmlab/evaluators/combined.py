"""Several evaluators in one run, each at every evaluation point (AIS beside TAP beside MMD).

``parts`` is a list of evaluator configurations, each parsed by the evaluator registry as
``evaluator=<name>`` would be. The first part writes its columns as it does alone, so the
headline, early stopping, sweeper objectives and reports read it unchanged; a later part's
metrics are named ``<part>.<metric>`` and follow the usual column rule (``<split>_<metric>``
per split, the bare name per model): ``test_tap.log_likelihood``, ``tap.log_z``. A column two
parts would both write (the same evaluator twice) is refused when the configuration is parsed.

Each part scores the splits it names (its own ``splits``, ``max_examples``, ``progress``); the
run loads their union, the first part's first split first (the headline's).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.base import SPLIT_NAMES, Evaluator, EvaluatorConfig
from rbmlab.evaluators.metrics import MetricSpec, part_metric, split_prefix
from rbmlab.units.requirements import CATEGORICAL
from rbmlab.validation import Config, invalid, option, progress_bars


def parse_parts(value: Any, key: str) -> list[Config]:
    """``parts``: a non-empty list of evaluator configurations, none of them ``combined``, each
    evaluator once (a repeated part would score the same thing again under another column)."""
    if not isinstance(value, (list, tuple)) or not value:
        raise RbmlabError(
            f"{key}: expected a non-empty list of evaluators, e.g. "
            f"[{{name: ais}}, {{name: tap}}], got {value!r}"
        )
    parts = []
    for i, node in enumerate(value):
        name = node.get("name") if isinstance(node, dict) else node
        if name == "combined":
            raise RbmlabError(f"{key}[{i}].name: combined cannot be a part; list its parts here")
        if name in (names := [p.name for p in parts]):
            raise RbmlabError(
                f"{key}[{i}].name: {name} is parts[{names.index(name)}] already; use each evaluator once"
            )
        parts.append(node if dataclasses.is_dataclass(node) else EVALUATORS.parse(node, f"{key}[{i}]"))
    return parts


def part_metrics(parts: list[Config]) -> tuple[MetricSpec, ...]:
    """The metrics the parts write: the first part's as declared, a later one's as ``<part>.<name>``;
    a one-line error where two parts would write the same column."""
    specs, owner = [], {}
    for i, part in enumerate(parts):
        for spec in EVALUATORS.get(part.name).metrics:
            spec = spec if i == 0 else part_metric(spec, part.name)
            if (spec.name, spec.per_split) in owner:
                j = owner[spec.name, spec.per_split]
                raise invalid(
                    f"parts[{i}]",
                    f"writes {spec.name} as parts[{j}] ({parts[j].name}) does; use each evaluator once",
                )
            owner[spec.name, spec.per_split] = i
            specs.append(spec)
    return tuple(specs)


def union_splits(parts: list[Config]) -> list[str]:
    """Every split a part names, in order of first appearance."""
    return list(dict.fromkeys(s for part in parts for s in part.splits))


@dataclass
class CombinedConfig(EvaluatorConfig):
    name: str = option("combined", "evaluator")
    splits: list[str] = option(
        [],
        "the splits the run loads: the union of the parts' (empty: derived; each part scores its own splits)",
    )
    parts: list[Any] = option(
        [{"name": "ais"}, {"name": "tap"}],
        "evaluator configurations, "
        "e.g. [{name: ais, n_chains: 50}, {name: tap}]; the first writes the "
        "headline columns, a later one <part>.<metric>",
        parse=parse_parts,
    )

    def check(self) -> None:
        part_metrics(self.parts)
        union = union_splits(self.parts)
        if not self.splits:
            self.splits = union
        elif set(self.splits) != set(union):
            raise invalid(
                "splits",
                f"the parts score {union}, got {self.splits}; give each part "
                "its splits (evaluator.parts=[{name: ais, splits: [valid]}, ...])",
            )

    def __getattr__(self, key: str) -> Any:
        """``parts[i].option``: a part's option by the key ``epoch_cost`` names it."""
        if not key.startswith("parts["):
            raise AttributeError(key)
        index, _, option_name = key[len("parts[") :].partition("].")
        return getattr(self.__dict__["parts"][int(index)], option_name)


class Combined(Evaluator):
    """Several evaluators in one run, each at every evaluation point (e.g. AIS beside TAP beside MMD);
    a later part's columns are prefixed with its name.

    Registered as ``combined``; options (``parts``: evaluator configurations) in
    :class:`CombinedConfig`.
    """

    config_class = CombinedConfig
    metrics: tuple[MetricSpec, ...] = ()  # per configuration: set in __init__
    without_data = None  # `rbmlab evaluate` without a dataset asks the class; each part may need data

    def __init__(self, config: CombinedConfig):
        super().__init__(config)
        self.parts = [EVALUATORS.build(part) for part in config.parts]
        self.metrics = part_metrics(config.parts)
        self.requires = tuple(dict.fromkeys(c for part in self.parts for c in part.requires))
        self.needs_truth = any(part.needs_truth for part in self.parts)
        self.epoch_cost = tuple(
            f"parts[{i}].{k}" for i, part in enumerate(self.parts) for k in part.epoch_cost
        )
        self.units = self._units()

    def _units(self) -> dict[str, tuple[str, ...]]:
        """Per setting, the unit types every part that constrains it allows; categorical types
        only where every part names them (they are opt-in: rbmlab.units.requirements)."""
        units: dict[str, tuple[str, ...]] = {}
        for part in self.parts:
            for setting, allowed in part.units.items():
                units[setting] = tuple(u for u in units.get(setting, allowed) if u in allowed)
        for setting, allowed in units.items():
            if any(setting not in part.units for part in self.parts):
                units[setting] = tuple(u for u in allowed if u not in CATEGORICAL)
        return units

    def samplers(self, model_class) -> list:
        return [s for part in self.parts for s in part.samplers(model_class)]

    def settings_problem(self, settings, model_class) -> str | None:
        for i, part in enumerate(self.parts):
            if problem := part.settings_problem(settings, model_class):
                return f"parts[{i}] ({part.config.name}): {problem}"
        return None

    def check(self, model_class, sizes) -> None:
        for i, part in enumerate(self.parts):
            try:
                part.check(model_class, sizes)
            except RbmlabError as e:
                message = str(e)
                if message.startswith("evaluator."):  # an option of the part
                    raise RbmlabError(f"evaluator.parts[{i}].{message[len('evaluator.') :]}") from None
                reason = message.removeprefix(f"evaluator={part.config.name}: ")
                raise RbmlabError(f"evaluator=combined: parts[{i}] ({part.config.name}): {reason}") from None

    def _column(self, i: int, column: str) -> str:
        """Where part ``i``'s ``column`` goes: as it is for the first part, else ``<split>_<part>.<metric>``
        for a per-split metric and ``<part>.<metric>`` for a model-level one."""
        if i == 0:
            return column
        name = self.parts[i].config.name
        split, bare = split_prefix(column)
        if split and any(s.per_split and s.name == bare for s in self.parts[i].metrics):
            return f"{split}_{name}.{bare}"
        return f"{name}.{column}"

    def evaluate(self, model, splits, context):
        metrics = {}
        for i, part in enumerate(self.parts):
            cfg = part.config
            # its own splits; those given where it names none of them (`rbmlab evaluate split=...`)
            own = {s: b for s, b in splits.items() if s in cfg.splits} or splits
            if cfg.max_examples:
                own = {s: b.take(slice(0, cfg.max_examples)) for s, b in own.items()}
            ctx = dataclasses.replace(context, progress=context.progress and progress_bars(cfg.progress))
            metrics.update({self._column(i, k): v for k, v in part.evaluate(model, own, ctx).items()})
        return metrics

    def _own(self, i: int, metrics: dict[str, float]) -> dict[str, float]:
        """Part ``i``'s columns of ``metrics`` under the names it writes them."""
        specs = self.parts[i].metrics
        names = [f"{s}_{spec.name}" for spec in specs if spec.per_split for s in SPLIT_NAMES]
        names += [spec.name for spec in specs if not spec.per_split]
        return {k: metrics[self._column(i, k)] for k in names if self._column(i, k) in metrics}

    def curve_estimate(self):
        return self.parts[0].curve_estimate()  # the headline column is the first part's

    def headline(self, metrics, split):
        lines = []
        for i, part in enumerate(self.parts):
            own = self._own(i, metrics)
            at = split if any(k.startswith(f"{split}_") for k in own) else part.config.splits[0]
            lines.append(part.headline(own, at))
        return "; ".join(lines)

    def headline_column(self, split):
        return self.parts[0].headline_column(split)
