"""What the bench parts share: a row of bench.md, the random models and binary batches they time,
the bare-work floors several parts compare against, an MNIST epoch, and timing under a BLAS
thread count (interleaved rounds, :mod:`rbmlab.bench.method`)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from rbmlab.bench.method import blas_threads, interleaved, synchronized
from rbmlab.data.batch import Batch
from rbmlab.models.rbm import RBM

Row = dict[str, Any]  # name, threads, median/min/max, unit ("ratio", "ms", "s"), target, note


def row(
    name: str, values: dict[str, float], unit: str, threads: int | None = None, target: str = "", **extra: Any
) -> Row:
    return {"name": name, "threads": threads, "unit": unit, "target": target, **values, **extra}


def random_rbm(backend, m: int, n: int, seed: int = 0) -> RBM:
    rng = backend.rng(seed)
    xp = backend.xp
    return RBM(
        0.05 * rng.standard_normal((m, n), dtype=backend.dtype),
        xp.zeros(m, dtype=backend.dtype) - 1.0,
        xp.zeros(n, dtype=backend.dtype),
    )


def binary(backend, rows: int, cols: int, p: float, seed: int):
    rng = backend.rng(seed)
    return (rng.random((rows, cols), dtype=backend.dtype) < p).astype(backend.dtype)


def bare_matmuls(backend, products, repeat: int):
    """``repeat`` rounds of the products A @ B of ``products`` [(A, B), ...], each into a
    preallocated output (B made contiguous first: the bound a core that forms them is held to)."""
    xp = backend.xp
    pairs = [
        (a, xp.ascontiguousarray(b), xp.empty((a.shape[0], b.shape[1]), dtype=b.dtype)) for a, b in products
    ]

    def run():
        for _ in range(repeat):
            for a, b, out in pairs:
                xp.matmul(a, b, out=out)

    return run


def two_matmuls(backend, W, v, h, repeat: int):
    """The bare matmuls of ``repeat`` Gibbs sweeps (v W, then h Wᵀ)."""
    return bare_matmuls(backend, [(v, W), (h, W.T)], repeat)


def timed(backend, rounds: int, threads: int | None, fns: dict) -> dict[str, list[float]]:
    """:func:`interleaved` under ``threads`` BLAS threads, each function waiting for the device."""
    with blas_threads(threads):
        return interleaved({k: synchronized(fn, backend.xp) for k, fn in fns.items()}, rounds)


def epoch_seconds(learner, rbm, x, batch: int, seed: int, backend) -> float:
    """Wall time of one shuffled epoch of ``learner`` over ``x`` (learner state set up first)."""
    from rbmlab.run.training import batches  # noqa: PLC0415

    train = Batch(x)
    state = learner.init_state(rbm, train, backend.rng(seed, 0))
    rng = backend.rng(seed, 1)
    t0 = time.perf_counter()
    for idx in batches(x.shape[0], batch, np.random.default_rng(seed), backend.xp):
        mini = train if idx is None else train.take(idx)
        rbm, state = learner.step(rbm, state, mini, rng)
    return time.perf_counter() - t0


def mnist(examples: int) -> np.ndarray:
    from rbmlab.data import load_dataset  # noqa: PLC0415

    return load_dataset("mnist").train[:examples]
