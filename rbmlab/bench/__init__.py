"""``make bench``: speed of the cores, as ratios to the raw BLAS time of the same shapes and to
scikit-learn, measured so that the ratios hold on a shared machine (rbmlab.bench.method).

    python -m rbmlab.bench [--out results/bench] [--rounds 5] [--parts gibbs,ais,pcd,dcp]

Every comparison is interleaved (A, B, A, B, ... in one process) and reported as the median and
range of its per-round ratios, with the BLAS thread count of each row stated. Rows:
  * Gibbs sweep (784×500, batch 200, float32): the two bare matmuls of its shapes / the sweep;
  * AIS with 100 chains: the two bare matmuls of a transition / the time per temperature;
  * one PCD-1 epoch (500 hidden) against scikit-learn's BernoulliRBM on the same MNIST images,
    batch 200 and 10 in float32, batch 200 in float64 (same BLAS, same process);
  * the dcp paper's cost model (§3.1) from measured parts: a Gibbs transition T, the statistics of
    a batch L, one parameter update U; and S-DCP (d = 6, K' = 4) and (5, 4) epochs against CD-24;
  * Frank-Wolfe: one L-BFGS-B run of the linear oracle on the Caltech-101 Silhouettes training set
    and on MNIST images, against the bare gemv's of its evaluations; one FW iteration at 100
    hidden units with the learner's defaults, split into sampling, oracle and visible-bias loop.
The head of bench.md is ``rbmlab doctor``'s report. Where the CPU allows a faster BLAS kernel than
the one in use, the Gibbs and PCD rows are also measured with it, in alternating subprocesses
(a kernel is chosen when the library loads), and the gain is reported; no setting is changed.

The package: the rows, the experiments' bench parts (``EXPERIMENT_PARTS``) and ``main`` here;
:mod:`rbmlab.bench.method` (interleaved timing); :mod:`rbmlab.bench.samplers` (pmp's sampler
legends); ``__main__`` (``python -m rbmlab.bench``).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from rbmlab.backend import get_backend, namespace, random_bits
from rbmlab.backend.ops import bernoulli_logits_
from rbmlab.bench.method import blas_threads, interleaved, ratio, spread, synchronized
from rbmlab.data.batch import Batch
from rbmlab.evaluators.ais import ais_log_partition, temperature_schedule
from rbmlab.inference.block_gibbs import gibbs_chain
from rbmlab.models.rbm import RBM
from rbmlab.registry import Registry
from rbmlab.run.fileio import atomic_write

Row = dict[str, Any]   # name, threads, median/min/max, unit ("ratio", "ms", "s"), target, note


def row(name: str, values: dict[str, float], unit: str, threads: int | None = None,
        target: str = "", **extra: Any) -> Row:
    return {"name": name, "threads": threads, "unit": unit, "target": target, **values, **extra}


def random_rbm(backend, m: int, n: int, seed: int = 0) -> RBM:
    rng = backend.rng(seed)
    xp = backend.xp
    return RBM(0.05 * rng.standard_normal((m, n), dtype=backend.dtype),
               xp.zeros(m, dtype=backend.dtype) - 1.0, xp.zeros(n, dtype=backend.dtype))


def binary(backend, rows: int, cols: int, p: float, seed: int):
    rng = backend.rng(seed)
    return (rng.random((rows, cols), dtype=backend.dtype) < p).astype(backend.dtype)


def bare_matmuls(backend, products, repeat: int):
    """``repeat`` rounds of the products A @ B of ``products`` [(A, B), ...], each into a
    preallocated output (B made contiguous first: the bound a core that forms them is held to)."""
    xp = backend.xp
    pairs = [(a, xp.ascontiguousarray(b), xp.empty((a.shape[0], b.shape[1]), dtype=b.dtype))
             for a, b in products]

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


def bench_gibbs(backend, rounds: int, threads: int | None, m=784, n=500, batch=200, sweeps=10,
                target="≥ 0.85 (1 thread), ≥ 0.7 (2)") -> list[Row]:
    rbm, rng = random_rbm(backend, m, n), backend.rng(1)
    v, h = binary(backend, batch, m, 0.2, 2), binary(backend, batch, n, 0.5, 3)
    t = timed(backend, rounds, threads, {"matmuls": two_matmuls(backend, rbm.W, v, h, sweeps),
                                         "sweeps": lambda: gibbs_chain(rbm, v, rng, sweeps)})
    shape = f"{m}×{n}, batch {batch}, {backend.dtype}"
    return [row(f"Gibbs sweep ({shape}), ms", spread([1e3 * s / sweeps for s in t["sweeps"]]), "ms", threads),
            row("bare matmuls / Gibbs sweep", ratio(t["matmuls"], t["sweeps"]), "ratio", threads, target)]


def bench_ais(backend, rounds: int, threads: int | None, m=784, n=500, chains=100, temps=100,
              target="≥ 0.75") -> list[Row]:
    rbm = random_rbm(backend, m, n)
    betas = temperature_schedule("linear", temps)
    base = backend.xp.zeros(m, dtype=backend.dtype) - 1.0
    v, h = binary(backend, chains, m, 0.2, 2), binary(backend, chains, n, 0.5, 3)
    t = timed(backend, rounds, threads, {
        "matmuls": two_matmuls(backend, rbm.W, v, h, temps + 1),
        "ais": lambda: ais_log_partition(rbm, backend.rng(2), base_bias=base, betas=betas, n_chains=chains)})
    per_temperature = [s / (temps + 1) for s in t["ais"]]
    return [row(f"AIS ({chains} chains, {m}×{n}) per temperature, ms", spread([1e3 * s for s in per_temperature]),
                "ms", threads, note=f"one 14,500-temperature run ≈ {14500 * spread(per_temperature)['median']:.0f} s"),
            row("bare matmuls / AIS temperature", ratio(t["matmuls"], t["ais"]), "ratio", threads, target)]


def epoch_seconds(learner, rbm, x, batch: int, seed: int, backend) -> float:
    """Wall time of one shuffled epoch of ``learner`` over ``x`` (learner state set up first)."""
    from rbmlab.run.runner import batches  # noqa: PLC0415

    train = Batch(x)
    state = learner.init_state(rbm, train, backend.rng(seed, 0))
    rng = backend.rng(seed, 1)
    t0 = time.perf_counter()
    for idx in batches(x.shape[0], batch, np.random.default_rng(seed)):
        mini = train if idx is None else train.take(backend.xp.asarray(idx))
        rbm, state = learner.step(rbm, state, mini, rng)
    return time.perf_counter() - t0


def mnist(examples: int) -> np.ndarray:
    from rbmlab.data import load_dataset  # noqa: PLC0415

    return load_dataset("mnist").train[:examples]


def pcd_matmuls(backend, m: int, n: int, batch: int, steps: int):
    """The products of ``steps`` PCD-1 steps as rbmlab's fused path forms them, bare: one hidden
    product for data and chains (2B rows), the chains' visible and hidden products, and one W
    product for both phases (2B inner). Six (B, m, n) matmul units a step: the floor of an epoch."""
    xp = backend.xp
    W = random_rbm(backend, m, n).W
    stacked, v, h = binary(backend, 2 * batch, m, 0.2, 4), binary(backend, batch, m, 0.2, 5), \
        binary(backend, batch, n, 0.5, 6)
    p = binary(backend, 2 * batch, n, 0.5, 7)
    out_2h, out_v, out_h = (xp.empty((2 * batch, n), W.dtype), xp.empty((batch, m), W.dtype),
                            xp.empty((batch, n), W.dtype))
    out_w, Wt = xp.empty((m, n), W.dtype), xp.ascontiguousarray(W.T)

    def run():
        for _ in range(steps):
            xp.matmul(stacked, W, out=out_2h)
            xp.matmul(h, Wt, out=out_v)
            xp.matmul(v, W, out=out_h)
            xp.matmul(stacked.T, p, out=out_w)
    return run


def bench_pcd(dtype: str, batch: int, rounds: int, threads: int, examples: int, lr=0.05,
              n_hidden=500) -> list[Row]:
    """One PCD-1 epoch, rbmlab against scikit-learn's BernoulliRBM, epochs alternating."""
    from sklearn.neural_network import BernoulliRBM  # noqa: PLC0415

    from rbmlab.learners.pcd import PCD, PCDConfig  # noqa: PLC0415

    backend = get_backend("numpy", dtype)
    x_np = mnist(examples).astype(dtype)
    x = backend.asarray(x_np)
    learner = PCD(PCDConfig(lr=lr, batch_size=batch, k=1))
    rbm = random_rbm(backend, x.shape[1], n_hidden)
    sk = BernoulliRBM(n_components=n_hidden, learning_rate=lr, batch_size=batch, n_iter=1, random_state=0)
    floor = pcd_matmuls(backend, x.shape[1], n_hidden, batch, -(-examples // batch))
    with blas_threads(threads):
        t = interleaved({"rbmlab": lambda: epoch_seconds(learner, rbm, x, batch, 3, backend),
                         "sklearn": lambda: sk.fit(x_np), "matmuls": floor}, rounds)
    what = f"PCD-1 epoch ({examples} MNIST images, 500 hidden, batch {batch}, {dtype})"
    target = {("float32", 200): "≥ 1.6", ("float32", 10): "≥ 1.8", ("float64", 200): "≥ 1.0"}.get((dtype, batch), "")
    return [row(f"{what}, rbmlab s", spread(t["rbmlab"]), "s", threads),
            row(f"{what}, scikit-learn s", spread(t["sklearn"]), "s", threads),
            row(f"scikit-learn / rbmlab, batch {batch}, {dtype}", ratio(t["sklearn"], t["rbmlab"]), "ratio",
                threads, target),
            row(f"bare matmuls of the epoch (6 units a step) / rbmlab, batch {batch}, {dtype}",
                ratio(t["matmuls"], t["rbmlab"]), "ratio", threads),
            row(f"scikit-learn / bare matmuls: the most scikit-learn / rbmlab can be, batch {batch}, {dtype}",
                ratio(t["sklearn"], t["matmuls"]), "ratio", threads)]


def bench_dcp_costs(backend, rounds: int, m=784, n=500, batch=200, d=6, k_inner=4, k_cd=24) -> dict:
    """The dcp paper's cost model (§3.1) with measured parts, at the MNIST shapes.

    CD-K costs K·T + 2L (+ one update U); S-DCP costs d·(K'·T + L) + L (+ d updates), where T is
    one Gibbs transition and L the statistics of a batch. The paper neglects (d − 1)·L, "since L
    is much smaller than T"; in a dense RBM both are two matmuls of the same shapes. Each part is
    timed in every round; the predictions are spreads over the rounds.
    """
    from rbmlab.learners.cd import CD, CDConfig  # noqa: PLC0415

    rbm, rng = random_rbm(backend, m, n), backend.rng(1)
    v = binary(backend, batch, m, 0.2, 2)
    grad = rbm.statistics(v)
    learner = CD(CDConfig(lr=0.01))     # plain SGD, as the epochs of bench_dcp_epochs
    sweeps = 10
    t = interleaved({"T": lambda: gibbs_chain(rbm, v, rng, sweeps), "L": lambda: rbm.statistics(v),
                     "U": lambda: learner.update(rbm, grad, {})}, rounds)
    T = [s / sweeps for s in t["T"]]
    L, U = t["L"], t["U"]
    cd = [k_cd * a + 2 * b + c for a, b, c in zip(T, L, U)]
    sdcp = [d * (k_inner * a + b + c) + b for a, b, c in zip(T, L, U)]
    sdcp_paper = [d * k_inner * a + 2 * b + d * c for a, b, c in zip(T, L, U)]
    return {"batch": batch, "d": d, "k_inner": k_inner, "k_cd": k_cd,
            "T_gibbs_ms": spread([1e3 * a for a in T]), "L_statistics_ms": spread([1e3 * b for b in L]),
            "U_update_ms": spread([1e3 * c for c in U]), "L_over_T": ratio(L, T),
            "predicted_sdcp_over_cd": ratio(sdcp, cd),
            "predicted_sdcp_over_cd_without_extra_L": ratio(sdcp_paper, cd)}


def dcp_cost_rows(c: dict, threads: int) -> list[Row]:
    dd, kk, kc = c["d"], c["k_inner"], c["k_cd"]
    return [row(f"dcp §3.1 cost model, batch {c['batch']}: Gibbs transition T, ms", c["T_gibbs_ms"], "ms", threads),
            row("batch statistics L, ms", c["L_statistics_ms"], "ms", threads),
            row("parameter update U, ms", c["U_update_ms"], "ms", threads),
            row("L / T (the paper assumes L ≪ T)", c["L_over_T"], "ratio", threads),
            row(f"predicted S-DCP({dd}, {kk}) / CD-{kc}: ({dd}({kk}T + L + U) + L) / ({kc}T + 2L + U)",
                c["predicted_sdcp_over_cd"], "ratio", threads),
            row(f"same, neglecting (d − 1)L as the paper does: ({dd * kk}T + 2L + {dd}U) / ({kc}T + 2L + U)",
                c["predicted_sdcp_over_cd_without_extra_L"], "ratio", threads)]


def bench_dcp_epochs(rounds: int, threads: int, examples: int, batch=200, lr=0.01, n_hidden=500) -> list[Row]:
    """CD-24 vs S-DCP (d = 6, K' = 4) and (d = 5, K' = 4) epochs, alternating."""
    from rbmlab.learners.cd import CD, CDConfig  # noqa: PLC0415
    from rbmlab.learners.sdcp import SDCP, SDCPConfig  # noqa: PLC0415

    backend = get_backend("numpy", "float32")
    x = backend.asarray(mnist(examples))
    rbm = random_rbm(backend, x.shape[1], n_hidden)
    learners = {"CD-24": CD(CDConfig(lr=lr, batch_size=batch, k=24)),
                "S-DCP(6, 4)": SDCP(SDCPConfig(lr=lr, batch_size=batch, d=6, k=4)),
                "S-DCP(5, 4)": SDCP(SDCPConfig(lr=lr, batch_size=batch, d=5, k=4))}
    with blas_threads(threads):
        t = interleaved({name: (lambda lr_=learner: epoch_seconds(lr_, rbm, x, batch, 0, backend))
                         for name, learner in learners.items()}, rounds, warmup=False)
    what = f"epoch ({examples} MNIST images, 500 hidden, batch {batch}), s"
    return [*(row(f"{name} {what}", spread(ts), "s", threads) for name, ts in t.items()),
            row("S-DCP(6, 4) / CD-24 epoch time", ratio(t["S-DCP(6, 4)"], t["CD-24"]), "ratio", threads, "≤ 1.1"),
            row("S-DCP(5, 4) / CD-24 epoch time (§3.1's pair when L = T)", ratio(t["S-DCP(5, 4)"], t["CD-24"]),
                "ratio", threads)]


def bench_sampler(backend, rounds: int, m=784, n=500, batch=200, chains=100, temps=100) -> list[Row]:
    """The fused numba draw against the numpy fallback (same bits): one draw, a Gibbs sweep
    (1 BLAS thread) and an AIS temperature (2 threads), interleaved."""
    if not random_bits.numba_available():
        return []
    xp, rbm, rng = backend.xp, random_rbm(backend, m, n), backend.rng(1)
    logits = backend.rng(4).standard_normal((batch, m + n), dtype=backend.dtype)
    work = xp.empty_like(logits)

    def draws():
        for _ in range(100):
            work[...] = logits
            bernoulli_logits_(work, rng)

    def fallback(fn):
        def run():
            with random_bits.numpy_fallback():
                fn()
        return run

    v = binary(backend, batch, m, 0.2, 2)
    sweeps = lambda: gibbs_chain(rbm, v, rng, 10)   # noqa: E731
    betas, base = temperature_schedule("linear", temps), xp.zeros(m, dtype=backend.dtype) - 1.0
    ais = lambda: ais_log_partition(rbm, backend.rng(2), base_bias=base, betas=betas, n_chains=chains)  # noqa: E731
    rows = []
    cases = ((f"Bernoulli draw from logits ({batch}×{m + n}, {backend.dtype})", draws, 1, "µs", 1e6 / 100),
             (f"Gibbs sweep ({m}×{n}, batch {batch})", sweeps, 1, "ms", 1e3 / 10),
             (f"AIS ({chains} chains, {m}×{n}) per temperature", ais, 2, "ms", 1e3 / (temps + 1)))
    for what, fn, threads, unit, scale in cases:
        t = timed(backend, rounds, threads, {"fused": fn, "fallback": fallback(fn)})
        rows += [*(row(f"{what}, {unit}: {name}", spread([scale * s for s in t[key]]), unit, threads)
                   for key, name in (("fused", "numba fused"), ("fallback", "numpy fallback"))),
                 row(f"{what}: numpy fallback / numba fused (the gain)", ratio(t["fallback"], t["fused"]),
                     "ratio", threads)]
    return rows


def fw_model_states(backend, x, n: int, seed: int):
    """``n`` states of q_0, the FW model with no units whose visible biases give the data means:
    the model states of a first oracle call."""
    rng = backend.rng(seed)
    return (rng.random((n, x.shape[1]), dtype=backend.dtype) < x.mean(axis=0)).astype(backend.dtype)


def oracle_gemvs(x, states, evaluations: list[int]):
    """The products of ``evaluations[-1]`` f/∇f evaluations of the FW oracle, bare: ``x u`` and
    ``σ x`` for the data and for the model states. An evaluation is matrix-VECTOR work (BLAS-2,
    memory bound: each product reads the whole array for two flops an element), so these four
    gemv's, not matmul throughput, are its bound."""
    xp = namespace(x)
    u = xp.full(x.shape[1], 0.01, dtype=x.dtype)
    a_x, a_s = xp.empty(x.shape[0], dtype=x.dtype), xp.empty(states.shape[0], dtype=x.dtype)
    grad = xp.empty(x.shape[1], dtype=x.dtype)

    def run():
        for _ in range(evaluations[-1]):
            xp.matmul(x, u, out=a_x)
            xp.matmul(a_x, x, out=grad)
            xp.matmul(states, u, out=a_s)
            xp.matmul(a_s, states, out=grad)
    return run


def counts(values: list[int]) -> str:
    return f"{min(values)}" if min(values) == max(values) else f"{min(values)} – {max(values)}"


def bench_fw_oracle(backend, x, what: str, rounds: int, threads: int, n_states=1000) -> list[Row]:
    """One L-BFGS-B run of the FW linear oracle (restarts 1 from a fixed start, the learner's
    default λ, maxiter, gtol) over data ``x`` and ``n_states`` states of q_0, interleaved with the
    bare gemv's of as many evaluations (:func:`oracle_gemvs`). With more than one thread and a
    separate scipy BLAS, also the same run with scipy's BLAS left at ``threads`` threads (two
    OpenBLAS pools of ``threads`` threads each share the cores; ``solve`` limits scipy's to 1)."""
    from rbmlab.learners.frank_wolfe import FrankWolfeConfig  # noqa: PLC0415
    from rbmlab.learners.frank_wolfe_oracle import LinearOracle, scipy_blas, solve  # noqa: PLC0415

    cfg = FrankWolfeConfig()
    states = fw_model_states(backend, x, n_states, 5)
    evaluations: dict[str, list[int]] = {}
    iterations: dict[str, list[int]] = {}

    def run_solve(key: str, scipy_threads: int | None):
        evaluations[key], iterations[key] = [], []

        def run():
            oracle = LinearOracle(x, states, lam=cfg.lam, penalize_bias=cfg.penalize_bias)
            result = solve(oracle, np.random.default_rng(0), restarts=1, init_std=cfg.init_std,
                           maxiter=cfg.maxiter, gtol=cfg.gtol, scipy_blas_threads=scipy_threads)
            evaluations[key].append(result.evaluations)
            iterations[key].append(result.iterations)
        return run

    fns = {"solve": run_solve("solve", 1)}
    separate = scipy_blas() if threads > 1 else None
    if separate is not None:
        fns["scipy N"] = run_solve("scipy N", None)
    fns["gemvs"] = oracle_gemvs(x, states, evaluations["solve"])
    t = timed(backend, rounds, threads, fns)
    n = {key: e[1:] for key, e in evaluations.items()}     # the timed rounds' (the first: warm-up)
    per_evaluation = {key: [s / e for s, e in zip(t[key], n[key])] for key in n}
    gemvs = [s / e for s, e in zip(t["gemvs"], n["solve"])]
    shape = f"{what}, S = {n_states}"
    rows = [row(f"FW oracle, one L-BFGS-B run ({shape}), s", spread(t["solve"]), "s", threads,
                note=f"{counts(n['solve'])} f/∇f evaluations, {counts(iterations['solve'][1:])} iterations"),
            row(f"FW oracle f/∇f evaluation ({shape}), ms", spread([1e3 * s for s in per_evaluation["solve"]]),
                "ms", threads),
            row(f"bare gemv's / FW oracle evaluation ({shape})", ratio(gemvs, per_evaluation["solve"]), "ratio",
                threads)]
    if separate is not None:
        rows += [row(f"FW oracle f/∇f evaluation ({shape}), scipy's own BLAS left at {threads} threads, ms",
                     spread([1e3 * s for s in per_evaluation["scipy N"]]), "ms", threads),
                 row(f"FW oracle evaluation, scipy's own BLAS at {threads} / at 1 thread ({shape})",
                     ratio(per_evaluation["scipy N"], per_evaluation["solve"]), "ratio", threads)]
    return rows


def bench_fw_iteration(backend, x, what: str, rounds: int, threads: int, n_hidden=100,
                       config=None) -> list[Row]:
    """One Frank-Wolfe iteration at a random model of ``n_hidden`` units, as FrankWolfe.step
    runs it, phase by phase in turn: the S persistent chains' sweeps, the oracle (best of
    ``restarts`` L-BFGS-B runs, then the unit appended) and the visible-bias loop (``bias_steps``
    updates, each after ``bias_sweeps`` sweeps of M chains). Shares are per round, of the sum."""
    from rbmlab.learners.frank_wolfe import FrankWolfe, FrankWolfeConfig, append_unit  # noqa: PLC0415
    from rbmlab.learners.frank_wolfe_oracle import LinearOracle, solve  # noqa: PLC0415

    learner = FrankWolfe(config or FrankWolfeConfig())
    cfg = learner.config
    model = random_rbm(backend, x.shape[1], n_hidden)
    now = {"state": learner.init_state(model, Batch(x), backend.rng(0))}
    rng, data_mean = backend.rng(1), x.mean(axis=0)
    lam = cfg.lam / (n_hidden + 1) if cfg.lambda_scaling == "over_t" else cfg.lam
    evaluations: list[int] = []

    def sampling():
        now["chains"] = learner.sample(model, now["state"]["chains"], rng, cfg.sample_steps)

    def oracle():
        best = solve(LinearOracle(x, now["chains"], lam=lam, penalize_bias=cfg.penalize_bias),
                     getattr(rng, "host_keys", rng), restarts=cfg.restarts, init_std=cfg.init_std,
                     maxiter=cfg.maxiter, gtol=cfg.gtol)
        now["model"] = append_unit(model, best.w)
        evaluations.append(best.evaluations)

    bias_steps: list[int] = []

    def bias():
        _, now["state"] = learner.fit_visible_bias(now["model"], {**now["state"], "chains": now["chains"]},
                                                   data_mean, rng)
        bias_steps.append(int(now["state"]["bias_steps"]))

    t = timed(backend, rounds, threads, {"sampling": sampling, "oracle": oracle, "bias": bias})
    total = [sum(parts) for parts in zip(*t.values())]
    bias = (f"{cfg.bias_steps} bias steps" if cfg.bias_fit == "fixed" else "the bias fitted to convergence")
    shape = (f"{what}, {n_hidden} hidden; S = {cfg.n_samples} × {cfg.sample_steps} sweeps, {cfg.restarts} "
             f"restarts, {bias} × {cfg.bias_chains} chains")
    return [row(f"one Frank-Wolfe iteration ({shape}), s", spread(total), "s", threads,
                note=f"oracle: {counts(evaluations[1:])} f/∇f evaluations; bias steps: {counts(bias_steps[1:])}"),
            *(row(f"FW iteration share: {label}", spread([a / b for a, b in zip(t[key], total)]), "ratio", threads)
              for key, label in (("sampling", f"sampling ({cfg.n_samples} chains' sweeps)"),
                                 ("oracle", f"oracle (best of {cfg.restarts} L-BFGS-B runs)"),
                                 ("bias", "visible-bias loop")))]


def bench_frank_wolfe(backend, rounds: int, examples: int) -> list[Row]:
    """The FW oracle on the Caltech-101 Silhouettes training set (4,100 × 784) and on ``examples``
    MNIST images, 1 and 2 BLAS threads; one FW iteration on Caltech at 100 hidden units, 1 thread."""
    from rbmlab.data import load_dataset  # noqa: PLC0415

    caltech = backend.asarray(load_dataset("caltech101").train)
    images = backend.asarray(mnist(examples))
    rows = []
    for x, what in ((caltech, f"Caltech-101 Silhouettes train, {caltech.shape[0]} × {caltech.shape[1]}"),
                    (images, f"{images.shape[0]} MNIST images")):
        rows += [r for threads in (1, 2) for r in bench_fw_oracle(backend, x, what, rounds, threads)]
    return rows + bench_fw_iteration(backend, caltech, "Caltech-101 Silhouettes train", rounds, 1)


def transcendental_floor(shape, dtype, iterations: int, xp=np):
    """The unavoidable elementwise work of ``iterations`` sum-product BP iterations on messages of
    ``shape``: per direction one exp (the cavity's σ) and one log1p per message, into a
    preallocated array."""
    a = xp.full(shape, 0.3, dtype=dtype)
    out = xp.empty_like(a)

    def run():
        for _ in range(2 * iterations):
            xp.exp(a, out=out)
            xp.log1p(out, out=out)
    return run


def bench_crbm_bp(backend, rounds: int, threads: int, n_v=1000, n_h=500, iterations=10,
                  target="≤ 100 ms on 2 cores (aim 50)") -> list[Row]:
    """crbm_bp's speed claim: loopy BP on one random 1000 × 500 RBM for 10 iterations (W ~
    N(0, 0.1²), b ~ N(0, 1): our choice, the paper gives no distribution, Sec. 1 footnote 1), sum-, max- and mixed-product, beside the bare
    transcendentals of sum-product (:func:`transcendental_floor`); and BP's batched throughput
    on the CRBM's x-conditioned RBMs, 784 × 256, batch 100."""
    from rbmlab.inference.matrix_bp import loopy_bp  # noqa: PLC0415

    rng = backend.rng(0)
    W = (0.1 * rng.standard_normal((n_v, n_h))).astype(backend.dtype)
    b_v = rng.standard_normal((1, n_v)).astype(backend.dtype)
    b_h = rng.standard_normal((1, n_h)).astype(backend.dtype)
    fns = {mode: (lambda mode=mode: loopy_bp(W, b_v, b_h, mode=mode, max_iter=iterations, tol=None))
           for mode in ("sum", "max", "mixed")}
    fns["floor"] = transcendental_floor((1, n_v, n_h), backend.dtype, iterations, backend.xp)
    t = timed(backend, rounds, threads, fns)
    shape = f"random {n_v}×{n_h} RBM, {iterations} iterations, {backend.dtype}"
    rows = [row(f"BP {mode}-product ({shape}), ms", spread([1e3 * s for s in t[mode]]), "ms", threads,
                target if mode == "sum" else "",
                note="paper: 500 ms in Matlab, libDAI 297 s" if mode == "sum" else "")
            for mode in ("sum", "max", "mixed")]
    rows.append(row(f"bare exp + log1p / BP sum-product ({shape})", ratio(t["floor"], t["sum"]), "ratio", threads))
    W = (0.05 * rng.standard_normal((784, 256))).astype(backend.dtype)
    b_v = rng.standard_normal((100, 784)).astype(backend.dtype)
    b_h = rng.standard_normal((100, W.shape[1])).astype(backend.dtype)
    batched = timed(backend, max(2, rounds // 2), threads,
                    {"bp": lambda: loopy_bp(W, b_v, b_h, max_iter=5, tol=None)})["bp"]
    rows.append(row(f"BP sum-product throughput (784×{W.shape[1]}, batch 100), instance-iterations per s",
                    spread([500 / s for s in batched]), "1/s", threads))
    return rows


def bp_to_convergence(backend, rounds: int, threads: int, n_v: int, n_h: int, weight_std: float,
                      max_iter: int = 500, tol: float = 1e-3, scan: bool = False) -> list[Row]:
    """Sum-product BP on one random n_v × n_h RBM (W ~ N(0, weight_std²), b ~ N(0, 1)) until no
    message probability moves by more than ``tol`` (crbm_bp's scalability claim, Sec. 1 footnote
    1: at 10,000 × 2,000 their Matlab "converges within a few seconds"; libDAI's 297.4 s, Sec.
    5.2, is the 1000 × 500 case at 10 iterations, :func:`bench_crbm_bp`): seconds, with the
    iterations it took and whether it converged. ``scan``: a row of the weight-scale scan, named
    apart (the paper's time belongs to the compared row only)."""
    from rbmlab.inference.matrix_bp import loopy_bp  # noqa: PLC0415

    rng = backend.rng(1)
    W = (weight_std * rng.standard_normal((n_v, n_h))).astype(backend.dtype)
    b_v = rng.standard_normal((1, n_v)).astype(backend.dtype)
    b_h = rng.standard_normal((1, n_h)).astype(backend.dtype)
    runs = []
    t = timed(backend, rounds, threads,
              {"bp": lambda: runs.append(loopy_bp(W, b_v, b_h, max_iter=max_iter, tol=tol))})
    last = runs[-1]
    name = (f"BP scan, W ~ N(0, {weight_std:g}²): sum-product to tol {tol:g} or {max_iter} iterations, "
            f"random {n_v}×{n_h} RBM, {backend.dtype}, s") if scan else (
            f"BP sum-product to convergence (tol {tol:g}), random {n_v}×{n_h} RBM, "
            f"W ~ N(0, {weight_std:g}²), {backend.dtype}, s")
    note = f"{last.iterations} iterations, converged: {bool(last.converged.all())}"
    return [row(name, spread(t["bp"]), "s", threads, note=note if scan else f"{note}; paper: a few seconds in Matlab")]


def bp_speed(rounds: int, small=(1000, 500, 10), large=(10_000, 2_000, 0.01), scan=(),
             scan_max_iter: int = 100) -> list[Row]:
    """crbm_bp's BP speed claim, both cases: ``small`` = (|v|, |h|, iterations) timed in the three
    modes (bench_crbm_bp), ``large`` = (|v|, |h|, weight std) to convergence; 1 and 2 threads.
    ``scan``: further weight stds at the large size, once each with at most ``scan_max_iter``
    iterations (the paper gives no distribution; stronger weights make convergence harder)."""
    backend = get_backend("numpy", "float32")
    n_v, n_h, iterations = small
    rows = []
    for threads in (1, 2):
        rows += bench_crbm_bp(backend, rounds, threads, n_v=n_v, n_h=n_h, iterations=iterations)[:4]
    rows += bp_to_convergence(backend, max(1, rounds // 3), 2, *large)
    for weight_std in scan:
        rows += bp_to_convergence(backend, 1, 2, *large[:2], weight_std, max_iter=scan_max_iter, scan=True)
    return rows


def pmap_speed(rounds: int, sides=(5, 10), n_samples: int = 100, sweeps: int = 200, tol: float = 1e-6
               ) -> list[Row]:
    """pmp Sec 5.2's "MPLP (500× slower)": the perturb-and-MAP problems of pmp/figure-1a (the cyclic
    lattice, J = −0.2 per edge in ±1 spins, ``n_samples`` Logistic perturbations, the same for
    both) solved by PMP (``sweeps`` sweeps, damping ½, float32) and by MPLP (to ``tol``, float64,
    numba), interleaved, one BLAS thread; seconds of each and MPLP / PMP per round."""
    from rbmlab.evaluators.pmap_log_z import mplp_objectives, pmp_objectives  # noqa: PLC0415
    from rbmlab.inference.max_product import logistic_noise  # noqa: PLC0415
    from rbmlab.models.ising import lattice_2d  # noqa: PLC0415

    rows = []
    for side in sides:
        graph = lattice_2d(side, coupling=-0.2, spins="pm1").factor_graph()
        noise = logistic_noise(np.random.default_rng(0), (n_samples, graph.n), np.float64)
        t = timed(get_backend("numpy", "float32"), rounds, 1, {
            "pmp": lambda: pmp_objectives(graph, noise, sweeps),
            "mplp": lambda: mplp_objectives(graph, noise, np.random.default_rng(1), tol=tol)})
        what = f"{side}×{side} cyclic lattice, {n_samples} perturbed MAP problems"
        rows += [row(f"PMP, {sweeps} sweeps ({what}), s", spread(t["pmp"]), "s", 1),
                 row(f"MPLP to tol {tol:g} ({what}), s", spread(t["mplp"]), "s", 1),
                 row(f"MPLP / PMP ({what})", ratio(t["mplp"], t["pmp"]), "ratio", 1,
                     "paper: 500× at 15×15 (GPU JAX PMP vs numba MPLP)")]
    return rows


def message_floor(backend, shape, repeat: int):
    """The memory traffic no damped max-product sweep avoids: its messages (``shape``) read and
    written once, ``repeat`` times (one elementwise pass into a second buffer)."""
    xp = backend.xp
    a = xp.zeros(shape, dtype=backend.dtype)
    b = xp.empty_like(a)

    def run():
        for _ in range(repeat):
            xp.multiply(a, 0.5, out=b)
    return run


def bench_pmp(backend, rounds: int, threads: int | None, m=784, n=500, chains=100, d=900,
              sweeps=10, target="goal ≤ 10× (plain numpy ≈ 30×)") -> list[Row]:
    """pmp's sampler against the bare work: PMP sweeps (damping ½, from zero messages, as the
    sampler runs them) on a random m × n RBM with ``chains`` perturbations, against block-Gibbs
    sweeps of the same chains and the two matmuls they are made of; and PMP sweeps on a dense
    d-variable Ising model against the one matmul of a sweep's local fields (``chains`` × d × d).
    Both also against :func:`message_floor`, reading and writing their messages once (2·chains·m·n
    and chains·d² floats): the memory-bound floor of any sweep that keeps its messages. PMP's
    time includes zeroing its messages (one write, spread over ``sweeps``); its numba kernels run
    on one thread whatever the BLAS threads (the rows' thread count is BLAS's)."""
    from rbmlab.inference.max_product import logistic_noise, max_product  # noqa: PLC0415
    from rbmlab.models import factor_graph  # noqa: PLC0415
    from rbmlab.models.ising import fully_connected  # noqa: PLC0415

    rbm, rng = random_rbm(backend, m, n), backend.rng(1)
    v, h = binary(backend, chains, m, 0.2, 2), binary(backend, chains, n, 0.5, 3)
    graph = rbm.factor_graph()
    unary = graph.unary[None, :] + logistic_noise(rng, (chains, graph.n), backend.dtype)
    t = timed(backend, rounds, threads, {
        "pmp": lambda: max_product(graph, unary, sweeps),
        "gibbs": lambda: gibbs_chain(rbm, v, rng, sweeps),
        "matmuls": two_matmuls(backend, rbm.W, v, h, sweeps),
        "floor": message_floor(backend, (2, chains, m, n), sweeps)})
    shape = f"{m}×{n} RBM, {chains} chains, {backend.dtype}"
    kernel = "numba kernel, 1 thread" if factor_graph._kernels() else "numpy path"
    rows = [row(f"PMP sweep ({shape}; {kernel}), ms", spread([1e3 * s / sweeps for s in t["pmp"]]), "ms", threads),
            row(f"block-Gibbs sweep ({shape}), ms", spread([1e3 * s / sweeps for s in t["gibbs"]]), "ms", threads),
            row(f"PMP sweep / block-Gibbs sweep ({shape})", ratio(t["pmp"], t["gibbs"]), "ratio", threads, target),
            row(f"bare matmuls of a Gibbs sweep / PMP sweep ({shape})", ratio(t["matmuls"], t["pmp"]), "ratio", threads),
            row(f"message read + write / PMP sweep ({shape})", ratio(t["floor"], t["pmp"]), "ratio", threads)]
    ising = fully_connected(d, rng=np.random.default_rng(0), coupling_std=0.05, field_std=0.5,
                            dtype=backend.dtype, xp=backend.xp)
    graph = ising.factor_graph()
    unary = graph.unary[None, :] + logistic_noise(rng, (chains, d), backend.dtype)
    x, J, out = binary(backend, chains, d, 0.5, 4), graph.groups[0].W, backend.xp.empty((chains, d), backend.dtype)

    def fields():
        for _ in range(sweeps):
            backend.xp.matmul(x, J, out=out)
    t = timed(backend, max(2, rounds // 2), threads, {
        "pmp": lambda: max_product(graph, unary, sweeps), "matmul": fields,
        "floor": message_floor(backend, (chains, d, d), sweeps)})
    shape = f"dense Ising, d = {d}, {chains} chains, {backend.dtype}"
    rows += [row(f"PMP sweep ({shape}; {kernel}), ms", spread([1e3 * s / sweeps for s in t["pmp"]]), "ms", threads),
             row(f"bare matmul x J / PMP sweep ({shape})", ratio(t["matmul"], t["pmp"]), "ratio", threads),
             row(f"message read + write / PMP sweep ({shape})", ratio(t["floor"], t["pmp"]), "ratio", threads)]
    return rows


def tap_matmuls(backend, W, a_v, a_h, repeat: int):
    """The bare matmuls of ``repeat`` TAP iterations: a^v W, c^v W², a^h Wᵀ, c^h W²ᵀ."""
    W2 = W * W
    return bare_matmuls(backend, [(a_v, W), (a_v, W2), (a_h, W.T), (a_h, W2.T)], repeat)


def bench_tap(backend, rounds: int, threads: int | None, m=784, n=500, chains=100, iterations=10,
              target="≥ 0.7") -> list[Row]:
    """tap's Alg. 1 (rbmlab.inference.tap.solve, damped, convergence checked every iteration, never
    met: tol = 0) from ``chains`` binary initialisations of a random m × n RBM, against the four
    bare matmuls an iteration is made of."""
    from rbmlab.inference.tap import solve  # noqa: PLC0415

    rbm = random_rbm(backend, m, n)
    visible, hidden = rbm.tap_layers()
    x, h = binary(backend, chains, m, 0.2, 2), binary(backend, chains, n, 0.5, 3)
    t = timed(backend, rounds, threads, {
        "tap": lambda: solve(rbm.W, visible, hidden, x, tol=0.0, max_iter=iterations),
        "matmuls": tap_matmuls(backend, rbm.W, x, h, iterations)})
    per = [s / iterations for s in t["tap"]]
    shape = f"{m}×{n}, {chains} initialisations, {backend.dtype}"
    return [row(f"TAP iterations per second ({shape})", spread([1.0 / s for s in per]), "1/s", threads),
            row(f"TAP iteration ({shape}), ms", spread([1e3 * s for s in per]), "ms", threads),
            row(f"bare matmuls / TAP iteration ({shape})", ratio(t["matmuls"], t["tap"]), "ratio",
                threads, target)]


def tap_speed(rounds: int, batches=(1, 10, 100), m: int = 784, n: int = 500,
              tap_iterations: int = 20, adatap_iterations: int = 2, backend_name: str = "numpy") -> list[Row]:
    """tap Fig. 10 (right): milliseconds per iteration of TAP (Alg. 1) and of adaTAP by VAMP (Alg. 3)
    against the batch size, the same random m × n binary RBM and binary initialisations for both,
    interleaved in one process (numpy: at one BLAS thread), float32; VAMP / TAP per round."""
    from rbmlab.inference import adatap, tap  # noqa: PLC0415

    threads = 1 if backend_name == "numpy" else None
    backend = get_backend(backend_name, "float32")
    rbm = random_rbm(backend, m, n)
    visible, hidden = rbm.tap_layers()
    rows = []
    for batch in batches:
        x = binary(backend, batch, m, 0.2, 2)
        t = timed(backend, rounds, threads, {
            "tap": lambda: tap.solve(rbm.W, visible, hidden, x, tol=0.0, max_iter=tap_iterations),
            "vamp": lambda: adatap.solve(rbm.W, visible, hidden, x, tol=0.0,
                                         max_iter=adatap_iterations)})
        tap_ms = [1e3 * v / tap_iterations for v in t["tap"]]
        vamp_ms = [1e3 * v / adatap_iterations for v in t["vamp"]]
        what = f"{m}×{n}, batch {batch}" + ("" if threads else f", {backend.name}")
        rows += [row(f"TAP iteration ({what}), ms", spread(tap_ms), "ms", threads),
                 row(f"adaTAP (VAMP) iteration ({what}), ms", spread(vamp_ms), "ms", threads),
                 row(f"VAMP / TAP per iteration ({what})", ratio(vamp_ms, tap_ms), "ratio", threads,
                     "paper: 3 orders of magnitude")]
    return rows


# timing artefacts of experiments/<paper>/*.yaml (bench:)
EXPERIMENT_PARTS = Registry("bench part", {
    "tap_speed": "rbmlab.bench:tap_speed",
    "bp_speed": "rbmlab.bench:bp_speed",
    "pmap_speed": "rbmlab.bench:pmap_speed",
    "sampler_speed": "rbmlab.bench.samplers:sampler_speed",
})

PARTS = ("gibbs", "ais", "pcd", "dcp", "sampler", "frank_wolfe", "crbm_bp", "pmp", "tap")
KERNEL_PARTS = ("gibbs", "pcd")   # measured again with a faster BLAS kernel, where there is one


GPU_SIZES = (200, 10_000)   # a CPU-sized batch (launch-bound on a GPU) and a GPU-sized one
GPU_TARGET = "≥ 0.8 (GPU)"


def measure_gpu(rounds: int) -> list[Row]:
    """The Gibbs, AIS and TAP rows with the cupy backend, at a CPU-sized and a GPU-sized batch, and
    tap Fig. 10's VAMP / TAP time per iteration."""
    backend = get_backend("cupy", "float32")
    return [r for size in GPU_SIZES for r in (bench_gibbs(backend, rounds, None, batch=size, target=GPU_TARGET)
                                              + bench_ais(backend, rounds, None, chains=size, target=GPU_TARGET)
                                              + bench_tap(backend, rounds, None, chains=size, target=GPU_TARGET))
            ] + tap_speed(rounds, batches=(1, 100, 1000), backend_name="cupy")


def measure(parts: tuple[str, ...], rounds: int, examples: int) -> list[Row]:
    backend = get_backend("numpy", "float32")
    rows: list[Row] = []
    if "gibbs" in parts:
        rows += [r for threads in (1, 2) for r in bench_gibbs(backend, rounds, threads)]
    if "ais" in parts:
        rows += [r for threads in (1, 2) for r in bench_ais(backend, rounds, threads)]
    if "pcd" in parts:
        for dtype, batch in (("float32", 200), ("float32", 10), ("float64", 200)):
            rows += bench_pcd(dtype, batch, rounds, 2, examples if batch > 10 else examples // 4)
    if "sampler" in parts:
        rows += bench_sampler(backend, rounds)
    if "dcp" in parts:
        with blas_threads(2):
            rows += dcp_cost_rows(bench_dcp_costs(backend, max(rounds, 5)), 2)
        rows += bench_dcp_epochs(max(2, rounds // 2), 2, examples)
    if "frank_wolfe" in parts:
        rows += bench_frank_wolfe(backend, rounds, examples)
    if "crbm_bp" in parts:
        rows += [r for threads in (1, 2) for r in bench_crbm_bp(backend, rounds, threads)]
    if "pmp" in parts:
        rows += [r for threads in (1, 2) for r in bench_pmp(backend, rounds, threads)]
    if "tap" in parts:
        rows += [r for threads in (1, 2) for r in bench_tap(backend, rounds, threads)]
    return rows


def with_kernel(kernel: str | None, parts: tuple[str, ...], rounds: int, examples: int) -> list[Row]:
    """The rows of ``parts`` measured in a fresh process with OPENBLAS_CORETYPE=``kernel`` (None:
    this process's environment)."""
    env = dict(os.environ)
    if kernel:
        env["OPENBLAS_CORETYPE"] = kernel
    args = [sys.executable, "-m", "rbmlab.bench", "--json", "--parts", ",".join(parts),
            "--rounds", str(rounds), "--examples", str(examples), "--no-kernel-compare"]
    out = subprocess.run(args, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["rows"]


def compare_kernels(faster: str, rounds: int, examples: int) -> list[Row]:
    """Each ``KERNEL_PARTS`` row with the kernel in use and with ``faster``, in alternating
    subprocesses (one round each, ``rounds`` times); the gain is time(in use) / time(faster)."""
    runs: dict[str, list[list[Row]]] = {"in use": [], faster: []}
    for _ in range(rounds):
        runs["in use"].append(with_kernel(None, KERNEL_PARTS, 1, examples))
        runs[faster].append(with_kernel(faster, KERNEL_PARTS, 1, examples))
    rows = []
    for i, first in enumerate(runs["in use"][0]):
        now = [r[i]["median"] for r in runs["in use"]]
        alt = [r[i]["median"] for r in runs[faster]]
        if first["unit"] == "ratio":
            rows.append(row(f"{first['name']} (with {faster})", spread(alt), "ratio", first["threads"],
                            first["target"]))
        else:
            rows.append(row(f"{first['name']}: in use / {faster} (the gain)", ratio(now, alt), "ratio",
                            first["threads"]))
    return rows


def render(result: dict[str, Any]) -> str:
    from rbmlab.backend.machine import report  # noqa: PLC0415

    lines = ["# rbmlab benchmark", "",
             f"Command: `{result.get('command', 'make bench')}` "
             + (f"({result['rounds']} rounds). " if result.get("experiment") else
                f"(python -m rbmlab.bench{result.get('args', '')} --rounds {result['rounds']}). ")
             + "Every comparison "
             "is interleaved in one process (A, B, A, B, ...); the columns are the median and range of "
             "the per-round values (ratios are per round). BLAS threads are set per row (threadpoolctl).",
             "", "Machine (`rbmlab doctor`):", "", *(f"    {ln}" for ln in report(result["machine"])),
             *([f"    GPU: {result['machine']['gpu']}"] if "gpu" in result["machine"] else []), "",
             "| measurement | BLAS threads | median | min – max | target |", "|---|---|---|---|---|"]
    for r in result["rows"]:
        fmt = "{:.3f}" if r["unit"] in ("ratio", "ms", "µs") else "{:.2f}"
        bold = "**" if r["unit"] == "ratio" and r["target"] else ""
        note = f" ({r['note']})" if r.get("note") else ""
        lines.append(f"| {r['name']}{note} | {r['threads'] or ''} | {bold}{fmt.format(r['median'])}{bold} | "
                     f"{fmt.format(r['min'])} – {fmt.format(r['max'])} | {r['target']} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    from rbmlab.backend.allocator import keep_freed_memory  # noqa: PLC0415
    from rbmlab.backend.machine import facts  # noqa: PLC0415

    keep_freed_memory()

    ap = argparse.ArgumentParser(prog="python -m rbmlab.bench")
    ap.add_argument("--out", default="results/bench")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds per comparison")
    ap.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated subset of {','.join(PARTS)}")
    ap.add_argument("--examples", type=int, default=10000, help="MNIST images per epoch (batch 10: a quarter)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON only (no files)")
    ap.add_argument("--no-kernel-compare", action="store_true", help="skip the faster-kernel rows")
    ap.add_argument("--backend", choices=("numpy", "cupy"), default="numpy",
                    help="cupy: the Gibbs, AIS and TAP rows on the GPU (bench-cupy.md), nothing else")
    args = ap.parse_args(argv)
    parts = tuple(p for p in args.parts.split(",") if p)
    unknown = set(parts) - set(PARTS)
    if unknown:
        ap.error(f"unknown part(s) {', '.join(sorted(unknown))}; parts: {', '.join(PARTS)}")
    if args.backend == "cupy":
        result = {"rounds": args.rounds, "command": "make bench-gpu", "args": " --backend cupy",
                  "machine": {**facts(), "gpu": gpu_name()}, "rows": measure_gpu(args.rounds)}
        return write(result, Path(args.out), "bench-cupy", args.json)
    result = {"rounds": args.rounds, "machine": facts(), "rows": measure(parts, args.rounds, args.examples)}
    faster = result["machine"]["faster_kernel"]
    if faster and not args.no_kernel_compare and set(KERNEL_PARTS) & set(parts):
        result["rows"] += compare_kernels(faster, max(2, args.rounds // 2), args.examples)
    write(result, Path(args.out), "bench", args.json)


def gpu_name() -> str:
    import cupy  # noqa: PLC0415

    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    return f"{props['name'].decode()}, cupy {cupy.__version__}, CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()}"


def write(result: dict[str, Any], out: Path, stem: str, as_json: bool) -> None:
    """Print the rows as JSON (``as_json``), or write ``<stem>.md`` and ``<stem>.json`` into ``out``."""
    if as_json:
        print(json.dumps(result))
        return
    text = render(result)
    print(text)
    out.mkdir(parents=True, exist_ok=True)
    atomic_write(out / f"{stem}.md", text)
    atomic_write(out / f"{stem}.json", json.dumps(result, indent=2) + "\n")

