"""Large array temporaries without fresh pages: glibc's allocator told to keep freed memory.

glibc serves every block above its mmap threshold (32 MiB at most, by default) with a new mapping
and unmaps it on free, so each array temporary of that size is zero-filled again by the kernel,
page by page. With BP's messages (100 × 784 × 256 float32: 80 MB a temporary) that was about a
third of a crbm_bp run's time, spent as system time; and in interleaved timings it made one
method's time depend on which ran before it (PMP's 10 sweeps of a d = 900 Ising model: 0.7 s
after itself, 1.6 s after GWG). :func:`keep_freed_memory` raises the mmap threshold to 1 GiB and
the trim threshold above it, so freed blocks are reused: the peak memory is the same, but what is
freed stays with the process until it ends. Settings in the environment win (MALLOC_MMAP_THRESHOLD_,
MALLOC_TRIM_THRESHOLD_, a glibc.malloc tunable in GLIBC_TUNABLES); a glibc older than 2.26 caps
the threshold at 32 MiB (then that is set); on another C library nothing changes. The entry points
call it (``rbmlab``, each Hydra job, ``python -m rbmlab.bench``).
"""

from __future__ import annotations

import ctypes
import os
import platform

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt parameters (malloc.h)
THRESHOLDS = (1 << 30, 1 << 25)  # 1 GiB; 32 MiB, the cap of older glibc
ENVIRONMENT = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")

_state: str | None = None


def keep_freed_memory() -> str:
    """Apply the setting once per process; what was done, in words (``rbmlab doctor`` prints it)."""
    global _state
    if _state is None:
        _state = _apply()
    return _state


def state() -> str:
    """What this process's allocator does, without changing it."""
    return _state or "allocator: as the C library starts (not set in this process)"


def _apply() -> str:
    if platform.libc_ver()[0] != "glibc":
        return "allocator: not glibc, left as it is"
    named = [name for name in ENVIRONMENT if name in os.environ]
    if "glibc.malloc." in os.environ.get("GLIBC_TUNABLES", ""):
        named.append("GLIBC_TUNABLES")
    if named:
        return f"allocator: glibc, as the environment sets it ({', '.join(named)})"
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return "allocator: glibc without mallopt, left as it is"
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    for threshold in THRESHOLDS:
        if mallopt(M_MMAP_THRESHOLD, threshold) and mallopt(M_TRIM_THRESHOLD, 2 * threshold - 1):
            return (
                f"allocator: glibc, freed blocks up to {threshold >> 20} MiB reused (mmap threshold raised)"
            )
    return "allocator: glibc refused the thresholds, left as it is"
