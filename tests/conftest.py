"""Shared fixtures: backends to parametrize over, small random models."""
from __future__ import annotations

import numpy as np
import pytest

from rbmlab.backend import cupy_available, get_backend
from rbmlab.models.rbm import RBM

BACKENDS = ["numpy"] + (["cupy"] if cupy_available() else [])


@pytest.fixture(params=["numpy", "cupy"])
def backend(request):
    """Every available backend; cupy cases skip on machines without a GPU."""
    if request.param == "cupy" and not cupy_available():
        pytest.skip("cupy backend: no CUDA device here")
    return get_backend(request.param, "float64")


def random_rbm(backend, m: int, n: int, scale: float = 1.0, seed: int = 0) -> RBM:
    rng = np.random.default_rng(seed)
    return RBM(backend.asarray(scale * rng.standard_normal((m, n))),
               backend.asarray(scale * rng.standard_normal(m)),
               backend.asarray(scale * rng.standard_normal(n)))


def all_binary(m: int) -> np.ndarray:
    return ((np.arange(2 ** m)[:, None] >> np.arange(m)) & 1).astype(np.float64)
