"""The parallel-tempering bench row's estimators against known answers, and the part at toy length."""

from __future__ import annotations

import numpy as np
import pytest

from rbmlab.bench.tempering import bench_tempering, effective_sample_size, mode_switches


def ar1(phi: float, steps: int, chains: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = np.empty((steps, chains))
    x[0] = rng.standard_normal(chains) / np.sqrt(1 - phi**2)
    for t in range(1, steps):
        x[t] = phi * x[t - 1] + rng.standard_normal(chains)
    return x


@pytest.mark.parametrize("phi", [0.0, 0.5, 0.9])
def test_ess_of_an_ar1_series_is_n_over_its_integrated_autocorrelation_time(phi):
    """τ = (1 + φ)/(1 − φ) for AR(1): ESS = n·c/τ within 10%."""
    x = ar1(phi, 20_000, 8)
    want = x.size * (1 - phi) / (1 + phi)
    assert effective_sample_size(x) == pytest.approx(want, rel=0.1)


def test_chains_held_in_different_modes_have_almost_no_effective_samples():
    x = ar1(0.5, 2000, 8) * 0.1 + np.where(np.arange(8) % 2, 1.0, -1.0)
    assert effective_sample_size(x) < 0.01 * x.size
    assert mode_switches(x) == 0
    assert mode_switches(np.array([[1.0, -1.0], [-1.0, -1.0], [1.0, 1.0]])) == 3


def test_the_part_gives_each_samplers_rows_and_the_ratios():
    rows = bench_tempering(rounds=1, seconds=0.05)
    assert len(rows) == 6 and [r["unit"] for r in rows[-2:]] == ["ratio", "ratio"]
    assert all(r["min"] <= r["median"] <= r["max"] for r in rows)
