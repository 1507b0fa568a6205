"""One instruction set for every test process, on whatever x86-64 CPU it runs.

numpy picks its SIMD loops (exp, log, sums) and OpenBLAS its GEMM kernel by the CPU it finds:
AVX-512 loops and the SkylakeX kernel on an Intel AVX-512 machine, AVX2 loops with AVX-512 ones on
an AMD EPYC with AVX-512 but OpenBLAS's Haswell kernel there, AVX2 and Haswell on an AVX2-only
one. Each sums in its own order, so a smoke run's floats differ in the last bits from one machine
to the next, and AIS, a growing Frank-Wolfe model, a thresholded prediction or GWG's discrete moves
amplify that into differences of 1e-4 to 1e-2. Pinned to the AVX2 + FMA level that every machine
the project runs on has (numpy's X86_V3 dispatch group, OpenBLAS's Haswell kernel, numba's haswell
target), every one of them runs the same instructions in the same order: the regression fixtures
(tests/test_regression_smoke.py) then hold to float32 rounding on all of them.

The variables are read when each library loads, so :func:`pin` must run before numpy is imported:
tests/conftest.py calls it first (pytest imports no numpy before it; xdist's workers and every
subprocess a test starts inherit the variables), and so does ``python -m tests.record_smoke_metrics``.
Imports nothing that loads numpy.
"""

from __future__ import annotations

import os
import platform
import sys

PINNED = {
    "NPY_ENABLE_CPU_FEATURES": "X86_V3",  # numpy: its baseline and the AVX2/FMA3 loops, no AVX-512
    "OPENBLAS_CORETYPE": "Haswell",  # numpy's and scipy's OpenBLAS (DYNAMIC_ARCH builds)
    "NUMBA_CPU_NAME": "haswell",  # the optional numba kernels' target
}


def applies() -> bool:
    """The pin names x86-64 features; elsewhere (arm64) there is nothing to pin it to."""
    return platform.machine().lower() in ("x86_64", "amd64")


def pin() -> None:
    """Set PINNED in this process's environment (inherited by the processes it starts)."""
    if not applies():
        return
    if "numpy" in sys.modules and any(os.environ.get(k) != v for k, v in PINNED.items()):
        raise RuntimeError("tests.dispatch.pin() after numpy was imported: the pin would not apply")
    os.environ.update(PINNED)


def problems() -> list[str]:
    """How this process's loaded numpy and OpenBLAS differ from the pin (empty: pinned)."""
    if not applies():
        return [f"{platform.machine()}: the pin names x86-64 features"]
    from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__  # noqa: PLC0415
    from threadpoolctl import threadpool_info  # noqa: PLC0415

    # numpy's dispatch targets (X86_V3, X86_V4, AVX512_ICL, AVX512_SPR in numpy 2.4): only X86_V3 on
    found = [
        f"numpy dispatches to {t}" for t in __cpu_dispatch__ if t != "X86_V3" and __cpu_features__.get(t)
    ]
    if not __cpu_features__.get("X86_V3"):
        found.append("numpy does not dispatch to X86_V3 (AVX2 + FMA3)")
    found += [
        f"{lib['filepath']}: OpenBLAS kernel {lib.get('architecture')}"
        for lib in threadpool_info()
        if lib["internal_api"] == "openblas" and lib.get("architecture") != PINNED["OPENBLAS_CORETYPE"]
    ]
    return found
