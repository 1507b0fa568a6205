"""rbmlab.backend.allocator: with glibc, a freed large temporary is reused instead of mapped afresh (the
second one costs no page faults), the environment's own settings are left alone, and the entry
points apply it."""

from __future__ import annotations

import os
import platform
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the setting is glibc's")

# page faults taken by the second of two 64 MB temporaries (the first freed before it)
SECOND_TEMPORARY = """
import resource, sys
import numpy as np
if sys.argv[1] == "keep":
    from rbmlab.backend.allocator import keep_freed_memory
    print(keep_freed_memory(), file=sys.stderr)
a = np.ones(16 * 2**20, dtype=np.float32); del a
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
b = np.ones(16 * 2**20, dtype=np.float32)
print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
"""


def _faults(mode: str, **env) -> int:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUNABLES"))}
    out = subprocess.run(
        [sys.executable, "-c", SECOND_TEMPORARY, mode],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return int(out.stdout)


def test_a_freed_large_temporary_is_reused_without_new_pages():
    from rbmlab.backend.allocator import keep_freed_memory

    if "1024 MiB" not in keep_freed_memory():
        pytest.skip(f"this glibc caps the threshold below the test's 64 MB ({keep_freed_memory()})")
    fresh, kept = _faults("default"), _faults("keep")
    assert fresh >= 32  # 64 MB of new pages: 16,384 of 4 KiB, at least 32 of 2 MiB (THP)
    assert kept <= fresh // 20


def test_the_environment_s_own_setting_is_left_alone():
    code = "from rbmlab.backend.allocator import keep_freed_memory as k; print(k()); print(k())"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUNABLES"))}

    def said(**extra):
        return subprocess.run(
            [sys.executable, "-c", code], env={**env, **extra}, capture_output=True, text=True, check=True
        ).stdout.splitlines()

    assert (
        said(MALLOC_TRIM_THRESHOLD_="0")
        == ["allocator: glibc, as the environment sets it (MALLOC_TRIM_THRESHOLD_)"] * 2
    )
    assert said(GLIBC_TUNABLES="glibc.malloc.mmap_threshold=65536")[0].endswith("(GLIBC_TUNABLES)")
    assert "reused" in said(GLIBC_TUNABLES="glibc.pthread.rseq=0")[0]  # another tunable: ours applies


def test_doctor_reports_the_allocator(capsys):
    from rbmlab.cli import main

    main(["doctor"])
    assert "allocator: glibc" in capsys.readouterr().out
