"""``rbmlab experiment list``: every experiment with what it reproduces and the cost each tier was
measured at, read from the committed results READMEs (rbmlab.experiment.catalog); and the line
``rbmlab experiment X`` prints when no scale is given."""

from __future__ import annotations

import pytest
import yaml

import rbmlab.experiment
from rbmlab.cli import main
from rbmlab.experiment import EXPERIMENTS_DIR, available
from rbmlab.experiment.catalog import NOT_MEASURED, entries, readme_costs, tier_notice

README = """\
# toy — A. Author, "A paper" (2020)

| artefact | scale | command | wall time here |
|---|---|---|---|
| Fig. 1 | reduced | `make toy-figure-1` (≈ 30 min on 2 cores) | 31 min |
| Fig. 2 | **paper** | `make toy-figure-2 SCALE=paper` (≈ 2 h (one seed), loaded) | |
| Fig. 3 | reduced | `make toy-figure-3a toy-figure-3b` (≈ 45 min) | |
| Fig. 4 | reduced | `make toy-figure-4` | ≈ 5 min |
| Fig. 5 | reduced | `make toy-figure-5` (report only) | report only |

Prose: `make toy-figure-6` (≈ 12 min on one core), then `make toy-figure-1` (≈ 99 min).
`make toy-figure-7` with `'seed=0,1,2'` (≈ 53 min); `rbmlab experiment toy/figure-8 scale=paper` (≈ 2 h),
`rbmlab experiment toy/figure-9 variants=a seed=0` (≈ 40 min), `rbmlab experiment toy/figure-10` (seconds).
"""


def test_costs_are_read_from_the_commands_of_a_results_readme():
    assert readme_costs(README) == {
        ("toy-figure-1", "reduced"): "≈ 30 min on 2 cores",  # the parenthesis wins over the column
        ("toy-figure-2", "paper"): "≈ 2 h (one seed), loaded",  # SCALE= names the tier; nested brackets
        ("toy-figure-3a", "reduced"): "≈ 45 min, together with toy-figure-3b",
        ("toy-figure-3b", "reduced"): "≈ 45 min, together with toy-figure-3a",
        ("toy-figure-4", "reduced"): "≈ 5 min",  # the wall-time column
        ("toy-figure-6", "reduced"): "≈ 12 min on one core",  # outside a table; the first mention counts
        ("toy-figure-7", "reduced"): "≈ 53 min, for 'seed=0,1,2'",  # `make X` with `...`: said
        ("toy-figure-8", "paper"): "≈ 2 h",  # an rbmlab command: scale= names the tier
        ("toy-figure-9", "reduced"): "≈ 40 min, for variants=a seed=0",  # a part of the tier: said
        ("toy-figure-10", "reduced"): "seconds",  # measured as 'seconds'
    }


def test_the_committed_costs_reach_their_experiments():
    costs = {e.name: e.costs for e in entries("dcp") + entries("frank_wolfe")}
    assert costs["dcp/figure-7a"] == {"reduced": "≈ 1 h 45 min on 2 cores"}
    assert costs["dcp/figure-1"] == {"paper": "≈ 18 min on one core"}
    assert costs["frank_wolfe/step-control"] == {"reduced": "≈ 25 min on 2 cores"}  # the wall-time column
    assert costs["dcp/figure-5"] == {
        "reduced": "≈ 53 min on one core: 18 runs, ≈ 3 min each, for 'seed=0,1,2'"
    }
    # a tierless report of another's runs costs those runs
    assert (
        costs["dcp/table-1"]["reduced"]
        == "the runs it draws on: dcp/figure-7b " + costs["dcp/figure-7b"]["reduced"]
    )
    # so does a figure whose tiers are its source's (it runs nothing of its own)
    tap = {e.name: e for e in entries("tap")}
    assert tap["tap/figure-4"].draws_only and not tap["tap/figure-3"].draws_only
    assert (
        tap["tap/figure-4"].costs["reduced"]
        == "the runs it draws on: tap/figure-3 " + (tap["tap/figure-3"].costs["reduced"])
    )
    assert "smoke" not in tap["tap/figure-4"].costs  # its source's smoke tier is not measured


def test_every_experiment_is_listed_with_its_title_target_and_tiers(capsys):
    main(["experiment", "list"])
    out = capsys.readouterr().out
    for name in available():  # each file's own title (every file has one)
        title = yaml.safe_load((EXPERIMENTS_DIR / f"{name}.yaml").read_text())["title"].strip()
        assert f"  {name}  (make {name.replace('/', '-', 1)})  {title}" in out, name
    assert (
        'dcp: Upadhya & Sastry, "Learning RBM with a DC programming approach" (ACML 2017)  '
        "[results/dcp/README.md]" in out
    )
    lines = out.splitlines()
    i = lines.index(next(ln for ln in lines if ln.startswith("  dcp/figure-7a ")))
    assert lines[i + 1] == "      reduced: ≈ 1 h 45 min on 2 cores · smoke, paper: not measured"
    i = lines.index(next(ln for ln in lines if ln.startswith("  dcp/table-1 ")))
    assert lines[i + 1].startswith("      reduced: the runs it draws on: dcp/figure-7b ≈ 35 min a seed")
    assert lines[i + 1].endswith(" · any other tier: from the runs of dcp/figure-7b at that tier")


def test_one_paper_and_the_make_targets(capsys):
    main(["experiment", "list", "demo"])
    assert capsys.readouterr().out.splitlines() == [
        "demo: CD-12 vs PCD-12 on Bars & Stripes 3×3  [results/demo/README.md]",
        "  demo/bars-cd-vs-pcd  (make demo-bars-cd-vs-pcd)  CD-12 vs PCD-12, Bars & Stripes 3x3",
        "      reduced: ≈ 1 min on 2 cores · smoke, paper: not measured",
    ]
    main(["experiment", "list", "--targets"])
    targets = [ln.split()[0] for ln in capsys.readouterr().out.splitlines()]
    assert targets == [name.replace("/", "-", 1) for name in available()]


@pytest.mark.parametrize(
    "argv,message",
    [
        (
            ["experiment", "list", "nope"],
            "experiment list: unknown paper 'nope'; papers: crbm_bp, dbm, dcp, demo, "
            "frank_wolfe, leaderboard, pmp, tap",
        ),
        (["experiment", "list", "dcp", "tap"], "rbmlab experiment list: unrecognized arguments: tap"),
    ],
)
def test_a_bad_list_is_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and err == f"rbmlab: error: {message}\n"


def test_without_scale_the_tier_and_its_cost_are_said(monkeypatch, capsys):
    ran = []
    monkeypatch.setattr(rbmlab.experiment, "run_experiment", lambda name, argv: ran.append((name, argv)))
    main(["experiment", "dcp/figure-7a", "variants=sdcp"])
    assert capsys.readouterr().err == (
        "rbmlab: scale not given: running the reduced tier (measured ≈ 1 h 45 min on 2 cores); "
        "scale=smoke for a pipeline check in seconds, scale=paper for the paper's settings\n"
    )
    main(["experiment", "dcp/figure-7a", "scale=smoke"])
    assert capsys.readouterr().err == ""
    assert ran == [("dcp/figure-7a", ["variants=sdcp"]), ("dcp/figure-7a", ["scale=smoke"])]
    assert "(its cost is not measured)" in tier_notice("dcp/figure-7a-omniglot", [])  # configured, not run
    assert "(measured the runs it draws on: dcp/figure-7b" in tier_notice("dcp/table-1", [])
    assert NOT_MEASURED == "not measured"


def test_the_notice_checks_the_name_first(capsys):
    with pytest.raises(SystemExit):
        main(["experiment", "dcp/nope"])
    assert capsys.readouterr().err.startswith("rbmlab: error: experiment: unknown experiment 'dcp/nope'")
    with pytest.raises(SystemExit):
        main(["experiment", "dcp/figure-3", "scale=huge"])
    assert (
        capsys.readouterr().err
        == "rbmlab: error: scale: unknown scale 'huge'; choose one of smoke, reduced, paper\n"
    )


def test_a_composite_target_and_a_then_chain_share_their_cost():
    text = (
        "| x | `make toy-both` (≈ 2 min) |\n"
        "| y | `rbmlab experiment toy/a scale=paper`, then `toy/b` likewise (≈ 85 min) |\n"
    )
    assert readme_costs(text, {"toy-both": ["toy-c", "toy-d"]}) == {
        ("toy-c", "reduced"): "≈ 2 min, together with toy-d",
        ("toy-d", "reduced"): "≈ 2 min, together with toy-c",
        ("toy-a", "paper"): "≈ 85 min, together with toy-b",
        ("toy-b", "paper"): "≈ 85 min, together with toy-a",
    }
    costs = {e.name: e.costs for e in entries("pmp")}  # experiments/composites.mk: PARTS.pmp-sec-5-1
    assert costs["pmp/sec-5-1-bethe"]["reduced"].startswith("≈ 2 min, together with pmp-sec-5-1-theta")


def test_a_tier_whose_runs_csvs_record_their_cost_costs_their_sum(monkeypatch, tmp_path):
    """A report written since runs record ``cost_seconds`` gives the cost of a tier its README
    does not time (summed over its runs CSVs, a labelled part included; a run's batched trials are
    one run); a tier the README times, or whose file lacks the column, keeps the README's (a wheel
    carries the READMEs only, and lists the same)."""
    import rbmlab.experiment.catalog as catalog

    monkeypatch.setattr(catalog, "RESULTS_DIR", tmp_path)
    (tmp_path / "dcp").mkdir()
    (tmp_path / "dcp" / "README.md").write_text("`make dcp-figure-3 SCALE=paper` (≈ 9 h on 2 cores)\n")
    runs = "run_dir,status,cost_seconds\ncd/0#0,completed,1800\ncd/0#1,completed,1800\npcd/0,completed,3600\n"
    (tmp_path / "dcp" / "figure-3_reduced_runs.csv").write_text(runs)
    (tmp_path / "dcp" / "figure-3_reduced-more_runs.csv").write_text(
        "run_dir,status,cost_seconds\nx,failed,\n"
    )
    summed = "3 runs, 2.0 h in all (the runs' training and evaluation seconds; 1 of 4 rows without one)"
    assert catalog.entry("dcp/figure-3").costs == {"reduced": summed, "paper": "≈ 9 h on 2 cores"}
    (tmp_path / "dcp" / "figure-3_smoke_runs.csv").write_text("run_dir,status,cost_seconds\na,completed,42\n")
    assert (
        catalog.entry("dcp/figure-3").cost("smoke")
        == "1 run, 42 s in all (the runs' training and evaluation seconds)"
    )
    (tmp_path / "dcp" / "figure-3_paper_runs.csv").write_text(runs)
    assert catalog.entry("dcp/figure-3").cost("paper") == "≈ 9 h on 2 cores"  # the README's word first
    (tmp_path / "dcp" / "README.md").write_text("`make dcp-figure-3` (≈ 40 min on 2 cores)\n")
    assert catalog.entry("dcp/figure-3").cost("reduced") == "≈ 40 min on 2 cores"
    (tmp_path / "dcp" / "README.md").write_text("no cost stated\n")
    (tmp_path / "dcp" / "figure-3_reduced-more_runs.csv").write_text("run_dir,status\nx,completed\n")
    assert catalog.entry("dcp/figure-3").cost("reduced") == catalog.NOT_MEASURED  # a file without the column
    lines = catalog.render("dcp").splitlines()
    i = lines.index(next(ln for ln in lines if ln.startswith("  dcp/figure-3 ")))
    assert lines[i + 1].startswith(
        "      smoke: 1 run, 42 s in all (the runs' training and evaluation seconds)"
    )
