"""Bad input to ``rbmlab experiment`` (hydra overrides, flags, scale values, arguments a kind
cannot honour, overrides for runs that will not run), to the ``make`` targets that take SCALE, to
the optimizer groups, and reports over damaged run folders (issue 33): each case ends in one
``rbmlab: error:`` line and exit 2 before any work (tests.test_bad_input's conventions). With
them, the positive side of each fix: the launcher and the roots an experiment honours, a report
that counts and names the runs it leaves out for their records."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from rbmlab.cli import main
from rbmlab.errors import RbmlabError
from rbmlab.experiment import SCALE_TIERS, run_experiment
from rbmlab.experiment.arguments import parse_command_line
from rbmlab.report import make_report
from tests.test_bad_input import Case, assert_one_error_line

ROOT = Path(__file__).resolve().parents[1]
DEMO = ["experiment", "demo/bars-cd-vs-pcd", "scale=smoke"]  # a sweep
TIMING = ["experiment", "crbm_bp/bp-speed", "scale=smoke"]  # bench:
INFERENCE = ["experiment", "pmp/figure-4-deconvolution", "scale=smoke"]
FIGURE = ["experiment", "tap/figure-5", "scale=smoke"]  # drawn from tap/figure-3's runs
GALLERY = ["experiment", "crbm_bp/figure-2", "scale=smoke"]  # crbm_bp/table-1's and table-2's runs
RUNS_OF = ["experiment", "dcp/table-1", "scale=smoke"]  # reports dcp/figure-7b's runs


def sweep_of(*names: str):
    """Sweep directories of these experiments at the smoke scale, as if they had run."""
    return lambda root: [(root / "outputs" / "experiments" / n / "smoke").mkdir(parents=True) for n in names]


def damaged_runs(*damage: tuple[str, bytes | None]):
    """Runs under ``runs/``: (name, summary.json bytes; None: a directory named summary.json)."""

    def setup(root: Path) -> None:
        for name, summary in damage:
            (root / "runs" / name).mkdir(parents=True)
            if summary is None:
                (root / "runs" / name / "summary.json").mkdir()
            else:
                (root / "runs" / name / "summary.json").write_bytes(summary)

    return setup


def dangling_summary(root: Path) -> None:
    (root / "runs" / "a").mkdir(parents=True)
    os.symlink(root / "nowhere.json", root / "runs" / "a" / "summary.json")


PLACES = "rbmlab experiment places its runs itself"
CASES = [
    # hydra overrides an experiment cannot honour: its runs go where it puts them
    Case("exp-hydra-sweep-dir", [*DEMO, "hydra.sweep.dir=elsewhere"], f"hydra.sweep.dir: {PLACES}"),
    Case("exp-hydra-run-dir", [*DEMO, "hydra.run.dir=elsewhere"], f"hydra.run.dir: {PLACES}"),
    Case("exp-hydra-sweep-subdir", [*DEMO, "hydra.sweep.subdir=x"], f"hydra.sweep.subdir: {PLACES}"),
    Case("exp-hydra-output-subdir", [*DEMO, "+hydra.output_subdir=.hydra"], f"hydra.output_subdir: {PLACES}"),
    Case("exp-hydra-sweep-dir-inference", [*INFERENCE, "hydra.sweep.dir=x"], "hydra.sweep.dir: "),
    Case("exp-hydra-job-chdir", [*DEMO, "hydra.job.chdir=true"], "hydra.job.chdir: not supported"),
    Case("exp-hydra-mode", [*DEMO, "hydra.mode=RUN"], "hydra.mode: not supported"),
    Case("exp-hydra-sweeper", [*DEMO, "hydra/sweeper=basic"], "hydra/sweeper: not supported"),
    Case("exp-hydra-whole-node", [*DEMO, "hydra={}"], "hydra: not supported"),
    Case("exp-key-that-starts-like-hydra", [*DEMO, "hydrangea=1"], "hydrangea: unknown config key"),
    # flags: an experiment's sweeps are multiruns already; nothing else is a flag of it
    Case("exp-flag-m", [*DEMO, "-m"], "-m: rbmlab experiment runs its sweeps as Hydra multiruns"),
    Case("exp-flag-multirun", [*DEMO, "--multirun"], "--multirun: "),
    Case("exp-flag-cfg", [*DEMO, "--cfg", "job"], "--cfg: not an option of rbmlab experiment"),
    Case(
        "exp-flag-info", [*FIGURE, "--info"], "--info: not an option"
    ),  # --help: the help (tests/test_help.py)
    Case("exp-flag-config-name", [*DEMO, "--config-name=x"], "--config-name: not an option"),
    # launch settings: checked with Hydra's own configuration before any run
    Case("exp-unknown-launcher", [*DEMO, "hydra/launcher=nope"], "hydra/launcher=nope: no such option"),
    Case(
        "exp-launcher-option-of-basic",
        [*DEMO, "hydra.launcher.n_jobs=2"],
        "hydra.launcher.n_jobs: not an option of the launcher chosen",
    ),
    Case(
        "exp-launcher-option-wrong-type",
        [*DEMO, "hydra/launcher=joblib", "hydra.launcher.n_jobs=abc"],
        "hydra.launcher.n_jobs: Value 'abc'",
    ),
    Case(
        "exp-unknown-job-logging", [*DEMO, "hydra/job_logging=nope"], "hydra/job_logging=nope: no such option"
    ),
    # kinds that cannot honour a class of argument refuse it (once ignored)
    Case(
        "timing-run-override",
        [*TIMING, "train.epochs=3"],
        "train.epochs: crbm_bp/bp-speed is a timing experiment",
    ),
    Case("timing-launcher", [*TIMING, "hydra/launcher=joblib"], "launches no Hydra jobs"),
    Case("timing-variants", [*TIMING, "variants=a"], "variants: crbm_bp/bp-speed is a timing experiment"),
    Case("timing-report-only", [*TIMING, "report_only=true"], "report_only: crbm_bp/bp-speed is a timing"),
    Case("timing-outputs-root", [*TIMING, "outputs_root=o"], "outputs_root: crbm_bp/bp-speed is a timing"),
    Case(
        "inference-launcher",
        [*INFERENCE, "hydra/launcher=joblib", "hydra.launcher.n_jobs=2"],
        "hydra/launcher: pmp/figure-4-deconvolution is an inference experiment, which launches no Hydra jobs",
    ),
    Case("inference-variants", [*INFERENCE, "variants=pmp"], "variants: pmp/figure-4-deconvolution is an"),
    Case("inference-outputs-root", [*INFERENCE, "outputs_root=o"], "outputs_root: "),
    # scale: strict for every kind
    *[
        Case(f"scale-bogus-{kind}", [argv[0], argv[1], "scale=bogus"], "scale: unknown scale 'bogus'")
        for kind, argv in (
            ("sweep", DEMO),
            ("timing", TIMING),
            ("inference", INFERENCE),
            ("figure", FIGURE),
            ("gallery", GALLERY),
            ("runs-of", RUNS_OF),
        )
    ],
    Case("scale-empty", ["experiment", "demo/bars-cd-vs-pcd", "scale="], "scale: unknown scale ''"),
    Case("scale-capitalised", ["experiment", "pmp/figure-4-deconvolution", "scale=Smoke"], "'Smoke'"),
    Case("scale-two-tiers", ["experiment", "crbm_bp/bp-speed", "scale=smoke,paper"], "'smoke,paper'"),
    Case("scale-twice", [*INFERENCE, "scale=paper"], "scale: given twice (scale=smoke, scale=paper)"),
    Case(
        "scale-with-plus",
        ["experiment", "demo/bars-cd-vs-pcd", "+scale=smoke"],
        "scale: expected scale=VALUE",
    ),
    Case("scale-deleted", ["experiment", "demo/bars-cd-vs-pcd", "~scale"], "scale: expected scale=VALUE"),
    # the other arguments of every experiment
    Case("report-only-not-a-flag", [*DEMO, "report_only=maybe"], "report_only: expected true or false"),
    Case("report-only-twice", [*DEMO, "report_only=true", "report_only=false"], "report_only: given twice"),
    Case("variants-twice", [*DEMO, "variants=cd", "variants=pcd"], "variants: given twice"),
    Case("variants-empty", [*DEMO, "variants=,"], "variants: name at least one variant"),
    Case("results-root-empty", [*TIMING, "results_root="], "results_root: empty"),
    Case("outputs-root-empty", [*DEMO, "outputs_root="], "outputs_root: empty"),
    Case(
        "outputs-root-a-file",
        [*DEMO, "outputs_root=afile", "train.epochs=1"],
        "afile",
        setup=lambda d: (d / "afile").write_text("x"),
    ),
    # overrides for runs that will not run: refused, never ignored
    Case(
        "figure-override-source-present",
        [*FIGURE, "train.epochs=3"],
        "train.epochs: train.epochs=3 is for the runs of tap/figure-3, but the runs of tap/figure-3 at scale "
        "smoke exist already",
        setup=sweep_of("tap/figure-3"),
    ),
    Case(
        "figure-launcher-source-present",
        [*FIGURE, "hydra/launcher=joblib"],
        "hydra/launcher: hydra/launcher=joblib is for the runs of tap/figure-3",
        setup=sweep_of("tap/figure-3"),
    ),
    Case(
        "figure-override-report-only",
        [*FIGURE, "report_only=true", "train.epochs=3"],
        "report_only=true reports the runs there as they are",
        setup=sweep_of("tap/figure-3"),
    ),
    Case(
        "figure-override-own-sweep",
        [*FIGURE, "sweep=somewhere", "train.epochs=3"],
        "sweep=somewhere draws from the runs there as they are",
    ),
    Case(
        "gallery-override-source-present",
        [*GALLERY, "task.rate=0.2"],
        "task.rate=0.2 is for the runs of crbm_bp/table-1",
        setup=sweep_of("crbm_bp/table-1"),
    ),
    Case(
        "gallery-one-source-present",
        [*GALLERY, "train.epochs=2"],
        "is for the runs of crbm_bp/table-2",
        setup=sweep_of("crbm_bp/table-2"),
    ),
    Case(
        "runs-of-override-source-present",
        [*RUNS_OF, "train.epochs=3"],
        "is for the runs of dcp/figure-7b, but the runs of dcp/figure-7b",
        setup=sweep_of("dcp/figure-7b"),
    ),
    Case(
        "runs-of-variants-source-present",
        [*RUNS_OF, "variants=cd"],
        "variants: variants=cd is for the runs",
        setup=sweep_of("dcp/figure-7b"),
    ),
    Case(
        "sweep-report-only-with-override",
        [*DEMO, "report_only=true", "train.epochs=3"],
        "train.epochs=3 is for the runs of demo/bars-cd-vs-pcd, but report_only=true",
        setup=sweep_of("demo/bars-cd-vs-pcd"),
    ),
    Case(
        "sweep-report-only-with-launcher",
        [*DEMO, "report_only=true", "hydra/launcher=joblib"],
        "hydra/launcher=joblib is for the runs",
        setup=sweep_of("demo/bars-cd-vs-pcd"),
    ),
    # optimizer groups: combinations that are truly invalid
    Case(
        "optimizer-momentum-for-adam",
        ["run", "learner=tap", "learner/optimizer=adam", "learner.optimizer.momentum=0.5"],
        "learner.optimizer.momentum: unknown",
    ),
    Case(
        "optimizer-decay-for-spectral",
        ["run", "learner=tap", "learner/optimizer=spectral", "learner.optimizer.weight_decay=0.001"],
        "learner.optimizer.weight_decay",
    ),
    Case(
        "optimizer-unknown",
        ["run", "learner=tap_dbm", "learner/optimizer=rmsprop"],
        "learner/optimizer=rmsprop: no such option; available: adam, sgd, spectral",
    ),
    Case(
        "optimizer-tuning-chosen-by-hand",
        ["run", "learner=cd", "learner/optimizer_tuning=tap_sgd"],
        "learner/optimizer_tuning: not a choice of this configuration",
    ),
    Case(
        "optimizer-tuning-overridden",
        ["run", "learner=tap", "learner/optimizer_tuning=tap_adam"],
        "learner/optimizer_tuning: not a choice",
    ),
    Case(
        "optimizer-momentum-on-unknown",
        ["run", "learner=tap", "learner.optimizer.momentum_on=weights"],
        "learner.optimizer.momentum_on",
    ),
    # reports over damaged run folders: with no readable summary.json at all, one line naming it
    Case(
        "report-every-summary-unreadable",
        ["report", "runs"],
        "report: cannot read runs/a/summary.json",
        setup=damaged_runs(("a", b"{garbage"), ("b", b"\xff\xfe")),
    ),
    Case(
        "report-summary-a-directory",
        ["report", "runs"],
        "runs/a/summary.json",
        setup=damaged_runs(("a", None)),
    ),
    Case("report-summary-dangling-link", ["report", "runs"], "runs/a/summary.json", setup=dangling_summary),
    Case("report-summary-empty", ["report", "runs"], "runs/a/summary.json", setup=damaged_runs(("a", b""))),
    Case(
        "report-summary-a-list-and-garbage",
        ["report", "runs"],
        "is not a JSON object",
        setup=damaged_runs(("a", b"[1]"), ("b", b"{")),
    ),
]


def test_the_corpus_counts_and_ids_are_unique():
    assert len(CASES) >= 25
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_gives_one_error_line(case, tmp_path, monkeypatch, capsys):
    assert_one_error_line(main, case, tmp_path, monkeypatch, capsys)


# ---------------------------------------------------------------- make targets taking SCALE
MAKE_CASES = [
    ("pmp-figure-4-deconvolution", "bogus"),
    ("pmp-figure-4-deconvolution", ""),
    ("demo-bars-cd-vs-pcd", "Smoke"),
    ("dcp-figure-6", "smoke,paper"),
    ("pmp-figure-4", "smoke paper"),
    ("crbm_bp-table-3", "huge"),
]
needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="no make here")


def make_n(*args: str) -> subprocess.CompletedProcess:
    """``make -n`` (prints the commands, runs none) in the repository."""
    return subprocess.run(
        ["make", "-n", "-C", str(ROOT), "--no-print-directory", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


@needs_make
@pytest.mark.parametrize("target,scale", MAKE_CASES, ids=[f"{t}-{s or 'empty'}" for t, s in MAKE_CASES])
def test_a_make_target_refuses_an_unknown_scale_before_anything(target, scale):
    """Refused when make reads the Makefile: before install or any recipe, one line, exit 2."""
    proc = make_n(target, f"SCALE={scale}")
    assert proc.returncode == 2 and proc.stdout == "", proc
    lines = proc.stderr.strip().splitlines()
    assert (
        len(lines) == 1 and f"SCALE: unknown scale '{scale}'; choose one of smoke, reduced, paper" in lines[0]
    )


@needs_make
def test_make_knows_the_tiers_and_passes_a_good_scale_on():
    assert re.search(r"^SCALES := (.*)$", (ROOT / "Makefile").read_text(), re.M).group(1).split() == list(
        SCALE_TIERS
    )
    proc = make_n("pmp-figure-4-deconvolution", "SCALE=smoke")
    assert proc.returncode == 0 and proc.stdout.splitlines()[-1].endswith(
        "rbmlab experiment pmp/figure-4-deconvolution scale=smoke"
    )
    proc = make_n("dcp-figure-6", "SCALE=paper")
    assert [ln.split("rbmlab ", 1)[1] for ln in proc.stdout.splitlines() if "rbmlab experiment" in ln] == [
        "experiment dcp/figure-6a scale=paper",
        "experiment dcp/figure-6b scale=paper",
    ]
    proc = make_n("dcp-figure-3", "SCALE=paper", "LAUNCHER=slurm_gpu")  # the jobs as a SLURM array job
    assert proc.stdout.splitlines()[-1].endswith(
        "rbmlab experiment dcp/figure-3 scale=paper hydra/launcher=slurm_gpu"
    )
    assert make_n("help", "SCALE=bogus").returncode == 0  # a target without SCALE ignores it


# ---------------------------------------------------------------- what an experiment honours
def test_the_command_line_is_classified_once():
    line = parse_command_line(
        [
            "scale=paper",
            "report_only=false",
            "variants=[a, b]",
            "outputs_root=o",
            "hydra/launcher=joblib",
            "train.epochs=3",
            "hydra.launcher.n_jobs=2",
        ]
    )
    assert (line.scale, line.report_only, line.variants, line.roots) == (
        "paper",
        False,
        ["a", "b"],
        {"outputs_root": "o"},
    )
    assert line.extra == ["hydra/launcher=joblib", "train.epochs=3", "hydra.launcher.n_jobs=2"]
    assert "outputs_root=o" not in line.rest and parse_command_line([]).scale == "reduced"
    assert parse_command_line(["report_only=1"]).report_only is True


def test_a_sweep_takes_the_launcher_and_both_roots(tmp_path, monkeypatch):
    """The launch settings reach Hydra with the sweep's own directory; outputs_root and results_root
    move the runs and the report (without running anything: the sweep and report are recorded)."""
    import rbmlab.report as report

    ran, reported = [], []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("rbmlab.hydra_app.run_hydra", lambda argv: ran.append(argv))
    monkeypatch.setattr("rbmlab.run.outputs.failed_jobs", lambda *a: [])
    monkeypatch.setattr(
        report, "make_report", lambda roots, out, *a, **k: reported.append((roots, out)) or {}
    )
    main(
        [
            "experiment",
            "demo/bars-cd-vs-pcd",
            "scale=smoke",
            "outputs_root=o",
            "results_root=r",
            "hydra/launcher=joblib",
            "hydra.launcher.n_jobs=2",
            "hydra.verbose=true",
        ]
    )
    assert len(ran) == 1 and ran[0][0] == "-m"
    assert ran[0][-1] == f"hydra.sweep.dir={Path('o/demo/bars-cd-vs-pcd/smoke')}"
    assert {"hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "hydra.verbose=true"} <= set(ran[0])
    assert not any(a.startswith(("outputs_root", "results_root")) for a in ran[0])
    assert reported == [(Path("o/demo/bars-cd-vs-pcd/smoke"), Path("r/demo"))]


@pytest.mark.slow
def test_a_figure_passes_a_launcher_on_to_its_source_when_it_runs(tmp_path, monkeypatch):
    import rbmlab.experiment as experiment

    ran = []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(
        experiment, "run_experiment", lambda name, argv, *roots: ran.append((name, argv, roots))
    )
    with pytest.raises(RbmlabError, match="no completed runs"):  # nothing ran really: nothing to draw
        run_experiment(
            "tap/figure-5",
            ["scale=smoke", "hydra/launcher=joblib", "outputs_root=o"],
            tmp_path / "r",
            tmp_path / "x",
        )
    assert ran == [("tap/figure-3", ["scale=smoke", "hydra/launcher=joblib"], (tmp_path / "r", "o"))]


@pytest.mark.slow
def test_a_sweep_runs_with_joblib_under_the_roots_given(tmp_path, monkeypatch):
    """The demo at smoke scale, its jobs launched by joblib, 2 at once: everything under the roots
    given, nothing in the default places (about 6 s)."""
    monkeypatch.chdir(tmp_path)
    main(
        [
            "experiment",
            "demo/bars-cd-vs-pcd",
            "scale=smoke",
            "outputs_root=o",
            "results_root=r",
            "hydra/launcher=joblib",
            "hydra.launcher.n_jobs=2",
        ]
    )
    sweep = tmp_path / "o" / "demo" / "bars-cd-vs-pcd" / "smoke"
    launcher = __import__("yaml").safe_load((sweep / "multirun.yaml").read_text())["hydra"]["launcher"]
    assert launcher["_target_"].endswith("JoblibLauncher") and launcher["n_jobs"] == 2
    assert len(list(sweep.glob("*/summary.json"))) == 6
    assert (tmp_path / "r" / "demo" / "bars-cd-vs-pcd_smoke.md").is_file()
    assert not (tmp_path / "outputs").exists() and not (tmp_path / "results").exists()


# ---------------------------------------------------------------- reports over damaged runs
def write_run(root: Path, name: str, summary: dict | bytes, seed: int, rows=(-5.0, -4.0)) -> None:
    run = root / name
    run.mkdir(parents=True)
    (run / "summary.json").write_bytes(
        summary if isinstance(summary, bytes) else json.dumps(summary).encode()
    )
    (run / "config.yaml").write_text(f"learner:\n  name: cd\nseed: {seed}\n")
    (run / "metrics.csv").write_text(
        "epoch,updates,wall_time,test_log_likelihood\n"
        + "".join(f"{e},{e},0.1,{v}\n" for e, v in enumerate(rows))
    )


def completed(value) -> dict:
    return {"status": "completed", "final": {"test_log_likelihood": value}}


def test_a_report_counts_and_names_each_run_left_out_for_its_records(tmp_path):
    """An unreadable summary.json (garbage, a directory of that name) and final values that are not
    numbers (null, NaN, text) leave their runs out of the final values, counted and named with the
    reason; they are never replaced by the run's last metrics row (-4 here). A run with no final
    value recorded still takes its last row, as the report's note says."""
    runs = tmp_path / "runs"
    write_run(runs, "a", completed(-3.0), 0)
    write_run(runs, "b", completed(-3.5), 1)
    write_run(runs, "c", b"{garbage", 2)
    write_run(runs, "d", completed(None), 3)
    write_run(runs, "e", b'{"status": "completed", "final": {"test_log_likelihood": NaN}}', 4)
    write_run(runs, "f", completed("abc"), 5)
    write_run(runs, "g", {"status": "completed", "final": {}}, 6, rows=(-5.0, -2.0))
    (runs / "h").mkdir()
    (runs / "h" / "summary.json").mkdir()
    paths = make_report(runs, tmp_path / "out")
    text = paths["table"].read_text()
    assert "8 runs (6 completed, 2 unreadable)" in text
    assert (
        "Final values: 3 of 8 runs; 5 left out: 3 final test_log_likelihood not a number, "
        "2 summary.json unreadable."
    ) in text
    listed = text.split("Left out for their records:\n\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert [line.split(":", 1)[0] for line in listed] == ["- c", "- h", "- d", "- e", "- f"]
    assert listed[0].startswith(f"- c: cannot read {runs / 'c' / 'summary.json'}: ")
    assert listed[2:] == [
        f"- {r}: summary.json holds final test_log_likelihood = {v}, not a number"
        for r, v in (("d", "null"), ("e", "NaN"), ("f", '"abc"'))
    ]
    assert "| -2.8333 ± 0.7638 (n=3) |" in text  # a, b and g: mean of -3, -3.5, -2 exactly
    table = pd.read_csv(paths["runs"]).set_index("run_dir")
    assert table["final.test_log_likelihood"].dropna().to_dict() == {"a": -3.0, "b": -3.5, "g": -2.0}
    assert table.loc["c", "status"] == "unreadable" and "cannot read" in table.loc["c", "problem"]


def test_a_clean_report_reads_as_before(tmp_path):
    """No damaged record: no new column, no new line."""
    runs = tmp_path / "runs"
    write_run(runs, "a", completed(-3.0), 0)
    write_run(runs, "b", {"status": "diverged"}, 1)
    paths = make_report(runs, tmp_path / "out")
    text = paths["table"].read_text()
    assert (
        "Left out for their records" not in text
        and "Final values: 1 of 2 runs; 1 left out: 1 diverged." in text
    )
    assert list(pd.read_csv(paths["runs"]).columns) == [
        "run_dir",
        "seed",
        "status",
        "epochs_done",
        "final.test_log_likelihood",
    ]


def test_batched_trials_with_a_final_that_is_not_a_number(tmp_path):
    """A batched run's trial whose final value is null is left out and named as ``<dir>#<t>``."""
    runs = tmp_path / "runs"
    write_run(
        runs,
        "a",
        {
            "status": "completed",
            "final": {"test_log_likelihood": -3.0},
            "final_trials": [
                {"trial": 0, "test_log_likelihood": -3.0},
                {"trial": 1, "test_log_likelihood": None},
            ],
        },
        0,
    )
    (runs / "a" / "metrics.csv").write_text(
        "epoch,updates,wall_time,trial,test_log_likelihood\n1,1,0.1,0,-4.0\n1,1,0.1,1,-4.5\n"
    )
    text = make_report(runs, tmp_path / "out")["table"].read_text()
    assert "1 left out: 1 final test_log_likelihood not a number." in text
    assert "- a#1: summary.json holds final test_log_likelihood = null, not a number" in text


def test_an_experiment_report_counts_an_unreadable_job(tmp_path, monkeypatch):
    """report_only over a sweep with one damaged job: the report is written, the job named."""
    outputs = tmp_path / "outputs"
    sweep = outputs / "demo" / "bars-cd-vs-pcd" / "smoke"
    for k, (learner, seed) in enumerate((("cd", 0), ("pcd", 0))):
        write_run(sweep, str(k), completed(-3.0 - k), seed)
        (sweep / str(k) / "config.yaml").write_text(
            f"learner:\n  name: {learner}\nseed: {seed}\nscale: smoke\n"
        )
    write_run(sweep, "2", b"\x00\x01", 1)
    result = run_experiment(
        "demo/bars-cd-vs-pcd", ["scale=smoke", "report_only=true"], tmp_path / "results", outputs
    )
    text = result["table"].read_text()
    assert "1 summary.json unreadable" in text and f"- 2: cannot read {sweep / '2' / 'summary.json'}" in text


def test_a_figure_names_an_unreadable_summary_in_one_line(tmp_path):
    """tap Fig. 5's run reader (rbmlab.experiment.figures.tap_runs): one line, not a traceback."""
    from rbmlab.experiment.figures.tap_runs import runs

    write_run(tmp_path / "binary", "0", b"{", 0)
    with pytest.raises(RbmlabError, match=r"^report: cannot read .*binary/0/summary.json: "):
        runs(tmp_path)
