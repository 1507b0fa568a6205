"""Timing on a shared machine: interleaved rounds, spreads, explicit BLAS threads.

Compared functions are called in turn within each round (A, B, A, B, ...), after one warm-up
call each, so a swing in the machine's load lands on all of them alike; a ratio is taken per
round (A_i / B_i), and its min / median / max over the rounds is what gets reported.
"""

from __future__ import annotations

import contextlib
import statistics
import time
from collections.abc import Callable, Iterator

from rbmlab.backend import wait_for_device


def interleaved(
    fns: dict[str, Callable[[], object]], rounds: int, warmup: bool = True
) -> dict[str, list[float]]:
    """Wall seconds of each function in each of ``rounds`` rounds, the functions alternating."""
    if warmup:
        for fn in fns.values():
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    return times


def spread(values: list[float]) -> dict[str, float]:
    """min / median / max of ``values``."""
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def ratio(numerator: list[float], denominator: list[float]) -> dict[str, float]:
    """The spread of the per-round ratios numerator_i / denominator_i."""
    return spread([a / b for a, b in zip(numerator, denominator)])


@contextlib.contextmanager
def blas_threads(n: int | None) -> Iterator[None]:
    """Run the block with the BLAS limited to ``n`` threads (threadpoolctl); None: as it is
    (a GPU's work has no host thread count)."""
    if n is None:
        yield
        return
    from threadpoolctl import threadpool_limits  # noqa: PLC0415

    with threadpool_limits(limits=n, user_api="blas"):
        yield


def synchronized(fn: Callable[[], object], xp) -> Callable[[], object]:
    """``fn`` then a wait for the device, so that wall time covers the work cupy launched
    asynchronously; ``fn`` itself for numpy."""
    if getattr(xp, "cuda", None) is None:
        return fn

    def run():
        fn()
        wait_for_device(xp)

    return run
