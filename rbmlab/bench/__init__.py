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
  * parallel tempering against block Gibbs on a bimodal RBM at equal wall-clock: mode switches and
    effective sample size per second (:mod:`rbmlab.bench.tempering`);
  * Frank-Wolfe: one L-BFGS-B run of the linear oracle on the Caltech-101 Silhouettes training set
    and on MNIST images, against the bare gemv's of its evaluations; one FW iteration at 100
    hidden units with the learner's defaults, split into sampling, oracle and visible-bias loop.
The head of bench.md is ``rbmlab doctor``'s report. Where the CPU allows a faster BLAS kernel than
the one in use, the Gibbs and PCD rows are also measured with it, in alternating subprocesses
(a kernel is chosen when the library loads), and the gain is reported; no setting is changed.

The package: the bench parts (``BENCH_PARTS``: ``make bench``'s; ``EXPERIMENT_PARTS``: the
experiments' timings), ``measure``, the GPU rows, the kernel comparison and the table (``render``,
``write``) here; the rows, one module per family, each with its parts:
:mod:`rbmlab.bench.rbm` (Gibbs, AIS, PCD, the sampler), :mod:`rbmlab.bench.dcp`,
:mod:`rbmlab.bench.frank_wolfe`, :mod:`rbmlab.bench.crbm_bp`, :mod:`rbmlab.bench.pmp`,
:mod:`rbmlab.bench.tap`, :mod:`rbmlab.bench.samplers` (pmp's sampler legends),
:mod:`rbmlab.bench.tempering`, on what they share
(:mod:`rbmlab.bench.core`: a row, random models, bare-work floors, timing) and
:mod:`rbmlab.bench.method` (interleaved timing); :mod:`rbmlab.bench.cli` (``python -m
rbmlab.bench``, ``__main__``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from rbmlab.backend import get_backend
from rbmlab.bench.core import Row, row
from rbmlab.bench.method import ratio, spread
from rbmlab.registry import Registry
from rbmlab.storage.fileio import atomic_write

# timing artefacts of experiments/<paper>/*.yaml (bench:)
EXPERIMENT_PARTS = Registry(
    "bench part",
    {
        "tap_speed": "rbmlab.bench.tap:tap_speed",
        "bp_speed": "rbmlab.bench.crbm_bp:bp_speed",
        "pmap_speed": "rbmlab.bench.pmp:pmap_speed",
        "sampler_speed": "rbmlab.bench.samplers:sampler_speed",
        "dcp_speed": "rbmlab.bench.dcp:dcp_speed",
    },
)

# make bench's parts, in bench.md's order: each a function (rounds, examples) -> rows. Adding one
# is its module under rbmlab/bench/ and one line here.
BENCH_PARTS = Registry(
    "bench part",
    {
        "gibbs": "rbmlab.bench.rbm:gibbs_part",
        "ais": "rbmlab.bench.rbm:ais_part",
        "pcd": "rbmlab.bench.rbm:pcd_part",
        "sampler": "rbmlab.bench.rbm:sampler_part",
        "tempering": "rbmlab.bench.tempering:tempering_part",
        "dcp": "rbmlab.bench.dcp:dcp_part",
        "frank_wolfe": "rbmlab.bench.frank_wolfe:frank_wolfe_part",
        "crbm_bp": "rbmlab.bench.crbm_bp:crbm_bp_part",
        "pmp": "rbmlab.bench.pmp:pmp_part",
        "tap": "rbmlab.bench.tap:tap_part",
        "packed": "rbmlab.bench.packed:packed_part",
    },
)

PARTS = tuple(BENCH_PARTS.names())
KERNEL_PARTS = ("gibbs", "pcd")  # measured again with a faster BLAS kernel, where there is one


GPU_SIZES = (200, 10_000)  # a CPU-sized batch (launch-bound on a GPU) and a GPU-sized one
GPU_TARGET = "≥ 0.8 (GPU)"


def measure_gpu(rounds: int) -> list[Row]:
    """The Gibbs, AIS and TAP rows with the cupy backend, at a CPU-sized and a GPU-sized batch;
    tap Fig. 10's VAMP / TAP time per iteration; crbm_bp's loopy BP (Sec. 7: suited to GPUs) beside
    its elementwise bound, its batched throughput and BP to convergence at 10,000 × 2,000."""
    from rbmlab.bench.packed import bench_crbm_packed_scaling, bench_packed_scaling  # noqa: PLC0415
    from rbmlab.bench.rbm import bench_ais, bench_gibbs  # noqa: PLC0415
    from rbmlab.bench.tap import bench_tap, tap_speed  # noqa: PLC0415

    backend = get_backend("cupy", "float32")
    return (
        [
            r
            for size in GPU_SIZES
            for r in (
                bench_gibbs(backend, rounds, None, batch=size, target=GPU_TARGET)
                + bench_ais(backend, rounds, None, chains=size, target=GPU_TARGET)
                + bench_tap(backend, rounds, None, chains=size, target=GPU_TARGET)
            )
        ]
        + tap_speed(rounds, batches=(1, 100, 1000), backend_name="cupy")
        + crbm_bp_gpu(backend, rounds)
        + bench_packed_scaling(backend, rounds)
        + bench_crbm_packed_scaling(backend, rounds)
    )


def crbm_bp_gpu(backend, rounds: int) -> list[Row]:
    """crbm_bp's BP rows on the device: the paper's 1000 × 500 case (one instance: launch-bound on
    a GPU) with the throughput at batch 2,000, the same modes at 10,000 × 2,000 (a GPU-sized
    instance, beside its elementwise bound), and BP to convergence at that size."""
    from rbmlab.bench.crbm_bp import bench_crbm_bp, bp_to_convergence  # noqa: PLC0415

    return (
        bench_crbm_bp(backend, rounds, None, target="", floor_target=GPU_TARGET, batch=2000)
        + bench_crbm_bp(backend, rounds, None, n_v=10_000, n_h=2_000, target="", floor_target=GPU_TARGET)[:4]
        + bp_to_convergence(backend, max(1, rounds // 3), None, 10_000, 2_000, 0.01)
    )


def resolve(parts: Iterable[str]) -> dict[str, Callable[[int, int], list[Row]]]:
    """The bench part of each name in ``parts``, in ``BENCH_PARTS``' order whatever the order asked
    (each once); an unknown name is a one-line error naming ``--parts``."""
    found = {name: BENCH_PARTS.get(name, "--parts") for name in parts}
    return {name: found[name] for name in BENCH_PARTS.names() if name in found}


def measure(parts: Iterable[str], rounds: int, examples: int) -> list[Row]:
    """The rows of the bench parts named in ``parts`` (every name checked before any is run)."""
    return [r for part in resolve(parts).values() for r in part(rounds, examples)]


def with_kernel(kernel: str | None, parts: tuple[str, ...], rounds: int, examples: int) -> list[Row]:
    """The rows of ``parts`` measured in a fresh process with OPENBLAS_CORETYPE=``kernel`` (None:
    this process's environment)."""
    env = dict(os.environ)
    if kernel:
        env["OPENBLAS_CORETYPE"] = kernel
    args = [
        sys.executable,
        "-m",
        "rbmlab.bench",
        "--json",
        "--parts",
        ",".join(parts),
        "--rounds",
        str(rounds),
        "--examples",
        str(examples),
        "--no-kernel-compare",
    ]
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
            rows.append(
                row(
                    f"{first['name']} (with {faster})",
                    spread(alt),
                    "ratio",
                    first["threads"],
                    first["target"],
                )
            )
        else:
            rows.append(
                row(
                    f"{first['name']}: in use / {faster} (the gain)",
                    ratio(now, alt),
                    "ratio",
                    first["threads"],
                )
            )
    return rows


def gpu_name() -> str:
    import cupy  # noqa: PLC0415

    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    return (
        f"{props['name'].decode()}, cupy {cupy.__version__}, "
        f"CUDA runtime {cupy.cuda.runtime.runtimeGetVersion()}"
    )


def render(result: dict[str, Any]) -> str:
    from rbmlab.backend.machine import report  # noqa: PLC0415

    lines = [
        "# rbmlab benchmark",
        "",
        f"Command: `{result.get('command', 'make bench')}` "
        + (
            f"({result['rounds']} rounds). "
            if result.get("experiment")
            else f"(python -m rbmlab.bench{result.get('args', '')} --rounds {result['rounds']}). "
        )
        + (f"Source: `{result['source']}`. " if result.get("source") else "")
        + "Every comparison "
        "is interleaved in one process (A, B, A, B, ...); the columns are the median and range of "
        "the per-round values (ratios are per round). BLAS threads are set per row (threadpoolctl).",
        "",
        "Machine (`rbmlab doctor`):",
        "",
        *(f"    {ln}" for ln in report(result["machine"])),
        *([f"    GPU: {result['machine']['gpu']}"] if "gpu" in result["machine"] else []),
        "",
        "| measurement | BLAS threads | median | min – max | target |",
        "|---|---|---|---|---|",
    ]
    for r in result["rows"]:
        fmt = "{:.3f}" if r["unit"] in ("ratio", "ms", "µs") else "{:.2f}"
        bold = "**" if r["unit"] == "ratio" and r["target"] else ""
        note = f" ({r['note']})" if r.get("note") else ""
        lines.append(
            f"| {r['name']}{note} | {r['threads'] or ''} | {bold}{fmt.format(r['median'])}{bold} | "
            f"{fmt.format(r['min'])} – {fmt.format(r['max'])} | {r['target']} |"
        )
    return "\n".join(lines) + "\n"


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
