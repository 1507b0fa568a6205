"""Packed runs: the jobs of a sweep that share a model family, its sizes and a learner, and differ
in seed, learning rate or data (a task's condition, a dataset's options), trained as one
computation with a leading run axis (``hydra/launcher=packed``).

Only the epoch's training is shared. Everything else is each run's own and done by the runner's
own functions (rbmlab.run.runner): its directory, records and metrics rows, evaluations, its stop
rule, checkpoints, resume and interrupted status. Run r's numbers are those of the run trained
alone, bit for bit on numpy: its model and learner state are slice r of the pack's arrays
(stacked before an epoch, sliced after it), its draws come from its own generators
(rbmlab.backend.run_streams), its mini-batches from its own shuffle, its steps at its own rate
(rbmlab.optimizers.base.RunRates), and a batched matmul computes each slice with the product a
solo run makes. An iteration that stops early or sets converged rows aside (TAP learning's fixed
points) keeps each run's own stopping: on the host each run is its own solve, since a BLAS
product's row depends on the rows computed beside it. A run whose rule stops it, that diverges
or reaches its train.epochs leaves the pack; runs resumed at different epochs pack too (each
epoch draws from its own keys).

Packs: runs whose learner and its sampler (if it samples; a learner with its own inference answers
alone) say they pack (``packs``), with equal model configurations (``model.init`` aside), learner
settings other than ``lr``, backend, training-set size and input shape. Others train alone, one
after another, and say why.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rbmlab.backend import memory_bytes, namespace, reads_are_free
from rbmlab.data.domain import configured_visible_units
from rbmlab.errors import RbmlabError
from rbmlab.learners import LEARNERS
from rbmlab.models.base import DIVERGENCE_REPORTED
from rbmlab.optimizers.base import RunRates
from rbmlab.run import runner
from rbmlab.run.records import RunRecord
from rbmlab.run.signals import interruptible, interruption_of
from rbmlab.run.training import packed_epoch_pass
from rbmlab.validation import to_plain

MAX_RUNS = 128  # runs in one pack unless hydra.launcher.max_runs says otherwise
# On the host a pack stacks its runs only when a run has at most this many parameters; larger ones
# train one after another there. Stacked, a CPU shares only the per-operation overhead of a step,
# and arrays R times a run's fall out of its caches: 4 runs stacked / one after another
# (results/bench/packed/bench.md) 1.20 for CD-1 at 784 × 64, 1.25 (CD-10) and 1.96 (MLE-MF) for a
# 64 × 32 CRBM, but 0.92-1.03 for CD-1 and PCD-1 at 784 × 500 and 0.88-0.99 for crbm_bp's CD-10,
# MLE-MF and MLE-BP at 784 × 256. A device always stacks: a step's launches, not its arithmetic,
# bound it there.
HOST_STACK_PARAMETERS = 1 << 16


@dataclass
class Job:
    """One run of a packed launch: its configuration, directory, overrides and output lines."""

    cfg: Any  # RunConfig
    out: Path
    overrides: list[str]
    echo: Callable[[str], None] = print
    tag: str = ""  # the sweep job's number and swept values, as its lines begin


@dataclass
class Member:
    """A job while it trains: its Setup, record, summary and progress; ``result`` once it ended
    (its summary, or the exception that ended it)."""

    job: Job
    record: RunRecord | None  # None: its directory was refused (result: why)
    summary: dict
    run: runner.Setup | None = None
    p: runner.Progress | None = None
    result: Any = None

    log: logging.Logger | None = None  # its rbmlab.log (a pack's runs share one process's logging)

    @property
    def training(self) -> bool:
        return self.result is None and runner.training(self.run, self.p)

    def echo(self, line: str) -> None:
        """A line of the run: printed (the job's tag first) and in its rbmlab.log."""
        self.job.echo(line)
        if self.log is not None:
            self.log.info(line)


@contextlib.contextmanager
def run_log(out: Path):
    """A logger writing to ``out``/rbmlab.log, as conf/hydra/job_logging/rbmlab.yaml does for a run
    alone (a pack's runs share one process, whose logging Hydra set up for the last job)."""
    logger = logging.getLogger(f"rbmlab.run.job.{out.name}")
    logger.propagate, logger.level = False, logging.INFO
    handler = logging.FileHandler(out / "rbmlab.log")
    handler.setFormatter(logging.Formatter("[%(asctime)s][%(name)s][%(levelname)s] - %(message)s"))
    logger.addHandler(handler)
    try:
        yield logger
    finally:
        logger.removeHandler(handler)
        handler.close()


def alone_because(cfg, learner, model_class: type) -> str | None:
    """Why a run of ``cfg`` (its learner built, its model family) cannot join a pack (None: it can)."""
    if not learner.packs:
        return f"learner={cfg.learner.name} is not packed"
    if learner.samples:  # a learner that draws no samples (its own inference) has no sampler to ask
        sampler = learner.sampler_for(model_class)
        if not sampler.packs:
            return f"its sampler {sampler.config.name} is not packed"
    if cfg.train.trials > 1:
        return "train.trials batches its own models"
    if cfg.train.budgets:
        return "train.budgets stops within an epoch"
    return None


def pack_key(cfg, sizes: dict, data: tuple) -> str:
    """What runs of one pack share: the model's configuration (not its ``init``) and ``sizes``, the
    learner's settings but ``lr``, the backend and ``data``: the training set's size and input
    shape (a run's Setup: :func:`setup_key`)."""
    model = {k: v for k, v in to_plain(cfg.model).items() if k != "init"}
    learner = {k: v for k, v in to_plain(cfg.learner).items() if k != "lr"}
    return json.dumps([model, sizes, learner, to_plain(cfg.backend), list(data)], sort_keys=True, default=str)


def setup_key(run: runner.Setup) -> str:
    """:func:`pack_key` of a prepared run."""
    return pack_key(run.cfg, run.sizes, (run.n_train, *run.train.inputs.shape[1:]))


def stack_models(models: list) -> Any:
    """One model whose every parameter has a leading run axis (copies); its other fields (unit
    types) are the first model's, which the pack key makes every model's."""
    first = models[0]
    xp = first.xp
    return dataclasses.replace(
        first, **{k: xp.stack([getattr(m, k) for m in models]) for k in first.arrays()}
    )


def stack_states(states: list[dict]) -> dict:
    """The learner states of runs at one step: arrays stacked along a run axis; host counters (a
    step count, Adam's t) equal in every run, kept as they are."""
    out = {}
    for key, value in states[0].items():
        values = [s[key] for s in states]
        if isinstance(value, int):
            if any(v != value for v in values):
                raise RuntimeError(f"packed runs disagree on the counter {key}: {values}")
            out[key] = value
        else:
            out[key] = namespace(value).stack(values)
    return out


def run_part(packed, r: int):
    """Run ``r``'s slice of a packed model or learner state (views)."""
    if isinstance(packed, dict):
        return {k: v if isinstance(v, int) else v[r] for k, v in packed.items()}
    return packed.map(lambda a: a[r])


def stacks(members: list[Member]) -> bool:
    """Whether these runs train as one stacked computation here: on a device always; on the host
    when a run has at most HOST_STACK_PARAMETERS parameters (otherwise one after another)."""
    arrays = list(members[0].p.model.arrays().values())
    return not reads_are_free(arrays[0]) or sum(int(a.size) for a in arrays) <= HOST_STACK_PARAMETERS


def train_pack(members: list[Member], learner) -> None:
    """One epoch of every member (each its own next epoch) as one computation by ``learner`` (the
    pack's, built once); each member's progress gets its model, state, updates and the pack's
    training time."""
    lead = members[0].run
    backend = lead.backend
    learner.lr = RunRates([m.run.cfg.learner.lr for m in members])
    t0 = time.perf_counter()
    for m in members:
        m.p.epoch += 1
    model = stack_models([m.p.model for m in members])
    state = stack_states([m.p.state for m in members])
    model, state, updates = packed_epoch_pass(
        learner,
        backend,
        [(m.run.cfg.seed, m.p.epoch) for m in members],
        [m.run.train for m in members],
        lead.n_train,
        lead.cfg.learner.batch_size,
        model,
        state,
    )
    wall = time.perf_counter() - t0
    for r, m in enumerate(members):
        m.p.model, m.p.state = run_part(model, r), run_part(state, r)
        m.p.updates += updates
        m.p.wall += wall


def data_key(cfg) -> str:
    """What a prepared run's ``train``, ``splits`` and ``data_mean`` depend on (runner.prepare):
    the dataset, the task, the backend, the columns the model's visible units encode the data in
    (rbmlab.data.encoding: a Potts layer's one-hot) and the splits the evaluator scores."""
    units = configured_visible_units(cfg.model)
    encoding = None if units is None or units.width() == 1 else [units.name, units.width()]
    return json.dumps(
        [cfg.dataset, to_plain(cfg.task), to_plain(cfg.backend), encoding, list(cfg.evaluator.splits)],
        sort_keys=True,
        default=str,
    )


def _prepared(job: Job, shared: dict) -> runner.Setup:
    """The job's Setup, its data shared with earlier jobs whose data are the same (:func:`data_key`)."""
    run = runner.prepare(job.cfg)
    key = data_key(job.cfg)
    if key in shared:
        first = shared[key]
        return dataclasses.replace(run, train=first.train, splits=first.splits, data_mean=first.data_mean)
    shared[key] = run
    return run


def _fail(m: Member, e: BaseException) -> None:
    """Record a member's failure (its summary.json says failed) and keep the exception."""
    m.record.fail(m.summary, str(e) if isinstance(e, RbmlabError) else f"{type(e).__name__}: {e}")
    m.result = e


def train_jobs(jobs: list[Job], max_runs: int = MAX_RUNS) -> list[Any]:
    """Train ``jobs``, packed where they allow (at most ``max_runs`` a pack); for each job its
    summary, or the exception that ended it (recorded as failed in its directory). The jobs are
    grouped by their configurations first (:func:`groups_of`) and each group is opened, prepared,
    trained and finished before the next is opened, so a sweep holds one group's directories, data
    and models at a time and a finished run is not left waiting as running. A termination signal
    records the group's unfinished jobs as interrupted at their last checkpoints, then goes on (the
    later groups' jobs never started: no record says they run)."""
    results: dict[int, Any] = {}
    with interruptible():
        for group in groups_of(jobs, max_runs):
            results.update(zip(group, _train_group([jobs[i] for i in group], max_runs)))
    return [results[i] for i in range(len(jobs))]


def groups_of(jobs: list[Job], max_runs: int) -> list[list[int]]:
    """The jobs' indices grouped, in job order, by what a pack shares as far as the configuration
    tells it without reading data (:func:`pack_key`, the dataset's options standing for its size),
    at most ``max_runs`` and as many as the backend's memory holds (their parameters and learner
    state) a group; a job that cannot pack, or whose configuration is refused, alone."""
    from rbmlab.data import dataset_dimension  # noqa: PLC0415

    keyed: dict[str, list[int]] = {}
    for i, job in enumerate(jobs):
        cfg = job.cfg
        try:
            model_class, sizes, learner, *_ = runner.components(cfg, dataset_dimension(cfg.dataset))
        except (RbmlabError, MemoryError):  # refused where the job starts: alone
            keyed[f"alone {i}"] = [i]
            continue
        if alone_because(cfg, learner, model_class) is not None:
            keyed[f"alone {i}"] = [i]
            continue
        key = pack_key(cfg, sizes, (cfg.dataset,))
        need = (
            model_class.parameter_count(sizes)
            * runner.PARAMETER_COPIES
            * np.dtype(cfg.backend.dtype).itemsize
        )
        have = memory_bytes(cfg.backend.name)
        fits = max_runs if have is None else max(1, min(max_runs, have // max(need, 1)))
        keyed.setdefault(key, []).append(i)
        if len(keyed[key]) == fits:  # full: the next such job opens a group of its own
            keyed[f"{key} {i}"] = keyed.pop(key)
    return sorted(keyed.values())


def _train_group(jobs: list[Job], max_runs: int) -> list[Any]:
    """:func:`train_jobs` of one group: its directories opened, its runs prepared and started,
    trained in packs, finished; each job's summary or exception."""
    with contextlib.ExitStack() as stack:
        members: list[Member] = []
        shared: dict = {}
        try:
            for job in jobs:
                cfg = job.cfg
                try:
                    record = stack.enter_context(
                        RunRecord.open(
                            job.out, resume=cfg.resume, overwrite=cfg.overwrite, lock_wait=cfg.lock_wait
                        )
                    )
                except RbmlabError as e:  # not this job's directory to write in: it fails, the others go on
                    members.append(Member(job, None, {}, result=e))
                    continue
                m = Member(job, record, {"status": "running", "config_hash": cfg.hash()})
                m.log = stack.enter_context(run_log(job.out))
                members.append(m)
                _start(m, shared)
            for pack in _packs(members, max_runs):
                _train_together(pack)
            for m in members:
                if m.result is None:
                    try:
                        m.result = runner.conclude(m.run, m.record, m.p, m.summary, m.echo)
                    except Exception as e:  # noqa: BLE001 - this run's final evaluation: the others go on
                        _fail(m, e)
        except BaseException as e:
            stop = interruption_of(e)
            for m in members:
                if m.result is None:
                    if stop is not None:
                        m.record.interrupt(m.summary, stop.name)
                    else:
                        _fail(m, e)
            raise
        return [m.result for m in members]


def _start(m: Member, shared: dict) -> None:
    """The member's Setup and progress (its checkpoint's when resumed); a run already complete, or
    one that cannot start, ends here."""
    try:
        m.run = _prepared(m.job, shared)
        m.summary = runner.initial_summary(m.run)
        p = runner.start(m.run, m.record, m.job.overrides, m.summary, m.echo)
    except Exception as e:  # noqa: BLE001 - this job failed; the others go on
        _fail(m, e)
        return
    if isinstance(p, dict):
        m.result = p
        return
    m.p = p
    runner.begin(m.run, m.record, p, m.summary, m.echo)


def _packs(members: list[Member], max_runs: int) -> list[list[Member]]:
    """The members that train, grouped into packs of at most ``max_runs`` in job order (a run that
    cannot pack alone, saying why)."""
    groups: dict[str, list[Member]] = {}
    for m in members:
        if m.result is not None:
            continue
        why = alone_because(m.run.cfg, m.run.learner, m.run.model_class)
        if why is not None:
            m.echo(f"trains alone: {why}")
            groups[f"alone {len(groups)}"] = [m]
        else:
            groups.setdefault(setup_key(m.run), []).append(m)
    packs = [group[i : i + max_runs] for group in groups.values() for i in range(0, len(group), max_runs)]
    for pack in packs:
        if len(pack) > 1:
            how = (
                "" if stacks(pack) else ", one after another on the CPU (models this size stack on a device)"
            )
            for m in pack:
                m.echo(f"packed with {len(pack) - 1} other run(s){how}")
    return packs


def _train_together(pack: list[Member]) -> None:
    """Epochs of a pack until every member ended: each epoch trains the members at the earliest
    epoch together; then each member's own evaluation, rule and checkpoint."""
    stacked = len(pack) > 1 and stacks(pack)
    learner = LEARNERS.build(pack[0].run.cfg.learner) if stacked else None  # its step's own, once
    for m in pack:
        if stacked:  # summary.json: the runs it trained with (its wall_time is the pack's)
            m.summary["packed_runs"] = len(pack)
    while live := [m for m in pack if m.training]:
        epoch = min(m.p.epoch for m in live)
        group = [m for m in live if m.p.epoch == epoch]
        for part in [group] if stacked and len(group) > 1 else [[m] for m in group]:
            try:
                with np.errstate(**DIVERGENCE_REPORTED):
                    if len(part) > 1:
                        train_pack(part, learner)
                    else:  # the solo runner's epoch (budgets, batched trials included)
                        runner.train_epoch(part[0].run, part[0].record, part[0].p)
            except Exception as e:  # noqa: BLE001 - the computation failed: its runs record it, the others go on
                for m in part:
                    _fail(m, e)
        for m in (m for m in group if m.result is None):
            try:
                with np.errstate(**DIVERGENCE_REPORTED):
                    alive = runner.after_epoch(m.run, m.record, m.p, m.summary)
                m.log.info(runner.epoch_line(m.run, m.p))
                if not alive:
                    m.result = runner.end_diverged(m.run, m.record, m.p, m.summary, m.echo)
            except Exception as e:  # noqa: BLE001 - this run's evaluation or files: the others go on
                _fail(m, e)
        runner.epoch_fault_points(epoch + 1)
