"""`make bench` pieces at toy shapes: they run, and the cost model adds up as documented."""
from __future__ import annotations

import pytest

from rbmlab.backend import get_backend
from rbmlab.bench import bench_ais, bench_dcp_costs, bench_gibbs, render


@pytest.fixture(scope="module")
def backend():
    return get_backend("numpy", "float32")


def test_dcp_cost_model_is_the_papers_formula(backend):
    c = bench_dcp_costs(backend, repeats=1, m=30, n=20, batch=8)
    T, L, U = c["T_gibbs_ms"], c["L_statistics_ms"], c["U_update_ms"]
    assert min(T, L, U) > 0
    assert c["L_over_T"] == pytest.approx(L / T)
    # dcp §3.1: S-DCP costs d(K'T + L) + L, CD-K costs KT + 2L (each plus its updates)
    expected = (6 * (4 * T + L + U) + L) / (24 * T + 2 * L + U)
    assert c["predicted_sdcp_over_cd"] == pytest.approx(expected)
    assert c["predicted_sdcp_over_cd_without_extra_L"] == pytest.approx((24 * T + 2 * L + 6 * U)
                                                                       / (24 * T + 2 * L + U))


def test_render_lists_every_measurement(backend):
    res = {"backend": "numpy", "machine": {"cpus": 2, "numpy": "x"},
           "gibbs": bench_gibbs(backend, repeats=1, m=30, n=20, batch=8, sweeps=2),
           "ais": bench_ais(backend, repeats=1, m=30, n=20, chains=4, temps=5),
           "dcp_costs": bench_dcp_costs(backend, repeats=1, m=30, n=20, batch=8)}
    text = render(res)
    assert "matmul time / sweep time" in text and "L / T" in text
    assert "(6(4T + L + U) + L) / (24T + 2L + U)" in text         # the labels follow d, K', K
    assert "S-DCP(6, 4) time" not in text          # the epoch rows only when they were run
