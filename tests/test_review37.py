"""Second reading of issue 37 (the cross-paper leaderboard): regressions found in review."""

from __future__ import annotations

import math
from pathlib import Path

from rbmlab.hydra_app import validated_run_config
from rbmlab.report.leaderboard import cells, points_of, render_points
from rbmlab.run.runner import train
from tests.test_leaderboard import points
from tests.test_stop_rule import needs_caltech

RUN = [
    "dataset=caltech101",
    "dataset.n_train=20",
    "model.n_hidden=8",
    "evaluator=exact",
    "evaluator.splits=[valid,test]",
    "learner=cd",
    "learner.batch_size=5",
    "train.progress=false",
    "train.eval_every=0",
    "train.epochs=1",
    "train.budget_unit=gmac",
]


def test_a_seed_that_reached_no_point_for_an_entrant_still_counts_against_it():
    # b ran seeds 0 and 1; a's seed-1 run never reached a point (diverged before it): a has no
    # rate that reached the point on every seed, not a cell of one seed passed off as complete
    table = cells(
        points(
            [
                ("a/0", "a", 0.1, 0, 1.0, 1.0, 1, 1, -10.0, -11.0, -11.5, -10.5),
                ("b/0", "b", 0.1, 0, 1.0, 1.0, 1, 1, -20.0, -21.0, -21.5, -20.5),
                ("b/1", "b", 0.1, 1, 1.0, 1.0, 1, 1, -22.0, -23.0, -23.5, -22.5),
            ]
        )
    ).set_index("variant")
    assert table.loc["a", "n"] == 0 and table.loc["a", "of"] == 2
    assert table.loc["b", "n"] == 2 and table.loc["b", "of"] == 2


@needs_caltech
def test_an_entrant_that_reached_no_point_is_on_the_board_and_renders_again(tmp_path):
    root = tmp_path / "sweep"
    train(validated_run_config([*RUN, "train.budgets=[1e-12]"]), root / "a" / "r0", echo=lambda s: None)
    train(validated_run_config([*RUN, "train.budgets=[1e3]"]), root / "b" / "r0", echo=lambda s: None)
    found = points_of(root, ["a", "b"])
    table = cells(found).set_index("variant")
    assert sorted(table.index) == ["a", "b"]
    assert table.loc["a", "n"] == 1 and table.loc["b", "n"] == 0 and table.loc["b", "budget"] == 1e-12
    stem = tmp_path / "board"
    text = render_points(found, stem, "t", {}, "custom")["table"].read_text()
    assert "| b | — (no rate reached it on every seed) |" in text
    again = render_points(
        __import__("pandas").read_csv(Path(f"{stem}_points.csv")), tmp_path / "again", "t", {}, "custom"
    )["cells"]
    assert sorted(again["variant"]) == ["a", "b"] and not math.isnan(
        again.set_index("variant").loc["a", "mean"]
    )


def test_a_run_cut_short_by_epochs_is_scored_on_the_end_of_training_stream_not_its_last_points():
    from types import SimpleNamespace

    from rbmlab.run.budget import Budget
    from rbmlab.run.runner import FINAL_EVAL_STREAM, Progress, final_key

    run = SimpleNamespace(cfg=SimpleNamespace(seed=3))
    p = Progress(None, {}, 1, 1, 0.0, 0.0, {}, budget=Budget("gmac", (1.0, 2.0), reached=1))
    assert final_key(run, p) == (3, FINAL_EVAL_STREAM)  # capped between the points
    p.budget.reached = 2
    assert final_key(run, p) == (3, FINAL_EVAL_STREAM, 2)  # the last point's is the final


@needs_caltech
def test_gmac_for_a_learner_declaring_no_cost_is_refused_before_the_first_evaluation(tmp_path):
    import pytest

    from rbmlab.errors import RbmlabError

    cfg = validated_run_config(
        [
            "dataset=caltech101",
            "dataset.n_train=20",
            "model=dbm",
            "model.n_hidden=[8,8]",
            "evaluator=tap_dbm",
            "evaluator.splits=[valid]",
            "learner=tap_dbm",
            "learner.batch_size=5",
            "train.progress=false",
            "train.budget_unit=gmac",
            "train.budgets=[0.001]",
        ]
    )
    with pytest.raises(RbmlabError, match="^train.budget_unit: gmac counts"):
        train(cfg, tmp_path / "run", echo=lambda s: None)
    assert not (tmp_path / "run" / "metrics.csv").exists()  # no epoch-0 evaluation spent on it


@needs_caltech
def test_a_seconds_budget_reads_the_clock_after_the_device_finished_each_step(tmp_path, monkeypatch):
    import rbmlab.run.runner as runner

    waits = []

    monkeypatch.setattr(runner, "wait_for_device", waits.append)
    cfg = validated_run_config([*RUN, "train.budget_unit=seconds", "train.budgets=[1000]", "train.epochs=2"])
    train(cfg, tmp_path / "run", echo=lambda s: None)
    assert len(waits) == 8  # 20 rows in batches of 5, two epochs: once per step
