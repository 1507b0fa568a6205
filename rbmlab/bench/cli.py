"""``python -m rbmlab.bench`` (``make bench``, ``make bench-gpu``): the command line over
:mod:`rbmlab.bench`."""

from __future__ import annotations

import argparse
from pathlib import Path

from rbmlab.bench import KERNEL_PARTS, PARTS, compare_kernels, gpu_name, measure, measure_gpu, resolve, write
from rbmlab.errors import RbmlabError, fail


def main(argv=None) -> None:
    from rbmlab.backend.allocator import keep_freed_memory  # noqa: PLC0415
    from rbmlab.backend.machine import facts  # noqa: PLC0415
    from rbmlab.storage.provenance import source_revision  # noqa: PLC0415

    keep_freed_memory()

    ap = argparse.ArgumentParser(prog="python -m rbmlab.bench")
    ap.add_argument("--out", default="results/bench")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds per comparison")
    ap.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated subset of {','.join(PARTS)}")
    ap.add_argument(
        "--examples", type=int, default=10000, help="MNIST images per epoch (batch 10: a quarter)"
    )
    ap.add_argument("--json", action="store_true", help="print the rows as JSON only (no files)")
    ap.add_argument("--no-kernel-compare", action="store_true", help="skip the faster-kernel rows")
    ap.add_argument(
        "--backend",
        choices=("numpy", "cupy"),
        default="numpy",
        help="cupy: the Gibbs, AIS and TAP rows on the GPU (bench-cupy.md), nothing else",
    )
    args = ap.parse_args(argv)
    parts = tuple(p for p in args.parts.split(",") if p)
    try:
        resolve(parts)  # an unknown part: one line, before anything is measured
    except RbmlabError as e:
        fail(str(e))
    if args.backend == "cupy":
        result = {
            "rounds": args.rounds,
            "command": "make bench-gpu",
            "args": " --backend cupy",
            "source": source_revision(),
            "machine": {**facts(), "gpu": gpu_name()},
            "rows": measure_gpu(args.rounds),
        }
        return write(result, Path(args.out), "bench-cupy", args.json)
    result = {
        "rounds": args.rounds,
        "source": source_revision(),
        "machine": facts(),
        "rows": measure(parts, args.rounds, args.examples),
    }
    result.update(invocation(parts))
    faster = result["machine"]["faster_kernel"]
    if faster and not args.no_kernel_compare and set(KERNEL_PARTS) & set(parts):
        result["rows"] += compare_kernels(faster, max(3, args.rounds // 2), args.examples)
    write(result, Path(args.out), "bench", args.json)


def invocation(parts: tuple[str, ...]) -> dict[str, str]:
    """What bench.md's header names as the command: make bench for every part, else the subset."""
    if set(parts) == set(PARTS):
        return {}
    return {"command": "python -m rbmlab.bench", "args": f" --parts {','.join(parts)}"}
