"""A metric best at a target (MetricSpec.best_at; a signed error such as pmp's pmap_log_z_error is
best at 0): every ranking (aggregate's best group and best seed, the paper table's bold, the
index headline, early stopping, a sweeper's objective) picks the value closest to the target."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from rbmlab.evaluators import declared_metrics
from rbmlab.evaluators.metrics import RUN_METRICS, MetricSpec, badness, metric_spec, ranking
from rbmlab.report.names import Names
from rbmlab.report.paper_table import TableSpec, paper_table_markdown, table_cells

ERROR = "pmap_log_z_error"  # estimate − exact log Z: −45.6 is worse than +0.3
SIGNED = MetricSpec("bias", "nats", higher_is_better=False, best_at=0.0)


def test_the_signed_log_z_error_is_best_at_0_and_its_spreads_lower():
    assert metric_spec(ERROR).best_at == 0.0
    assert metric_spec(f"{ERROR}_se").best_at is None and metric_spec(f"{ERROR}_std").best_at is None
    assert badness(ERROR, [-45.6, 0.3, -0.2]).tolist() == pytest.approx([45.6, 0.3, 0.2])
    assert badness(f"{ERROR}_se", [2.0, 1.0]).tolist() == [2.0, 1.0]
    assert badness("test_log_likelihood", [-90.0, -80.0]).tolist() == [90.0, 80.0]
    assert math.isnan(float(badness(ERROR, math.nan)))


def test_the_direction_in_words():
    assert (ranking(ERROR).direction, ranking(ERROR).best_word) == ("closest to 0 is best", "closest to 0")
    assert (ranking("test_log_likelihood").direction, ranking("test_log_likelihood").best_word) == (
        "higher is better",
        "max",
    )
    assert (ranking("test_pixel_error").direction, ranking("undeclared_column").best_word) == (
        "lower is better",
        "max",
    )
    assert MetricSpec("x", "", True, best_at=2.5).direction == "closest to 2.5 is best"


def test_every_declared_target_is_a_finite_number():
    targets = [s for s in (*RUN_METRICS, *declared_metrics()) if s.best_at is not None]
    assert ERROR in {s.name for s in targets}
    for spec in targets:
        assert isinstance(spec.best_at, float) and math.isfinite(spec.best_at), spec.name


# ----------------------------------------------------------------- report: best group, best seed
def test_aggregate_best_of_a_curve_and_the_fraction_marker_are_closest_to_0():
    from rbmlab.report.aggregate import summarize_groups

    runs = pd.DataFrame({"run_dir": ["m", "p"], "status": ["completed"] * 2})
    groups = pd.DataFrame({"method": ["MPLP", "PMP"]})
    gids = pd.Series([0, 1], index=["m", "p"])
    curve = pd.DataFrame(
        {"gid": [0, 0, 0, 1, 1, 1], "side": [5.0, 10.0, 15.0] * 2, "mean": [-2.0, 0.5, -45.6, 3.0, -0.3, 1.0]}
    )
    table = summarize_groups(runs, groups, gids, curve, ERROR, "side", fraction=0.5)
    assert table["best"].tolist() == [0.5, -0.3] and table["side_at_best"].tolist() == [10.0, 10.0]
    # MPLP: distances 2, 0.5, 45.6 -> halfway from 2 to 0.5 is 1.25, first met at side 10
    assert table["side_to_fraction"].tolist() == [10.0, 10.0]


def test_aggregate_keeps_the_seed_closest_to_0():
    from rbmlab.report.aggregate import aggregate_points

    points = pd.DataFrame(
        {
            "run_dir": ["s0", "s1", "s2"],
            "side": [15.0] * 3,
            "test_log_likelihood": [-1.0, -2.0, -3.0],
            ERROR: [-4.0, 0.7, -0.9],
        }
    )
    gids = pd.Series([0, 0, 0], index=["s0", "s1", "s2"])
    kept = aggregate_points(points, gids, "test_log_likelihood", "side", select=ERROR)
    assert (kept["mean"].tolist(), kept["n"].tolist(), kept["runs"].tolist()) == ([-2.0], [1], [3])


def test_paper_table_bolds_the_value_closest_to_0_and_says_so():
    runs = pd.DataFrame(
        {
            "run_dir": ["a", "b", "c", "d"],
            "method": ["MPLP", "PMP", "MPLP", "PMP"],
            "n": [15, 15, 30, 30],
            "status": ["completed"] * 4,
        }
    )
    finals = {ERROR: pd.Series({"a": -45.6, "b": 0.3, "c": 2.0, "d": -3.0})}
    paper = [
        {"match": {"method": "MPLP", "n": 15}, "value": -0.1},
        {"match": {"method": "PMP", "n": 15}, "value": 5.0},
    ]
    table = TableSpec.parse(
        {"rows": "method", "columns": "n", "metrics": [{"metric": ERROR, "label": "err", "paper": paper}]}
    )
    lines = paper_table_markdown(table_cells(runs, finals, table, Names()), table, Names()).splitlines()
    assert lines[0] == "| method | 15 err: ours | paper | Δ | 30 err: ours |"
    assert lines[2] == "| MPLP | -45.600 ± — (1) | **-0.1** | -45.500 | **2 ± — (1)** |"
    assert lines[3] == "| PMP | **0.300 ± — (1)** | 5 | -4.700 | -3 ± — (1) |"
    assert "(err: closest to 0 is best)" in lines[5]


def test_the_index_headline_is_the_group_closest_to_0():
    from rbmlab.experiment.index import headline
    from rbmlab.report.spec import ReportSpec

    runs = pd.DataFrame(
        {
            "run_dir": ["m0", "m1", "p0", "p1"],
            "method": ["mplp", "mplp", "pmp", "pmp"],
            "status": ["completed"] * 4,
            f"final.{ERROR}": [-40.0, -51.2, 0.1, 0.5],
        }
    )
    ours, paper, measure = headline(runs, ReportSpec.parse({"metric": ERROR, "lines": "method"}, "t"))
    assert ours.startswith("0.3 ± ") and ours.endswith("(n=2)") and "method pmp" in measure


# ----------------------------------------------------------------- early stopping, sweeper
def test_early_stopping_selects_the_validation_value_closest_to_0():
    from rbmlab.run.early_stopping import StopRule, best_on_validation

    rows = pd.DataFrame(
        {"epoch": [0, 1, 2, 3], "valid_bias": [-3.0, 0.4, -0.2, -9.0], "test_bias": [1.0, 2.0, 3.0, 4.0]}
    )
    record = best_on_validation(rows, SIGNED)
    assert record == {"epoch": 2, "rule": "the best valid_bias", "valid_bias": -0.2, "test_bias": 3.0}
    rule = StopRule("valid", patience=2, metric=SIGNED)
    values = [-3.0, 0.4, -0.2, -9.0, 0.3, 5.0]
    decisions = [rule.decide(values[:n]) for n in range(1, len(values) + 1)]
    assert [d.selected for d in decisions] == [0, 1, 2, 2, 2, 2]
    assert [d.stop for d in decisions] == [False] * 4 + [True, True]


def test_a_sweeper_minimises_the_distance_from_the_target(monkeypatch):
    from rbmlab.run import sweepers

    monkeypatch.setattr(sweepers, "objective", lambda evaluator: (ERROR, metric_spec(ERROR)))
    cfg = SimpleNamespace(evaluator=None)
    assert sweepers.direction_overrides([cfg], []) == ["hydra.sweeper.direction=minimize"]
    assert sweepers.returned_value(cfg, {"status": "completed", "final": {ERROR: -0.25}}) == 0.25
    assert sweepers.returned_value(cfg, {"status": "completed", "final": {ERROR: np.nan}}) is None
    assert sweepers.objective_name(ERROR, metric_spec(ERROR)) == f"|{ERROR} − 0|"
