"""The one loader of optional numba kernels (rbmlab.backend.numba_kernels): RBMLAB_NUMBA=0 switches every
kernel off, and each caller then takes its own path."""

from __future__ import annotations

import pytest

from rbmlab.backend import numba_kernels, random_bits
from rbmlab.inference import mplp
from rbmlab.models import factor_graph


@pytest.fixture
def fresh_caches():
    def clear():
        for cached in (
            numba_kernels._numba,
            numba_kernels.load,
            numba_kernels.compile,
            random_bits._numba_kernels,
        ):
            cached.cache_clear()

    clear()
    yield
    clear()


def test_the_switch_turns_every_kernel_off(monkeypatch, fresh_caches):
    monkeypatch.setenv("RBMLAB_NUMBA", "0")
    assert not numba_kernels.available()
    assert numba_kernels.status() == "off (RBMLAB_NUMBA=0)"
    assert factor_graph._kernels() is None
    assert not random_bits.numba_available()
    assert random_bits.sampler() == "numpy fallback (RBMLAB_NUMBA=0)"
    assert mplp._kernel() is mplp._sweep


def test_with_numba_every_caller_gets_its_kernel(monkeypatch, fresh_caches):
    pytest.importorskip("numba")
    monkeypatch.setenv("RBMLAB_NUMBA", "1")
    assert numba_kernels.status().startswith("numba ")
    assert factor_graph._kernels() is not None
    assert random_bits.sampler().endswith("(fused draw and compare)")
    assert mplp._kernel() is not mplp._sweep
    assert numba_kernels.compile(mplp._sweep) is mplp._kernel()  # compiled once
