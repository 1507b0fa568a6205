"""``make bench``: speed of the cores, as ratios to the raw BLAS time of the same shapes.

    python -m rbmlab.bench [--out results/bench] [--repeats 20]

Measures, for a 784×500 float32 RBM:
  * block-Gibbs sweeps per second at batch 200, and (time of the two bare matmuls of the sweep's
    shapes) / (time of a sweep): 1.0 would mean sampling costs nothing beyond the matmuls;
  * AIS transitions per second with 100 chains;
  * one PCD-1 epoch on MNIST (batch 200, lr 0.05) against scikit-learn's BernoulliRBM;
  * one S-DCP epoch on MNIST (500 hidden, batch 200, d = 6, K' = 4) against one CD-24 epoch:
    the dcp paper's equal-compute premise (target: within 1.1×), with the paper's own cost model
    (§3.1) filled in from measured parts: a Gibbs transition T, the statistics of a batch L, one
    parameter update U; and S-DCP (d = 5, K' = 4), the pair §3.1's rule K·T = d·K'·T + (d − 1)·L
    picks when L = T.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from rbmlab.backend import get_backend
from rbmlab.data.batch import Batch
from rbmlab.evaluators.ais import ais_log_partition, temperature_schedule
from rbmlab.inference.block_gibbs import gibbs_chain
from rbmlab.models.rbm import RBM


def best_times(*fns, repeats: int) -> list[float]:
    """Minimum wall time of each ``fn()`` over ``repeats`` rounds (after one warm-up call each).

    The functions are called in turn within each round, so drifts in machine load (a shared VM)
    hit all of them alike and their ratios stay meaningful.
    """
    for fn in fns:
        fn()
    times = [[] for _ in fns]
    for _ in range(repeats):
        for fn, ts in zip(fns, times):
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
    return [min(ts) for ts in times]


def best_time(fn, repeats: int) -> float:
    return best_times(fn, repeats=repeats)[0]


def random_rbm(backend, m: int, n: int, seed: int = 0) -> RBM:
    rng = backend.rng(seed)
    xp = backend.xp
    return RBM(0.05 * rng.standard_normal((m, n), dtype=backend.dtype),
               xp.zeros(m, dtype=backend.dtype) - 1.0, xp.zeros(n, dtype=backend.dtype))


def bench_gibbs(backend, repeats: int, m=784, n=500, batch=200, sweeps=10) -> dict:
    xp = backend.xp
    rbm = random_rbm(backend, m, n)
    rng = backend.rng(1)
    v = (rng.random((batch, m), dtype=backend.dtype) < 0.2).astype(backend.dtype)
    h = (rng.random((batch, n), dtype=backend.dtype) < 0.5).astype(backend.dtype)
    Wt = xp.ascontiguousarray(rbm.W.T)
    out_h = xp.empty((batch, n), dtype=backend.dtype)
    out_v = xp.empty((batch, m), dtype=backend.dtype)

    def matmuls():
        for _ in range(sweeps):
            xp.matmul(v, rbm.W, out=out_h)
            xp.matmul(h, Wt, out=out_v)

    t_mm, t_gibbs = (t / sweeps for t in best_times(
        matmuls, lambda: gibbs_chain(rbm, v, rng, sweeps), repeats=repeats))
    return {"shape": f"{m}x{n}", "batch": batch, "dtype": str(backend.dtype),
            "gibbs_sweeps_per_s": 1.0 / t_gibbs, "gibbs_sweep_ms": 1e3 * t_gibbs,
            "two_matmuls_ms": 1e3 * t_mm, "matmul_over_gibbs_ratio": t_mm / t_gibbs}


def bench_ais(backend, repeats: int, m=784, n=500, chains=100, temps=200) -> dict:
    rbm = random_rbm(backend, m, n)
    betas = temperature_schedule("linear", temps)
    base = backend.xp.zeros(m, dtype=backend.dtype) - 1.0
    t = best_time(lambda: ais_log_partition(rbm, backend.rng(2), base_bias=base, betas=betas,
                                            n_chains=chains), max(1, repeats // 5)) / temps
    return {"chains": chains, "ais_transitions_per_s": 1.0 / t, "ais_transition_ms": 1e3 * t,
            "ais_14500_temperatures_s": 14500 * t}


def bench_pcd_epoch(backend, batch=200, lr=0.05, n_hidden=500) -> dict:
    from sklearn.neural_network import BernoulliRBM  # noqa: PLC0415

    from rbmlab.data import load_dataset  # noqa: PLC0415
    from rbmlab.learners.pcd import PCD, PCDConfig  # noqa: PLC0415

    x_np = load_dataset("mnist").train
    x = backend.asarray(x_np)
    learner = PCD(PCDConfig(lr=lr, batch_size=batch, k=1))
    t_ours = epoch_seconds(learner, random_rbm(backend, x.shape[1], n_hidden), x, batch, 3, backend)

    sk = BernoulliRBM(n_components=n_hidden, learning_rate=lr, batch_size=batch, n_iter=1,
                      random_state=0)
    t0 = time.perf_counter()
    sk.fit(x_np)
    t_sk = time.perf_counter() - t0
    return {"examples": int(x.shape[0]), "batch": batch, "rbmlab_pcd1_epoch_s": t_ours,
            "sklearn_bernoullirbm_epoch_s": t_sk, "sklearn_over_rbmlab_ratio": t_sk / t_ours}


def epoch_seconds(learner, rbm, x, batch: int, seed: int, backend) -> float:
    """Wall time of one shuffled epoch of ``learner`` over ``x`` (learner state set up first)."""
    from rbmlab.runner import batches  # noqa: PLC0415

    train = Batch(x)
    state = learner.init_state(rbm, train, backend.rng(seed, 0))
    rng = backend.rng(seed, 1)
    t0 = time.perf_counter()
    for idx in batches(x.shape[0], batch, np.random.default_rng(seed)):
        mini = train if idx is None else train.take(backend.xp.asarray(idx))
        rbm, state = learner.step(rbm, state, mini, rng)
    return time.perf_counter() - t0


def bench_dcp_costs(backend, repeats: int, m=784, n=500, batch=200, d=6, k_inner=4,
                    k_cd=24) -> dict:
    """The dcp paper's cost model (§3.1) with measured parts, at the MNIST shapes.

    CD-K costs K·T + 2L (+ one update U); S-DCP costs d·(K'·T + L) + L (+ d updates), where T is
    one Gibbs transition and L the statistics of a batch. The paper neglects (d − 1)·L, "since L
    is much smaller than T"; in a dense RBM both are two matmuls of the same shapes.
    """
    from rbmlab.learners.cd import CD, CDConfig  # noqa: PLC0415

    rbm = random_rbm(backend, m, n)
    rng = backend.rng(1)
    v = (rng.random((batch, m), dtype=backend.dtype) < 0.2).astype(backend.dtype)
    grad = rbm.statistics(v)
    learner = CD(CDConfig(lr=0.01))     # plain SGD, as the epochs of bench_dcp_epoch
    sweeps = 10
    t_sweep, t_stats, t_update = best_times(
        lambda: gibbs_chain(rbm, v, rng, sweeps), lambda: rbm.statistics(v),
        lambda: learner.update(rbm, grad, {}), repeats=repeats)
    T, L, U = t_sweep / sweeps, t_stats, t_update
    cd, sdcp = k_cd * T + 2 * L + U, d * (k_inner * T + L + U) + L
    return {"batch": batch, "d": d, "k_inner": k_inner, "k_cd": k_cd, "T_gibbs_ms": 1e3 * T,
            "L_statistics_ms": 1e3 * L, "U_update_ms": 1e3 * U, "L_over_T": L / T,
            "predicted_sdcp_over_cd": sdcp / cd,
            "predicted_sdcp_over_cd_without_extra_L": (d * k_inner * T + 2 * L + d * U) / cd}


def bench_dcp_epoch(backend, batch=200, lr=0.01, n_hidden=500, repeats=2) -> dict:
    """CD-24 vs S-DCP (d = 6, K' = 4) and (d = 5, K' = 4) epochs on MNIST, alternated, best of
    ``repeats`` each."""
    from rbmlab.data import load_dataset  # noqa: PLC0415
    from rbmlab.learners.cd import CD, CDConfig  # noqa: PLC0415
    from rbmlab.learners.sdcp import SDCP, SDCPConfig  # noqa: PLC0415

    x = backend.asarray(load_dataset("mnist").train)
    rbm = random_rbm(backend, x.shape[1], n_hidden)
    learners = {"cd24": CD(CDConfig(lr=lr, batch_size=batch, k=24)),
                "sdcp_d6_k4": SDCP(SDCPConfig(lr=lr, batch_size=batch, d=6, k=4)),
                "sdcp_d5_k4": SDCP(SDCPConfig(lr=lr, batch_size=batch, d=5, k=4))}
    times = {name: [] for name in learners}
    for r in range(repeats):
        for name, learner in learners.items():
            times[name].append(epoch_seconds(learner, rbm, x, batch, r, backend))
    best = {name: min(ts) for name, ts in times.items()}
    return {"examples": int(x.shape[0]), "batch": batch,
            **{f"{name}_epoch_s": t for name, t in best.items()},
            "sdcp_over_cd24_ratio": best["sdcp_d6_k4"] / best["cd24"],
            "sdcp_d5_over_cd24_ratio": best["sdcp_d5_k4"] / best["cd24"]}


def machine() -> dict:
    info = {"python": platform.python_version(), "numpy": np.__version__,
            "machine": platform.machine(), "cpus": os.cpu_count()}
    try:
        cpu = next(ln for ln in Path("/proc/cpuinfo").read_text().splitlines() if "model name" in ln)
        info["cpu"] = cpu.split(":", 1)[1].strip()
    except (OSError, StopIteration):
        pass
    return info


def render(res: dict) -> str:
    g, a, p, d = res["gibbs"], res["ais"], res.get("pcd_epoch"), res.get("dcp_epoch")
    c = res.get("dcp_costs")
    lines = [
        "# rbmlab benchmark", "",
        f"Command: `make bench` (python -m rbmlab.bench). Backend {res['backend']}, {g['dtype']}. "
        f"Machine: {res['machine'].get('cpu', '?')}, {res['machine']['cpus']} cores, numpy "
        f"{res['machine']['numpy']}. Times are the best of repeated runs.", "",
        "| measurement | value |", "|---|---|",
        f"| block-Gibbs sweeps/s ({g['shape']}, batch {g['batch']}) | {g['gibbs_sweeps_per_s']:.1f} |",
        f"| one sweep (ms) | {g['gibbs_sweep_ms']:.3f} |",
        f"| the sweep's two bare matmuls (ms) | {g['two_matmuls_ms']:.3f} |",
        f"| **matmul time / sweep time** (target ≥ 0.7) | **{g['matmul_over_gibbs_ratio']:.3f}** |",
        f"| AIS transitions/s ({a['chains']} chains) | {a['ais_transitions_per_s']:.1f} |",
        f"| → one 14,500-temperature AIS run (s) | {a['ais_14500_temperatures_s']:.1f} |",
    ]
    if p:
        lines += [
            f"| PCD-1 epoch on MNIST, rbmlab (s; {p['examples']} examples, batch {p['batch']}) | "
            f"{p['rbmlab_pcd1_epoch_s']:.2f} |",
            f"| same epoch, scikit-learn BernoulliRBM (s) | {p['sklearn_bernoullirbm_epoch_s']:.2f} |",
            f"| **scikit-learn time / rbmlab time** | **{p['sklearn_over_rbmlab_ratio']:.2f}** |",
        ]
    if c:
        dd, kk, kc = c["d"], c["k_inner"], c["k_cd"]
        lines += [
            f"| dcp §3.1 cost model, batch {c['batch']}: Gibbs transition T (ms) | "
            f"{c['T_gibbs_ms']:.3f} |",
            f"| batch statistics L (ms) | {c['L_statistics_ms']:.3f} |",
            f"| parameter update U (ms) | {c['U_update_ms']:.3f} |",
            f"| L / T (the paper assumes L ≪ T) | {c['L_over_T']:.2f} |",
            f"| predicted S-DCP({dd}, {kk}) / CD-{kc}: ({dd}({kk}T + L + U) + L) / ({kc}T + 2L + U) | "
            f"{c['predicted_sdcp_over_cd']:.3f} |",
            f"| same, neglecting (d − 1)L as the paper does: ({dd * kk}T + 2L + {dd}U) / "
            f"({kc}T + 2L + U) | {c['predicted_sdcp_over_cd_without_extra_L']:.3f} |",
        ]
    if d:
        lines += [
            f"| CD-24 epoch on MNIST (s; 500 hidden, batch {d['batch']}) | {d['cd24_epoch_s']:.2f} |",
            f"| S-DCP epoch, d = 6, K' = 4 (s) | {d['sdcp_d6_k4_epoch_s']:.2f} |",
            f"| **S-DCP(6, 4) time / CD-24 time** (target ≤ 1.1) | "
            f"**{d['sdcp_over_cd24_ratio']:.3f}** |",
            f"| S-DCP epoch, d = 5, K' = 4 (s): §3.1's cost-matched pair when L = T | "
            f"{d['sdcp_d5_k4_epoch_s']:.2f} |",
            f"| S-DCP(5, 4) time / CD-24 time | {d['sdcp_d5_over_cd24_ratio']:.3f} |",
        ]
    return "\n".join(lines) + "\n"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(prog="python -m rbmlab.bench")
    ap.add_argument("--out", default="results/bench")
    ap.add_argument("--backend", default="numpy")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--skip-pcd", action="store_true", help="skip the PCD vs scikit-learn epoch")
    ap.add_argument("--skip-dcp", action="store_true", help="skip the S-DCP vs CD-24 epochs")
    args = ap.parse_args(argv)
    backend = get_backend(args.backend, "float32")
    res = {"backend": backend.name, "machine": machine(),
           "gibbs": bench_gibbs(backend, args.repeats), "ais": bench_ais(backend, args.repeats),
           "dcp_costs": bench_dcp_costs(backend, args.repeats)}
    if not args.skip_pcd:
        res["pcd_epoch"] = bench_pcd_epoch(backend)
    if not args.skip_dcp:
        res["dcp_epoch"] = bench_dcp_epoch(backend)
    text = render(res)
    print(text)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    suffix = "" if backend.name == "numpy" else f"_{backend.name}"
    (out / f"bench{suffix}.md").write_text(text)
    (out / f"bench{suffix}.json").write_text(json.dumps(res, indent=2) + "\n")


if __name__ == "__main__":
    main()
