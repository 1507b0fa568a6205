"""The training loop: epochs, the evaluation schedule and checkpoints, over the plug-in protocols.

The model family, learner and evaluator come from their registries; the run directory's files
from rbmlab.run.records. Random numbers come from generators keyed by (seed, stream, epoch), so a run
resumed from the checkpoint of epoch e draws exactly what the uninterrupted run drew after e.
"""

from __future__ import annotations

import functools
import json
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from rbmlab import __version__
from rbmlab.backend import Backend, get_backend, memory_bytes, wait_for_device
from rbmlab.config import RunConfig
from rbmlab.data import dataset_dimension, load_dataset
from rbmlab.data.domain import check_run, configured_visible_units
from rbmlab.data.encoding import encoded
from rbmlab.data.tasks import TASKS
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.applicable import check_applies
from rbmlab.evaluators.base import Context, truth_for
from rbmlab.evaluators.metrics import RECORD_KEY, declarations_record
from rbmlab.evaluators.reconstruction import Reconstruction
from rbmlab.learners import LEARNERS
from rbmlab.models import MODELS
from rbmlab.models.base import DIVERGENCE_REPORTED, PARAMETER_LIMIT
from rbmlab.run.budget import GIGA, Budget
from rbmlab.run.checkpoint import load_checkpoint
from rbmlab.run.early_stopping import (
    Decision,
    StopRule,
    best_on_validation,
    can_select,
    gap_of,
    select_from_rows,
)
from rbmlab.run.evaluation import adds_reconstruction, evaluate
from rbmlab.run.pretrained import initial_sizes, start_model
from rbmlab.run.records import DONE, RunRecord
from rbmlab.run.remedies import completion
from rbmlab.run.resume import check_resumed
from rbmlab.run.signals import interruptible, interruption_of
from rbmlab.run.training import (
    EVAL_STREAM,
    FINAL_EVAL_STREAM,
    SHUFFLE_STREAM,  # noqa: F401
    epoch_pass,
    initial_model,
    learner_start,
)
from rbmlab.storage.faults import fault_point, raise_point, sleep_point, stall_point
from rbmlab.storage.provenance import merge_placements, merge_sources, placement, source_revision
from rbmlab.units.requirements import check_configured_units
from rbmlab.validation import is_default, progress_bars, to_plain


@dataclass
class Setup:
    """What a run is made of, built and checked before any training."""

    cfg: RunConfig
    backend: Backend
    model_class: type
    sizes: dict[str, int]
    learner: Any
    evaluator: Any
    train: Any  # Batch of the training set (backend arrays)
    splits: dict[str, Any]  # split name → Batch scored at each evaluation point
    data_mean: np.ndarray  # host mean of the training inputs
    n_train: int
    truth: Any = None  # the dataset's ground-truth model, when the evaluator reads it
    fits_targets: bool = False  # a corruption task: the model is fitted to the clean targets
    stop: StopRule | None = None  # train.stop_rule (None: train to train.epochs)

    @property
    def fit_data(self):
        """The training rows a model's initialisation is fitted to (backend arrays)."""
        return self.train.targets if self.fits_targets else self.train.inputs


@dataclass
class Progress:
    """The state that the loop advances and a checkpoint saves."""

    model: Any
    state: dict
    epoch: int = 0
    updates: int = 0
    wall: float = 0.0  # seconds of training
    eval_wall: float = 0.0  # seconds of the evaluations at epochs (train.eval_every), epoch 0 included
    diverged: dict[int, int] = field(default_factory=dict)  # trial → epoch it went non-finite
    values: list[float] = field(default_factory=list)  # train.stop_rule's series, per point
    epochs: list[int] = field(default_factory=list)  # ... and the epochs of those points
    decision: Decision | None = None  # the rule's, at the newest point
    latest: dict[str, float] = field(default_factory=dict)  # the newest evaluation (progress bar)
    latest_epoch: int = -1  # ... the epoch it scored
    latest_label: str | None = None  # ... how it estimated, where not as the final evaluation does
    work: float = 0.0  # multiply-adds of the learner's products (Learner.step_cost)
    budget: Budget | None = None  # train.budgets and how many it has reached
    budget_final: list[dict[str, float]] | None = None  # the last compute point's evaluation

    @property
    def stopped(self) -> bool:
        return self.decision is not None and self.decision.stop

    @property
    def exhausted(self) -> bool:
        """The last compute point of train.budgets is reached: training ends."""
        return self.budget is not None and self.budget.exhausted


log = logging.getLogger(__name__)  # the run's log: <run dir>/rbmlab.log (conf/hydra/job_logging)

# Arrays of the parameters' size a run holds at once: the parameters, their gradient, optimizer
# buffers (Adam: two), the statistics of the two phases; a bound to refuse the impossible early.
PARAMETER_COPIES = 6


def components(cfg: RunConfig, n_visible: int):
    """(model class, sizes, learner, evaluator) for data of ``n_visible`` dimensions, with every
    check that needs no data: learner and evaluator against the family, memory for the sizes."""
    model_class = MODELS.get(cfg.model.name)
    sizes = initial_sizes(cfg.model, model_class, n_visible, cfg.dataset)
    need = (
        model_class.parameter_count(sizes)
        * max(cfg.train.trials, 1)
        * PARAMETER_COPIES
        * np.dtype(cfg.backend.dtype).itemsize
    )
    have = memory_bytes(cfg.backend.name)
    if have is not None and need > have:
        shape = ", ".join(f"{k}={v}" for k, v in sizes.items())
        raise RbmlabError(
            f"model: a {cfg.model.name} with {shape} (x{cfg.train.trials} trials) needs "
            f"about {need / 2**30:.3g} GiB for its parameters and learner state; "
            f"the {cfg.backend.name} backend has {have / 2**30:.3g} GiB"
        )
    learner, evaluator = LEARNERS.build(cfg.learner), EVALUATORS.build(cfg.evaluator)
    if cfg.train.trials > 1 and not learner.trains_trials:
        raise RbmlabError(
            f"train.trials: {cfg.learner.name} trains one model at a time; use "
            "seeds (-m seed=0,1,2) for independent runs"
        )
    learner.check(model_class)
    learner.check_schedule(cfg.train.epochs)
    reached = learner.sizes_reached(sizes, cfg.train.epochs, pretrained=bool(cfg.model.init))
    check_applies(evaluator, model_class, reached)  # its refusal names the evaluators that apply
    check_configured_units(cfg.model, model_class, learner, evaluator)
    truth_for(evaluator, cfg.dataset, build=False)
    return model_class, sizes, learner, evaluator, stop_rule_of(cfg, model_class, evaluator)


def recorded_specs(model_class, evaluator):
    """The MetricSpecs of an evaluation's columns: the evaluator's, and the reconstruction error
    every evaluation adds for a model that reconstructs (rbmlab.run.evaluation)."""
    extra = Reconstruction.metrics if adds_reconstruction(model_class, evaluator) else ()
    return (*evaluator.metrics, *extra)


def stop_rule_of(cfg: RunConfig, model_class, evaluator) -> StopRule | None:
    """``train.stop_rule`` as a :class:`StopRule`, refused in one line where the evaluation does
    not record what it reads: the train − valid gap (gap) or ``train.stop_metric`` (valid)."""
    t, splits = cfg.train, set(cfg.evaluator.splits)
    names = {s.name for s in evaluator.metrics}
    records_gap = {"train", "valid"} <= splits and bool(names & {"log_likelihood", "train_valid_gap"})
    for key in ("gap_kappa", "gap_warmup"):  # the gap rule's, read where the gap is recorded
        if not records_gap and not is_default(t, key):
            raise RbmlabError(
                f"train.{key}: the gap rule's, read where the run records the train − valid gap; "
                f"evaluator={evaluator.config.name} with splits {sorted(splits)} does not (e.g. "
                "evaluator.splits=[train,valid,test] with exact, ais or free_energy); remove it"
            )
    if t.stop_rule == "none":
        return None
    if t.stop_rule == "gap":
        if not records_gap:
            raise RbmlabError(
                f"train.stop_rule: gap reads the train − valid gap; evaluator="
                f"{evaluator.config.name} with splits {sorted(splits)} does not record it "
                "(use evaluator=free_energy, exact or ais with "
                "evaluator.splits=[train,valid,test])"
            )
        return StopRule("gap", kappa=t.gap_kappa, warmup=t.gap_warmup)
    bare = t.stop_metric.removeprefix("valid_")
    spec = next((s for s in recorded_specs(model_class, evaluator) if s.per_split and s.name == bare), None)
    if spec is None or "valid" not in splits:
        have = sorted(f"valid_{s.name}" for s in recorded_specs(model_class, evaluator) if s.per_split)
        raise RbmlabError(
            f"train.stop_metric: evaluator={evaluator.config.name} with splits "
            f"{sorted(splits)} does not record {t.stop_metric} (per-split metrics: "
            f"{', '.join(have) or 'none'}; the valid split must be in evaluator.splits)"
        )
    return StopRule("valid", patience=t.patience, metric=spec)


@functools.lru_cache(maxsize=32)
def _facts(dataset_json: str):
    return load_dataset(**json.loads(dataset_json)).facts()


def check_feasible(cfg: RunConfig, read_data: bool = True) -> None:
    """Every check :func:`prepare` makes, before any job of a sweep starts, cheapest first: those
    that need only the data's dimension (enumeration sizes, memory) from the dataset's options,
    then (``read_data``) those that read the data, once per distinct dataset configuration
    (files, sampling; its values against the model's units)."""
    components(cfg, dataset_dimension(cfg.dataset))
    if read_data:
        facts = _facts(json.dumps(cfg.dataset, sort_keys=True))
        check_run(cfg, facts, completion(cfg, facts.n_visible))


def prepare(cfg: RunConfig) -> Setup:
    """Data on the backend, components from their registries, every feasibility check."""
    backend = get_backend(cfg.backend.name, cfg.backend.dtype)
    data = load_dataset(**cfg.dataset)
    model_class, sizes, learner, evaluator, stop = components(cfg, data.n_visible)
    check_run(cfg, data.facts(), completion(cfg, data.n_visible))
    data = encoded(data, configured_visible_units(cfg.model))  # Potts codes → one-hot columns
    task = TASKS.build(cfg.task or TASKS.parse("none"))
    to_device = lambda batch: batch.map(backend.asarray)  # noqa: E731
    train = task.batch(data, "train")
    # a corruption task's model predicts the clean targets: its base rates are theirs
    data_mean = (train.targets if task.corrupts else train.inputs).mean(axis=0)
    return Setup(
        cfg,
        backend,
        model_class,
        sizes,
        learner,
        evaluator,
        to_device(train),
        {s: to_device(task.batch(data, s)) for s in cfg.evaluator.splits},
        data_mean,
        int(data.train.shape[0]),
        truth_for(evaluator, cfg.dataset),
        task.corrupts,
        stop,
    )


def all_finite(metrics: dict[str, float]) -> bool:
    """NaN/inf in any metric (AIS interval ends excepted: a lower end of −inf is legitimate)."""
    return all(np.isfinite(v) for k, v in metrics.items() if not k.endswith(("_lower", "_upper")))


def evaluate_trials(
    run: Setup,
    model,
    key: tuple[int, ...],
    skip=(),
    final: bool = False,
    state=None,
    iterations: int | None = None,
) -> list[dict[str, float]]:
    """Metrics of each trial of ``model`` not in ``skip`` (one dict, without a trial key, for a
    single model). Trial t draws from the stream ``key + (t,)``, independent of the others.
    ``state``: the learner's, for the budget of its inference (Context.inference_iterations);
    without it, ``iterations`` is that budget."""
    progress = final and progress_bars(run.cfg.train.progress) and progress_bars(run.cfg.evaluator.progress)
    iterations = iterations if state is None else run.learner.inference_iterations(state)

    def one(m, rng):
        context = Context(
            rng=rng,
            final=final,
            progress=progress,
            train=run.train,
            data_mean=run.data_mean,
            inference_iterations=iterations,
            truth=run.truth,
        )
        return evaluate(m, run.splits, run.evaluator, context)

    if not model.n_trials:
        return [one(model, run.backend.rng(*key))]
    return [
        {"trial": t, **one(model.trial(t), run.backend.rng(*key, t))}
        for t in range(model.n_trials)
        if t not in skip
    ]


def evaluate_at_epoch(run: Setup, p: Progress, skip=()) -> list[dict[str, float]]:
    """The scheduled evaluation of ``p.model`` at ``p.epoch`` (train.eval_every), timed into
    ``p.eval_wall``; ``p.latest`` holds its metrics (the mean over trials)."""
    t0 = time.perf_counter()
    rows = evaluate_trials(run, p.model, (run.cfg.seed, EVAL_STREAM, p.epoch), skip=skip, state=p.state)
    p.eval_wall += time.perf_counter() - t0
    p.latest = mean_over_trials(rows) if rows else {}
    p.latest_epoch, p.latest_label = p.epoch, run.evaluator.curve_estimate()
    return rows


def mean_over_trials(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = [k for k in rows[0] if k != "trial"]
    return {k: float(np.mean([r[k] for r in rows])) for k in keys}


def newly_diverged(finite: list[bool], rows: list[dict[str, float]], diverged: dict[int, int]) -> list[int]:
    """Trials (0 for a single model) not yet in ``diverged`` whose parameters are not ``finite``
    (per trial, as from Model.finite_trials) or whose metric ``rows`` hold NaN/inf."""
    bad = {t for t, ok in enumerate(finite) if not ok}
    bad |= {int(r.get("trial", 0)) for r in rows if not all_finite(r)}
    return sorted(bad - set(diverged))


def start(run: Setup, record: RunRecord, overrides, summary: dict, echo) -> Progress | dict:
    """The progress to continue from: the checkpoint's (resume=true) or a fresh model with its
    epoch-0 evaluation. A completed run of the same configuration is returned as its summary."""
    cfg, backend = run.cfg, run.backend
    if cfg.resume:
        previous = record.previous_summary()
        if previous.get("status") in DONE and previous.get("config_hash") == summary["config_hash"]:
            echo(f"run in {record.out} is already complete ({previous['status']}); nothing to resume")
            return previous
        if record.checkpoint.exists():
            model, meta, state = record.load(summary["config_hash"])
            check_resumed(run, record.checkpoint, model, meta, state)
            summary["source"] = merge_sources(previous.get("source"), summary["source"])
            summary["ran_on"] = merge_placements(previous, [placement(meta["epoch"])])
            record.metrics.truncate(meta["epoch"])
            echo(f"resuming from {record.checkpoint} at epoch {meta['epoch']}")
            p = Progress(
                model.map(backend.asarray),
                backend.learner_state(state),
                meta["epoch"],
                meta["updates"],
                meta["wall_time"],
                meta.get("eval_time", 0.0),
                {int(t): e for t, e in meta.get("diverged_trials", {}).items()},
                work=float(meta.get("work", 0.0)),
                budget=Budget.of(cfg.train),
            )
            if p.budget is not None:
                p.budget.restore(p.budget.spent(p.wall, p.work))
            return restore_rule(run, record, p)
        if previous.get("config_hash") == summary["config_hash"]:  # stopped before its first checkpoint:
            summary["ran_on"] = merge_placements(previous, summary["ran_on"])  # starts over, after it
    model = starting_model(run)
    progress = Progress(
        *learner_start(run.learner, model, backend, cfg.seed, run.train, pretrained=bool(cfg.model.init)),
        budget=Budget.of(cfg.train),
    )
    check_countable(run, progress)
    record.start(cfg, overrides)
    if cfg.train.eval_every and not evaluation_only(run):
        for row in evaluate_at_epoch(run, progress):
            record.metrics.append(epoch_zero_row(run, progress, row))
            judge(run, record, progress, row)
    return progress


def starting_model(run: Setup):
    """The model a run starts from, on its backend: ``model.init``'s (a checkpoint, the dataset's
    ground truth), else the family's initialisation; ``train.trials`` copies of it where set."""
    cfg, backend = run.cfg, run.backend
    trials = cfg.train.trials if cfg.train.trials > 1 else 0
    if cfg.model.init:
        return start_model(
            cfg.model,
            run.model_class,
            run.train.inputs.shape[-1],
            xp=backend.xp,
            dtype=backend.dtype,
            trials=trials,
            dataset=cfg.dataset,
        )
    return initial_model(run.model_class, cfg.model, backend, cfg.seed, run.data_mean, run.fit_data, trials)


def evaluation_only(run: Setup) -> bool:
    """train.epochs=0 with train.eval_every and no stop rule (which judges the epoch-0 row): the
    run's one evaluation, the final one, is also its epoch-0 row (not a second evaluation of the
    same model; :func:`finish` writes it)."""
    cfg = run.cfg.train
    return cfg.epochs == 0 and bool(cfg.eval_every) and run.stop is None and not cfg.budgets


def epoch_zero_row(run: Setup, p: Progress, row: dict[str, float]) -> dict[str, float]:
    """metrics.csv's row of the untrained model: its evaluation ``row`` at epoch 0."""
    return {"epoch": 0, "updates": 0, "wall_time": 0.0, **budget_columns(p), **learner_columns(run, p), **row}


def rule_value(run: Setup, row: dict) -> float:
    """What train.stop_rule reads from a metrics row: the gap, or train.stop_metric."""
    return gap_of(row) if run.stop.rule == "gap" else float(row[run.cfg.train.stop_metric])


def judge(run: Setup, record: RunRecord, p: Progress, row: dict) -> None:
    """train.stop_rule at a new evaluation point: its value joins the series, the rule decides,
    and the model of a point the rule may select is kept as selected.npz (the best so far; for
    gap, the newest: the point before a jump is the one selected)."""
    if run.stop is None:
        return
    p.values.append(rule_value(run, row))
    p.epochs.append(p.epoch)
    p.decision = run.stop.decide(p.values)
    if p.decision.keep:
        record.save_selected(
            p.model,
            {
                "epoch": p.epoch,
                "config_hash": run.cfg.hash(),
                "inference_iterations": run.learner.inference_iterations(p.state),
                **p.model.model_sizes(),
            },
            run.backend.to_numpy,
        )


def restore_rule(run: Setup, record: RunRecord, p: Progress) -> Progress:
    """The rule's series and decision of a resumed run, recomputed from its metrics rows (cut
    back to the checkpoint's epoch); selected.npz already holds the point it selects."""
    if run.stop is not None:
        rows = record.metrics.rows()
        p.values, p.epochs = [rule_value(run, r) for r in rows], [int(r["epoch"]) for r in rows]
        p.decision = run.stop.decide(p.values) if rows else None
    return p


def learner_columns(run: Setup, p: Progress) -> dict[str, float]:
    """What the learner adds to each metrics row: the sizes it grows and its diagnostics."""
    sizes = p.model.model_sizes()
    return {**{name: sizes[name] for name in run.learner.grows}, **run.learner.diagnostics(p.state)}


def budget_columns(p: Progress, point: float | None = None) -> dict[str, float | None]:
    """What a run with train.budgets adds to each metrics row: the compute so far (gmac) and, at a
    compute point, the point (empty on the rows of train.eval_every)."""
    return {} if p.budget is None else {"gmac": p.work / GIGA, "budget": point}


def train_epoch(run: Setup, record: RunRecord, p: Progress) -> None:
    """One pass over the shuffled training set (to the last compute point of train.budgets, if
    that comes first)."""
    cfg, backend = run.cfg, run.backend
    p.epoch += 1
    clock = [time.perf_counter()]  # the training time not yet in p.wall starts here
    after_step = None if p.budget is None else lambda *step: budget_step(run, record, p, clock, *step)
    p.model, p.state, updates = epoch_pass(
        run.learner,
        backend,
        cfg.seed,
        p.epoch,
        run.train,
        run.n_train,
        cfg.learner.batch_size,
        p.model,
        p.state,
        after_step,
    )
    p.updates += updates
    p.wall += time.perf_counter() - clock[0]


def budget_step(
    run: Setup,
    record: RunRecord,
    p: Progress,
    clock: list[float],
    model,
    state,
    rows: int,
    seen: int,
    updates: int,
) -> bool:
    """After a step of a run with train.budgets: its compute counted; at each compute point it
    reaches, the model scored with the final evaluation's settings (stream (seed, final, point))
    into a metrics row, its time kept out of the training clock. True once the last is reached."""
    cost = run.learner.step_cost(model, rows, state)
    if cost is None and p.budget.unit == "gmac":
        raise uncountable(run)
    p.work += float("nan") if cost is None else cost
    if p.budget.unit == "seconds":  # the clock waits for the step cupy launched asynchronously
        wait_for_device(run.backend.xp)
    now = time.perf_counter()
    p.wall += now - clock[0]
    due = p.budget.due(p.budget.spent(p.wall, p.work))
    if due:
        p.model, p.state = model, state
        at = {
            "epoch": round(p.epoch - 1 + seen / run.n_train, 6),
            "updates": p.updates + updates,
            "wall_time": round(p.wall, 4),
        }
        rows_ = evaluate_trials(run, model, point_key(run, p.budget.reached), final=True, state=state)
        for i in due:
            for row in rows_:
                record.metrics.append(
                    {**at, **budget_columns(p, p.budget.points[i]), **learner_columns(run, p), **row}
                )
        p.latest = mean_over_trials(rows_)
        p.latest_epoch, p.latest_label = p.epoch, None  # the final evaluation's settings
        p.budget_final = rows_
        clock[0] = time.perf_counter()
        p.eval_wall += clock[0] - now
    else:
        clock[0] = now
    return p.exhausted


def uncountable(run: Setup) -> RbmlabError:
    return RbmlabError(
        f"train.budget_unit: gmac counts the multiply-adds each learner declares; "
        f"learner={run.cfg.learner.name} with its sampler declares none (use seconds)"
    )


def check_countable(run: Setup, p: Progress) -> None:
    """train.budget_unit=gmac refused before any work when the learner declares no step cost."""
    if p.budget is not None and p.budget.unit == "gmac" and not run.learner.declares_cost(type(p.model)):
        raise uncountable(run)


def final_key(run: Setup, p: Progress) -> tuple[int, ...]:
    """The random stream of a final evaluation: (seed, final) at the end of training, (seed,
    final, n) at the n-th compute point reached (the last one's is the run's final)."""
    if p.exhausted:  # a run cut short by train.epochs is scored at its end, not its last point
        return point_key(run, p.budget.reached)
    return (run.cfg.seed, FINAL_EVAL_STREAM)


def point_key(run: Setup, n: int) -> tuple[int, ...]:
    """The random stream of the evaluation at the n-th compute point reached."""
    return (run.cfg.seed, FINAL_EVAL_STREAM, n)


def after_epoch(run: Setup, record: RunRecord, p: Progress, summary: dict) -> bool:
    """Divergence checks, the scheduled evaluation and checkpoint; False once every trial is gone."""
    cfg = run.cfg
    every, last = cfg.train.eval_every, p.epoch == cfg.train.epochs
    n_models = max(p.model.n_trials, 1)
    p.diverged.update(dict.fromkeys(newly_diverged(p.model.finite_trials(), [], p.diverged), p.epoch))
    scheduled = (every and p.epoch % every == 0) or last
    if scheduled and not p.exhausted and len(p.diverged) < n_models:  # exhausted: scored at its point
        rows = evaluate_at_epoch(run, p, skip=p.diverged)
        for row in rows:
            record.metrics.append(
                {
                    "epoch": p.epoch,
                    "updates": p.updates,
                    "wall_time": round(p.wall, 4),
                    **budget_columns(p),
                    **learner_columns(run, p),
                    **row,
                }
            )
        p.diverged.update(dict.fromkeys(newly_diverged([], rows, p.diverged), p.epoch))
        if not p.diverged:  # a single model: train.stop_rule refuses trials
            judge(run, record, p, rows[0])
    if len(p.diverged) == n_models:
        return False
    if cfg.train.snapshot_every and p.epoch % cfg.train.snapshot_every == 0:
        record.save_snapshot(
            p.model,
            {"epoch": p.epoch, "config_hash": summary["config_hash"], **p.model.model_sizes()},
            run.backend.to_numpy,
        )
    if p.epoch % cfg.train.checkpoint_every == 0 or last or p.stopped or p.exhausted:
        save_checkpoint_of(run, record, p, summary)
        record.write_summary({**summary, "epochs_done": p.epoch})
    return True


def save_checkpoint_of(run: Setup, record: RunRecord, p: Progress, summary: dict) -> None:
    record.save(
        p.model,
        p.state,
        {
            "epoch": p.epoch,
            "updates": p.updates,
            "wall_time": p.wall,
            "eval_time": p.eval_wall,
            "work": p.work,
            "config_hash": summary["config_hash"],
            "config": to_plain(run.cfg),
            "rbmlab_version": __version__,
            "diverged_trials": {str(t): e for t, e in p.diverged.items()},
        },
        run.backend.to_numpy,
    )


def initial_summary(run: Setup) -> dict[str, Any]:
    cfg = run.cfg
    return {
        "status": "running",
        "config_hash": cfg.hash(),
        "scale": cfg.scale,
        "seed": cfg.seed,
        "dataset": cfg.dataset["name"],
        "model": cfg.model.name,
        "learner": cfg.learner.name,
        "evaluator": cfg.evaluator.name,
        **run.sizes,
        "epochs": cfg.train.epochs,
        "rbmlab_version": __version__,
        "backend": cfg.backend.name,
        "dtype": cfg.backend.dtype,
        "n_train": run.n_train,
        "pid": os.getpid(),
        "trials": cfg.train.trials,
        "source": source_revision(),
        "ran_on": [placement(0)],
        RECORD_KEY: declarations_record(recorded_specs(run.model_class, run.evaluator)),  # reports rank by
    }


def train(
    cfg: RunConfig,
    out_dir: str | Path,
    overrides: list[str] | None = None,
    echo: Callable[[str], None] = print,
) -> dict[str, Any]:
    """Train and evaluate one configuration in ``out_dir``; returns the summary dict.

    The directory is owned (locked) for the whole run; a failure after that is recorded in its
    summary.json (status failed), and a termination signal as status interrupted with the epoch
    of the last checkpoint (``resume=true`` continues it), before the exception goes on.
    """
    with (
        RunRecord.open(
            Path(out_dir), resume=cfg.resume, overwrite=cfg.overwrite, lock_wait=cfg.lock_wait
        ) as record,
        interruptible(),
    ):
        summary = {"status": "running", "config_hash": cfg.hash(), "pid": os.getpid()}
        try:
            run = prepare(cfg)
            summary = initial_summary(run)
            return _train(run, record, overrides, summary, echo)
        except Exception as e:
            record.fail(summary, str(e) if isinstance(e, RbmlabError) else f"{type(e).__name__}: {e}")
            raise
        except BaseException as e:  # SIGTERM, SIGINT, SIGHUP, SIGUSR2 (rbmlab.run.signals)
            stop = interruption_of(e)
            if stop is not None:
                record.interrupt(summary, stop.name)
            raise


def _train(run: Setup, record: RunRecord, overrides, summary: dict, echo) -> dict[str, Any]:
    cfg = run.cfg
    p = start(run, record, overrides, summary, echo)
    if isinstance(p, dict):  # already complete
        return p
    begin(run, record, p, summary, echo)
    bar = tqdm(
        total=cfg.train.epochs,
        initial=p.epoch,
        desc=f"train {cfg.learner.name}",
        unit="epoch",
        disable=not progress_bars(cfg.train.progress),
        leave=False,
    )
    show_latest(run, bar, p.latest)
    while training(run, p):
        with np.errstate(**DIVERGENCE_REPORTED):  # after_epoch says it, once
            train_epoch(run, record, p)
            alive = after_epoch(run, record, p, summary)
        log.info(epoch_line(run, p))
        bar.update(1)
        show_latest(run, bar, p.latest)
        if not alive:
            bar.close()
            return end_diverged(run, record, p, summary, echo)
        epoch_fault_points(p.epoch)
    bar.close()
    return conclude(run, record, p, summary, echo)


def epoch_line(run: Setup, p: Progress) -> str:
    """The run log's line for the epoch just trained: updates, training time, and the headline
    where this epoch was scored (with how it was estimated, where not as the final evaluation)."""
    column = run.evaluator.headline_column(run.cfg.evaluator.splits[0])
    value = p.latest.get(column) if p.latest_epoch == p.epoch else None
    label = f" ({p.latest_label})" if p.latest_label else ""
    shown = "" if value is None else f", {column} {value:.6g}{label}"
    return f"epoch {p.epoch}/{run.cfg.train.epochs}: updates {p.updates}, training {p.wall:.4g} s{shown}"


def begin(run: Setup, record: RunRecord, p: Progress, summary: dict, echo) -> None:
    """A started run's summary.json (status running) and its first line."""
    record.write_summary({**summary, "epochs_done": p.epoch})
    echo(f"run directory: {record.out}")


def training(run: Setup, p: Progress) -> bool:
    """Whether the run trains another epoch: train.epochs not reached, not stopped by its rule,
    its last compute point not reached."""
    return p.epoch < run.cfg.train.epochs and not p.stopped and not p.exhausted


def epoch_fault_points(epoch: int) -> None:
    """The tests' fault-injection points after an epoch (rbmlab.storage.faults)."""
    fault_point("after_epoch", epoch)
    raise_point("raise_after_epoch", epoch)
    stall_point("stall_after_epoch", epoch)
    sleep_point("sleep_after_epoch")


def end_diverged(run: Setup, record: RunRecord, p: Progress, summary: dict, echo) -> dict[str, Any]:
    """The end of a run whose every model diverged: the final evaluation of the point
    train.stop_rule selected, if any; otherwise summary.json status diverged."""
    if run.stop is not None and p.decision is not None:
        echo(
            f"diverged at epoch {p.epoch}; under train.stop_rule={run.cfg.train.stop_rule} the final "
            f"evaluation is of epoch {p.epochs[p.decision.selected]}'s model (selected.npz)"
        )
        return finish(run, record, p, summary, echo)
    summary.update(
        status="diverged",
        epochs_done=p.epoch,
        updates=p.updates,
        wall_time=p.wall,
        eval_time=p.eval_wall,
        final={},
        **_trial_records(p.model, [], p.diverged),
    )
    record.write_summary(summary)
    echo(
        f"diverged at epoch {p.epoch}: parameters beyond ±{PARAMETER_LIMIT:g} or non-finite, "
        "or non-finite metrics; recorded as diverged"
    )
    return summary


def conclude(run: Setup, record: RunRecord, p: Progress, summary: dict, echo) -> dict[str, Any]:
    """The end of a run that trained to its end (train.epochs, its stop rule, its budget)."""
    if p.stopped:
        echo(
            f"train.stop_rule={run.cfg.train.stop_rule}: stopped at epoch {p.epoch}; the final "
            f"evaluation is of epoch {p.epochs[p.decision.selected]}'s model (selected.npz)"
        )
    if p.epoch == 0:  # train.epochs=0: the untrained model is the run's checkpoint
        save_checkpoint_of(run, record, p, summary)
    return finish(run, record, p, summary, echo)


def _evaluate_selected(run: Setup, record: RunRecord, p: Progress, summary: dict) -> tuple[Any, list]:
    """The final evaluation of the model train.stop_rule selected, from its checkpoint; records
    the selection in ``summary["stopped"]``."""
    model, meta, _ = load_checkpoint(record.selected)
    if meta.get("epoch") != p.epochs[p.decision.selected]:
        raise RbmlabError(
            f"{record.selected}: holds epoch {meta.get('epoch')}'s model, the rule "
            f"selected epoch {p.epochs[p.decision.selected]}; rerun with overwrite=true"
        )
    finals = evaluate_trials(
        run,
        model.map(run.backend.asarray),
        (run.cfg.seed, FINAL_EVAL_STREAM),
        final=True,
        iterations=meta.get("inference_iterations"),
    )
    summary["stopped"] = stopped_record(run, p, meta)
    if p.diverged:  # training went on past the selected point and diverged: recorded, not final
        summary["stopped"]["diverged_epoch"] = p.diverged.pop(0)
    return model, finals


def finish(run: Setup, record: RunRecord, p: Progress, summary: dict, echo) -> dict[str, Any]:
    """The final evaluation (full schedules) and the completed summary; under train.stop_rule,
    of the model the rule selected (also when training diverged after it: summary.json
    ``stopped.diverged_epoch``)."""
    evaluated, t0 = p.model, time.perf_counter()
    if p.exhausted and p.budget_final is not None:  # scored at the last compute point already
        finals = p.budget_final
    elif run.stop is None:
        finals = evaluate_trials(run, p.model, final_key(run, p), skip=p.diverged, final=True, state=p.state)
    else:
        evaluated, finals = _evaluate_selected(run, record, p, summary)
    final_eval = time.perf_counter() - t0
    if evaluation_only(run):  # its rows are the final ones: none left by a run killed while writing them
        record.metrics.truncate(-1)
        for row in finals:
            record.metrics.append(epoch_zero_row(run, p, row))
    p.diverged.update(dict.fromkeys(newly_diverged([], finals, p.diverged), p.epoch))
    live = [f for f in finals if int(f.get("trial", 0)) not in p.diverged]
    trials = p.model.n_trials
    final = (mean_over_trials(live) if trials else live[0]) if live else {}
    unreached = p.budget is not None and not p.budget.exhausted
    summary.update(
        status="diverged" if not live else "capped" if unreached else "completed",
        epochs_done=p.epoch,
        updates=p.updates,
        wall_time=p.wall,
        eval_time=p.eval_wall,
        final_eval_time=final_eval,
        final=final,
        **_trial_records(p.model, live, p.diverged),
        **evaluated.model_sizes(),  # the sizes of the model ``final`` scores
        **budget_summary(p),
    )
    stopping = early_stopping_of(run, record) if live and not trials else None
    if stopping:
        summary["early_stopping"] = stopping
    record.write_summary(summary)
    echo(time_shares(run, p.wall, p.eval_wall, final_eval))
    if unreached:
        echo(unreached_line(run, p))
    if not live:
        echo("diverged: non-finite final metrics; recorded as diverged")
        return summary
    note = f" (mean over {len(live)} trials)" if trials else ""
    if p.diverged and trials:
        note = f" (mean over {len(live)} of {trials} trials; {len(p.diverged)} diverged)"
    echo(run.evaluator.headline(final, run.cfg.evaluator.splits[0]) + note)
    return summary


def budget_summary(p: Progress) -> dict[str, Any]:
    """summary.json ``gmac`` and ``budget`` of a run with train.budgets: the compute spent and the
    compute points reached (the final metrics are the last one's)."""
    if p.budget is None:
        return {}
    return {
        "gmac": p.work / GIGA,
        "budget": {
            "unit": p.budget.unit,
            "points": list(p.budget.points),
            "reached": p.budget.reached,
            "unreached": list(p.budget.points[p.budget.reached :]),
            "spent": p.budget.spent(p.wall, p.work),
        },
    }


def unreached_line(run: Setup, p: Progress) -> str:
    """The last lines' word on compute points of train.budgets the run did not reach."""
    b = p.budget
    unit = "s" if b.unit == "seconds" else " gmac"
    missed = ", ".join(f"{x:g}" for x in b.points[b.reached :])
    return (
        f"status capped: train.epochs={run.cfg.train.epochs} ended training at {b.spent(p.wall, p.work):.4g}"
        f"{unit}, before compute point(s) {missed} of train.budgets ({b.reached} of {len(b.points)} "
        "reached and scored); raise train.epochs to reach them"
    )


def show_latest(run: Setup, bar, latest: dict[str, float]) -> None:
    """The progress bar's postfix: the newest value of the evaluator's headline metric."""
    column = run.evaluator.headline_column(run.cfg.evaluator.splits[0])
    if column in latest:
        bar.set_postfix_str(f"{column}={latest[column]:.4g}")


def time_shares(run: Setup, train_s: float, epochs_s: float, final_s: float) -> str:
    """Where the run's time went: training, the evaluations at epochs (and the settings that set
    their cost) and the final evaluation."""
    total = train_s + epochs_s + final_s
    share = (lambda s: f"{100 * s / total:.0f}%") if total > 0 else (lambda s: "0%")
    knobs = ", ".join(
        [
            f"train.eval_every={run.cfg.train.eval_every}",
            *(f"evaluator.{k}={getattr(run.cfg.evaluator, k)}" for k in run.evaluator.epoch_cost),
        ]
    )
    return (
        f"time: training {train_s:.3g} s ({share(train_s)}), evaluation at epochs {epochs_s:.3g} s "
        f"({share(epochs_s)}; {knobs}), final evaluation {final_s:.3g} s ({share(final_s)})"
    )


def stopped_record(run: Setup, p: Progress, selected_meta: dict) -> dict[str, Any]:
    """summary.json ``stopped``: where training ended, the point the rule selected (its epoch,
    value and grown sizes) and whether the rule fired (False: it ran to train.epochs)."""
    d = p.decision
    return {
        "epoch": p.epoch,
        "selected_epoch": p.epochs[d.selected],
        "rule": run.stop.rule,
        "fired": d.stop,
        "value": p.values[d.selected],
        "criterion": run.stop.describe(run.cfg.train.stop_metric),
        **{k: selected_meta[k] for k in run.learner.grows if k in selected_meta},
    }


def early_stopping_of(run: Setup, record: RunRecord) -> dict[str, Any] | None:
    """The evaluation point early stopping selects (rbmlab.run.early_stopping): the train − valid
    gap rule when the run recorded both log-likelihoods, else the best validation value of the
    evaluator's first metric (pixel error); training itself runs to the end."""
    metric = run.evaluator.metrics[0] if run.evaluator.metrics else None
    if not can_select(record.metrics.header(), metric):
        return None  # (and pandas, a fifth of a second of a run, is not imported)
    import pandas as pd  # noqa: PLC0415

    rows = pd.read_csv(record.metrics.path)
    gap = select_from_rows(rows, kappa=run.cfg.train.gap_kappa, warmup=run.cfg.train.gap_warmup)
    if gap is not None or metric is None:
        return gap
    return best_on_validation(rows, metric)


def _trial_records(model, live: list[dict[str, float]], diverged: dict[int, int]) -> dict[str, Any]:
    """summary.json entries of a batched run: every trial's final metrics or divergence epoch."""
    if not model.n_trials:
        return {}
    by_trial = {int(f["trial"]): f for f in live}
    records = [
        by_trial.get(t) or {"trial": t, "status": "diverged", "diverged_epoch": diverged.get(t)}
        for t in range(model.n_trials)
    ]
    return {"final_trials": records, "diverged_trials": sorted(diverged)}
