"""A paper tier's price on a GPU, job by job (issue 55, item 4), with :mod:`rbmlab.bench.price`.

Every job of a sweep experiment at a tier (its override lists: rbmlab.experiment.tier_jobs) is
composed as ``rbmlab run`` composes it and prepared as the runner prepares it (its data read, its
model initialised, its learner started), then two things are counted on the paths a device runs:
one update of its learner, and one of its evaluations. A job whose model comes from another
experiment's runs is prepared with that experiment's model settings and a fresh initialisation
(the same sizes: the same work). The jobs are grouped into packs as ``hydra/launcher=packed``
groups them (rbmlab.run.packed: pack_key, alone_because, at most MAX_RUNS a pack); a pack's update
is one computation whose operations carry every run's work, each run's evaluation its own.

    seconds of a pack = Σ_epochs steps_per_epoch · update(epoch).seconds(rates, runs)
                        + runs · (evaluations · evaluation.seconds(rates) + final.seconds(rates))

An evaluation whose cost is a loop (AIS's temperatures, TAP's iterations, a sampler's sweeps, the
scored chunks and their BP or mean-field iterations) is counted at one and two turns of its loop
and extended to its length, since counting runs the arithmetic on the host; a learner step that
is a loop (TAP's iterations) likewise. The learner's update at the first epoch and the second
gives its growth with the epoch (crbm_bp's budget T = 7 + epoch), extended linearly. What a job
does on the host (Frank-Wolfe's L-BFGS-B oracle, an LP solver, a scikit-learn classifier) is not
device work and is named in the job's note.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np

from rbmlab.bench.price import Counted, DeviceRates, as_counting, count

# evaluators whose device work a GPU would not do: they are priced as their counted part and noted
HOST_WORK = {
    "map_time": "it times MAP solvers, some on the host",
    "test_error": "its classifier on the hidden features is scikit-learn's, on the host",
}
LEARNER_HOST_WORK = {"frank_wolfe": "Alg. 1's linear oracle is scipy's L-BFGS-B on the host"}


@dataclass
class Linear:
    """A cost counted at one and two turns of a loop (``at_one``, ``at_two``) and extended
    linearly: to ``length`` turns where it has one (a loop's length), else to the turn asked for
    (``at``: the epoch, for a learner whose budget grows with it)."""

    at_one: Counted
    at_two: Counted
    length: int | None = None

    def seconds(self, rates: DeviceRates, runs: int = 1, at: int = 1) -> float:
        turns = at if self.length is None else self.length
        first = self.at_one.seconds(rates, runs)
        return first + (self.at_two.seconds(rates, runs) - first) * (turns - 1)


@dataclass
class Bilinear:
    """A loop within a loop (BP's iterations within each scored chunk): counted at (1, 1)
    turns (``at_one``), (2, 1) (``at_two``) and (1, 2) (``inner``), extended to ``length`` outer
    and ``inner_length`` inner turns: cost = e + turns · (s + inner · i)."""

    at_one: Counted
    at_two: Counted
    length: int
    inner: Counted
    inner_length: int

    def seconds(self, rates: DeviceRates) -> float:
        c11, c21 = self.at_one.seconds(rates), self.at_two.seconds(rates)
        i = self.inner.seconds(rates) - c11  # one more inner turn
        s = c21 - c11 - i  # one more outer turn, at one inner
        e = c11 - s - i
        return e + self.length * (s + self.inner_length * i)


@dataclass
class JobPrice:
    """One experiment's jobs at a tier, as packs: each pack's run count, its update (Linear in
    the epoch), each run's evaluation at an epoch and at the end (Linear in their loop, with the
    loop's length), the schedule."""

    experiment: str
    runs: list[int]  # runs of each pack
    epochs: int
    updates: int  # learner steps per epoch, one per mini-batch
    update: Linear | None  # in the epoch, or to its loop's length
    evaluation: Linear | Bilinear | None  # one run's evaluation at an epoch
    final: Linear | Bilinear | None  # at the end
    evaluations: int  # scheduled evaluations per run (epoch 0 included)
    note: str = ""
    jobs: int = field(init=False)

    def __post_init__(self):
        self.jobs = sum(self.runs)

    def seconds(self, rates: DeviceRates) -> tuple[float, float]:
        """(training, evaluation) device seconds of all its packs."""
        train = evaluate = 0.0
        for runs in self.runs:
            if self.update is not None:
                first = self.update.seconds(rates, runs, at=1)
                growth = self.update.seconds(rates, runs, at=2) - first
                # Σ_{e=1..E} (first + growth (e − 1)) updates
                train += self.updates * (self.epochs * first + growth * self.epochs * (self.epochs - 1) / 2)
            for part, times in ((self.evaluation, self.evaluations), (self.final, 1)):
                if part is not None and times:
                    evaluate += runs * times * part.seconds(rates)
        return train, evaluate


def price_experiment(
    name: str, jobs: list[tuple[list[str], str]], max_runs: int | None = None
) -> list[JobPrice]:
    """The priced packs of experiment ``name`` whose jobs are ``jobs`` (each its override list
    and a note: rbmlab.experiment.tier_jobs.jobs_of), one JobPrice per distinct job configuration
    (its packs listed in ``runs``)."""
    from rbmlab.data import dataset_dimension  # noqa: PLC0415
    from rbmlab.hydra_app import validated_run_config  # noqa: PLC0415
    from rbmlab.run.packed import MAX_RUNS, alone_because, pack_key  # noqa: PLC0415
    from rbmlab.run.runner import components  # noqa: PLC0415
    from rbmlab.validation import to_plain  # noqa: PLC0415

    max_runs = max_runs or MAX_RUNS
    groups: dict[str, dict] = {}
    for combo, note in jobs:
        cfg = validated_run_config(combo)
        model_class, sizes, learner, *_ = components(cfg, dataset_dimension(cfg.dataset))
        alone = alone_because(cfg, learner, model_class)
        dataset = sorted(to_plain(cfg.dataset).items())
        key = pack_key(cfg, sizes, (dataset,))
        # what the price depends on besides the pack: the evaluator and the schedule
        key += repr((to_plain(cfg.evaluator), cfg.train.epochs, cfg.train.eval_every, note, alone is None))
        group = groups.setdefault(key, {"cfg": cfg, "note": note, "alone": alone, "jobs": 0})
        group["jobs"] += 1
    prices = []
    for group in groups.values():
        n, cfg = group["jobs"], group["cfg"]
        packs = (
            [1] * n
            if group["alone"]
            else [max_runs] * (n // max_runs) + ([n % max_runs] if n % max_runs else [])
        )
        prices.append(_priced(name, cfg, packs, group["note"]))
    return prices


def _priced(name: str, cfg, packs: list[int], note: str) -> JobPrice:
    """A job configuration's price: its schedule, and the counts of one update at epochs 1 and
    2 and of one evaluation (shared by the configurations that differ only in what does not change
    them: the learning rate, the seed, the corruption's rate)."""
    run = _prepared(cfg)
    batch = getattr(cfg.learner, "batch_size", None)
    batch = run.n_train if not isinstance(batch, int) else min(batch, run.n_train)
    epochs, every = cfg.train.epochs, cfg.train.eval_every
    # one learner step per mini-batch (S-DCP's step makes its d updates inside: counted in it)
    updates = math.ceil(run.n_train / batch) if epochs else 0
    evaluations = (epochs // every + 1) if every else 0
    update, evaluation, final = _counts(run, batch, evaluations > 0)
    notes = [note] if note else []
    if getattr(cfg.learner, "pretrain_epochs", 0):
        notes.append(f"its greedy pretraining ({cfg.learner.pretrain_epochs} epochs a layer)")
    if getattr(cfg.learner, "inference", None) == "adatap":
        notes.append(
            "VAMP's batched inverses priced at the matmul rate: a lent H100 measured 47 ms a VAMP "
            "iteration at batch 100 (bench-cupy.md), about 10× this price"
        )
    host_solver = _host_solver(run)
    if host_solver:
        notes.append(f"its evaluation's MAP solver runs on the host ({host_solver}): not priced")
    for why in (LEARNER_HOST_WORK.get(cfg.learner.name), HOST_WORK.get(cfg.evaluator.name)):
        if why:
            notes.append(why)
    return JobPrice(name, packs, epochs, updates, update, evaluation, final, evaluations, "; ".join(notes))


_SETUPS: dict[str, object] = {}
_COUNTS: dict[str, tuple] = {}


def _prepared(cfg):
    """The runner's Setup of ``cfg``, its data read once for every configuration that reads the
    same (dataset, task, scored splits)."""
    from rbmlab.evaluators.base import truth_for  # noqa: PLC0415
    from rbmlab.run.runner import components, prepare  # noqa: PLC0415
    from rbmlab.validation import to_plain  # noqa: PLC0415

    key = repr((to_plain(cfg.dataset), to_plain(cfg.task), list(cfg.evaluator.splits), to_plain(cfg.backend)))
    if key not in _SETUPS:
        _SETUPS[key] = prepare(cfg)
        return _SETUPS[key]
    base = _SETUPS[key]
    model_class, sizes, learner, evaluator, stop = components(cfg, base.train.inputs.shape[-1])
    return replace(
        base,
        cfg=cfg,
        model_class=model_class,
        sizes=sizes,
        learner=learner,
        evaluator=evaluator,
        stop=stop,
        truth=truth_for(evaluator, cfg.dataset),
    )


def _counts(run, batch: int, scheduled: bool) -> tuple:
    """(update, evaluation at an epoch, final evaluation) of a prepared run, counted once per
    distinct (model, learner but its rate, evaluator, data, epochs)."""
    from rbmlab.run.runner import starting_model  # noqa: PLC0415
    from rbmlab.run.training import learner_start  # noqa: PLC0415
    from rbmlab.validation import to_plain  # noqa: PLC0415

    cfg = run.cfg
    learner = {k: v for k, v in to_plain(cfg.learner).items() if k != "lr"}
    model_settings = {k: v for k, v in to_plain(cfg.model).items() if k != "init"}
    key = repr(
        (
            model_settings,
            run.sizes,
            learner,
            to_plain(cfg.evaluator),
            run.n_train,
            batch,
            cfg.train.epochs,
            cfg.train.trials,
            scheduled,
        )
    )
    if key not in _COUNTS:
        model = starting_model(run)  # as the runner starts it: model.init, train.trials
        # a learner that pretrains (a DBM layer by layer) would train here: started as pretrained
        pretrains = bool(getattr(cfg.learner, "pretrain_epochs", 0) or cfg.model.init)
        model, state = learner_start(
            run.learner, model, run.backend, cfg.seed, run.train, pretrained=pretrains
        )
        update = _update(run, model, state, batch) if cfg.train.epochs else None
        # the learner's budget (T = 7 + epoch) at the middle epoch: an evaluation's cost is linear
        # in it, so its mean over the epochs is the cost there
        middle = _at_epoch(state, max(1, (cfg.train.epochs + 1) // 2))
        if _host_solver(run):  # host work: not in a device price (named in the note)
            _COUNTS[key] = (update, None, None)
        else:
            evaluation = _evaluation(run, model, middle, final=False) if scheduled else None
            _COUNTS[key] = (update, evaluation, _evaluation(run, model, middle, final=True))
    return _COUNTS[key]


def _host_solver(run) -> str:
    """Why the MAP solver of the run's evaluator (one with a ``solver()``: pmap_log_z) runs on the
    host (rbmlab.inference.solvers: ``on_host``); "" where it has none or it runs on the device."""
    solver = getattr(run.evaluator, "solver", None)
    return solver().on_host if callable(solver) else ""


# learners whose step is a loop of inference iterations, every one run on a device (a converged
# start masked): the option that sets its length
LEARNER_LOOPS = {"tap": "max_iter"}


def _update(run, model, state, batch: int) -> Linear:
    """One step of the run's learner on its first ``batch`` training rows: in the epoch (counted
    at epochs 1 and 2), or, for a learner whose step is a loop (:data:`LEARNER_LOOPS`), counted at
    one and two iterations and extended to its length."""
    from rbmlab.bench.price import step_count  # noqa: PLC0415
    from rbmlab.learners import LEARNERS  # noqa: PLC0415

    rows = run.train.map(lambda a: np.asarray(a[:batch]))
    loop = LEARNER_LOOPS.get(run.cfg.learner.name)
    if loop is None:
        return Linear(*(step_count(run.learner, model, _at_epoch(state, e), rows) for e in (1, 2)))
    with_length = lambda k: LEARNERS.build(replace(run.cfg.learner, **{loop: k}))  # noqa: E731
    one, two = (step_count(with_length(k), model, state, rows) for k in (1, 2))
    return Linear(one, two, getattr(run.cfg.learner, loop))


def _at_epoch(state: dict, epoch: int) -> dict:
    """A learner's state at the first update of ``epoch`` where its budget follows the epoch
    (its host step counter, crbm_bp's learners: rbmlab.bench.crbm_bp.at_epoch); the state as it
    is otherwise."""
    from rbmlab.bench.crbm_bp import at_epoch  # noqa: PLC0415

    return at_epoch(state, epoch) if "batches_per_epoch" in state else state


@dataclass(frozen=True)
class Turns:
    """One loop of an evaluation: its options at one turn and at two, and its length in turns."""

    one: dict
    two: dict
    length: int


@dataclass(frozen=True)
class Loop:
    """An evaluation's cost as a loop (``outer``), perhaps with a loop in each of its turns
    (``inner``: BP's iterations in each scored chunk, a sampler's sweeps in each chunk of draws);
    ``fixed``: options set in every count; ``budget``: whether the learner's inference budget is
    passed (False where ``inner`` sets it)."""

    outer: Turns
    inner: Turns | None = None
    fixed: dict = field(default_factory=dict)
    budget: bool = True


# An evaluator's loop, from its prepared run, its config, whether the evaluation is the final
# one, and the learner's inference budget (the evaluators without one are counted whole).
LOOPS: dict[str, Callable] = {}


def _loop(*evaluators: str):
    def register(fn):
        LOOPS.update(dict.fromkeys(evaluators, fn))
        return fn

    return register


@_loop("ais")
def _ais_loop(run, config, final: bool, iterations) -> Loop:
    """Temperatures."""
    from rbmlab.evaluators.ais import schedule  # noqa: PLC0415

    length = schedule(config.schedule, config.n_temperatures, config.curve_n_temperatures, final).size - 1
    key = "curve_n_temperatures" if (not final and config.curve_n_temperatures) else "n_temperatures"
    fixed = {"schedule": "linear"} if key == "n_temperatures" else {}
    return Loop(Turns({key: 1}, {key: 2}, length), fixed=fixed)


def _scored_rows(run, config) -> int:
    """The most examples an evaluation reads of one of its splits (``max_examples`` applied)."""
    rows = max(len(b) for b in run.splits.values())
    return min(config.max_examples, rows) if config.max_examples else rows


def _in_chunks(option: str, chunk: int, total: int) -> Turns:
    """``total`` items ``chunk`` at a time, the count of items set through ``option``."""
    return Turns({option: chunk}, {option: 2 * chunk}, math.ceil(total / chunk))


@_loop("pixel_error")
def _pixel_error_loop(run, config, final: bool, iterations) -> Loop:
    """Scored chunks (every split's) × the inference's iterations, every one of its budget run on a
    device (set through max_iter, unmatched)."""
    chunks = _in_chunks("max_examples", config.chunk, _scored_rows(run, config))
    budget = Turns({"max_iter": 1}, {"max_iter": 2}, run.evaluator.budget(iterations))
    return Loop(chunks, budget, fixed={"matched": False}, budget=False)


@_loop("mmd", "moments", "recognised", "variety", "kl")
def _draws_loop(run, config, final: bool, iterations) -> Loop:
    """Chunks of draws × the sampler's sweeps in each: ``n_samples`` draws (a sampling
    evaluator's 0: as many as the split's examples), ``chunk`` at a time."""
    drawn = getattr(run.evaluator, "n_drawn", lambda rows: config.n_samples)(_scored_rows(run, config))
    chunks = _in_chunks("n_samples", min(config.chunk, max(drawn, 1)), drawn)
    return Loop(chunks, Turns({"sweeps": 1}, {"sweeps": 2}, config.sweeps))


# evaluators whose cost is one option's count of turns (on a device every iteration of a cap runs,
# the converged starts masked: a tolerance changes no count)
for _name, _option in {"tap": "max_iter", "tap_dbm": "max_iter", "denoising": "max_iter"}.items():
    LOOPS[_name] = lambda run, config, final, iterations, option=_option: Loop(
        Turns({option: 1}, {option: 2}, getattr(config, option))
    )


def _evaluation(run, model, state, final: bool) -> Linear | Bilinear:
    """One evaluation of a run (at an epoch, or the end), counted in its loop (:data:`LOOPS`)."""
    from rbmlab.evaluators import EVALUATORS  # noqa: PLC0415
    from rbmlab.run.runner import evaluate_trials  # noqa: PLC0415

    config = run.cfg.evaluator
    counted_run = replace(
        run,
        train=run.train.map(as_counting),
        splits={k: v.map(as_counting) for k, v in run.splits.items()},
    )
    iterations = run.learner.inference_iterations(state)

    def once(options: dict, budget: int | None = iterations) -> Counted:
        built = EVALUATORS.build(replace(config, **options)) if options else run.evaluator
        evaluated = replace(counted_run, evaluator=built)
        return count(
            lambda: evaluate_trials(evaluated, as_counting(model), (0, 0, 0), final=final, iterations=budget)
        )

    loop = LOOPS[config.name](run, config, final, iterations) if config.name in LOOPS else None
    if loop is None:
        once({})  # a first call's one-off work (a cached constant) is in no count
        whole = once({})
        return Linear(whole, whole, 1)
    budget = iterations if loop.budget else None
    outer, inner, fixed = loop.outer, loop.inner, loop.fixed
    at = lambda *turns: once({k: v for t in (fixed, *turns) for k, v in t.items()}, budget)  # noqa: E731
    at(outer.one, inner.one if inner else {})  # the first call's one-off work, as above, at the cheapest turn
    if inner is None:
        return Linear(at(outer.one), at(outer.two), outer.length)
    return Bilinear(
        at(outer.one, inner.one),
        at(outer.two, inner.one),
        outer.length,
        at(outer.one, inner.two),
        inner.length,
    )
