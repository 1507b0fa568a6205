"""evaluator.exact_check of AIS: the estimate beside evaluator=exact's log Z on a model whose
smaller layer enumerates, its signed error, and whether the ±3σ interval holds the exact value."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rbmlab.backend import get_backend
from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS, ais, exact
from rbmlab.evaluators.base import Context
from rbmlab.evaluators.metrics import metric_spec
from rbmlab.models.rbm import RBM

BACKEND = get_backend("numpy", "float64")


def random_rbm(n_visible: int, n_hidden: int, w_std: float, seed: int) -> RBM:
    g = np.random.default_rng(seed)
    return RBM(
        w_std * g.standard_normal((n_visible, n_hidden)),
        0.5 * g.standard_normal(n_visible),
        0.5 * g.standard_normal(n_hidden),
    )


def ais_metrics(model, seed: int = 1, **options) -> dict[str, float]:
    evaluator = EVALUATORS.build(
        EVALUATORS.parse(
            {"name": "ais", "exact_check": True, "schedule": "linear", "progress": False, **options}
        )
    )
    x = (np.random.default_rng(5).random((10, model.n_visible)) < 0.5).astype(np.float64)
    return evaluator.evaluate(model, {"test": Batch(x)}, Context(rng=BACKEND.rng(seed), final=True))


def test_at_784_by_12_the_exact_log_z_lies_inside_the_interval():
    model = random_rbm(784, 12, 0.05, seed=0)
    m = ais_metrics(model, n_chains=50, n_temperatures=300)
    assert m["log_z_exact"] == exact.log_partition(model)  # evaluator=exact's enumeration
    assert m["log_z_error"] == m["log_z"] - m["log_z_exact"]
    assert m["log_z_lower"] <= m["log_z_exact"] <= m["log_z_upper"] and m["log_z_within"] == 1.0
    assert abs(m["log_z_error"]) < 0.05


def test_a_two_temperature_schedule_misses_the_exact_log_z():
    """Two chains across two intervals of a strongly coupled 20x12 RBM: the estimate falls
    nats short and the interval excludes the exact value (seeded)."""
    model = random_rbm(20, 12, 2.0, seed=1)
    m = ais_metrics(model, n_chains=2, n_temperatures=2)
    assert m["log_z_exact"] == pytest.approx(46.76917293878289, abs=1e-9)
    assert m["log_z_error"] == m["log_z"] - m["log_z_exact"] < -1.0
    assert not m["log_z_lower"] <= m["log_z_exact"] <= m["log_z_upper"] and m["log_z_within"] == 0.0


@pytest.mark.parametrize(
    "lower, upper, within",
    [(9.0, 11.0, 1.0), (10.0, 10.0, 1.0), (-math.inf, 10.5, 1.0), (10.1, 11.0, 0.0), (8.0, 9.9, 0.0)],
)
def test_the_within_flag_is_the_interval_holding_the_exact_value(lower, upper, within):
    fwd = ais.AISResult(
        log_z=10.25,
        log_z_lower=lower,
        log_z_upper=upper,
        log_z_base=0.0,
        log_w=np.zeros(2),
        n_chains=2,
        n_temperatures=3,
        direction="forward",
    )
    assert ais.exact_check_metrics(fwd, 10.0) == {
        "log_z_exact": 10.0,
        "log_z_error": 0.25,
        "log_z_within": within,
    }


def test_off_by_default_and_then_no_exact_columns():
    m = ais_metrics(random_rbm(9, 4, 1.0, seed=0), n_chains=4, n_temperatures=10, exact_check=False)
    assert not {"log_z_exact", "log_z_error", "log_z_within"} & set(m)
    assert EVALUATORS.parse({"name": "ais"}).exact_check is False


def test_a_model_too_large_to_enumerate_is_refused_at_check_time():
    check = lambda on: EVALUATORS.build(EVALUATORS.parse({"name": "ais", "exact_check": on})).check(  # noqa: E731
        RBM, {"n_visible": 784, "n_hidden": 30}
    )
    check(False)
    with pytest.raises(RbmlabError) as e:
        check(True)
    assert str(e.value).startswith(
        "evaluator.exact_check: enumeration needs at most 25 enumerated units, this model (784x30) has 30 ("
    ) and "\n" not in str(e.value)
    assert str(e.value).endswith("set evaluator.exact_check=false")


def test_the_new_metrics_declare_their_direction():
    error, within, value = (metric_spec(c) for c in ("log_z_error", "log_z_within", "log_z_exact"))
    assert error.best_at == 0.0 and list(error.badness([-0.3, 0.1, 0.0])) == [0.3, 0.1, 0.0]
    assert within.higher_is_better and within.best_at is None and within.unit == "fraction"
    assert value.unit == "nats" and not value.per_split and error.label == "AIS log Z error"
