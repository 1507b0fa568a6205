"""What a computation costs on a GPU, from its counted operations and a device's measured rates
(issue 55, item 4: price the paper tiers in GPU-hours).

A computation is counted on the paths a device runs (:mod:`rbmlab.bench.ops`: every elementwise
pass, reduction, matmul, copy, gather and draw, with its multiply-adds and the bytes its operands
and result hold). On a device each operation costs at least a fixed ``launch`` time (the host's
dispatch and the kernel launch: what bounds crbm_bp's steps at the paper's batch of 20), and
otherwise its arithmetic at the device's matmul rate and its bytes at its elementwise rate:

    seconds = Σ over operations  max(launch, R · (macs / F + bytes / BW))

where R is the number of packed runs (rbmlab.run.packed: on a device the runs of a pack share every
operation, each carrying R times the work). The three rates are fitted to a committed ``make
bench-gpu`` table (``results/bench/bench-cupy.json``): F from a bare-matmul row, BW from BP's bare
elementwise row, ``launch`` from each launch-bound row (small batches) by solving the sum above
for it; the other rows check the fit (:func:`calibrate`). The counts are of the numpy device path,
which splits into several operations what cupy fuses into one kernel (the Bernoulli draw, BP's
messages, TAP's move); ``launch`` is fitted on rows that contain those fusions, so it is the
device's time per *counted* operation, and its spread over the rows is the price's uncertainty.
"""

from __future__ import annotations

import collections
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DeviceRates:
    """A device's time per operation (``launch``, s), matmul rate (``macs_per_s``) and elementwise
    rate (``bytes_per_s``)."""

    launch: float
    macs_per_s: float
    bytes_per_s: float

    def busy(self, macs: int, nbytes: int) -> float:
        """Seconds of arithmetic and memory traffic of one operation, launch aside."""
        return macs / self.macs_per_s + nbytes / self.bytes_per_s


@dataclass(frozen=True)
class Counted:
    """The operations of one call, counted: each one's (multiply-adds, bytes)."""

    work: tuple[tuple[int, int], ...]

    def seconds(self, rates: DeviceRates, runs: int = 1) -> float:
        """Device seconds of the call for ``runs`` packed runs (each operation carrying ``runs``
        times its work)."""
        return sum(max(rates.launch, runs * rates.busy(m, b)) for m, b in self.work)

    @property
    def ops(self) -> int:
        return len(self.work)

    @property
    def macs(self) -> int:
        return sum(m for m, _ in self.work)


def count(fn: Callable[[], object]) -> Counted:
    """The operations of one call of ``fn()`` (its arrays made OpCounted by the caller:
    rbmlab.bench.ops.counting)."""
    from rbmlab.bench.ops import OpCounted, operations  # noqa: PLC0415

    operations(fn)
    return Counted(tuple(OpCounted.work))


def step_count(learner, model, state: dict, batch) -> Counted:
    """The operations of one ``learner.step`` on the paths a device runs
    (rbmlab.bench.ops.step_work)."""
    from rbmlab.bench.ops import step_work  # noqa: PLC0415

    return Counted(step_work(learner, model, state, batch))


def per_unit(fn: Callable[[int], object], n: int = 1) -> Counted:
    """The operations of one more unit of ``fn(k)``, a computation of k units (sweeps,
    temperatures, iterations): those of ``fn(n + 1)`` less those of ``fn(n)``, as multisets, so
    that what the call does once (its setup, its result) is left out. An operation of the shorter
    call whose size grows with the units (AIS's weights, one per temperature) is taken off its
    counterpart, the longer call's operation of the same multiply-adds nearest in bytes. Counted
    after a first call, so that work done once per process is not in either."""
    count(lambda: fn(n + 1))  # a first call's one-off work (a cached constant) left out
    fewer, more = count(lambda: fn(n)), count(lambda: fn(n + 1))
    left = collections.Counter(more.work)
    left.subtract(fewer.work)
    for (macs, nbytes), missing in [(k, -c) for k, c in left.items() if c < 0]:
        del left[(macs, nbytes)]
        for _ in range(missing):
            twins = [k for k, c in left.items() if c > 0 and k[0] == macs]
            if not twins:
                raise ValueError("per_unit: the call at n units does operations the call at n + 1 does not")
            left[min(twins, key=lambda k: abs(k[1] - nbytes))] -= 1
    return Counted(tuple(sorted(left.elements())))


def launch_for(counted: Counted, seconds: float, rates: DeviceRates) -> float | None:
    """The ``launch`` time c that makes ``counted`` take ``seconds`` at ``rates``' F and BW:
    Σ_i max(c, busy_i) = seconds, increasing in c, solved exactly; None where the busy time alone
    reaches ``seconds`` (the row is not launch-bound and says nothing of the launch)."""
    busy = sorted(rates.busy(m, b) for m, b in counted.work)
    tail = sum(busy)
    if seconds <= tail * (1 + 1e-9):  # (within rounding: a time its work alone makes fits any c)
        return None
    for k in range(1, len(busy) + 1):  # c above the k smallest: k·c + Σ_{i > k} busy_i = seconds
        tail -= busy[k - 1]
        c = (seconds - tail) / k
        if c >= busy[k - 1] and (k == len(busy) or c <= busy[k]):
            return c
    raise AssertionError("unreachable: the sum is continuous and increasing in c")


def as_counting(x):
    """``x`` (an array, model or dict) with its arrays OpCounted."""
    from rbmlab.bench.ops import counting  # noqa: PLC0415

    if hasattr(x, "map"):
        return x.map(counting)
    return counting(x)


def random_numpy(shape, scale: float, seed: int) -> np.ndarray:
    return (scale * np.random.default_rng(seed).standard_normal(shape)).astype(np.float32)


# The rows of a ``make bench-gpu`` table (results/bench/bench-cupy.json) the rates are fitted to
# and checked against, each with the computation it timed (its bench function's, at its shapes),
# counted per unit (per sweep, temperature or iteration; BP's rows time 10 iterations).
def _gibbs(batch: int) -> Callable[[int], object]:
    from rbmlab.backend import get_backend  # noqa: PLC0415
    from rbmlab.bench.core import binary, random_rbm  # noqa: PLC0415
    from rbmlab.bench.ops import CountedDraws  # noqa: PLC0415
    from rbmlab.inference.block_gibbs import gibbs_chain  # noqa: PLC0415

    backend = get_backend("numpy", "float32")
    rbm, v = as_counting(random_rbm(backend, 784, 500)), as_counting(binary(backend, batch, 784, 0.2, 2))
    return lambda k: gibbs_chain(rbm, v, CountedDraws(backend.rng(1)), k)


def _ais(chains: int) -> Callable[[int], object]:
    from rbmlab.backend import get_backend  # noqa: PLC0415
    from rbmlab.bench.core import random_rbm  # noqa: PLC0415
    from rbmlab.bench.ops import CountedDraws  # noqa: PLC0415
    from rbmlab.evaluators.ais import ais_log_partition, temperature_schedule  # noqa: PLC0415

    backend = get_backend("numpy", "float32")
    rbm, base = as_counting(random_rbm(backend, 784, 500)), as_counting(np.full(784, -1.0, np.float32))
    return lambda k: ais_log_partition(
        rbm,
        CountedDraws(backend.rng(2)),
        base_bias=base,
        betas=temperature_schedule("linear", k),
        n_chains=chains,
    )


def _tap(chains: int) -> Callable[[int], object]:
    from rbmlab.backend import get_backend  # noqa: PLC0415
    from rbmlab.bench.core import binary, random_rbm  # noqa: PLC0415
    from rbmlab.inference.tap import solve  # noqa: PLC0415

    backend = get_backend("numpy", "float32")
    rbm = as_counting(random_rbm(backend, 784, 500))
    visible, hidden = rbm.tap_layers()
    x = as_counting(binary(backend, chains, 784, 0.2, 2))
    return lambda k: solve(rbm.W, visible, hidden, x, tol=0.0, max_iter=k)


def _bp(mode: str, n_v: int, n_h: int) -> Callable[[int], object]:
    from rbmlab.inference.matrix_bp import loopy_bp  # noqa: PLC0415

    W = as_counting(random_numpy((n_v, n_h), 0.1, 0))
    b_v, b_h = as_counting(random_numpy((1, n_v), 1.0, 1)), as_counting(random_numpy((1, n_h), 1.0, 2))
    return lambda k: loopy_bp(W, b_v, b_h, mode=mode, max_iter=k, tol=None)


# (the row's name, the seconds it reports per unit, the units a row's time covers, the computation)
TIMED_ROWS = (
    ("Gibbs sweep (784×500, batch 200, float32), ms", 1, lambda: _gibbs(200)),
    ("AIS (200 chains, 784×500) per temperature, ms", 1, lambda: _ais(200)),
    ("TAP iteration (784×500, 200 initialisations, float32), ms", 1, lambda: _tap(200)),
    ("BP sum-product (random 1000×500 RBM, 10 iterations, float32), ms", 10, lambda: _bp("sum", 1000, 500)),
    ("BP max-product (random 1000×500 RBM, 10 iterations, float32), ms", 10, lambda: _bp("max", 1000, 500)),
    (
        "BP mixed-product (random 1000×500 RBM, 10 iterations, float32), ms",
        10,
        lambda: _bp("mixed", 1000, 500),
    ),
    ("Gibbs sweep (784×500, batch 10000, float32), ms", 1, lambda: _gibbs(10_000)),
    ("AIS (10000 chains, 784×500) per temperature, ms", 1, lambda: _ais(10_000)),
    ("TAP iteration (784×500, 10000 initialisations, float32), ms", 1, lambda: _tap(10_000)),
    (
        "BP sum-product (random 10000×2000 RBM, 10 iterations, float32), ms",
        10,
        lambda: _bp("sum", 10_000, 2_000),
    ),
    (
        "BP max-product (random 10000×2000 RBM, 10 iterations, float32), ms",
        10,
        lambda: _bp("max", 10_000, 2_000),
    ),
    (
        "BP mixed-product (random 10000×2000 RBM, 10 iterations, float32), ms",
        10,
        lambda: _bp("mixed", 10_000, 2_000),
    ),
)
MATMUL_ROW = (
    "bare matmuls / Gibbs sweep",
    "Gibbs sweep (784×500, batch 10000, float32), ms",
    2 * 10_000 * 784 * 500,
)
ELEMENTWISE_ROW = (
    "bare exp + log1p / BP sum-product (random 10000×2000 RBM, 10 iterations, float32)",
    "BP sum-product (random 10000×2000 RBM, 10 iterations, float32), ms",
)


def measured_seconds(rows: list[dict]) -> dict[str, float]:
    """Median seconds of each timing row of a bench table (ms rows), and the median of each ratio
    row: by its name where it names its shapes, else (``bare matmuls / Gibbs sweep``, once per
    batch) as "<name> | <the timing row before it>"."""
    out, last = {}, None
    for r in rows:
        if r["unit"] == "ms":
            out[r["name"]] = r["median"] / 1e3
            last = r["name"]
        elif r["unit"] == "ratio" and last is not None:
            out[r["name"] if "(" in r["name"] else f"{r['name']} | {last}"] = r["median"]
    return out


def calibrate(rows: list[dict]) -> tuple[DeviceRates, dict, list[dict]]:
    """The device's rates fitted to a ``make bench-gpu`` table's ``rows``: F from the bare
    matmuls of the 10,000-chain Gibbs sweep, BW from BP's bare exp + log1p at 10,000 × 2,000
    (its bytes counted), ``launch`` the median over the launch-bound rows of :data:`TIMED_ROWS`
    (each solved for it, :func:`launch_for`); (rates, the launch's spread, one row per timing row:
    measured, predicted at the fitted rates, its own launch where it is launch-bound)."""
    from rbmlab.bench.crbm_bp import transcendental_floor  # noqa: PLC0415
    from rbmlab.bench.method import spread as method_spread  # noqa: PLC0415

    seconds = measured_seconds(rows)
    name, timing, macs = MATMUL_ROW
    macs_per_s = macs / (seconds[f"{name} | {timing}"] * seconds[timing])
    name, timing = ELEMENTWISE_ROW
    floor = count(
        lambda: transcendental_floor((1, 10_000, 2_000), np.float32, 10, np)()
    )  # its buffers counted
    floor_bytes = sum(b for _, b in floor.work)
    bytes_per_s = floor_bytes / (seconds[name] * seconds[timing])
    rates = DeviceRates(0.0, macs_per_s, bytes_per_s)
    table = []
    for name, units, make in TIMED_ROWS:
        if name not in seconds:
            continue
        unit = per_unit(make())
        measured = seconds[name] / units
        table.append(
            {"row": name, "unit": unit, "measured": measured, "launch": launch_for(unit, measured, rates)}
        )
    launches = [t["launch"] for t in table if t["launch"] is not None]
    spread = {**method_spread(launches), "n": len(launches)}
    rates = DeviceRates(spread["median"], macs_per_s, bytes_per_s)
    for t in table:
        t["predicted"] = t["unit"].seconds(rates)
    return rates, spread, table
