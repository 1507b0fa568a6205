"""BLAS awareness: what ``rbmlab doctor`` says, and results that agree across BLAS kernels."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from rbmlab.backend.machine import SKYLAKEX_NEEDS, cpu, faster_kernel, report

OPENBLAS = {"internal_api": "openblas", "version": "0.3.31", "num_threads": 2, "filepath": "x.so"}


@pytest.mark.parametrize(
    "architecture, flags, expected",
    [
        ("Haswell", SKYLAKEX_NEEDS | {"avx2", "fma"}, "SkylakeX"),  # AVX2 kernel on an AVX-512 CPU
        ("Zen", SKYLAKEX_NEEDS | {"avx2", "fma"}, "SkylakeX"),
        ("SkylakeX", SKYLAKEX_NEEDS, None),  # already the fastest
        ("Cooperlake", SKYLAKEX_NEEDS | {"avx512_bf16"}, None),
        ("Haswell", {"avx2", "fma", "avx512f"}, None),  # not all of AVX-512 SkylakeX needs
    ],
)
def test_a_faster_kernel_is_named_only_where_the_cpu_has_it(architecture, flags, expected):
    assert faster_kernel({**OPENBLAS, "architecture": architecture}, flags) == expected
    assert faster_kernel({**OPENBLAS, "internal_api": "mkl", "architecture": architecture}, flags) is None


def test_the_report_says_how_to_select_the_faster_kernel_without_overriding_anything():
    facts = {
        "python": "3.11",
        "numpy": "2.4",
        "cpu": "AMD EPYC",
        "cpus": 2,
        "machine": "x86_64",
        "vector_features": ["avx2", "avx512f"],
        "faster_kernel": "SkylakeX",
        "blas": [{**OPENBLAS, "architecture": "Haswell"}],
        "openblas_coretype": "Haswell",
    }
    text = "\n".join(report(facts))
    assert "kernel Haswell, 2 thread(s)" in text and "OPENBLAS_CORETYPE: Haswell" in text
    assert "your environment sets OPENBLAS_CORETYPE=Haswell" in text
    unset = "\n".join(report({**facts, "openblas_coretype": None}))
    assert "not set (the library chose its kernel)" in unset and "set OPENBLAS_CORETYPE=SkylakeX" in unset


# One fixed computation through rbmlab's cores: block-Gibbs statistics, a CD-1 step and an exact
# log Z, in float32; printed as JSON by a subprocess started with a given OPENBLAS_CORETYPE.
PROGRAM = """
import json, numpy as np
from rbmlab.backend import get_backend
from rbmlab.learners.cd import CD, CDConfig
from rbmlab.data.batch import Batch
from rbmlab.backend.machine import blas
from rbmlab.models.rbm import RBM
b = get_backend("numpy", "float32")
rng = np.random.default_rng(0)
W = (0.1 * rng.standard_normal((784, 500))).astype(np.float32)
rbm = RBM(W, np.zeros(784, np.float32) - 1, np.zeros(500, np.float32))
v = (rng.random((200, 784)) < 0.2).astype(np.float32)
stats = rbm.statistics(v)
new, _ = CD(CDConfig(lr=0.05, k=1)).step(rbm, {}, Batch(v), b.rng(1))
small = RBM(W[:12, :6].copy(), np.zeros(12, np.float32), np.zeros(6, np.float32))
print(json.dumps({"kernel": blas()[0].get("architecture"), "W_grad": stats["W"][:50, :50].tolist(),
                  "W_new": new.W[:50, :50].tolist(), "log_z": small.exact_log_partition()}))
"""


def run_with_kernel(kernel: str) -> dict:
    env = {**os.environ, "OPENBLAS_CORETYPE": kernel}
    out = subprocess.run(
        [sys.executable, "-c", PROGRAM], env=env, capture_output=True, text=True, timeout=120, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_results_agree_across_blas_kernels():
    flags = cpu()["flags"]
    if not SKYLAKEX_NEEDS <= flags:
        pytest.skip("this CPU has one OpenBLAS kernel family only (no AVX-512)")
    avx2, avx512 = run_with_kernel("Haswell"), run_with_kernel("SkylakeX")
    if avx2["kernel"] is None or avx2["kernel"] == avx512["kernel"]:
        pytest.skip("the BLAS in use is not an OpenBLAS that OPENBLAS_CORETYPE selects")
    assert avx2["kernel"].lower() == "haswell" and avx512["kernel"].lower() == "skylakex"
    np.testing.assert_allclose(avx2["W_grad"], avx512["W_grad"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(avx2["W_new"], avx512["W_new"], rtol=1e-5, atol=1e-6)
    assert avx2["log_z"] == pytest.approx(avx512["log_z"], rel=1e-6)
