"""The leaderboard kind (rbmlab.experiment.leaderboard) and its report (rbmlab.report.leaderboard):
entrants come from the learner registry (a toy learner registered here joins with no edit), each
tuned over the same learning-rate grid, the rate chosen per compute point on validation, and
``make leaderboard SCALE=smoke`` runs end to end."""

from __future__ import annotations

import math
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rbmlab.cli import main
from rbmlab.errors import RbmlabError
from rbmlab.experiment import run_experiment
from rbmlab.experiment.leaderboard import entrants, sweep_spec
from rbmlab.experiment.spec import load_spec
from rbmlab.learners import LEARNERS
from rbmlab.learners.cd import CD, CDConfig
from rbmlab.report.leaderboard import cells, read_points, render_points
from rbmlab.validation import option
from tests.test_stop_rule import needs_caltech

ROOT = Path(__file__).resolve().parent.parent
PAPERS = (
    "cd",
    "pcd",
    "reset",
    "pmp_reset",
    "sdcp",
    "csdcp",
    "cg",
    "ssd",
    "frank_wolfe",
    "tap",
    "adatap",
    "pt_pcd",
)


@dataclass
class ToyConfig(CDConfig):
    name: str = option("toy", "learner")


class Toy(CD):
    """CD under another name: a learner someone registers after the leaderboard was written."""

    config_class = ToyConfig
    generative = True


@pytest.fixture
def toy(monkeypatch):
    """``learner=toy`` registered: its registry line and its yaml (Hydra's config store)."""
    from hydra.core.config_store import ConfigStore

    monkeypatch.setitem(LEARNERS._entries, "toy", "tests.test_leaderboard:Toy")
    store = ConfigStore.instance()
    store.store(
        group="learner",
        name="toy",
        node={
            "name": "toy",
            "k": 1,
            "lr": 0.04,
            "batch_size": 100,
            "sampler": None,
            "optimizer": {
                "name": "sgd",
                "momentum": 0.0,
                "weight_decay": 0.0,
                "l1": 0.0,
                "momentum_on": "all",
            },
        },
    )
    yield
    store.repo["learner"].pop("toy.yaml", None)


def test_every_generative_learner_of_the_papers_is_an_entrant_and_only_they():
    found = entrants()
    assert set(found) == set(PAPERS)
    assert found["adatap"] == ["learner=tap", "learner.inference=adatap"]
    assert found["pmp_reset"] == ["learner=reset", "learner.sampler=pmp"]
    assert found["pt_pcd"] == ["learner=pcd", "learner.sampler=parallel_tempering"]
    assert "logistic" not in found and "tap_dbm" not in found  # conditional / deep: not entrants


def test_each_entrant_is_tuned_over_its_own_rate_times_the_same_factors(toy):
    board = sweep_spec("leaderboard/caltech101", load_spec("leaderboard/caltech101"), "reduced")
    grids = {v: spec["grid"]["learner.lr"] for v, spec in board["variants"].items()}
    assert set(grids) == {*PAPERS, "toy"}
    assert grids["toy"] == pytest.approx([0.02, 0.04, 0.08])
    assert grids["cd"] == pytest.approx([0.025, 0.05, 0.1])  # conf/learner/cd.yaml: 0.05
    assert {len(g) for v, g in grids.items() if v != "frank_wolfe"} == {3}
    assert grids["frank_wolfe"] == [0.02]  # its converged bias fit reads no lr: one run, not three alike
    spec = load_spec("leaderboard/caltech101")
    assert board["variants"]["reset"]["overrides"] == [  # the board's settings, then its own
        *spec["overrides"],
        "learner=reset",
        "learner.batch_size=100",
        "learner.k=20",
    ]
    assert board["overrides"] == [] and "overrides" not in board["scales"]["reduced"]
    # each entrant carries the board's settings it reads: Frank-Wolfe not the smoke tier's
    # model.n_hidden (it grows its own units), the others all of them
    smoke = sweep_spec("leaderboard/caltech101", spec, "smoke")["variants"]
    tier = spec["scales"]["smoke"]["overrides"]
    assert smoke["cd"]["scales"]["smoke"]["overrides"] == tier
    assert (
        smoke["frank_wolfe"]["scales"]["smoke"]["overrides"]
        == [o for o in tier if not o.startswith("model.n_hidden=")]
        != tier
    )


def points(rows) -> pd.DataFrame:
    return pd.DataFrame(
        rows,
        columns=[
            "run_dir",
            "variant",
            "learner.lr",
            "seed",
            "budget",
            "gmac",
            "wall_time",
            "epoch",
            "valid_log_likelihood",
            "test_log_likelihood",
            "test_log_likelihood_lower",
            "test_log_likelihood_upper",
        ],
    )


def test_the_rate_is_chosen_on_validation_per_point_and_a_rate_missing_a_seed_is_out():
    table = points(
        [
            # lr 0.1: best on validation at point 1; at point 2 seed 1 never got there (diverged)
            ("a/0", "a", 0.1, 0, 1.0, 1.0, 1, 1, -10.0, -11.0, -11.5, -10.5),
            ("a/1", "a", 0.1, 1, 1.0, 1.0, 1, 1, -12.0, -13.0, -13.5, -12.5),
            ("a/0", "a", 0.1, 0, 2.0, 2.0, 2, 2, -1.0, -1.0, -1.5, -0.5),
            # lr 0.01: worse at point 1, the only candidate at point 2
            ("a/2", "a", 0.01, 0, 1.0, 1.0, 1, 1, -20.0, -5.0, -5.5, -4.5),
            ("a/3", "a", 0.01, 1, 1.0, 1.0, 1, 1, -20.0, -7.0, -7.5, -6.5),
            ("a/2", "a", 0.01, 0, 2.0, 2.0, 2, 2, -9.0, -9.0, -9.5, -8.5),
            ("a/3", "a", 0.01, 1, 2.0, 2.0, 2, 2, -9.0, -10.0, -10.5, -9.5),
            # b: one rate, diverged (non-finite) at point 2
            ("b/0", "b", 0.1, 0, 1.0, 1.0, 1, 1, -30.0, -30.0, -31.0, -29.0),
            ("b/1", "b", 0.1, 1, 1.0, 1.0, 1, 1, -31.0, -32.0, -33.0, -31.0),
            ("b/0", "b", 0.1, 0, 2.0, 2.0, 2, 2, -30.0, -30.0, -31.0, -29.0),
            ("b/1", "b", 0.1, 1, 2.0, 2.0, 2, 2, math.nan, math.nan, math.nan, math.nan),
            # c: one seed's upper end unbounded (AIS's lower log Z end out of reach)
            ("c/0", "c", 0.1, 0, 1.0, 1.0, 1, 1, -5.0, -5.0, -5.5, math.nan),
            ("c/1", "c", 0.1, 1, 1.0, 1.0, 1, 1, -5.0, -5.0, -5.5, -4.5),
        ]
    )
    got = cells(table).set_index(["variant", "budget"])
    assert got.loc[("a", 1.0), "lr"] == 0.1 and got.loc[("a", 1.0), "mean"] == -12.0  # not the better test
    assert got.loc[("a", 1.0), "std"] == pytest.approx(np.std([-11.0, -13.0], ddof=1))
    assert got.loc[("a", 1.0), ["lower", "upper"]].tolist() == [-12.5, -11.5]
    assert got.loc[("a", 2.0), "lr"] == 0.01 and got.loc[("a", 2.0), "mean"] == -9.5
    assert got.loc[("b", 2.0), "n"] == 0 and got.loc[("b", 1.0), "n"] == 2
    assert got.loc[("c", 1.0), ["lower", "upper"]].tolist() == [-5.5, math.inf]


def test_the_table_bolds_the_best_of_each_point_and_the_committed_points_render_again(tmp_path):
    table = points(
        [
            ("a/0", "a", 0.1, 0, 1.0, 1.1, 0.5, 1, -10.0, -11.0, -11.5, math.nan),
            ("b/0", "b", 0.1, 0, 1.0, 1.2, 0.7, 1, -12.0, -9.0, -9.5, -8.5),
        ]
    )
    stem = tmp_path / "board"
    first = render_points(table, stem, "t", {"a": "Alpha"}, "reduced")
    text = stem.with_suffix(".md").read_text()
    assert "| b | **-9 ± —** [-9.5000, -8.5000] lr 0.1, n=1 |" in text
    assert "| Alpha | -11 ± — [-11.5000, +∞] lr 0.1, n=1 |" in text
    assert text.index("| b |") < text.index("| Alpha |")  # ranked by the last point
    assert stem.with_suffix(".png").stat().st_size > 0
    again = render_points(read_points(stem), tmp_path / "again", "t", {"a": "Alpha"}, "reduced")
    assert (tmp_path / "again.md").read_text() == text
    pd.testing.assert_frame_equal(again["cells"], first["cells"])


@needs_caltech
def test_a_learner_registered_later_appears_in_the_smoke_leaderboard(toy, tmp_path, capsys):
    result = run_experiment(
        "leaderboard/caltech101",
        [
            "scale=smoke",
            "variants=toy,cd",
            f"results_root={tmp_path / 'results'}",
            f"outputs_root={tmp_path / 'outputs'}",
        ],
    )
    table = result["cells"]
    assert set(table["variant"]) == {"toy", "cd"} and (table["n"] == 1).all()
    text = result["table"].read_text()
    assert "| toy |" in text and "| CD-1 |" in text
    tried = read_points(result["table"].with_suffix("")).groupby("variant")["learner.lr"].unique()
    assert sorted(tried["toy"]) == pytest.approx([0.02, 0.08])  # 0.5 and 2 × its own 0.04
    assert sorted(tried["cd"]) == pytest.approx([0.025, 0.1])


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("make") is None, reason="no make here")
def test_make_leaderboard_smoke_runs_every_entrant_on_each_board(tmp_path):
    boards = tmp_path / "results" / "leaderboard"
    proc = subprocess.run(
        [
            "make",
            "-C",
            str(ROOT),
            "--no-print-directory",
            "leaderboard",
            "SCALE=smoke",
            f"ARGS=outputs_root={tmp_path / 'outputs'} results_root={tmp_path / 'results'}",
        ],
        capture_output=True,
        text=True,
        timeout=1500,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert f"outputs_root={tmp_path / 'outputs'}" in proc.stdout  # ARGS reach the command
    for board in ("binarized_mnist", "caltech101", "exact"):
        text = (boards / f"{board}_smoke.md").read_text()
        assert text.startswith("# Leaderboard") and "SMOKE TIER" in text
        for entrant in PAPERS:
            name = load_spec(f"leaderboard/{board}")["leaderboard"]["names"][entrant]
            assert f"| {name} |" in text, (board, entrant)
    assert "## AIS against exact log Z" in (boards / "exact_smoke.md").read_text()
    potts = (boards / "potts_smoke.md").read_text()
    names = load_spec("leaderboard/potts")["leaderboard"]["names"]
    assert f"| {names['cd']} |" in potts and "Not entered (written for other unit types): " in potts
    assert f"| {names['tap']} |" not in potts and "## AIS against exact log Z" in potts


@pytest.mark.parametrize(
    "board, message",
    [
        ({"lr_factors": [0.5, -1]}, "lr_factors must be a non-empty list of positive numbers"),
        ({"lr_factors": []}, "lr_factors must be a non-empty list of positive numbers"),
        ({"adjust": {"nope": ["learner.k=2"]}}, "leaderboard.adjust names nope, not an entrant"),
        ({"budgets": [1]}, "leaderboard must be a mapping of adjust, lr_factors, names"),
    ],
)
def test_a_bad_leaderboard_section_is_one_line(board, message):
    spec = {**load_spec("leaderboard/caltech101"), "leaderboard": board}
    with pytest.raises(RbmlabError, match=message):
        sweep_spec("leaderboard/caltech101", spec, "reduced")


def test_a_bad_budget_on_the_command_line_is_one_line(capsys):
    with pytest.raises(SystemExit) as e:
        main(["run", "dataset=bars_stripes", "train.budget_unit=gmac", "train.budgets=[2,1]"])
    err = capsys.readouterr().err
    assert (
        e.value.code == 2
        and err == "rbmlab: error: train.budgets: must be strictly ascending, got [2.0, 1.0]\n"
    )
