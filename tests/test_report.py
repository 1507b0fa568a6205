"""Tests for rbmlab.report on fake run directories (no training)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from rbmlab.errors import RbmlabError
from rbmlab.report import epoch_to_fraction_of_max, load_runs, make_report, report_main, varying_keys
from rbmlab.storage.locking import DirectoryLock

LEARNERS = ("cd", "pcd")
LRS = (0.1, 0.01)
SEEDS = (0, 1, 2)
EPOCHS = list(range(0, 55, 5))  # 0, 5, ..., 50


def fake_ll(learner: str, lr: float, seed: int, epoch: int) -> float:
    """A deterministic, seed-dependent rising curve."""
    level = -20.0 + (2.0 if learner == "pcd" else 0.0) + (1.0 if lr == 0.1 else 0.0)
    return level + 8.0 * (1 - math.exp(-epoch / 10)) + 0.3 * seed + 0.01 * seed * epoch


def fake_recon(n_hidden: int, seed: int, epoch: int) -> float:
    """A deterministic falling reconstruction error: lower with more hidden units."""
    return 1.0 / (1 + epoch) + 0.1 / n_hidden + 0.01 * seed


def write_run(
    path: Path,
    learner: str,
    lr: float,
    seed: int,
    *,
    status: str = "completed",
    epochs: list[int] = EPOCHS,
    extra_learner: dict | None = None,
    n_hidden: int = 4,
    recon: bool = False,
) -> None:
    """A run directory in the runner's format (``recon``: with a reconstruction error column)."""
    path.mkdir(parents=True)
    config = {
        "seed": seed,
        "scale": "smoke",
        "resume": False,
        "dataset": {"name": "bars_stripes", "size": 3},
        "learner": {"name": learner, "k": 1, "lr": lr, "batch_size": 0, **(extra_learner or {})},
        "model": {"n_hidden": n_hidden},
        "evaluator": {"name": "exact", "splits": ["test"]},
        "train": {"epochs": 50, "eval_every": 5, "progress": seed == 0},
        "tags": [],
    }
    (path / "config.yaml").write_text(yaml.safe_dump(config))
    (path / "overrides.yaml").write_text(
        yaml.safe_dump([f"learner={learner}", f"learner.lr={lr}", f"seed={seed}"])
    )
    rows = []
    for e in epochs:
        ll = fake_ll(learner, lr, seed, e)
        # cd evaluates the likelihood only every 10 epochs: NaN in between (PLL every row).
        rows.append(
            {
                "epoch": e,
                "updates": 10 * e,
                "wall_time": 0.01 * e + seed,
                "test_log_likelihood": ll if learner == "pcd" or e % 10 == 0 else np.nan,
                "test_pseudo_log_likelihood": ll - 1.0,
                **({"test_reconstruction_error": fake_recon(n_hidden, seed, e)} if recon else {}),
            }
        )
    pd.DataFrame(rows).to_csv(path / "metrics.csv", index=False)
    final = (
        {}
        if status != "completed"
        else {  # running, failed and diverged runs have none
            "test_log_likelihood": fake_ll(learner, lr, seed, epochs[-1]) + 0.5,
            "test_pseudo_log_likelihood": fake_ll(learner, lr, seed, epochs[-1]) - 1.0,
        }
    )
    if recon and status == "completed":
        final["test_reconstruction_error"] = fake_recon(n_hidden, seed, epochs[-1])
    (path / "summary.json").write_text(
        json.dumps(
            {
                "status": status,
                "epochs_done": epochs[-1],
                "final": final,
                "wall_time": 1.0 + seed,
                "scale": "smoke",
                "seed": seed,
            }
        )
    )


@pytest.fixture(scope="module")
def sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """2 learners × 2 lrs × 3 seeds, at mixed depths, plus a diverged cd/0.1 run (seed 3)."""
    root = tmp_path_factory.mktemp("report") / "sweep"
    for learner in LEARNERS:
        for lr in LRS:
            for seed in SEEDS:
                write_run(root / f"{learner}" / f"lr{lr}" / f"s{seed}", learner, lr, seed)
    write_run(root / "extra" / "deep" / "diverged", "cd", 0.1, 3, status="diverged", epochs=[0, 5, 10, 15])
    (root / "not_a_run").mkdir()
    (root / "not_a_run" / "notes.txt").write_text("ignored")
    return root


PAPER = {"learner.name=pcd, learner.lr=0.1": -11.1, "cd": "≈ -13 (fig. 2)"}


@pytest.fixture(scope="module")
def report(sweep: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The default report of the sweep, with every option that adds columns."""
    return make_report(
        sweep,
        tmp_path_factory.mktemp("out"),
        paper=PAPER,
        title="Bars and stripes",
        markers={"kind": "fraction_of_max", "fraction": 0.9},
        hlines=[{"y": -10.0, "label": "bound"}],
    )


def expected_curve(learner: str, lr: float, epoch: int) -> list[float]:
    """The fake LL values of every run of a group at one epoch (NaN rows dropped)."""
    if learner == "cd" and epoch % 10:
        return []
    values = [fake_ll(learner, lr, s, epoch) for s in SEEDS]
    if learner == "cd" and lr == 0.1 and epoch <= 15:
        values.append(fake_ll("cd", 0.1, 3, epoch))
    return values


def test_load_runs_shape_and_keys(sweep: Path) -> None:
    runs, curves = load_runs(sweep)
    assert len(runs) == 13
    for key in (
        "run_dir",
        "status",
        "seed",
        "scale",
        "learner.name",
        "learner.lr",
        "learner.k",
        "dataset.name",
        "dataset.size",
        "model.n_hidden",
        "train.epochs",
        "evaluator.splits",
        "final.test_log_likelihood",
        "final.test_pseudo_log_likelihood",
    ):
        assert key in runs.columns, key
    assert (runs["status"] == "diverged").sum() == 1
    assert set(runs["run_dir"]) >= {"cd/lr0.1/s0", "extra/deep/diverged"}
    assert len(curves) == 12 * len(EPOCHS) + 4
    assert {"run_dir", "epoch", "test_log_likelihood", "learner.name", "learner.lr", "seed"} <= set(
        curves.columns
    )
    one = curves[curves["run_dir"] == "pcd/lr0.01/s2"]
    assert set(one["learner.name"]) == {"pcd"} and set(one["learner.lr"]) == {0.01}


def test_varying_keys(sweep: Path) -> None:
    runs, _ = load_runs(sweep)
    # seed is ignored; train.progress (a mechanics key) differs but is not a setting.
    assert sorted(varying_keys(runs)) == ["learner.lr", "learner.name"]
    assert "seed" in varying_keys(runs, ignore=())


def test_curves_csv_mean_std(report: dict) -> None:
    curves = pd.read_csv(report["curves"])
    assert list(curves.columns) == ["learner.lr", "learner.name", "epoch", "mean", "std", "n", "partial"]
    checked = 0
    for learner in LEARNERS:
        for lr in LRS:
            part = curves[(curves["learner.name"] == learner) & np.isclose(curves["learner.lr"], lr)]
            for e in EPOCHS:
                values = expected_curve(learner, lr, e)
                row = part[part["epoch"] == e]
                if not values:
                    assert row.empty
                    continue
                assert row["n"].item() == len(values)
                # the diverged cd/0.1 run (epochs 0-15) is the only run that did not complete
                assert row["partial"].item() == (learner == "cd" and lr == 0.1 and e <= 15)
                # std is the sample standard deviation (ddof=1), as pandas computes it.
                assert row["mean"].item() == pytest.approx(np.mean(values), rel=1e-12)
                assert row["std"].item() == pytest.approx(np.std(values, ddof=1), rel=1e-9)
                checked += 1
    assert checked == 2 * len(EPOCHS) + 2 * 6


def test_markdown_table_and_paper(report: dict) -> None:
    result = report
    text = Path(result["table"]).read_text()
    lines = text.splitlines()
    # the first line says at what scale (a smoke fixture: that it is a pipeline check), then the title
    assert lines[0] == (
        "_SMOKE TIER: a pipeline check, not comparable with the paper (smoke tier · "
        "bars_stripes · 15–50 epochs of 50 asked · seeds 0–3 · 13 runs · commit unknown)_"
    )
    assert lines[2] == "# Bars and stripes"
    assert "Scale: smoke" in text and "13 runs (12 completed, 1 diverged)" in text
    header = next(line for line in lines if line.startswith("| "))
    assert "paper" in header and "epoch to 90% of max" in header
    rows = [line for line in lines if line.startswith("| ") and line is not header]
    assert len(rows) == 4
    summary = result["summary"]
    assert len(summary) == 4
    for learner in LEARNERS:
        for lr in LRS:
            assert any(f"| {lr} |" in r and f"| {learner} |" in r for r in rows), (learner, lr)
    pcd01 = summary[(summary["learner.name"] == "pcd") & (summary["learner.lr"] == "0.1")].iloc[0]
    assert pcd01["paper"] == -11.1 and "| -11.1 |" in text
    # ours − paper beside the paper's number: the difference of the means, signed; none for a text
    assert "| paper | ours − paper |" in header
    pcd01_row = next(r for r in rows if "| pcd |" in r and "| 0.1 |" in r)
    difference = pcd01["final_mean"] - (-11.1)
    assert f"| -11.1 | {'+' if difference >= 0 else '-'}{abs(difference):.4f} |" in pcd01_row
    assert all("| ≈ -13 (fig. 2) | — |" in r for r in rows if "| cd |" in r)
    assert set(summary.loc[summary["learner.name"] == "cd", "paper"]) == {"≈ -13 (fig. 2)"}
    assert summary.loc[summary["learner.name"] == "pcd", "paper"].isna().sum() == 1
    cd01 = summary[(summary["learner.name"] == "cd") & (summary["learner.lr"] == "0.1")].iloc[0]
    assert cd01["n"] == 4 and cd01["diverged"] == 1
    # Final: summary.json of the completed runs only; the diverged run is left out (n=3 of 4).
    finals = [fake_ll("cd", 0.1, s, 50) + 0.5 for s in SEEDS]
    assert cd01["final_mean"] == pytest.approx(np.mean(finals)) and cd01["final_n"] == 3
    assert cd01["final_std"] == pytest.approx(np.std(finals, ddof=1))
    assert f"{np.mean(finals):.4f} ± {np.std(finals, ddof=1):.4f} (n=3)" in text
    assert "\nFinal values: 12 of 13 runs; 1 left out: 1 diverged.\n" in text
    assert cd01["best"] == pytest.approx(np.mean(expected_curve("cd", 0.1, 50)))
    assert cd01["epoch_at_best"] == 50
    runs_csv = pd.read_csv(result["runs"])
    assert len(runs_csv) == 13
    assert {"learner.name", "learner.lr", "seed", "status", "final.test_log_likelihood"} <= set(
        runs_csv.columns
    )
    # the value each run contributed: none for the diverged run, whose status says why
    assert list(runs_csv["final.test_log_likelihood"].notna()) == list(runs_csv["status"] == "completed")
    assert Path(result["plot"]).read_bytes()[:4] == b"\x89PNG"


def test_png_written(sweep: Path, tmp_path: Path) -> None:
    result = make_report(
        sweep,
        tmp_path / "out",
        metric="test_pseudo_log_likelihood",
        filename_stem="pll",
        hlines=[{"y": -12.0, "label": "ref"}],
        markers={"kind": "fraction_of_max", "fraction": 0.5},
        logx=False,
    )
    png = Path(result["plot"])
    assert png.name == "pll.png" and png.read_bytes()[:4] == b"\x89PNG"
    assert {Path(result[k]).name for k in ("table", "curves", "runs")} == {
        "pll.md",
        "pll_curves.csv",
        "pll_runs.csv",
    }


def test_epoch_to_fraction_of_max() -> None:
    x = [0, 10, 20, 30, 40]
    y = [0.0, 5.0, 8.0, 9.5, 10.0]
    assert epoch_to_fraction_of_max(x, y, 0.9) == 30  # target 9.0
    assert epoch_to_fraction_of_max(x, y, 0.5) == 10  # target 5.0, reached exactly
    assert epoch_to_fraction_of_max(x, y, 1.0) == 40
    assert epoch_to_fraction_of_max([0, 1, 2], [-5.0, float("nan"), -1.0], 0.5) == 2
    assert epoch_to_fraction_of_max([], [], 0.9) is None
    assert epoch_to_fraction_of_max([0, 1], [1.0, 2.0], 1.5) is None  # beyond the max


def test_single_run_and_default_layout(tmp_path: Path) -> None:
    root = tmp_path / "one"
    write_run(root / "r", "cd", 0.1, 0)
    result = make_report(root, tmp_path / "out")
    summary = result["summary"]
    assert len(summary) == 1 and summary["n"].item() == 1 and math.isnan(summary["final_std"].item())
    text = Path(result["table"]).read_text()
    assert " ± —" in text and "1 run (1 completed)" in text
    assert "\nFinal values: 1 run, none left out.\n" in text
    assert Path(result["plot"]).read_bytes()[:4] == b"\x89PNG"


def test_learner_specific_keys_do_not_make_panels(tmp_path: Path) -> None:
    root = tmp_path / "sw"
    for seed in SEEDS:
        write_run(root / f"cd{seed}", "cd", 0.1, seed)
        write_run(root / f"pcd{seed}", "pcd", 0.1, seed, extra_learner={"n_chains": 100})
    runs, _ = load_runs(root)
    assert sorted(varying_keys(runs)) == ["learner.n_chains", "learner.name"]
    summary = make_report(root, tmp_path / "out")["summary"]
    assert list(summary["line"]) == ["cd", "pcd"] and set(summary["panel"]) == {""}


def test_explicit_lines_and_panels(sweep: Path, tmp_path: Path) -> None:
    summary = make_report(sweep, tmp_path / "out", lines="learner.lr", panels=["learner.name"])["summary"]
    assert list(summary["panel"]) == ["learner = cd"] * 2 + ["learner = pcd"] * 2
    assert list(summary["panel_key"]) == ["learner.name=cd"] * 2 + ["learner.name=pcd"] * 2
    assert list(summary["line"]) == ["0.01", "0.1"] * 2


def test_report_main_default_out(sweep: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = report_main(str(sweep))
    printed = capsys.readouterr().out.splitlines()
    assert printed == [str(result[k]) for k in ("table", "plot", "curves", "runs")]
    assert Path(result["table"]).parent == sweep / "report"
    # The report directory does not count as a run on the next pass.
    assert len(load_runs(sweep)[0]) == 13


def one_line_error(excinfo: pytest.ExceptionInfo[RbmlabError]) -> str:
    message = str(excinfo.value)
    assert "\n" not in message and message.startswith("report: ")
    return message


def test_errors(sweep: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(RbmlabError) as excinfo:
        load_runs(empty)
    assert one_line_error(excinfo) == f"report: no runs (summary.json) under {empty}"
    with pytest.raises(RbmlabError) as excinfo:
        make_report(empty, tmp_path / "out")
    one_line_error(excinfo)
    with pytest.raises(RbmlabError) as excinfo:
        make_report(sweep, tmp_path / "out", metric="test_nope")
    message = one_line_error(excinfo)
    assert "test_nope" in message and "available: " in message
    assert "test_log_likelihood" in message and "test_pseudo_log_likelihood" in message
    with pytest.raises(RbmlabError) as excinfo:
        make_report(sweep, tmp_path / "out", lines="learner.nope")
    assert "learner.nope" in one_line_error(excinfo)
    with pytest.raises(RbmlabError) as excinfo:
        make_report(sweep, tmp_path / "out", x="steps")
    message = str(excinfo.value)
    assert "\n" not in message and message.startswith("report.x: unknown key 'steps'; ")
    assert "epoch, updates" in message and "learner.lr" in message
    with pytest.raises(RbmlabError) as excinfo:
        make_report(sweep, tmp_path / "out", markers={"kind": "fraction_of_max", "fraction": 2})
    one_line_error(excinfo)


HIDDEN = (2, 4, 8)


@pytest.fixture(scope="module")
def hidden_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """cd and pcd × n_hidden 2, 4, 8 × 3 seeds with a reconstruction error, plus a pcd/8 run that
    diverged at epoch 10 (left out of the final values)."""
    root = tmp_path_factory.mktemp("hidden") / "sweep"
    for learner in LEARNERS:
        for h in HIDDEN:
            for seed in SEEDS:
                write_run(root / f"{learner}_h{h}_s{seed}", learner, 0.1, seed, n_hidden=h, recon=True)
    write_run(
        root / "pcd_h8_diverged", "pcd", 0.1, 3, n_hidden=8, recon=True, status="diverged", epochs=[0, 5, 10]
    )
    return root


def expected_recon_finals(h: int) -> list[float]:
    """The final values of a group at n_hidden ``h``: its completed runs' (the 3 seeds)."""
    return [fake_recon(h, s, 50) for s in SEEDS]


def test_config_key_on_the_x_axis(hidden_sweep: Path, tmp_path: Path) -> None:
    result = make_report(
        hidden_sweep,
        tmp_path / "out",
        metric="test_reconstruction_error",
        x="model.n_hidden",
        lines=["learner.name", "model.n_hidden"],
        logx=True,
        markers={"kind": "fraction_of_max", "fraction": 0.9},
    )
    # One point per completed run, its final value, at its n_hidden; lines by learner, sorted by
    # n_hidden.
    curves = pd.read_csv(result["curves"])
    assert list(curves.columns) == ["learner.name", "model.n_hidden", "mean", "std", "n", "runs"]
    for learner in LEARNERS:
        part = curves[curves["learner.name"] == learner]
        assert list(part["model.n_hidden"]) == list(HIDDEN)
        for h, row in zip(HIDDEN, part.to_dict("records")):
            finals = expected_recon_finals(h)
            assert row["n"] == len(finals)
            assert row["mean"] == pytest.approx(np.mean(finals), rel=1e-12)
            assert row["std"] == pytest.approx(np.std(finals, ddof=1), rel=1e-9)
    summary = result["summary"]
    assert list(summary["line"]) == ["cd", "pcd"] and "model.n_hidden" not in summary.columns
    assert list(summary["n"]) == [9, 10] and list(summary["diverged"]) == [0, 1]
    # lower is better: both are best with the most units (pcd's diverged run is left out)
    assert list(summary["model.n_hidden_at_best"]) == [8, 8]
    assert summary["best"][0] == pytest.approx(np.mean(expected_recon_finals(8)))
    text = Path(result["table"]).read_text()
    header = next(line for line in text.splitlines() if line.startswith("| "))
    assert header == (
        "| learner | n | diverged | hidden units = 2 | hidden units = 4 | "
        "hidden units = 8 | best (min) over hidden units | hidden units at best | "
        "hidden units to 90% of min |"
    )
    finals = expected_recon_finals(8)
    assert f"| {np.mean(finals):.4f} ± {np.std(finals, ddof=1):.4f} (n=3) |" in text  # 3 of 4 runs
    assert (
        "Each completed run contributes its final test reconstruction error (squared error) "
        "(summary.json final value, else the run's last evaluated row) at its value of hidden units"
    ) in text
    assert "The CSV files name it `test_reconstruction_error`." in text
    assert "\nFinal values: 18 of 19 runs; 1 left out: 1 diverged.\n" in text
    assert Path(result["plot"]).read_bytes()[:4] == b"\x89PNG"


def test_config_key_x_default_lines_and_text_values(hidden_sweep: Path, tmp_path: Path) -> None:
    # Without lines, the x key is no line or panel: the lines are the learners.
    summary = make_report(hidden_sweep, tmp_path / "a", x="model.n_hidden")["summary"]
    assert list(summary["line"]) == ["cd", "pcd"] and set(summary["panel"]) == {""}
    # A key with text values: one column per value, lines by the other varying key.
    result = make_report(hidden_sweep, tmp_path / "b", x="learner.name")
    assert list(result["summary"]["line"]) == ["2", "4", "8"]
    assert "| learner = cd | learner = pcd |" in Path(result["table"]).read_text()
    assert list(pd.read_csv(result["curves"]).columns) == [
        "model.n_hidden",
        "learner.name",
        "mean",
        "std",
        "n",
        "runs",
    ]
    with pytest.raises(RbmlabError) as excinfo:
        make_report(hidden_sweep, tmp_path / "c", x="learner.name", logx=True)
    assert str(excinfo.value).startswith("report.x: learner.name takes values that are not numbers")
    # A learner-specific key is fixed by the learner on the x axis: it makes no lines.
    for seed in SEEDS:
        write_run(tmp_path / "runs" / f"cd{seed}", "cd", 0.1, seed)
        write_run(tmp_path / "runs" / f"pcd{seed}", "pcd", 0.1, seed, extra_learner={"n_chains": 100})
    summary = make_report(tmp_path / "runs", tmp_path / "d", x="learner.name")["summary"]
    assert list(summary["line"]) == ["all runs"] and list(summary["n"]) == [6]


def test_metric_direction_comes_from_the_declared_metrics(
    hidden_sweep: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rbmlab.evaluators.metrics import MetricSpec

    result = make_report(
        hidden_sweep,
        tmp_path / "a",
        metric="test_reconstruction_error",
        lines="learner.name",
        panels="model.n_hidden",
        markers={"kind": "fraction_of_max", "fraction": 0.9},
    )
    text = Path(result["table"]).read_text()
    assert "| best (min) of mean curve | epoch at best | epoch to 90% of min |" in text
    summary = result["summary"]
    cd2 = summary[(summary["learner.name"] == "cd") & (summary["model.n_hidden"] == "2")].iloc[0]
    assert cd2["best"] == pytest.approx(np.mean([fake_recon(2, s, 50) for s in SEEDS]))
    assert cd2["epoch_at_best"] == 50
    # 90% of the way down from epoch 0 (error 1.05 + ...) to the minimum: first at epoch 10.
    assert cd2["epoch_to_fraction"] == 10
    # The direction is the evaluators' declaration, not a guess from the column's name.
    monkeypatch.setattr(
        "rbmlab.evaluators.declared_metrics",
        lambda: (MetricSpec("reconstruction_error", "squared error", True),),
    )
    flipped = make_report(
        hidden_sweep,
        tmp_path / "b",
        metric="test_reconstruction_error",
        lines="learner.name",
        panels="model.n_hidden",
    )
    assert "| best (max) of mean curve |" in Path(flipped["table"]).read_text()
    assert list(flipped["summary"]["epoch_at_best"]) == [0] * 6


def test_the_runs_recorded_declarations_rank_the_report_read_with_their_summaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Runs that recorded their metric declarations (summary.json) are ranked by those, not by
    the evaluators' (here a recorded reconstruction error with higher better), and each run's
    summary.json is read once for the whole report."""
    import rbmlab.report.load as load
    from rbmlab.evaluators.metrics import RECORD_KEY, MetricSpec, declarations_record

    for seed in SEEDS:
        path = tmp_path / "runs" / f"cd{seed}"
        write_run(path, "cd", 0.1, seed, recon=True)
        summary = json.loads((path / "summary.json").read_text())
        summary[RECORD_KEY] = declarations_record([MetricSpec("reconstruction_error", "squared error", True)])
        (path / "summary.json").write_text(json.dumps(summary))
    reads: list[Path] = []
    real = load.read_summary
    monkeypatch.setattr(load, "read_summary", lambda p: reads.append(p) or real(p))
    result = make_report(tmp_path / "runs", tmp_path / "out", metric="test_reconstruction_error")
    assert "| best (max) of mean curve |" in Path(result["table"]).read_text()
    assert sorted(reads) == sorted(tmp_path / "runs" / f"cd{s}" / "summary.json" for s in SEEDS)


def test_a_resumed_run_names_every_commit_that_trained_it():
    from rbmlab.storage.provenance import merge_sources

    assert merge_sources(None, "a1b2c3d") == "a1b2c3d"
    assert merge_sources("a1b2c3d", "a1b2c3d") == "a1b2c3d"
    assert merge_sources("a1b2c3d", "e4f5a6b+dirty") == "a1b2c3d,e4f5a6b+dirty"
    assert merge_sources("a1b2c3d", None) == "a1b2c3d"
    assert merge_sources(None, None) is None


# ---------------------------------------------------------------- runs that did not complete
@pytest.fixture(scope="module")
def unfinished(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """cd: 3 completed seeds, a run killed at epoch 40 of 50 (its file still says 'running', no
    process holds its lock: interrupted), one diverged at epoch 10 and one failed at epoch 5;
    pcd: 3 completed seeds; cg: 2 runs still running (their locks held here)."""
    root = tmp_path_factory.mktemp("unfinished") / "sweep"
    for seed in SEEDS:
        write_run(root / f"cd{seed}", "cd", 0.1, seed)
        write_run(root / f"pcd{seed}", "pcd", 0.1, seed)
    write_run(root / "cd_killed", "cd", 0.1, 3, status="running", epochs=EPOCHS[:9])
    write_run(root / "cd_diverged", "cd", 0.1, 4, status="diverged", epochs=[0, 5, 10])
    write_run(root / "cd_failed", "cd", 0.1, 5, status="failed", epochs=[0, 5])
    for seed in (0, 1):
        write_run(root / f"cg{seed}", "cg", 0.1, seed, status="running", epochs=EPOCHS[:5])
    with DirectoryLock.for_run(root / "cg0"), DirectoryLock.for_run(root / "cg1"):
        yield root


def table_rows(text: str) -> list[dict[str, str]]:
    """The rows of the markdown table in ``text``, as {column header: cell}."""
    cells = [
        [c.strip() for c in ln.strip().strip("|").split("|")]
        for ln in text.splitlines()
        if ln.startswith("|")
    ]
    return [dict(zip(cells[0], row)) for row in cells[2:]]


UNFINISHED_NOTE = (
    "\nFinal values: 6 of 11 runs; 5 left out: 2 running, 1 diverged, 1 failed, 1 interrupted.\n"
)


def test_final_values_come_only_from_completed_runs(unfinished: Path, tmp_path: Path) -> None:
    result = make_report(unfinished, tmp_path / "out")
    summary = result["summary"].set_index("line")
    cd = [fake_ll("cd", 0.1, s, 50) + 0.5 for s in SEEDS]  # not the killed run's epoch-40 row
    assert list(summary["n"]) == [6, 2, 3] and list(summary["final_n"]) == [3, 0, 3]
    assert summary.loc["cd", "final_mean"] == pytest.approx(np.mean(cd))
    assert math.isnan(summary.loc["cg", "final_mean"])
    text = Path(result["table"]).read_text()
    assert UNFINISHED_NOTE in text
    cells = {row["learner"]: row["final test log-likelihood (nats): mean ± std"] for row in table_rows(text)}
    assert cells["cd"] == f"{np.mean(cd):.4f} ± {np.std(cd, ddof=1):.4f} (n=3)"
    assert cells["cg"] == "—" and not cells["pcd"].endswith(")")
    runs_csv = pd.read_csv(result["runs"]).set_index("run_dir")
    assert runs_csv.loc["cd_killed", "status"] == "interrupted"
    assert list(runs_csv["final.test_log_likelihood"].notna()) == list(runs_csv["status"] == "completed")


def test_points_by_key_use_only_completed_runs(unfinished: Path, tmp_path: Path) -> None:
    result = make_report(unfinished, tmp_path / "out", x="learner.name")
    text = Path(result["table"]).read_text()
    (row,) = table_rows(text)
    cd = [fake_ll("cd", 0.1, s, 50) + 0.5 for s in SEEDS]
    assert row["learner = cd"] == f"{np.mean(cd):.4f} ± {np.std(cd, ddof=1):.4f} (n=3)"
    assert row["learner = cg"] == "—"  # both cg runs are still running
    assert UNFINISHED_NOTE in text
    curves = pd.read_csv(result["curves"]).set_index("learner.name")
    assert curves.loc["cg", "n"] == 0 and math.isnan(curves.loc["cg", "mean"])
    assert result["summary"]["learner.name_at_best"].item() == "pcd"


def test_curves_show_unfinished_runs_marked_partial(
    unfinished: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from matplotlib.figure import Figure

    figures: list[Figure] = []
    savefig = Figure.savefig

    def keep(fig: Figure, *args, **kwargs) -> None:
        figures.append(fig)
        savefig(fig, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", keep)
    result = make_report(unfinished, tmp_path / "out")
    curves = pd.read_csv(result["curves"]).set_index(["learner.name", "epoch"])
    # cd evaluates the likelihood every 10 epochs: all 6 runs at 0, the diverged one up to 10,
    # the killed one up to 40, the 3 completed ones to 50
    assert [tuple(r) for r in curves.loc["cd", ["n", "partial"]].to_numpy()] == [
        (6, 3),
        (5, 2),
        (4, 1),
        (4, 1),
        (4, 1),
        (3, 0),
    ]
    assert (curves.loc["cg", "partial"] == curves.loc["cg", "n"]).all()
    assert (curves.loc["pcd", "partial"] == 0).all()
    (ax,) = figures[0].axes
    # partial: labelled and faded; every line its own dash pattern
    styles = {line.get_label(): (line.get_linestyle(), line.get_alpha()) for line in ax.get_lines()}
    assert styles == {
        "cd (n=6) (partial)": ("-", 0.5),
        "cg (n=2) (partial)": ("--", 0.5),
        "pcd (n=3)": ("-.", 0.95),
    }


def test_a_diverged_trial_of_a_batched_run_is_left_out(tmp_path: Path) -> None:
    run = tmp_path / "runs" / "batched"
    write_run(run, "sdcp", 0.1, 0)
    ll = {0: -5.0, 2: -7.0}
    pd.DataFrame(
        [
            {"epoch": e, "trial": t, "test_log_likelihood": ll.get(t, -9.0) - 1 / (1 + e)}
            for e in (0, 5)
            for t in range(3)
        ]
    ).to_csv(run / "metrics.csv", index=False)
    (run / "summary.json").write_text(
        json.dumps(
            {
                "status": "completed",
                "final": {"test_log_likelihood": -6.0},
                "final_trials": [
                    {"trial": 0, "test_log_likelihood": ll[0]},
                    {"trial": 1, "status": "diverged", "diverged_epoch": 5},
                    {"trial": 2, "test_log_likelihood": ll[2]},
                ],
            }
        )
    )
    result = make_report(tmp_path / "runs", tmp_path / "out")
    assert result["summary"]["final_mean"].item() == pytest.approx(-6.0)
    text = Path(result["table"]).read_text()
    assert "\nFinal values: 2 of 3 replicates; 1 left out: 1 diverged.\n" in text


BAD_RUN_FILES = [
    ("metrics.csv", "epoch,test_log_likelihood\n0,café\n".encode("latin-1"), "not UTF-8 text"),
    ("metrics.csv", b'epoch,test_log_likelihood\n0,"-1.0\n5,-2.0\n', "EOF inside string"),
    ("metrics.csv", b"epoch,run_dir\n0,1\n", "column run_dir is reserved"),
    ("summary.json", '{"status": "complété"}'.encode("latin-1"), "not UTF-8 text"),
    ("summary.json", b"[" * 100_000, "nested too deeply"),
    ("config.yaml", "seed: 0\nnote: café\n".encode("latin-1"), "not UTF-8 text"),
    ("config.yaml", b"[" * 1_000, "nested too deeply"),
    ("overrides.yaml", "- note=café\n".encode("latin-1"), "not UTF-8 text"),
]


@pytest.mark.parametrize(
    ("name", "data", "reason"), BAD_RUN_FILES, ids=[f"{name}-{reason}" for name, _, reason in BAD_RUN_FILES]
)
def test_unreadable_run_files_are_one_line_errors(
    tmp_path: Path, name: str, data: bytes, reason: str
) -> None:
    write_run(tmp_path / "runs" / "r", "cd", 0.1, 0)
    (tmp_path / "runs" / "r" / name).write_bytes(data)
    with pytest.raises(RbmlabError) as excinfo:
        make_report(tmp_path / "runs", tmp_path / "out")
    message = one_line_error(excinfo)
    assert message.startswith(f"report: cannot read {tmp_path / 'runs' / 'r' / name}: ")
    assert reason in message
    assert not (tmp_path / "out").exists()


def test_output_that_cannot_be_written_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_run(tmp_path / "runs" / "r", "cd", 0.1, 0)
    blocker = tmp_path / "a_file"
    blocker.write_text("not a directory")
    with pytest.raises(RbmlabError) as excinfo:
        make_report(tmp_path / "runs", blocker)
    assert one_line_error(excinfo) == f"report: cannot write {blocker} (exists and is not a directory)"
    with pytest.raises(RbmlabError) as excinfo:
        make_report(tmp_path / "runs", blocker / "out")
    assert one_line_error(excinfo) == f"report: cannot write {blocker / 'out'} (Not a directory)"
    # A file that cannot be written (a read-only file system, injected) is named, and the report
    # already there stays whole: every file is the old one or the new one, no temporary left.
    out = tmp_path / "out"
    make_report(tmp_path / "runs", out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    for name in ("test_log_likelihood.md", "test_log_likelihood.png", "test_log_likelihood_runs.csv"):
        monkeypatch.setenv("RBMLAB_FAULT", f"erofs:{name}")
        with pytest.raises(RbmlabError) as excinfo:
            make_report(tmp_path / "runs", out)
        assert one_line_error(excinfo) == f"report: cannot write {out / name} (Read-only file system)"
        assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_best_comes_only_from_completed_runs(unfinished: Path, tmp_path: Path) -> None:
    result = make_report(unfinished, tmp_path / "out", markers={"kind": "fraction_of_max", "fraction": 0.9})
    summary = result["summary"].set_index("line")
    # cd: the mean curve of its 3 completed runs (cd evaluates every 10 epochs). With the killed
    # run (seed 3, higher) the mean at epoch 40 would be the best instead.
    epochs = [e for e in EPOCHS if e % 10 == 0]
    done = [np.mean([fake_ll("cd", 0.1, s, e) for s in SEEDS]) for e in epochs]
    assert summary.loc["cd", "best"] == pytest.approx(max(done))
    assert summary.loc["cd", "epoch_at_best"] == 50
    assert summary.loc["cd", "epoch_to_fraction"] == epoch_to_fraction_of_max(epochs, done, 0.9)
    # cg: both runs still running, so nothing to summarise
    for column in ("best", "epoch_at_best", "epoch_to_fraction"):
        assert math.isnan(summary.loc["cg", column]), column
    rows = {row["learner"]: row for row in table_rows(Path(result["table"]).read_text())}
    assert rows["cd"]["best (max) of mean curve"] == f"{max(done):.4f}"
    assert [rows["cg"][c] for c in ("best (max) of mean curve", "epoch at best", "epoch to 90% of max")] == [
        "—",
        "—",
        "—",
    ]
    # the curves CSV still shows cg's partial curve
    curves = pd.read_csv(result["curves"]).set_index(["learner.name", "epoch"])
    assert (curves.loc["cg", "partial"] == 2).all()


def test_a_group_whose_only_run_diverged_has_no_best(tmp_path: Path) -> None:
    root = tmp_path / "runs"
    for seed in SEEDS:
        write_run(root / f"cd{seed}", "cd", 0.1, seed)
    write_run(root / "pcd_diverged", "pcd", 0.1, 0, status="diverged", epochs=[0, 5, 10])
    # the untrained model's value (epoch 0) is the diverged run's highest
    pd.DataFrame({"epoch": [0, 5, 10], "test_log_likelihood": [-20.0, -35.0, np.inf]}).to_csv(
        root / "pcd_diverged" / "metrics.csv", index=False
    )
    result = make_report(root, tmp_path / "out")
    summary = result["summary"].set_index("line")
    assert math.isnan(summary.loc["pcd", "best"]) and math.isnan(summary.loc["pcd", "epoch_at_best"])
    assert summary.loc["cd", "best"] == pytest.approx(np.mean([fake_ll("cd", 0.1, s, 50) for s in SEEDS]))
    rows = {row["learner"]: row for row in table_rows(Path(result["table"]).read_text())}
    assert rows["pcd"]["best (max) of mean curve"] == "—" and rows["pcd"]["epoch at best"] == "—"
    assert rows["pcd"]["final test log-likelihood (nats): mean ± std"] == "—"
    curves = pd.read_csv(result["curves"])
    assert list(curves.loc[curves["learner.name"] == "pcd", "mean"]) == [-20.0, -35.0]


REPORT_FILES = (
    "test_log_likelihood.md",
    "test_log_likelihood.png",
    "test_log_likelihood_curves.csv",
    "test_log_likelihood_runs.csv",
)


@pytest.mark.parametrize("failing", REPORT_FILES)
def test_a_report_that_fails_part_way_leaves_the_old_one_whole(
    tmp_path: Path, failing: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, out = tmp_path / "runs", tmp_path / "out"
    write_run(root / "cd0", "cd", 0.1, 0)
    make_report(root, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(before) == sorted(REPORT_FILES)
    # a new run changes every file of the report: the old ones are stale, not equal by chance
    write_run(root / "pcd0", "pcd", 0.1, 0)
    monkeypatch.setenv("RBMLAB_FAULT", f"enospc:{failing}")
    with pytest.raises(RbmlabError) as excinfo:
        make_report(root, out)
    assert one_line_error(excinfo) == f"report: cannot write {out / failing} (No space left on device)"
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before  # no temporary left either
    monkeypatch.delenv("RBMLAB_FAULT")
    make_report(root, out)
    after = {p.name: p.read_bytes() for p in out.iterdir()}
    assert sorted(after) == sorted(REPORT_FILES)
    assert all(after[name] != before[name] for name in REPORT_FILES)


def test_a_first_report_that_fails_leaves_no_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_run(tmp_path / "runs" / "cd0", "cd", 0.1, 0)
    monkeypatch.setenv("RBMLAB_FAULT", "enospc:test_log_likelihood.png")
    with pytest.raises(RbmlabError):
        make_report(tmp_path / "runs", tmp_path / "out")
    assert list((tmp_path / "out").iterdir()) == []  # none of the four files, no temporary


def write_variant_run(
    path: Path,
    learner: str,
    n_hidden: int,
    seed: int,
    rows: list[dict],
    final: dict,
    extra_summary: dict | None = None,
) -> None:
    """A run of an experiment variant: metrics ``rows``, summary ``final`` (and more summary keys)."""
    path.mkdir(parents=True)
    config = {
        "seed": seed,
        "scale": "smoke",
        "learner": {"name": learner, "lr": 0.02},
        "model": {"n_hidden": n_hidden, "init": None},
        "evaluator": {"name": "ais"},
    }
    (path / "config.yaml").write_text(yaml.safe_dump(config))
    pd.DataFrame(rows).to_csv(path / "metrics.csv", index=False)
    (path / "summary.json").write_text(
        json.dumps(
            {
                "status": "completed",
                "epochs_done": 10,
                "final": final,
                "seed": seed,
                "scale": "smoke",
                "n_hidden": n_hidden,
                **(extra_summary or {}),
            }
        )
    )


@pytest.fixture(scope="module")
def variant_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An experiment's sweep with variants: fw/0 grew from 0 to 6 units (configured 500; its
    summary says 6, and that early stopping chose 4); cd_rand/<i> at 2 and 4 units × seeds 0-2,
    whose test and validation values disagree on the order of the seeds."""
    root = tmp_path_factory.mktemp("variants") / "sweep"
    fw_rows = [
        {
            "epoch": h,
            "updates": h,
            "wall_time": h,
            "n_hidden": h,
            "test_log_likelihood": -10.0 + h,
            "valid_log_likelihood": -11.0 + h,
        }
        for h in (0, 2, 4, 6)
    ]
    write_variant_run(
        root / "fw" / "0",
        "frank_wolfe",
        500,
        0,
        fw_rows,
        {"test_log_likelihood": -3.5, "valid_log_likelihood": -4.5},
        {"n_hidden": 6, "early_stopping": {"epoch": 4, "n_hidden": 4, "rule": "text"}},
    )
    for i, (h, seed) in enumerate((h, s) for h in (2, 4) for s in (0, 1, 2)):
        test, valid = -8.0 + h + seed, -9.0 + h - seed  # seed 0 is best on valid, 2 on test
        write_variant_run(
            root / "cd_rand" / str(i),
            "cd",
            h,
            seed,
            [{"epoch": 10, "updates": 10, "wall_time": 1}],
            {"test_log_likelihood": test, "valid_log_likelihood": valid},
        )
    return root


def test_variants_growing_runs_best_of_seeds_and_vertical_lines(variant_sweep: Path, tmp_path: Path) -> None:
    result = make_report(
        variant_sweep,
        tmp_path / "out",
        metric="test_log_likelihood",
        x="model.n_hidden",
        lines="variant",
        variants=["fw", "cd_rand", "cd_fw"],
        select="valid_log_likelihood",
        table_x=[2, 6],
        vlines=[
            {"summary": "early_stopping.n_hidden", "label": "early stopping"},
            {"x": 5, "label": "paper"},
        ],
    )
    curves = pd.read_csv(result["curves"])
    fw = curves[curves["variant"] == "fw"]
    # the grown run: every evaluated row at its size, the final value replacing the row at 6 units
    assert list(fw["model.n_hidden"]) == [0, 2, 4, 6]
    assert list(fw["mean"]) == [-10.0, -8.0, -6.0, -3.5]
    cd = curves[curves["variant"] == "cd_rand"]
    # the test value of the seed best on validation (seed 0), not the mean or the best on test
    assert list(cd["model.n_hidden"]) == [2, 4] and list(cd["mean"]) == [-6.0, -4.0]
    assert list(cd["n"]) == [1, 1]
    text = Path(result["table"]).read_text()
    rows = {r["method"]: r for r in table_rows(text)}
    assert [k for k in rows["fw"] if k.startswith("hidden units = ")] == [
        "hidden units = 2",
        "hidden units = 6",
    ]
    assert rows["cd_rand"]["hidden units = 2"] == "-6 [best of 3]"
    assert rows["fw"]["hidden units = 6"] == "-3.5000"
    assert "Vertical lines: early stopping at hidden units = 4 (fw/0); paper at hidden units = 5." in text
    runs = pd.read_csv(result["runs"])
    assert "variant" in runs.columns and runs.loc[runs["run_dir"] == "fw/0", "model.n_hidden"].item() == 6
    # without the variant names the path's first directory is no key
    plain = load_runs(variant_sweep)[0]
    assert "variant" not in plain.columns and "early_stopping.n_hidden" in plain.columns


def test_select_where_picks_the_best_seed_in_its_groups_only(variant_sweep: Path, tmp_path: Path) -> None:
    """select_where = {variant: [fw]}: cd_rand's seeds are averaged (mean ± std, n = 3) instead of
    reduced to the one best on validation; the note says which groups were selected."""
    result = make_report(
        variant_sweep,
        tmp_path / "out",
        metric="test_log_likelihood",
        x="model.n_hidden",
        lines="variant",
        variants=["fw", "cd_rand"],
        select="valid_log_likelihood",
        select_where={"variant": ["fw"]},
    )
    curves = pd.read_csv(result["curves"])
    cd = curves[curves["variant"] == "cd_rand"]
    assert list(cd["mean"]) == [-5.0, -3.0] and list(cd["std"]) == [1.0, 1.0] and list(cd["n"]) == [3, 3]
    assert list(curves[curves["variant"] == "fw"]["mean"]) == [-10.0, -8.0, -6.0, -3.5]
    text = Path(result["table"]).read_text()
    assert "— for the groups of method fw; the other groups: mean ± std (ddof=1) over their runs." in text
    assert "[best of" not in text
    with pytest.raises(RbmlabError, match="report.select_where: applies with select only"):
        make_report(
            variant_sweep,
            tmp_path / "out2",
            metric="test_log_likelihood",
            x="model.n_hidden",
            lines="variant",
            variants=["fw", "cd_rand"],
            select_where={"variant": "fw"},
        )


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            {"x": "epoch", "select": "valid_log_likelihood"},
            "select, vlines, table_x and ratios need a runs-table key",
        ),
        ({"x": "model.n_hidden", "vlines": [{"label": "no x"}]}, "vlines entries must be"),
        ({"x": "model.n_hidden", "select": "valid_error"}, "unknown metric 'valid_error'"),
    ],
)
def test_variant_report_errors(variant_sweep: Path, tmp_path: Path, kwargs: dict, message: str) -> None:
    with pytest.raises(RbmlabError, match=message):
        make_report(variant_sweep, tmp_path / "out", metric="test_log_likelihood", **kwargs)


@pytest.fixture(scope="module")
def cost_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Training seconds: fw/0 grew to 4 units in 1 s (2 units) then 3 s more (summary: 4 s in
    all); cd_rand at 2 and 4 units, seeds 0-1, 1 and 3 s / 2 and 4 s; cd_fw at 2 and 4, 0.5 s each."""
    root = tmp_path_factory.mktemp("cost") / "sweep"
    fw_rows = [
        {"epoch": h, "updates": h, "wall_time": t, "n_hidden": h, "test_log_likelihood": -10.0 + h}
        for h, t in ((0, 0.0), (2, 1.0), (4, 3.9))
    ]
    write_variant_run(
        root / "fw" / "0",
        "frank_wolfe",
        500,
        0,
        fw_rows,
        {"test_log_likelihood": -6.0},
        {"n_hidden": 4, "wall_time": 4.0, "early_stopping": {"n_hidden": 2}},
    )
    for i, (h, seed, t) in enumerate([(2, 0, 1.0), (2, 1, 3.0), (4, 0, 2.0), (4, 1, 4.0)]):
        write_variant_run(
            root / "cd_rand" / str(i),
            "cd",
            h,
            seed,
            [{"epoch": 10, "updates": 10, "wall_time": t}],
            {"test_log_likelihood": -5.0},
            {"wall_time": t},
        )
    for i, h in enumerate((2, 4)):
        write_variant_run(
            root / "cd_fw" / str(i),
            "cd",
            h,
            0,
            [{"epoch": 10, "updates": 10, "wall_time": 0.5}],
            {"test_log_likelihood": -4.0},
            {"wall_time": 0.5},
        )
    return root


def test_training_seconds_against_size_with_ratios_of_lines(cost_sweep: Path, tmp_path: Path) -> None:
    result = make_report(
        cost_sweep,
        tmp_path / "out",
        metric="wall_time",
        x="model.n_hidden",
        lines="variant",
        variants=["fw", "cd_rand", "cd_fw"],
        ratios=[
            {"label": "fw / cd", "of": ["fw"], "to": "cd_rand"},
            {"label": "both", "of": ["fw", "cd_fw"], "to": "cd_rand"},
        ],
    )
    curves = pd.read_csv(result["curves"])
    fw = curves[curves["variant"] == "fw"]
    # a grown run: its seconds to reach each size; at the size it ended at, summary.json's total
    assert list(fw["model.n_hidden"]) == [0, 2, 4] and list(fw["mean"]) == [0.0, 1.0, 4.0]
    assert list(curves[curves["variant"] == "cd_rand"]["mean"]) == [2.0, 3.0]  # mean over seeds
    text = Path(result["table"]).read_text()
    assert "| fw / cd | 0.50 | 1.33 |" in text and "| both | 0.75 | 1.50 |" in text
    assert "best (min)" in text  # fewer seconds are better (evaluators.metrics.RUN_METRICS)
    with pytest.raises(RbmlabError, match="'nope', which is no line; lines: cd_fw, cd_rand, fw"):
        make_report(
            cost_sweep,
            tmp_path / "out",
            metric="wall_time",
            x="model.n_hidden",
            lines="variant",
            variants=["fw", "cd_rand", "cd_fw"],
            ratios=[{"of": "nope", "to": "fw"}],
        )
    with pytest.raises(RbmlabError, match="ratios entries must be"):
        make_report(
            cost_sweep, tmp_path / "out", metric="wall_time", x="model.n_hidden", ratios=[{"of": "fw"}]
        )


def test_a_summary_record_over_several_experiments_filtered_by_where(
    cost_sweep: Path, variant_sweep: Path, tmp_path: Path
) -> None:
    roots = {"paper/figure-1a": cost_sweep, "paper/figure-1b": variant_sweep}
    result = make_report(
        roots,
        tmp_path / "out",
        metric="early_stopping.n_hidden",
        lines="experiment",
        variants=["fw", "cd_rand", "cd_fw"],
        where={"variant": "fw"},
        paper=[
            {"match": {"experiment": "paper/figure-1a"}, "value": 460},
            {"match": {"experiment": "paper/figure-1b"}, "value": 550},
        ],
    )
    rows = {r["experiment"]: r for r in table_rows(Path(result["table"]).read_text())}
    assert rows["paper/figure-1a"]["final hidden units selected by early stopping: mean ± std"] == "2 ± —"
    assert rows["paper/figure-1b"]["final hidden units selected by early stopping: mean ± std"] == "4 ± —"
    assert rows["paper/figure-1a"]["paper"] == "460" and rows["paper/figure-1b"]["n"] == "1"
    runs = pd.read_csv(result["runs"])
    assert sorted(runs["run_dir"]) == ["paper/figure-1a/fw/0", "paper/figure-1b/fw/0"]
    with pytest.raises(RbmlabError, match="report.where: no run has"):
        make_report(
            roots,
            tmp_path / "out",
            metric="early_stopping.n_hidden",
            variants=["fw"],
            where={"variant": "gibbs"},
        )
    with pytest.raises(RbmlabError, match="report.where: unknown key 'nope'"):
        make_report(roots, tmp_path / "out", where={"nope": 1})


def test_a_derived_x_axis_maps_each_variants_own_key(cost_sweep: Path, tmp_path: Path) -> None:
    """report.derive: a column made per group of runs from another key, mapped where asked (pmp
    Figure 2's persistent panels put PMP's chains at the MCMC budget they are matched to)."""
    rules = [
        {"where": {"variant": "fw"}, "key": "model.n_hidden"},
        {"where": {"variant": "cd_rand"}, "key": "model.n_hidden"},
        {"where": {"variant": "cd_fw"}, "key": "model.n_hidden", "values": {2: 3, 4: 5}},
    ]
    result = make_report(
        cost_sweep,
        tmp_path / "out",
        metric="wall_time",
        x="size",
        lines="variant",
        variants=["fw", "cd_rand", "cd_fw"],
        derive={"size": rules},
    )
    curves = pd.read_csv(result["curves"])
    assert list(curves[curves["variant"] == "cd_fw"]["size"]) == [3, 5]
    assert list(curves[curves["variant"] == "cd_rand"]["size"]) == [2, 4]
    with pytest.raises(RbmlabError, match=r"report.derive.size: model.n_hidden = 4 has no entry in values"):
        make_report(
            cost_sweep,
            tmp_path / "out",
            metric="wall_time",
            x="size",
            variants=["fw", "cd_rand", "cd_fw"],
            derive={"size": [*rules[:2], {**rules[2], "values": {2: 3}}]},
        )
    with pytest.raises(RbmlabError, match=r"report.derive.size: no rule matches run cd_fw/"):
        make_report(
            cost_sweep,
            tmp_path / "out",
            metric="wall_time",
            x="size",
            variants=["fw", "cd_rand", "cd_fw"],
            derive={"size": rules[:2]},
        )
    with pytest.raises(RbmlabError, match=r"report.derive.size: unknown key 'nope'"):
        make_report(
            cost_sweep,
            tmp_path / "out",
            metric="wall_time",
            x="size",
            variants=["fw", "cd_rand", "cd_fw"],
            derive={"size": [{"where": {}, "key": "nope"}]},
        )


def test_a_selected_epoch_record_comes_with_the_curves_behind_it(tmp_path: Path) -> None:
    """A table of early_stopping.test_err (each run's test error at its best validation epoch):
    the curves CSV holds the per-epoch test_err, the runs CSV the selected epoch, and the note
    counts the runs that selected their last epoch."""
    root = tmp_path / "sweep"
    for seed, best in ((0, 2), (1, 3), (2, 3)):  # seeds 1 and 2 improve until their last epoch
        rows = [
            {
                "epoch": e,
                "updates": e,
                "wall_time": e,
                "valid_err": 5.0 - e + (e > best) * 2.0 * (e - best),
                "test_err": 6.0 - e + seed,
            }
            for e in range(4)
        ]
        write_variant_run(
            root / "mle" / str(seed),
            "mle",
            4,
            seed,
            rows,
            {"test_err": 9.0},
            {"epochs_done": 3, "early_stopping": {"epoch": best, "test_err": 6.0 - best + seed}},
        )
    result = make_report(
        root, tmp_path / "out", metric="early_stopping.test_err", lines="variant", variants=["mle"]
    )
    curves = pd.read_csv(result["curves"])
    assert list(curves["epoch"]) == [0, 1, 2, 3] and list(curves["mean"]) == [7.0, 6.0, 5.0, 4.0]
    assert list(curves["n"]) == [3, 3, 3, 3] and curves["std"].iloc[0] == pytest.approx(1.0)
    runs = pd.read_csv(result["runs"]).sort_values("seed")
    assert list(runs["early_stopping.epoch"]) == [2, 3, 3]
    assert list(runs["final.early_stopping.test_err"]) == [4.0, 4.0, 5.0]
    text = Path(result["table"]).read_text()
    assert "per-epoch test err (" in text
    assert (
        "Selected at the last epoch run (still improving when training ended): 2 of 3 completed runs." in text
    )
    assert table_rows(text)[0]["final test err at the early-stopping epoch: mean ± std"].startswith(
        "4.3333 ± 0.577"
    )


def test_a_report_spec_is_the_experiment_files_report_section_and_options_replace_its_fields(tmp_path):
    """One object carries what to report: ReportSpec.parse takes an experiment's report: mapping
    (unknown keys one line), make_report takes it whole, and keyword options replace its fields."""
    from rbmlab.report.spec import ReportSpec

    spec = ReportSpec.parse({"metric": "test_log_likelihood", "lines": "learner.name", "logx": 1}, "here")
    assert spec.metric == "test_log_likelihood" and spec.lines == "learner.name" and spec.logx is True
    assert ReportSpec.parse(None, "here") == ReportSpec()
    with pytest.raises(RbmlabError, match=r"^here: unknown report key\(s\) colour; known: "):
        ReportSpec.parse({"colour": "red"}, "here")
    with pytest.raises(RbmlabError, match=r"^here: report must be a mapping"):
        ReportSpec.parse(["metric"], "here")
    with pytest.raises(RbmlabError, match=r"^report: unknown option\(s\) colour; known: metric, x, "):
        make_report(tmp_path, tmp_path / "out", spec, colour="red")
