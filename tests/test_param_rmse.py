"""evaluator=param_rmse (pmp Sec 5.4's log RMSE) against hand computation, in both conventions;
the Erdős–Rényi ground truth with pmp's constant field."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rbmlab.backend import host_rng
from rbmlab.data import ground_truth
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.base import Context
from rbmlab.models.ising import to_spins


def log_rmse(model, truth) -> float:
    evaluator = EVALUATORS.build(EVALUATORS.parse("param_rmse"))
    return evaluator.evaluate(model, {}, Context(rng=host_rng(0), final=True, truth=truth))["log_rmse"]


def test_log_rmse_is_half_the_log_mean_square_in_the_papers_weights():
    """One pair's J moved by δ: W = J/2 moves by δ/2 on two of the d² entries."""
    truth = ground_truth(
        "ising_samples",
        structure="erdos_renyi",
        n=30,
        density=0.2,
        coupling=1.0,
        fields="constant",
        field=0.1,
        spins="pm1",
        sampler="gibbs",
    )
    assert np.all(truth.h == 0.1) and np.count_nonzero(truth.J) > 0
    J = truth.J.copy()
    J[2, 5] = J[5, 2] = J[2, 5] + 0.6
    model = truth.replace(J=J, h=truth.h + 1.0)  # fields are ignored
    expected = 0.5 * math.log(2 * 0.3**2 / 30**2)
    assert log_rmse(model, truth) == pytest.approx(expected, abs=1e-12)
    assert log_rmse(to_spins(model, "01")[0], truth) == pytest.approx(expected, abs=1e-9)
    # a {0, 1} ground truth is judged in E1's weights, J itself: the pair moves by δ on two entries
    truth01 = to_spins(truth, "01")[0]
    J01 = truth01.J.copy()
    J01[2, 5] = J01[5, 2] = J01[2, 5] + 0.6
    assert log_rmse(truth01.replace(J=J01), truth01) == pytest.approx(
        0.5 * math.log(2 * 0.6**2 / 30**2), abs=1e-12
    )


def test_the_constant_field_keeps_the_random_draws_of_the_couplings():
    options = dict(
        structure="erdos_renyi", n=40, density=0.1, coupling=1.0, field=0.1, spins="pm1", sampler="gibbs"
    )
    random = ground_truth("ising_samples", **options)
    constant = ground_truth("ising_samples", fields="constant", **options)
    assert np.array_equal(random.J, constant.J) and np.all(constant.h == 0.1)
    assert not np.allclose(random.h, 0.1)
