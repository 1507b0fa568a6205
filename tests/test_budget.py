"""Compute budgets (train.budget_unit, train.budgets; rbmlab.run.budget): a row at each compute
point, met by the step that crosses it; training ends at the last, whose evaluation is the run's
final; resume gives the same rows; bad settings are one line.

The runs train a small RBM on 20 Caltech-101 silhouettes (batch 5: four steps per epoch) with the
exact log-likelihood of the validation split.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from rbmlab.errors import RbmlabError
from rbmlab.hydra_app import validated_run_config
from rbmlab.learners.cd import CD
from rbmlab.run.budget import GIGA, Budget
from rbmlab.run.runner import train
from rbmlab.storage.faults import InjectedFault
from tests.test_stop_rule import needs_caltech

RUN = [
    "dataset=caltech101",
    "dataset.n_train=20",
    "model.n_hidden=8",
    "evaluator=exact",
    "evaluator.splits=[valid]",
    "learner=cd",
    "learner.k=2",
    "learner.batch_size=5",
    "learner.lr=0.05",
    "train.progress=false",
    "train.eval_every=0",
    "train.epochs=50",
    "train.budget_unit=gmac",
]


def run(out: Path, *overrides: str) -> dict:
    train(validated_run_config([*RUN, *overrides]), out, echo=lambda s: None)
    return json.loads((out / "summary.json").read_text())


def rows(out: Path) -> pd.DataFrame:
    return pd.read_csv(out / "metrics.csv")


@pytest.fixture(scope="module")
def step_gmac(tmp_path_factory) -> float:
    """The declared compute of one step here, read off a run whose first point is the first step."""
    out = tmp_path_factory.mktemp("first") / "run"
    run(out, "train.budgets=[1e-12]")
    first = rows(out)
    assert list(first["updates"]) == [1]
    return float(first["gmac"].iloc[0])


def test_the_budget_marks_each_point_once_and_restores_from_spent_compute():
    budget = Budget("gmac", (1.0, 2.0, 4.0))
    assert budget.spent(wall=99.0, work=1.5 * GIGA) == 1.5
    assert budget.due(0.5) == [] and budget.due(2.5) == [0, 1] and budget.due(3.0) == []
    assert not budget.exhausted and budget.due(4.0) == [2] and budget.exhausted
    budget.restore(2.0)
    assert budget.reached == 2
    assert Budget("seconds", (1.0,)).spent(wall=3.0, work=7.0) == 3.0


@needs_caltech
def test_each_point_is_scored_after_the_step_that_crosses_it_and_the_last_is_final(tmp_path, step_gmac):
    points = [2.5 * step_gmac, 7.5 * step_gmac]  # crossed by steps 3 and 8
    summary = run(tmp_path / "run", f"train.budgets=[{points[0]!r},{points[1]!r}]")
    got = rows(tmp_path / "run")
    assert list(got["updates"]) == [3, 8]
    assert list(got["epoch"]) == [0.75, 2.0]  # four steps of 5 examples per epoch
    assert got["gmac"].tolist() == pytest.approx([3 * step_gmac, 8 * step_gmac], rel=1e-12)
    assert got["budget"].tolist() == pytest.approx(points)
    assert summary["status"] == "completed" and summary["epochs_done"] == 2
    assert summary["budget"] == {
        "unit": "gmac",
        "points": pytest.approx(points),
        "reached": 2,
        "unreached": [],
        "spent": pytest.approx(8 * step_gmac),
    }
    assert summary["gmac"] == pytest.approx(8 * step_gmac)
    assert summary["final"]["valid_log_likelihood"] == got["valid_log_likelihood"].iloc[-1]


@needs_caltech
def test_a_point_scores_the_model_the_run_would_end_with_there(tmp_path, step_gmac):
    """The first point of a two-point run equals the final of a one-point run stopping there."""
    first = 2.5 * step_gmac
    run(tmp_path / "two", f"train.budgets=[{first!r},{7.5 * step_gmac!r}]")
    one = run(tmp_path / "one", f"train.budgets=[{first!r}]")
    assert rows(tmp_path / "two")["valid_log_likelihood"].iloc[0] == one["final"]["valid_log_likelihood"]


@needs_caltech
def test_a_run_stopped_between_points_resumes_to_the_same_rows(tmp_path, step_gmac, monkeypatch):
    budgets = f"train.budgets=[{1.5 * step_gmac!r},{10.5 * step_gmac!r}]"  # epochs 1 and 3
    straight = run(tmp_path / "straight", budgets, "train.checkpoint_every=2")
    monkeypatch.setenv("RBMLAB_FAULT", "raise_after_epoch:2")
    with pytest.raises(InjectedFault):
        run(tmp_path / "stopped", budgets, "train.checkpoint_every=2")
    monkeypatch.delenv("RBMLAB_FAULT")
    resumed = run(tmp_path / "stopped", budgets, "train.checkpoint_every=2", "resume=true")
    assert resumed["final"] == straight["final"] and resumed["gmac"] == straight["gmac"]
    pd.testing.assert_frame_equal(
        rows(tmp_path / "stopped").drop(columns="wall_time"),
        rows(tmp_path / "straight").drop(columns="wall_time"),
    )


@needs_caltech
@pytest.mark.parametrize("epochs, updates", [(2, 8), (0, 0)])
def test_train_epochs_caps_a_budget_and_says_so(tmp_path, step_gmac, epochs, updates):
    """A point the cap keeps the run from reaching: status capped (not completed), the points
    left in summary.json, a last line that names them; the final is evaluated as usual."""
    lines: list[str] = []
    points = [1.5 * step_gmac, 100 * step_gmac]
    overrides = [*RUN, f"train.budgets=[{points[0]!r},{points[1]!r}]", f"train.epochs={epochs}"]
    train(validated_run_config(overrides), tmp_path / "run", echo=lines.append)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    reached = 1 if epochs else 0
    assert summary["status"] == "capped" and summary["epochs_done"] == epochs
    assert summary["budget"]["reached"] == reached
    assert summary["budget"]["unreached"] == pytest.approx(points[reached:])
    assert summary["gmac"] == pytest.approx(updates * step_gmac)
    assert "valid_log_likelihood" in summary["final"]
    missed = ", ".join(f"{x:g}" for x in points[reached:])
    assert f"status capped: train.epochs={epochs} ended training" in lines[-2]
    assert f"before compute point(s) {missed} of train.budgets ({reached} of 2 reached" in lines[-2]
    train(validated_run_config([*overrides, "resume=true"]), tmp_path / "run", echo=lines.append)
    assert lines[-1].endswith("is already complete (capped); nothing to resume")


@needs_caltech
def test_seconds_count_the_training_clock(tmp_path):
    summary = run(
        tmp_path / "run", "train.budget_unit=seconds", "train.budgets=[0.05,0.15]", "train.epochs=100000"
    )
    got = rows(tmp_path / "run")
    assert len(got) == 2 and (got["wall_time"].to_numpy() >= [0.05, 0.15]).all()
    assert summary["budget"]["unit"] == "seconds" and summary["wall_time"] >= 0.15
    assert summary["final"]["valid_log_likelihood"] == got["valid_log_likelihood"].iloc[-1]


@needs_caltech
def test_gmac_needs_a_declared_cost(tmp_path, monkeypatch):
    monkeypatch.setattr(CD, "step_cost", lambda self, model, rows, state: None)
    with pytest.raises(
        RbmlabError,
        match="train.budget_unit: gmac counts the multiply-adds each learner declares; learner=cd",
    ):
        run(tmp_path / "run", "train.budgets=[1]")


@pytest.mark.parametrize(
    "overrides, message",
    [
        (
            ["train.budget_unit=none", "train.budgets=[1]"],
            "train.budgets: needs train.budget_unit=seconds or gmac",
        ),
        (["train.budgets=[]"], "train.budgets: train.budget_unit=gmac needs at least one compute point"),
        (["train.budgets=[2,1]"], "train.budgets: must be strictly ascending"),
        (["train.budgets=[0,1]"], "train.budgets: must be positive numbers"),
        (
            ["train.budgets=[1]", "train.stop_rule=gap", "train.eval_every=1"],
            "train.stop_rule: gap judges epochs",
        ),
        (["train.budgets=[1]", "train.trials=2"], "train.budgets: count the compute of one model"),
        (
            ["train.budget_unit=flops", "train.budgets=[1]"],
            "train.budget_unit: expected one of none, seconds, gmac",
        ),
    ],
)
def test_bad_budgets_are_one_line(overrides, message):
    with pytest.raises(RbmlabError, match=message.replace("[", r"\[")):
        validated_run_config([*RUN, *overrides])


@needs_caltech
@pytest.mark.parametrize("learner", ["learner=tap", "learner=frank_wolfe"])
def test_a_learner_that_counts_from_its_state_runs_a_gmac_budget(tmp_path, learner):
    """TAP and Frank-Wolfe read their step's tallies from the state a step leaves: the up-front
    check must not ask them for a cost before any step (it raised KeyError)."""
    base = [o for o in RUN if not o.startswith(("learner", "learner.k", "learner.batch_size", "learner.lr"))]
    if "frank" in learner:  # it grows its hidden units: model.n_hidden is refused
        base = [o for o in base if not o.startswith("model.n_hidden=")]
    batch = "learner.batch_size=full" if "frank" in learner else "learner.batch_size=5"
    train(
        validated_run_config([*base, learner, batch, "train.budgets=[1e-4]", "train.epochs=3"]),
        tmp_path / "run",
        echo=lambda s: None,
    )
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["budget"]["reached"] == 1


def test_every_leaderboard_entrant_declares_its_cost_and_an_undeclared_learner_does_not():
    from rbmlab.learners import LEARNERS
    from rbmlab.models.dbm import DBM
    from rbmlab.models.rbm import RBM

    for name, cls in LEARNERS.items():
        if cls.generative:
            learner = LEARNERS.build(validated_run_config([f"learner={name}"]).learner)
            assert learner.declares_cost(RBM), name
    assert not LEARNERS.build(validated_run_config(["model=dbm", "learner=tap_dbm"]).learner).declares_cost(
        DBM
    )
