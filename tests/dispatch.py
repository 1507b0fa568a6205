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

# numba: the haswell CPU with its features named (with only NUMBA_CPU_NAME, numba still takes the
# host's features, AVX-512 included)
HASWELL_FEATURES = (
    "+64bit,+avx,+avx2,+bmi,+bmi2,+cmov,+cx16,+f16c,+fma,+fxsr,+lzcnt,+mmx,+movbe,+popcnt,+sahf,"
    "+sse,+sse2,+sse3,+sse4.1,+sse4.2,+ssse3,+xsave"
)
PINNED = {
    "NPY_ENABLE_CPU_FEATURES": "X86_V3",  # numpy (2.4's names): its baseline and the AVX2/FMA3 loops
    "OPENBLAS_CORETYPE": "Haswell",  # numpy's and scipy's OpenBLAS (DYNAMIC_ARCH builds)
    "NUMBA_CPU_NAME": "haswell",  # the optional numba kernels' target
    "NUMBA_CPU_FEATURES": HASWELL_FEATURES,
}
NEEDED_FLAGS = ("avx2", "fma", "bmi2", "f16c", "movbe")  # what the pinned level runs on (/proc/cpuinfo)


def applies() -> bool:
    """An x86-64 CPU with the AVX2 level (every machine the project runs on). Elsewhere (arm64, an
    older x86-64) the pin names features there are not, and numpy would refuse to load."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        flags = next(
            line.split(":", 1)[1].split() for line in open("/proc/cpuinfo") if line.startswith("flags")
        )
    except (OSError, StopIteration):  # no /proc (macOS): x86-64 Macs since 2013 have AVX2
        return True
    return all(flag in flags for flag in NEEDED_FLAGS)


def pin() -> None:
    """Set PINNED in this process's environment (inherited by the processes it starts)."""
    if not applies():
        return
    if "numpy" in sys.modules and any(os.environ.get(k) != v for k, v in PINNED.items()):
        raise RuntimeError("tests.dispatch.pin() after numpy was imported: the pin would not apply")
    os.environ.update(PINNED)


def problems() -> list[str]:
    """How this process's numpy, BLAS and numba differ from the pin (empty: pinned)."""
    if not applies():
        return [f"{platform.machine()}: not an x86-64 CPU with {', '.join(NEEDED_FLAGS)}"]
    from numpy._core._multiarray_umath import (  # noqa: PLC0415
        __cpu_baseline__,
        __cpu_dispatch__,
        __cpu_features__,
    )
    from threadpoolctl import threadpool_info  # noqa: PLC0415

    # numpy 2.4's dispatch targets are X86_V3, X86_V4, AVX512_ICL, AVX512_SPR: only X86_V3 may be on,
    # and the baseline (the build's compiler flags) must not be above it
    found = [
        f"numpy dispatches to {t}" for t in __cpu_dispatch__ if t != "X86_V3" and __cpu_features__.get(t)
    ]
    if not __cpu_features__.get("X86_V3"):
        found.append(
            "numpy does not dispatch to X86_V3 (AVX2 + FMA3): NPY_ENABLE_CPU_FEATURES unknown to it?"
        )
    found += [f"numpy's baseline holds {f}" for f in __cpu_baseline__ if f.startswith(("X86_V4", "AVX512"))]
    for lib in threadpool_info():
        if lib["user_api"] != "blas":
            continue
        if lib["internal_api"] != "openblas":  # MKL, BLIS: kernels chosen per CPU, not pinned here
            found.append(f"{lib['filepath']}: {lib['internal_api']}, not OpenBLAS")
        elif lib.get("architecture") != PINNED["OPENBLAS_CORETYPE"]:
            found.append(f"{lib['filepath']}: OpenBLAS kernel {lib.get('architecture')}")
    if "numba" in sys.modules:
        from numba.core.registry import cpu_target  # noqa: PLC0415

        features = cpu_target.target_context.codegen()._get_host_cpu_features()
        found += [f"numba compiles for {f}" for f in features.split(",") if f.startswith("+avx512")]
    return found
