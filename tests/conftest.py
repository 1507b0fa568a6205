"""Shared fixtures: backends to parametrize over, small random models."""

from __future__ import annotations

import os
from pathlib import Path

from tests import dispatch

dispatch.pin()  # one instruction set on every x86-64 CPU; before numpy loads (tests/dispatch.py)
# (a test that starts a process with an environment of its own passes the pin on, or does not
# compare its numbers with a recording)
# numpy asks the kernel for transparent huge pages for every array of 4 MiB or more (madvise).
# The tests allocate and free such arrays by the hundred (MNIST, 188 MB a split in float32), and
# on the CI's virtual machines each fresh huge page costs kernel time: measured on one (AMD EPYC,
# 2 cores), test_data.py's two MNIST tests 9.0 s with them (6 s of it in the kernel) and 4.3 s
# without; nothing a test checks depends on it. Inherited by the processes the tests start.
os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from rbmlab.backend import cupy_available, get_backend  # noqa: E402
from rbmlab.models.rbm import RBM  # noqa: E402

BACKENDS = ["numpy"] + (["cupy"] if cupy_available() else [])


@pytest.fixture(params=["numpy", "cupy"])
def backend(request):
    """Every available backend; cupy cases skip on machines without a GPU."""
    if request.param == "cupy" and not cupy_available():
        pytest.skip("cupy backend: no CUDA device here")
    return get_backend(request.param, "float64")


def random_rbm(backend, m: int, n: int, scale: float = 1.0, seed: int = 0) -> RBM:
    rng = np.random.default_rng(seed)
    return RBM(
        backend.asarray(scale * rng.standard_normal((m, n))),
        backend.asarray(scale * rng.standard_normal(m)),
        backend.asarray(scale * rng.standard_normal(n)),
    )


def all_binary(m: int) -> np.ndarray:
    return ((np.arange(2**m)[:, None] >> np.arange(m)) & 1).astype(np.float64)


# ---- tests leave the checkout as they found it -------------------------------------------------
# Every test writes under its own temporary directory. The run (the controller, under xdist) lists
# the checkout's files when it starts and fails when it ends if any file is new, ignored or not.
CHECKOUT = Path(__file__).resolve().parents[1]
_FILES_AT_START = pytest.StashKey[set]()
# what running Python and installing create, not the tests
NOT_WATCHED = frozenset({".git", ".venv", "__pycache__", ".pytest_cache", "rbmlab.egg-info", "build"})


def checkout_files(root: Path = CHECKOUT) -> set[str]:
    """Every file under ``root`` (relative paths), less the folders of NOT_WATCHED."""
    found = set()
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [s for s in subfolders if s not in NOT_WATCHED]
        found.update(os.path.relpath(os.path.join(folder, f), root) for f in files)
    return found


def _controller(config) -> bool:
    return not hasattr(config, "workerinput")  # an xdist worker has it


# ---- under xdist (make test: -n 2), each worker keeps to one BLAS / OpenMP thread ----------------
# so that the workers share the cores instead of each spreading over all of them. The libraries
# loaded already (numpy's BLAS, imported above) are limited now; those loaded later (scipy's and
# scikit-learn's runtimes) and the subprocesses a test starts with this environment read the
# variables when they load.
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
_BLAS_LIMIT = pytest.StashKey[object]()


def pytest_configure(config):
    if not _controller(config):
        from threadpoolctl import threadpool_limits  # noqa: PLC0415

        for name, value in ONE_THREAD.items():
            os.environ.setdefault(name, value)
        config.stash[_BLAS_LIMIT] = threadpool_limits(limits=1)


def pytest_sessionstart(session):
    if _controller(session.config):
        session.config.stash[_FILES_AT_START] = checkout_files()


def pytest_sessionfinish(session, exitstatus):
    start = session.config.stash.get(_FILES_AT_START, None)
    if start is None or not _controller(session.config):
        return
    new = sorted(checkout_files() - start)
    if new:
        shown = "\n  ".join(new[:20]) + (f"\n  ... and {len(new) - 20} more" if len(new) > 20 else "")
        session.config.get_terminal_writer().line(
            f"\nthe tests left {len(new)} new file(s) in the checkout {CHECKOUT} "
            f"(tests write under their temporary directories):\n  {shown}",
            red=True,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
