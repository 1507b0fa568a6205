"""Parallel tempering against block Gibbs on a bimodal RBM, at equal wall-clock.

The model: a ferromagnetic RBM of spin units (33 visible × 8 hidden, every weight J = 0.11, no
biases), whose p(v) has two modes, v ≈ +1 and v ≈ −1, that block Gibbs leaves rarely. A chain's
mode is the sign of its projection on the mode direction, m = mean(v) (33 units: never 0). In
each round, block Gibbs and PT (8 temperatures, geometric to β_min = 0.2) each run 32 chains for
``SECONDS`` of wall-clock, one step per call (m recorded after each), from the same start (half
the chains in each mode), interleaved A, B, A, B. Per round and sampler: the mode switches per
chain per second, and the effective sample size of m per second (all chains:
:func:`effective_sample_size`); rows: each, and PT / Gibbs per round (median, min–max).
"""

from __future__ import annotations

import time

import numpy as np

from rbmlab.backend import get_backend
from rbmlab.bench.core import Row, row
from rbmlab.bench.method import blas_threads, spread
from rbmlab.inference import INFERENCE
from rbmlab.models.rbm import RBM

THREADS = 1
SECONDS = 2.0  # wall-clock per sampler per round
N_VISIBLE, N_HIDDEN, COUPLING, CHAINS = 33, 8, 0.11, 32
PT = {"name": "parallel_tempering", "n_temperatures": 8, "beta_min": 0.2}


def bimodal_rbm(dtype=np.float32) -> RBM:
    """The ferromagnetic spin RBM above: p(v) ∝ Π_j 2cosh(J Σ_i v_i), modes at v = ±1."""
    return RBM(
        np.full((N_VISIBLE, N_HIDDEN), COUPLING, dtype),
        np.zeros(N_VISIBLE, dtype),
        np.zeros(N_HIDDEN, dtype),
        visible="spin",
        hidden="spin",
    )


def effective_sample_size(series: np.ndarray) -> float:
    """ESS of ``series`` (steps, chains), summed over the chains: n·c / τ, τ = −1 + 2 Σ_k Γ_k with
    Γ_k = ρ_{2k} + ρ_{2k+1} summed while positive and made non-increasing (Geyer 1992's initial
    monotone sequence). ρ_t: the chains' mean autocovariance about the grand mean (a chain held in
    one mode stays correlated), by FFT, over the lag-0 value."""
    n, chains = series.shape
    x = series - series.mean()
    f = np.fft.rfft(x, n=2 * n, axis=0)
    acov = np.fft.irfft(f * np.conj(f), axis=0)[:n].mean(axis=1) / n
    if acov[0] <= 0:
        return float(n * chains)
    rho = acov / acov[0]
    pairs = rho[: 2 * (n // 2)].reshape(-1, 2).sum(axis=1)
    positive = np.argmax(pairs <= 0) if np.any(pairs <= 0) else len(pairs)
    gamma = np.minimum.accumulate(pairs[:positive])
    tau = max(-1.0 + 2.0 * gamma.sum(), 1.0 / (n * chains))
    return float(n * chains / tau)


def mode_switches(series: np.ndarray) -> int:
    """Sign changes of each chain's projection over the steps, summed over chains."""
    return int((np.diff(np.sign(series), axis=0) != 0).sum())


def _trace(sampler, model, x, rng, seconds: float) -> tuple[np.ndarray, float]:
    """(m after each step, wall seconds) for steps of ``sampler`` until ``seconds`` have passed."""
    state = sampler.init_state(model, x, rng) if sampler.persistent else None
    v, out = x, []
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        if state is None:
            v = sampler.run(model, v, rng, 1)
        else:
            v, state = sampler.run(model, v, rng, 1, state=state)
        out.append(v.mean(axis=-1))
    return np.array(out), time.perf_counter() - t0


def bench_tempering(rounds: int, seconds: float = SECONDS) -> list[Row]:
    backend = get_backend("numpy", "float32")
    model = bimodal_rbm()
    x = np.ones((CHAINS, N_VISIBLE), np.float32)
    x[::2] = -1.0
    samplers = {
        "gibbs": INFERENCE.build(INFERENCE.parse("block_gibbs")),
        "pt": INFERENCE.build(INFERENCE.parse(PT)),
    }
    switches: dict[str, list[float]] = {k: [] for k in samplers}
    ess: dict[str, list[float]] = {k: [] for k in samplers}
    with blas_threads(THREADS):
        for _name, sampler in samplers.items():  # warm-up
            _trace(sampler, model, x, backend.rng(0), 0.05)
        for r in range(rounds):
            for name, sampler in samplers.items():
                m, wall = _trace(sampler, model, x, backend.rng(1 + r), seconds)
                switches[name].append(mode_switches(m) / CHAINS / wall)
                ess[name].append(effective_sample_size(m) / wall)
    what = (
        f"bimodal {N_VISIBLE}×{N_HIDDEN} spin RBM, J = {COUPLING}, {CHAINS} chains, {seconds:g} s each; "
        f"PT: {PT['n_temperatures']} temperatures, β_min = {PT['beta_min']}"
    )
    rows = []
    for name, label in (("gibbs", "block Gibbs"), ("pt", "PT")):
        rows += [
            row(f"{label}: mode switches per chain-second ({what})", spread(switches[name]), "1/s", THREADS),
            row(
                f"{label}: ESS of mean(v) per second, all chains ({what})", spread(ess[name]), "1/s", THREADS
            ),
        ]
    per_round = lambda a, b: spread([x / y if y > 0 else float("inf") for x, y in zip(a, b)])  # noqa: E731
    rows += [
        row(
            f"PT / block Gibbs, mode switches per second ({what})",
            per_round(switches["pt"], switches["gibbs"]),
            "ratio",
            THREADS,
            "> 1",
        ),
        row(
            f"PT / block Gibbs, ESS per second ({what})",
            per_round(ess["pt"], ess["gibbs"]),
            "ratio",
            THREADS,
            "> 1",
        ),
    ]
    return rows


def tempering_part(rounds: int, examples: int) -> list[Row]:
    """Bench part ``tempering``: :func:`bench_tempering` (``examples`` unused)."""
    return bench_tempering(rounds)
