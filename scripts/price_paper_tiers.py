"""The paper tiers' GPU price from counted operations and a committed ``make bench-gpu`` table
(issue 55, item 4), written to results/bench/gpu-price.md.

    python scripts/price_paper_tiers.py [out=results/bench/gpu-price.md] [bench=results/bench/bench-cupy.json]

rbmlab.bench.price fits a device's time per operation, matmul rate and elementwise rate to the
bench table, then prices each workload below: one update of each learner at the paper's sizes
and one evaluation call, counted on the paths a device runs, times the updates and evaluations of
the experiment's paper tier (its yaml: epochs, training-set size, batch, seeds, grid), packed as
rbmlab/run/packed.py packs them (scripts/paper_tier_packs.py), each run's evaluation its own.
Every price is given at the fitted time per operation and at the smallest and largest of the
rows it was fitted to. Where a paper's cost is not GPU work (an oracle on the host, a sampler
that is not packed) the table says so; those stay priced in CPU-hours in the paper's README.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rbmlab.validation import typed_key_values

ROOT = Path(__file__).resolve().parents[1]
DEFAULTS = {"out": "results/bench/gpu-price.md", "bench": "results/bench/bench-cupy.json"}


# ---- the counted computations -------------------------------------------------------------


def crbm_update(name: str, options: dict, epoch: int, n_v=784, n_h=256, batch=20):
    """One update of a crbm_bp learner in epoch ``epoch`` (T = 7 + epoch), device path."""
    from rbmlab.bench.crbm_bp import at_epoch, random_crbm
    from rbmlab.bench.ops import CountedDraws
    from rbmlab.bench.price import as_counting, count
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS

    model, x, v = random_crbm(n_v, n_h, batch)
    learner = LEARNERS.build(LEARNERS.parse({"name": name, "batch_size": batch, **options}))
    state = at_epoch(learner.init_state(model, Batch(x, targets=v), np.random.default_rng(1)), epoch)
    data = Batch(as_counting(x), targets=as_counting(v))

    def step():
        return learner.step(
            as_counting(model), as_counting(state), data, CountedDraws(np.random.default_rng(1))
        )

    count(step)  # a first call's one-off work (a cached constant) left out
    return count(step)


def crbm_scoring(inference: str, budget: int, chunk=100, n_v=784, n_h=256):
    """One call of pixel_error's solver on a chunk of ``chunk`` images at budget ``budget``."""
    from rbmlab.bench.crbm_bp import random_crbm
    from rbmlab.bench.price import as_counting, count
    from rbmlab.evaluators.pixel_error import solver

    model, x, _ = random_crbm(n_v, n_h, chunk)
    method = solver(inference, 1e-3)
    return count(lambda: method.solve(as_counting(model), as_counting(x), budget))


def rbm_update(learner: dict, n_hidden: int, batch: int):
    """One update of an RBM learner (cd, pcd, cg, sdcp, csdcp, tap) at 784 × ``n_hidden``."""
    from rbmlab.backend import get_backend
    from rbmlab.bench.core import binary
    from rbmlab.bench.ops import CountedDraws
    from rbmlab.bench.packed import _runs
    from rbmlab.bench.price import as_counting, count
    from rbmlab.data.batch import Batch

    backend = get_backend("numpy", "float32")
    x = binary(backend, max(batch, 1000), 784, 0.13, 4)  # MNIST's share of ones; the count is the same
    (one, model, state), *_ = _runs(backend, {**learner, "batch_size": batch}, 1, x, n_hidden)[0]
    data = Batch(as_counting(x[:batch]))

    def step():
        return one.step(as_counting(model), as_counting(state), data, CountedDraws(np.random.default_rng(1)))

    count(step)
    return count(step)


def ais_temperature(chains: int, n_hidden: int):
    from rbmlab.backend import get_backend
    from rbmlab.bench.core import random_rbm
    from rbmlab.bench.ops import CountedDraws
    from rbmlab.bench.price import as_counting, per_unit
    from rbmlab.evaluators.ais import ais_log_partition, temperature_schedule

    backend = get_backend("numpy", "float32")
    rbm, base = as_counting(random_rbm(backend, 784, n_hidden)), as_counting(np.full(784, -1.0, np.float32))
    return per_unit(
        lambda k: ais_log_partition(
            rbm,
            CountedDraws(backend.rng(2)),
            base_bias=base,
            betas=temperature_schedule("linear", k),
            n_chains=chains,
        )
    )


def tap_iteration(starts: int, n_hidden: int):
    from rbmlab.backend import get_backend
    from rbmlab.bench.core import binary, random_rbm
    from rbmlab.bench.price import as_counting, per_unit
    from rbmlab.inference.tap import solve

    backend = get_backend("numpy", "float32")
    rbm = as_counting(random_rbm(backend, 784, n_hidden))
    visible, hidden = rbm.tap_layers()
    x = as_counting(binary(backend, starts, 784, 0.2, 2))
    return per_unit(lambda k: solve(rbm.W, visible, hidden, x, tol=0.0, max_iter=k))


# ---- the workloads --------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """``packs`` packs of ``runs`` runs, each ``epochs`` epochs of ``updates`` updates, its
    evaluation every ``eval_every`` epochs costing ``evaluation`` (per run)."""

    paper: str
    artefact: str
    what: str
    packs: int
    runs: int
    epochs: int
    updates: int
    update: object  # a function of the epoch -> Counted (T grows with it) or a Counted
    evaluation: object = None  # likewise, per run and evaluation; or None
    eval_every: int = 1

    def seconds(self, rates) -> tuple[float, float]:
        """(training, evaluation) device seconds of the whole job set at ``rates``."""
        train = evaluate = 0.0
        for e in range(1, self.epochs + 1):
            train += self.updates * _at(self.update, e).seconds(rates, self.runs)
            if self.evaluation is not None and e % self.eval_every == 0:
                evaluate += self.runs * _at(self.evaluation, e).seconds(rates)
        return self.packs * train, self.packs * evaluate


def _at(counted, epoch: int):
    return counted(epoch) if callable(counted) else counted


def linear_in_epoch(make):
    """``make(epoch)`` counted at epochs 1 and 2 and extended linearly (T = 7 + epoch adds the
    same operations each epoch): a function of the epoch -> Counted-like."""
    from rbmlab.bench.price import Counted

    first, second = make(1), make(2)

    class Interpolated:
        def __init__(self, epoch):
            self.epoch = epoch

        def seconds(self, rates, runs=1):
            a, b = first.seconds(rates, runs), second.seconds(rates, runs)
            return a + (b - a) * (self.epoch - 1)

    assert isinstance(first, Counted)
    return Interpolated


# (variant, learner, options, epochs at the paper tier, test-time inference, matched budget: the
# learner's T = 7 + epoch, else pixel_error's max_iter 50)
CRBM_LEARNERS = (
    ("LR", "logistic", {}, 50, "none", False),
    ("CD-1", "conditional_cd", {"k": 1}, 200, "mf", False),
    ("CD-10", "conditional_cd", {"k": 10}, 200, "mf", False),
    ("CD-PercLoss", "cd_percloss", {}, 200, "mf", False),
    ("MLE-MF", "mle_mf", {}, 50, "mf", True),
    ("MLE-BP", "mle_bp", {}, 50, "sum", True),
    ("LSSVM", "lssvm", {}, 50, "max", True),
    ("MSSVM", "mssvm", {}, 50, "mixed", True),
)


def crbm_bp_jobs() -> list[Job]:
    """crbm_bp Table 1 at the paper tier (experiments/crbm_bp/table-1.yaml): each learner 2
    noise rates × 5 seeds, one pack of 10; 50,000 training images at batch 20 (2,500 updates an
    epoch); valid and test (20,000 images) scored every epoch in chunks of 100 (200 calls) at the
    learner's budget T = 7 + epoch (the others at max_iter 50; on a device every iteration of
    the budget runs, the converged instances masked)."""
    jobs = []
    for variant, name, options, epochs, inference, matched in CRBM_LEARNERS:
        update = linear_in_epoch(lambda e, n=name, o=options: crbm_update(n, o, e))
        scoring = linear_in_epoch(lambda e, i=inference, m=matched: crbm_scoring(i, 7 + e if m else 50))
        jobs.append(Job("crbm_bp", "table-1", variant, 1, 10, epochs, 2_500, update, _times(scoring, 200)))
    return jobs


def _times(per_call, calls: int):
    """An evaluation of ``calls`` calls of ``per_call`` (a function of the epoch)."""

    class Repeated:
        def __init__(self, epoch):
            self.one = per_call(epoch)

        def seconds(self, rates, runs=1):
            return calls * self.one.seconds(rates, runs)

    return Repeated


def dcp_jobs() -> list[Job]:
    """dcp Fig. 3 at the paper tier (experiments/dcp/figure-3.yaml): 5 learners × 2 rates × 10
    seeds, packs of 20; 784 × 500, batch 200 on 60,000 images (300 updates an epoch), 200 epochs;
    AIS (10,000 temperatures × 100 chains) every 10 epochs."""
    ais = ais_temperature(100, 500)
    evaluation = _scaled(ais, 10_000)
    jobs = []
    for variant, learner in (
        ("CD-24", {"name": "cd", "k": 24}),
        ("PCD-24", {"name": "pcd", "k": 24}),
        ("CG-24", {"name": "cg", "k": 24}),
        ("S-DCP (6, 4)", {"name": "sdcp", "d": 6, "k": 4}),
        ("CS-DCP (6, 4)", {"name": "csdcp", "d": 6, "k": 4}),
    ):
        update = rbm_update(learner, 500, 200)
        jobs.append(Job("dcp", "figure-3", variant, 1, 20, 200, 300, update, evaluation, eval_every=10))
    return jobs


def _scaled(counted, times: int):
    class Scaled:
        def seconds(self, rates, runs=1):
            return times * counted.seconds(rates, runs)

    return Scaled()


def tap_jobs() -> list[Job]:
    """tap Fig. 3 binary at the paper tier (experiments/tap/figure-3.yaml): N_h ∈ {25, 50, 100,
    500} × 3 seeds, a pack per N_h; batch 100 on 60,000 images (600 updates an epoch), 100 epochs;
    TAP log Z from 10,000 starts every epoch (evaluator.max_iter 1,000: priced at 1,000
    iterations, the most it runs)."""
    jobs = []
    for n_hidden in (25, 50, 100, 500):
        update = rbm_update({"name": "tap", "max_iter": 10, "lr": 0.005}, n_hidden, 100)
        evaluation = _scaled(tap_iteration(10_000, n_hidden), 1_000)
        jobs.append(Job("tap", "figure-3 (binary)", f"N_h = {n_hidden}", 1, 3, 100, 600, update, evaluation))
    return jobs


def pmp_jobs() -> list[Job]:
    """pmp Fig. 3's training at the paper tier (experiments/pmp/figure-3-train.yaml): 784 × 500,
    batch 100 on 60,000 images (600 updates an epoch), 200 epochs, 5 seeds; PMP and Gibbs-reset
    (learner=reset, k = 100) train alone (not packed), PCD-100 and PCD-1 in a pack of 5; no
    evaluation during training (its MMD, once per run, left out)."""
    return [
        Job("pmp", "figure-3-train", what, packs, runs, 200, 600, rbm_update(learner, 500, 100))
        for what, learner, packs, runs in (
            ("PMP (reset, k = 100)", {"name": "reset", "k": 100, "sampler": "pmp"}, 5, 1),
            ("Gibbs-reset (k = 100)", {"name": "reset", "k": 100}, 5, 1),
            ("PCD-100", {"name": "pcd", "k": 100, "chain_init": "uniform"}, 1, 5),
            ("PCD-1", {"name": "pcd", "k": 1, "chain_init": "uniform"}, 1, 5),
        )
    ]


# ---- the table ----------------------------------------------------------------------------


def fmt_hours(seconds: float) -> str:
    return f"{seconds / 3600:.2f}" if seconds < 36_000 else f"{seconds / 3600:.0f}"


def main(argv: list[str]) -> None:
    from rbmlab.bench.price import DeviceRates, calibrate

    opts = typed_key_values(argv, DEFAULTS, {})
    bench = json.loads((ROOT / opts["bench"]).read_text())
    rates, launch, table = calibrate(bench["rows"])
    low, high = (DeviceRates(launch[k], rates.macs_per_s, rates.bytes_per_s) for k in ("min", "max"))
    commit = subprocess.run(
        ["git", "describe", "--always", "--dirty=+dirty"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    lines = [
        "# GPU price of the paper tiers, from counted operations",
        "",
        f"`python scripts/price_paper_tiers.py` at {commit}: `rbmlab.bench.price` fitted to "
        f"`{opts['bench']}` ({bench.get('machine', {}).get('gpu', 'a lent GPU')}).",
        "A price, not a measurement: each workload's operations are counted here on the paths a",
        "device runs and priced at the rates the bench table measured (the model in",
        "`rbmlab/bench/price.py`); `make bench-gpu`'s packed rows replace it where a GPU is lent.",
        "",
        "## The fit",
        "",
        f"- matmul rate F = {rates.macs_per_s / 1e12:.1f} T multiply-adds/s (the bare matmuls of the",
        "  10,000-chain Gibbs sweep);",
        f"- elementwise rate BW = {rates.bytes_per_s / 1e12:.2f} TB/s (BP's bare exp + log1p at",
        "  10,000 × 2,000, its bytes counted);",
        f"- time per counted operation = {launch['median'] * 1e6:.1f} µs, the median over the "
        f"{launch['n']} launch-bound rows (min {launch['min'] * 1e6:.1f}, max {launch['max'] * 1e6:.1f}).",
        "",
        "| bench row | operations per unit | measured, µs | priced, µs | priced / measured "
        "| its own time per operation, µs |",
        "|---|---|---|---|---|---|",
    ]
    for t in table:
        own = "— (not launch-bound)" if t["launch"] is None else f"{t['launch'] * 1e6:.1f}"
        lines.append(
            f"| {t['row']} | {t['unit'].ops} | {t['measured'] * 1e6:.0f} | {t['predicted'] * 1e6:.0f} | "
            f"{t['predicted'] / t['measured']:.2f} | {own} |"
        )
    lines += [
        "",
        "The rows that are not launch-bound are priced high (1.3–2.4×): the numpy device path",
        "counts as several passes what cupy fuses into one kernel (the Bernoulli draw, BP's",
        "messages, TAP's move), and BW is the transcendental rate, below the memory's. So a",
        "price is within the launch-bound rows' spread where launches dominate (the papers'",
        "small batches) and errs high where bytes do.",
        "",
        "## One update, packed",
        "",
        "Device milliseconds per update of a pack (all its runs) and per run, at the fitted rates;",
        "`bound`: the update's arithmetic and bytes at F and BW / its price (1.0: no launch overhead).",
        "",
        "| learner (sizes, batch) | operations | runs | ms per pack update | ms per run | bound |",
        "|---|---|---|---|---|---|",
    ]
    updates = [
        (f"crbm_bp {v} (784 × 256, batch 20, epoch 1)", crbm_update(n, o, 1)) for v, n, o, *_ in CRBM_LEARNERS
    ] + [
        ("PCD-1 (784 × 500, batch 100)", rbm_update({"name": "pcd"}, 500, 100)),
        ("S-DCP (6, 4) (784 × 500, batch 200)", rbm_update({"name": "sdcp", "d": 6, "k": 4}, 500, 200)),
        ("TAP (784 × 500, batch 100)", rbm_update({"name": "tap", "max_iter": 10}, 500, 100)),
    ]
    for what, counted in updates:
        for runs in (1, 8, 32, 128):
            s = counted.seconds(rates, runs)
            busy = runs * sum(rates.busy(m, b) for m, b in counted.work)
            lines.append(
                f"| {what} | {counted.ops} | {runs} | {s * 1e3:.2f} | {s * 1e3 / runs:.3f} | {busy / s:.2f} |"
            )
    lines += [
        "",
        "## Paper tiers",
        "",
        "Device hours at the fitted time per operation (and at the smallest and largest fitted);",
        "training and evaluation apart.",
        "",
        "| paper | artefact | learner | packs × runs | epochs × updates | training, h | evaluation, h "
        "| total, h (range) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    totals: dict[str, list[float]] = {}
    for job in crbm_bp_jobs() + dcp_jobs() + tap_jobs() + pmp_jobs():
        train, evaluate = job.seconds(rates)
        lo, hi = (sum(job.seconds(r)) for r in (low, high))
        totals.setdefault(f"{job.paper} {job.artefact}", [0.0, 0.0, 0.0])
        for i, v in enumerate((train + evaluate, lo, hi)):
            totals[f"{job.paper} {job.artefact}"][i] += v
        lines.append(
            f"| {job.paper} | {job.artefact} | {job.what} | {job.packs} × {job.runs} | "
            f"{job.epochs} × {job.updates:,} | {fmt_hours(train)} | {fmt_hours(evaluate)} | "
            f"{fmt_hours(train + evaluate)} ({fmt_hours(lo)} – {fmt_hours(hi)}) |"
        )
    lines += ["", "| artefact | device hours (range) |", "|---|---|"]
    for name, (mid, lo, hi) in totals.items():
        lines.append(f"| {name} | {fmt_hours(mid)} ({fmt_hours(lo)} – {fmt_hours(hi)}) |")
    out = ROOT / opts["out"]
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
