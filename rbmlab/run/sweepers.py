"""Sweeps that a sweeper plugin samples (``hydra/sweeper=optuna``): what rbmlab checks before the
sweep, the value each job returns to the sweeper, and the result it reports after.

The basic sweeper runs the product of listed values, so rbmlab validates every job ahead
(rbmlab.hydra_app.expand_overrides). A sampling sweeper proposes values while it runs
(``interval(a,b)``, ``choice()``, ``range()``), so rbmlab validates the configurations it can list
(each listed value, both ends of an interval), and each job returns its evaluator's headline
metric (the first declared metric, at the first split; one best at a target, such as a signed
error: its distance from the target) for the sweeper to optimise.
"""

from __future__ import annotations

import itertools
import logging
import math
from dataclasses import dataclass
from pathlib import Path

from omegaconf import OmegaConf

from rbmlab.errors import RbmlabError

BASIC = "hydra._internal.core_plugins.basic_sweeper.BasicSweeper"
SWEEPER_KEYS = ("hydra/sweeper", "hydra.sweeper.")  # hydra.* overrides that choose or set the sweeper
RESULTS = "optimization_results.yaml"  # written by the optuna and nevergrad sweepers
MAX_CHECKED = 64  # configurations validated ahead; above, each listed value once (not every product)


@dataclass
class Sweep:
    """A multirun as rbmlab prepares it: the override lists validated before it starts, how many
    jobs it runs (None: the sweeper decides), and the hydra.* overrides rbmlab adds."""

    sampler: str | None  # None: the basic sweeper (the jobs below are the jobs it runs)
    jobs: list[list[str]]
    n_jobs: int | None
    hydra_overrides: list[str]


def touches_sweeper(overrides: list[str]) -> bool:
    return any(o.lstrip("+~").startswith(SWEEPER_KEYS) for o in overrides)


def explain(error: RbmlabError) -> RbmlabError:
    """A composition error about ``hydra/sweeper=``, with how to install the optuna sweeper when
    it is not among the options."""
    missing = "hydra/sweeper=" in str(error) and "optuna" not in str(error)
    return RbmlabError(f"{error} (the optuna sweeper: pip install 'rbmlab[optuna]')") if missing else error


def is_basic(node) -> bool:
    """Whether the composed ``hydra.sweeper`` node (None: not composed) is Hydra's basic sweeper."""
    return node is None or node.get("_target_") == BASIC


def param_overrides(node) -> list[str]:
    """``hydra.sweeper.params`` (a search space in the config) as overrides, which the sweeper puts
    before the command line's."""
    params = (node.get("params") if node is not None else None) or {}
    return [f"{k}={v}" for k, v in params.items()]


def candidates(override) -> list[str]:
    """The values of one parsed override that rbmlab can check ahead: every listed value of a
    choice or range, and the ends of an interval or a range (optuna samples a range up to its
    stop)."""
    from hydra.core.override_parser.types import IntervalSweep, RangeSweep  # noqa: PLC0415

    key, value = override.get_key_element(), override.value()
    if not override.is_sweep_override():
        return [override.input_line]
    if isinstance(value, IntervalSweep):
        return [f"{key}={value.start!r}", f"{key}={value.end!r}"]
    try:
        listed = [f"{key}={v}" for v in override.sweep_string_iterator()]
    except Exception:  # noqa: BLE001 - glob(): nothing to list
        raise RbmlabError(
            f"{override.input_line}: a sweep rbmlab cannot check ahead; list the "
            "values, or give a range() or interval()"
        ) from None
    if isinstance(value, RangeSweep) and not value.shuffle:
        listed.append(f"{key}={value.stop!r}")
    return list(dict.fromkeys(listed))


def checked_configurations(options: list[list[str]]) -> list[list[str]]:
    """Every combination of the candidates, or (above MAX_CHECKED) each candidate once with the
    first of the others."""
    if math.prod(len(o) for o in options) <= MAX_CHECKED:
        return [list(c) for c in itertools.product(*options)]
    first = [o[0] for o in options]
    return [first] + [first[:i] + [v] + first[i + 1 :] for i, o in enumerate(options) for v in o[1:]]


DIRECTIONS = ("minimize", "maximize")


def sampled_sweep(node, parsed: list) -> Sweep:
    """The sweep of a sampling sweeper (the composed ``hydra.sweeper`` node) over ``parsed``
    overrides (Hydra's Override objects, search-space params first): the configurations checked
    ahead of its trials, and n_trials jobs (unknown for a grid, which may run fewer)."""
    by_key = {o.get_key_element(): o for o in parsed}  # the command line wins over params
    jobs = checked_configurations([candidates(o) for o in by_key.values()])
    n_trials = node.get("n_trials")
    if n_trials is not None and (isinstance(n_trials, bool) or not isinstance(n_trials, int) or n_trials < 1):
        raise RbmlabError(f"hydra.sweeper.n_trials: must be an integer >= 1, got {n_trials!r}")
    direction = node.get("direction")  # rbmlab's jobs return one value: one direction
    if (
        direction is not None and getattr(direction, "name", direction) not in DIRECTIONS
    ):  # the schema's: an Enum
        raise RbmlabError(
            f"hydra.sweeper.direction: must be one of {', '.join(DIRECTIONS)} (the headline "
            f"metric's, by default), got {direction!r}"
        )
    grid = "GridSampler" in str(OmegaConf.select(node, "sampler._target_", default=""))
    sampler = str(node.get("_target_", "")).rsplit(".", 1)[-1]
    return Sweep(sampler, jobs, None if grid or n_trials is None else int(n_trials), tag_overrides(parsed))


def tag_overrides(parsed: list) -> list[str]:
    """hydra.* overrides that make ``hydra.job.override_dirname`` name a job by its swept values
    only (the job tag of rbmlab.hydra_app), leaving out the keys that every job shares."""
    last = {o.key_or_group: o for o in parsed}  # a later override of a key wins
    fixed = sorted(key for key, o in last.items() if not o.is_sweep_override())
    quoted = ",".join(f"'{k}'" for k in fixed)
    return [
        f"hydra.job.config.override_dirname.exclude_keys=[{quoted}]",
        "hydra.job.config.override_dirname.item_sep=' '",
    ]


def launch_overrides(sweep: Sweep, configs, hydra_overrides: list[str]) -> list[str]:
    """The hydra.* overrides rbmlab adds to a sweep: the job tags' and, for a sampling sweeper,
    the direction of its objective. A sampling sweep is not resumed: its trials propose new
    values, which the job directories of an earlier sweep do not hold."""
    if sweep.sampler is None:
        return sweep.hydra_overrides
    if configs[0].resume:
        raise RbmlabError(
            f"resume: a sampling sweep ({sweep.sampler}) proposes new values each "
            "time, so its jobs cannot continue an earlier sweep's; start a new sweep "
            "(or overwrite=true)"
        )
    return sweep.hydra_overrides + direction_overrides(configs, hydra_overrides)


def quiet_imports() -> None:
    """Keep the INFO lines that optuna's storage layer (alembic) logs on import out of the sweep's
    output (Hydra's logging sends INFO to the console)."""
    logging.getLogger("alembic").setLevel(logging.WARNING)


# ---------------------------------------------------------------- the objective
def objective(evaluator_config):
    """(column, MetricSpec) of the evaluator's headline metric (Evaluator.headline_column, at its
    first split), the value a run's last line reports."""
    from rbmlab.evaluators import EVALUATORS  # noqa: PLC0415

    evaluator = EVALUATORS.build(evaluator_config)
    return evaluator.headline_column(evaluator_config.splits[0]), evaluator.metrics[0]


def objective_name(column: str, spec) -> str:
    """What the sweeper optimises, in words: the column, or |column − target| for a metric best
    at a target (a signed error), which the jobs return as its distance from the target."""
    return column if spec.best_at is None else f"|{column} − {spec.best_at:g}|"


def direction_overrides(configs, hydra_overrides: list[str]) -> list[str]:
    """``hydra.sweeper.direction`` from the headline metric's declared direction (minimize for a
    target: the jobs return the distance from it), unless the command line sets it; refused
    where the jobs would report different metrics."""
    heads = {objective(cfg.evaluator) for cfg in configs}
    if len(heads) > 1:
        raise RbmlabError(
            f"hydra/sweeper: the jobs report different headline metrics "
            f"({', '.join(sorted(c for c, _ in heads))}); a sweeper optimises one"
        )
    if any(o.startswith("hydra.sweeper.direction=") for o in hydra_overrides):
        return []
    ((_, spec),) = heads
    maximize = spec.best_at is None and spec.higher_is_better
    return [f"hydra.sweeper.direction={'maximize' if maximize else 'minimize'}"]


def returned_value(cfg, summary: dict) -> float | None:
    """What a job returns to the sweeper: its final headline metric (a metric best at a target:
    its distance from the target, :meth:`MetricSpec.badness`); None for a run that did not
    complete (the optuna sweeper records the trial as failed and goes on; NaN would stop it)."""
    column, spec = objective(cfg.evaluator)
    value = (summary.get("final") or {}).get(column) if summary.get("status") == "completed" else None
    if value is None or not math.isfinite(value):
        return None
    return float(value) if spec.best_at is None else float(spec.badness(value))


def best_line(sweep_dir: Path, configs) -> str | None:
    """One line with the best value and parameters that the sweeper wrote, or None."""
    path = sweep_dir / RESULTS
    if not path.is_file():
        return None
    results = OmegaConf.to_container(OmegaConf.load(path))
    value = results.get("best_value", results.get("best_evaluated_result"))
    if value is None:  # several objectives: a Pareto front
        return f"rbmlab: the sweeper's results: {path}"
    params = results.get("best_params", results.get("best_evaluated_params")) or {}
    chosen = " ".join(f"{k}={v}" for k, v in params.items()) or "the fixed values"
    return (
        f"rbmlab: best {objective_name(*objective(configs[0].evaluator))} {float(value):.6g} "
        f"with {chosen} ({path})"
    )


def no_result(sweep: Sweep, sweep_dir: Path, configs) -> RbmlabError:
    """The error of a sampling sweep that ended without a best value: no job completed with a
    finite headline metric (every trial diverged), so the sweeper had nothing to choose from."""
    column, _ = objective(configs[0].evaluator)
    return RbmlabError(
        f"hydra/sweeper: no trial of the {sweep.sampler} sweep in {sweep_dir} completed with a "
        f"finite {column} (diverged or failed: see each job's summary.json); nothing to optimise"
    )
