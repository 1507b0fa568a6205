"""Exact log Z of the cyclic 2D lattice (rbmlab.models.transfer_matrix) against enumeration."""

from __future__ import annotations

import pytest

from rbmlab.models.ising import lattice_2d
from rbmlab.models.transfer_matrix import lattice_log_partition


@pytest.mark.parametrize("side", [3, 4])
@pytest.mark.parametrize("coupling, field", [(0.3, 0.0), (-0.2, 0.0), (-0.2, 0.15), (0.5, -0.3)])
def test_equals_enumeration(side, coupling, field):
    """Ferro- and antiferromagnetic (frustrated at side 3), with and without a field."""
    model = lattice_2d(side, coupling=coupling, field=field, spins="pm1", dtype="float64")
    assert lattice_log_partition(side, coupling, field) == pytest.approx(
        float(model.exact_log_partition()), abs=1e-12
    )


@pytest.mark.parametrize("side, field", [(5, 0.0), (6, 0.1), (7, 0.0)])
def test_orbit_reduction_equals_the_full_trace(side, field):
    assert lattice_log_partition(side, -0.2, field) == pytest.approx(
        lattice_log_partition(side, -0.2, field, symmetric=False, block=37), abs=1e-11
    )


def test_a_torus_needs_side_three():
    with pytest.raises(ValueError, match="side >= 3"):
        lattice_log_partition(2, 0.1)
