"""A report rendered again from its own committed tidy files (rbmlab.report.tidy) says what the
report from the run directories said: the same table, from the runs CSV and the curves CSV."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from rbmlab.errors import RbmlabError
from rbmlab.report import make_report
from rbmlab.report.header import report_header
from rbmlab.report.tidy import Committed, load_tidy
from tests.test_report import write_run


def table_rows(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("|")]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> tuple[Path, dict]:
    """cd and pcd × lr 0.1, 0.5 × 2 seeds (all completed), reported from the run directories."""
    root = tmp_path_factory.mktemp("tidy")
    for learner in ("cd", "pcd"):
        for lr in (0.1, 0.5):
            for seed in (0, 1):
                write_run(root / "sweep" / f"{learner}-{lr}-{seed}", learner, lr, seed)
    paper = {"learner.name=pcd, learner.lr=0.1": -11.1}
    first = make_report(
        root / "sweep",
        root / "out",
        paper=paper,
        title="t",
        filename_stem="fig_reduced",
        markers={"kind": "fraction_of_max", "fraction": 0.9},
    )
    return root, first


def test_the_table_rendered_from_the_tidy_files_is_the_table_from_the_runs(rendered):
    root, first = rendered
    table = first["table"].read_text()
    runs_csv, curves_csv = first["runs"].read_bytes(), first["curves"].read_bytes()
    first["table"].unlink()
    again = make_report(
        Committed(root / "out" / "fig_reduced"),
        root / "out",
        paper={"learner.name=pcd, learner.lr=0.1": -11.1},
        title="t",
        filename_stem="fig_reduced",
        markers={"kind": "fraction_of_max", "fraction": 0.9},
    )
    text = again["table"].read_text()
    assert table_rows(text) == table_rows(table) and len(table_rows(text)) == 6
    assert text.splitlines()[0] == table.splitlines()[0]  # the same header line
    assert "Re-rendered from the committed fig_reduced_runs.csv" in text
    # the data it was rendered from stay as they were
    assert first["runs"].read_bytes() == runs_csv and first["curves"].read_bytes() == curves_csv
    assert again["plot"].read_bytes()[:4] == b"\x89PNG"


def test_a_run_record_and_the_constants_come_back_under_their_names(tmp_path):
    stem = tmp_path / "t_reduced"
    pd.DataFrame(
        {
            "run_dir": ["a", "b"],
            "status": ["completed"] * 2,
            "variant": ["x", "y"],
            "final.early_stopping.test_pixel_error": [1.0, 2.0],
            "final.test_pixel_error": [1.0, 2.0],
        }
    ).to_csv(f"{stem}_runs.csv", index=False)
    runs, curves = load_tidy(stem, {"scale": "reduced", "variant": "ignored: the file has it"})
    assert list(runs["early_stopping.test_pixel_error"]) == [1.0, 2.0]
    assert list(runs["final.test_pixel_error"]) == [1.0, 2.0]
    assert list(runs["scale"]) == ["reduced"] * 2 and list(runs["variant"]) == ["x", "y"]
    assert curves.empty


def test_a_commit_that_reads_as_a_number_stays_the_commit(tmp_path):
    """3e64572 is a float to pandas (inf): the header once said "commit inf"."""
    stem = tmp_path / "t_reduced"
    (tmp_path / "t_reduced_runs.csv").write_text(
        "run_dir,status,seed,source,final.test_log_likelihood\n0,completed,0,3e64572,-1.0\n1,completed,1,1234567,-2.0\n"
    )
    runs, _ = load_tidy(stem)
    assert list(runs["source"]) == ["3e64572", "1234567"]
    assert list(runs["run_dir"]) == ["0", "1"]
    assert report_header(runs).endswith("commits 3e64572, 1234567")


def test_a_file_that_is_not_a_runs_table_is_one_line(tmp_path):
    (tmp_path / "t_runs.csv").write_text("a,b\n1,2\n")
    with pytest.raises(RbmlabError, match="not a report's runs table"):
        load_tidy(tmp_path / "t")


def test_report_only_without_runs_renders_the_committed_files_again(tmp_path, monkeypatch):
    import shutil

    from rbmlab.experiment import run_experiment

    repo = Path(__file__).resolve().parents[1]
    shutil.copytree(repo / "results" / "demo", tmp_path / "results" / "demo")
    committed = (tmp_path / "results" / "demo" / "bars-cd-vs-pcd_reduced.md").read_text()
    monkeypatch.chdir(tmp_path)
    result = run_experiment(
        "demo/bars-cd-vs-pcd", ["report_only=true"], tmp_path / "results", tmp_path / "outputs"
    )
    text = result["table"].read_text()
    assert [r for r in table_rows(text)] == [r for r in table_rows(committed)]
    assert text.startswith("_reduced tier · bars_stripes")
    assert not (tmp_path / "outputs").exists()  # nothing ran


def test_rerender_lists_the_committed_reports_and_refuses_a_stray_file(tmp_path):
    from rbmlab.experiment.rerender import committed_reports

    (tmp_path / "pmp").mkdir()
    for name in ("figure-7_reduced_runs.csv", "figure-2-er-persistent-mmd_paper-gwg_runs.csv"):
        (tmp_path / "pmp" / name).write_text("run_dir,status\n")
    found = committed_reports(tmp_path)
    assert [(r.name, r.tier, r.stem.name) for r in found] == [
        ("pmp/figure-2-er-persistent-mmd", "paper", "figure-2-er-persistent-mmd_paper-gwg"),
        ("pmp/figure-7", "reduced", "figure-7_reduced"),
    ]
    (tmp_path / "pmp" / "notes_runs.csv").write_text("run_dir,status\n")
    with pytest.raises(RbmlabError, match="notes_runs.csv is no experiment's report"):
        committed_reports(tmp_path, "pmp")


@pytest.mark.slow
def test_every_committed_report_is_what_the_current_code_draws(tmp_path):
    """A change of presentation reaches the committed results: `make results-rerender` has been
    run since (the tables compared; the figures are drawn by the same code from the same data)."""
    import shutil

    from rbmlab.experiment.rerender import committed_reports, rerender

    repo = Path(__file__).resolve().parents[1]
    shutil.copytree(repo / "results", tmp_path / "results")
    rerender(tmp_path / "results")
    stale = [
        str(r.stem.relative_to(tmp_path))
        for r in committed_reports(tmp_path / "results")
        if r.stem.with_suffix(".md").read_text()
        != (repo / r.stem.relative_to(tmp_path)).with_suffix(".md").read_text()
    ]
    assert not stale, f"committed reports drawn by older code (make results-rerender): {stale}"


def test_the_runs_csv_records_what_each_run_cost_and_renders_again(tmp_path):
    """cost_seconds: a run's training (a pack's, over the runs it trained) and evaluations; a
    run of batched trials shares its cost among them; a re-render from that file still works."""
    import json

    from rbmlab.report.load import load_runs

    for seed in (0, 1):
        write_run(tmp_path / "sweep" / f"cd-{seed}", "cd", 0.1, seed)  # wall_time 1.0 + seed
    summary = tmp_path / "sweep" / "cd-1" / "summary.json"
    packed = {**json.loads(summary.read_text()), "eval_time": 2.0, "final_eval_time": 0.5, "packed_runs": 2}
    summary.write_text(json.dumps(packed))
    first = make_report(tmp_path / "sweep", tmp_path / "out", title="t", filename_stem="fig_reduced")
    runs = pd.read_csv(first["runs"])
    assert dict(zip(runs["run_dir"], runs["cost_seconds"])) == {"cd-0": 1.0, "cd-1": 2.0 / 2 + 2.5}
    first["table"].unlink()
    again = make_report(
        Committed(tmp_path / "out" / "fig_reduced"), tmp_path / "out", title="t", filename_stem="fig_reduced"
    )
    assert table_rows(again["table"].read_text()) and "cost_seconds" not in again["table"].read_text()

    trials = tmp_path / "trials" / "a"
    trials.mkdir(parents=True)
    (trials / "summary.json").write_text(
        json.dumps({"status": "completed", "wall_time": 3.0, "eval_time": 1.0})
    )
    pd.DataFrame({"epoch": [1, 1], "trial": [0, 1], "wall_time": [3.0, 3.0]}).to_csv(
        trials / "metrics.csv", index=False
    )
    loaded, _ = load_runs(tmp_path / "trials")
    assert dict(zip(loaded["run_dir"], loaded["cost_seconds"])) == {"a#0": 2.0, "a#1": 2.0}
