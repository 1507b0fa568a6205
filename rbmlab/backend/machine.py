"""What the machine's numerical stack is: array library, BLAS (name, version, the kernel it chose,
threads), the CPU's vector features, and whether a faster BLAS kernel is available.

``rbmlab doctor`` prints :func:`report`; ``make bench`` puts the same lines at the head of
bench.md. Nothing here changes a setting: a kernel chosen by the user or their environment
(``OPENBLAS_CORETYPE``) is reported, never overridden (the allocator line reports what the entry
points set, rbmlab.backend.allocator).
"""

from __future__ import annotations

import importlib
import os
import platform
from pathlib import Path
from typing import Any

# OpenBLAS's AVX-512 kernels (OPENBLAS_CORETYPE names) and what SkylakeX, the one whose
# sgemm/dgemm they share, needs; on a CPU with those features any other kernel (Haswell, Zen:
# AVX2) leaves the wider units idle.
AVX512_KERNELS = ("skylakex", "cooperlake", "sapphirerapids")
SKYLAKEX_NEEDS = {"avx512f", "avx512bw", "avx512vl", "avx512cd", "avx512dq"}
VECTOR_FLAGS = (
    "sse4_2",
    "avx",
    "avx2",
    "fma",
    "avx512f",
    "avx512bw",
    "avx512cd",
    "avx512dq",
    "avx512vl",
    "avx512_bf16",
    "amx_tile",
)


def cpu() -> dict[str, Any]:
    """Model name, vendor, core count and vector features (from /proc/cpuinfo where there is one)."""
    info: dict[str, Any] = {
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "model": "?",
        "vendor": "",
        "flags": set(),
    }
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return info
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "model name" and info["model"] == "?":
            info["model"] = value.strip()
        elif key.strip() == "vendor_id" and not info["vendor"]:
            info["vendor"] = value.strip()
        elif key.strip() == "flags" and not info["flags"]:
            info["flags"] = set(value.split())
    return info


def blas() -> list[dict[str, Any]]:
    """The BLAS libraries numpy has loaded (threadpoolctl): internal_api (openblas, mkl, ...),
    version, architecture (the kernel in use), num_threads, filepath."""
    from threadpoolctl import threadpool_info  # noqa: PLC0415

    importlib.import_module("numpy")  # loads its BLAS, which threadpoolctl then finds

    return [lib for lib in threadpool_info() if lib.get("user_api") == "blas"]


def faster_kernel(lib: dict[str, Any], flags: set[str]) -> str | None:
    """``SkylakeX`` when OpenBLAS runs an AVX2 kernel on a CPU with AVX-512, else None."""
    if lib.get("internal_api") != "openblas" or not SKYLAKEX_NEEDS <= flags:
        return None
    return None if str(lib.get("architecture") or "").lower() in AVX512_KERNELS else "SkylakeX"


def facts() -> dict[str, Any]:
    """Everything :func:`report` prints, as a JSON-able dict (bench.json keeps it). A BLAS
    library's filepath is the part after site-packages (``numpy.libs/libscipy_openblas64_...so``,
    rbmlab.storage.portable): the same library in any environment, where the whole path is this
    machine's."""
    import numpy  # noqa: PLC0415

    from rbmlab.backend.allocator import state  # noqa: PLC0415
    from rbmlab.backend.random_bits import sampler  # noqa: PLC0415
    from rbmlab.storage.portable import portable_path  # noqa: PLC0415

    c = cpu()
    libs = blas()
    suggestion = next((k for k in (faster_kernel(lib, c["flags"]) for lib in libs) if k), None)
    return {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "cpu": c["model"],
        "cpus": c["cpus"],
        "machine": c["machine"],
        "vector_features": [f for f in VECTOR_FLAGS if f in c["flags"]],
        "blas": [
            {
                **{k: lib.get(k) for k in ("internal_api", "version", "architecture", "num_threads")},
                "filepath": portable_path(lib.get("filepath") or ""),
            }
            for lib in libs
        ],
        "openblas_coretype": os.environ.get("OPENBLAS_CORETYPE"),
        "faster_kernel": suggestion,
        "sampler": sampler(),
        "allocator": state(),
    }


def report(f: dict[str, Any] | None = None) -> list[str]:
    """Human-readable lines: the stack, and what selecting a faster kernel would take."""
    f = f or facts()
    lines = [
        f"python {f['python']}, numpy {f['numpy']}",
        f"CPU: {f['cpu']} ({f['machine']}, {f['cpus']} cores); vector features: "
        f"{', '.join(f['vector_features']) or 'none found'}",
    ]
    for lib in f["blas"] or [{}]:
        if not lib:
            lines.append("BLAS: none found by threadpoolctl")
            continue
        lines.append(
            f"BLAS: {lib['internal_api']} {lib['version']}, kernel {lib['architecture']}, "
            f"{lib['num_threads']} thread(s) ({lib['filepath']})"
        )
    coretype = f["openblas_coretype"]
    lines.append(f"OPENBLAS_CORETYPE: {coretype if coretype else 'not set (the library chose its kernel)'}")
    if f["faster_kernel"]:
        how = (
            f"your environment sets OPENBLAS_CORETYPE={coretype}; unset it or set "
            f"OPENBLAS_CORETYPE={f['faster_kernel']}"
            if coretype
            else f"set OPENBLAS_CORETYPE={f['faster_kernel']}"
        )
        lines.append(
            f"faster kernel available: {f['faster_kernel']} ({how} before starting "
            "Python; `make bench` measures the gain)"
        )
    if "sampler" in f:
        lines.append(f"Bernoulli sampler: {f['sampler']}")
    if "allocator" in f:
        lines.append(f["allocator"])
    return lines
