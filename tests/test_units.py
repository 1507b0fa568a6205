"""Unit types own the per-unit maths: checked against direct sums over each unit's values, and
through an RBM whose layers use them (exact log Z by brute force over both layers)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from rbmlab.backend import get_backend
from rbmlab.models.rbm import RBM, free_energy, log_partition
from rbmlab.units import UNIT_TYPES


@pytest.mark.parametrize("name", list(UNIT_TYPES))
def test_unit_maths_matches_direct_sums(name):
    unit, backend = UNIT_TYPES[name], get_backend("numpy", "float64")
    a = np.linspace(-30, 30, 121)
    values = np.array(unit.values)
    weights = np.exp(a[:, None] * values[None, :])
    np.testing.assert_allclose(
        unit.log_partition(a), np.logaddexp.reduce(a[:, None] * values, axis=1), rtol=1e-12
    )
    np.testing.assert_allclose(
        unit.mean(a.copy()), (weights * values).sum(1) / weights.sum(1), rtol=1e-12, atol=1e-300
    )
    np.testing.assert_allclose(
        unit.log_partition_sum_(a.reshape(11, 11).copy()),
        unit.log_partition(a.reshape(11, 11)).sum(1),
        rtol=1e-12,
        atol=1e-14,
    )  # the fast form is exact to ~1e-16 per unit, absolute
    m = unit.mean(np.array([-0.7, 0.0, 0.4]))
    np.testing.assert_allclose(unit.mean(unit.field_for_mean(m)), m, rtol=1e-12)
    draws = unit.sample_(np.full((200_000,), 0.3), backend.rng(0))
    assert set(np.unique(draws)) <= set(values)
    expected, se = unit.mean(np.array([0.3]))[0], 1.0 / np.sqrt(200_000)
    assert abs(draws.mean() - expected) < 5 * se


@pytest.mark.parametrize("visible,hidden", [("bernoulli", "spin"), ("spin", "bernoulli"), ("spin", "spin")])
def test_rbm_with_other_unit_types_matches_brute_force(visible, hidden):
    rng = np.random.default_rng(1)
    m, n = 5, 4
    rbm = RBM(
        rng.standard_normal((m, n)),
        rng.standard_normal(m),
        rng.standard_normal(n),
        visible=visible,
        hidden=hidden,
    )
    vs = np.array(list(itertools.product(UNIT_TYPES[visible].values, repeat=m)))
    hs = np.array(list(itertools.product(UNIT_TYPES[hidden].values, repeat=n)))
    neg_e = (vs @ rbm.W) @ hs.T + (vs @ rbm.b_v)[:, None] + (hs @ rbm.b_h)[None, :]
    brute = np.log(np.exp(neg_e).sum())
    assert log_partition(rbm) == pytest.approx(brute, rel=1e-10)
    np.testing.assert_allclose(-free_energy(rbm, vs), np.log(np.exp(neg_e).sum(1)), rtol=1e-10)
    transposed = RBM(rbm.W.T.copy(), rbm.b_h, rbm.b_v, visible=hidden, hidden=visible)
    assert log_partition(transposed) == pytest.approx(brute, rel=1e-10)  # the other layer enumerated
