"""Regression: every experiment at the smoke tier reproduces the metrics recorded before a refactor.

``tests/fixtures/smoke_metrics/<paper>__<artefact>.json`` holds, for each job of the experiment's
smoke sweep (keyed by its directory relative to the sweep dir, e.g. ``cd/0``), the rows of its
metrics.csv without ``wall_time``, recorded from commit ``source``; and, where recorded, ``runs``:
the report's runs table (results/<paper>/<artefact>_smoke_runs.csv), each run's status, epochs
and final values (the numbers the artefact reports; an experiment that reports other experiments'
runs, or whose jobs only evaluate, has no metrics.csv of its own). Each test re-runs the
experiment with the current code and compares column by column: integers exactly, floats within
rtol=1e-5, atol=1e-6 (room for float32 rounding), NaN equal to NaN, ±inf equal to itself.
Jobs run with one BLAS thread, as recorded: with two, a matmul's summation order changes and a
prediction on the edge of its threshold can flip one pixel of crbm_bp's tables.

``python -m tests.record_smoke_metrics --new <paper>/<artefact>`` records the fixture of an
experiment; without --new it re-records existing ones after an intended change in results.
Every experiment has a fixture or is in NOT_COVERED with the reason.
"""

from __future__ import annotations

import contextlib
import csv
import importlib
import json
import math
from pathlib import Path

import pytest
from threadpoolctl import threadpool_info, threadpool_limits

from rbmlab.experiment import available, load_spec, run_experiment
from tests import dispatch

FIXTURES = Path(__file__).parent / "fixtures" / "smoke_metrics"
RTOL, ATOL = 1e-5, 1e-6
# A fixture records the dispatch it was recorded under (tests/dispatch.py: numpy's AVX2 loops,
# OpenBLAS's Haswell kernel), the one every test process runs under on any x86-64 CPU: a run's
# floats are then the same in every bit on each machine, and compared within RTOL everywhere. Without
# the pin an Intel AVX-512 machine and an AMD EPYC gave AIS log Z 7e-4 relative apart, a crbm_bp
# pixel error 1 pixel in 40,000, a 200-example test error 1 point, and GWG's discrete proposals
# other moves (pmp/figure-1c-train's log MMD² 1e-4 apart).


# Every library that brings its own BLAS or OpenMP runtime into a run. threadpoolctl limits only
# the libraries loaded when the limit is entered: one loaded later runs with every core. The
# recorder (python -m tests.record_smoke_metrics) had loaded none of them by then, pytest (through
# conftest) numpy's, so the two summed in different orders: pmp/figure-1c-train's GWG job, whose
# discrete moves turn a last-bit difference into other chains, gave log MMD² -1.9646 recorded and
# -1.9853 under pytest, each deterministic.
RUNTIMES = ("numpy", "scipy.linalg", "sklearn")  # numpy's and scipy's OpenBLAS, sklearn's libgomp


def one_blas_thread() -> contextlib.AbstractContextManager:
    """One thread for every BLAS and OpenMP runtime a run uses (each loaded first), as recorded."""
    for name in RUNTIMES:
        importlib.import_module(name)
    return threadpool_limits(limits=1)


def library_versions() -> dict[str, str]:
    """numpy's, scipy's and their OpenBLAS's versions: the pin fixes the instructions, a release of
    one of them can still change a kernel (a fixture records them; a failure names both)."""
    import numpy  # noqa: PLC0415
    import scipy  # noqa: PLC0415

    openblas = sorted({lib["version"] for lib in threadpool_info() if lib["internal_api"] == "openblas"})
    return {"numpy": numpy.__version__, "scipy": scipy.__version__, "openblas": ", ".join(openblas)}


def threads_beyond_one() -> list[str]:
    """The loaded BLAS / OpenMP runtimes with more than one thread (a run loaded them after the
    limit: add them to RUNTIMES)."""
    return [
        f"{lib['filepath']}: {lib['num_threads']} threads"
        for lib in threadpool_info()
        if lib["num_threads"] != 1
    ]


# columns not compared: the time
IGNORED = {"wall_time"}
# of a report's runs table, the columns compared besides final.*: not its config keys, nor source
# (the commit that ran)
RUN_COLUMNS = ("run_dir", "status", "epochs_done", "early_stopping.epoch")
# the slowest (more than about 3 s each on 2 CPU cores, up to about 60 s: an experiment that reports
# or starts from another one's runs makes them first), and pmp/figure-1b and tap/figure-10-paper-lr
# (about 3 s; the fast suite has pmp/figure-1a and tap/figure-11), pmp/sec-5-1-theta
# (sec-5-1-kl-model runs it and reports its runs table); pmp/figure-3-ais, figure-3-recognised,
# figure-7-variety and figure-8-descent (each makes the training runs it scores first: 8 to 20 s)
# and crbm_bp's four discussion experiments (5 to 15 s: five or six variants on MNIST); the cheaper
# ones keep the fast suite's cover
SLOW = {
    "pmp/figure-3-ais",
    "pmp/figure-3-recognised",
    "pmp/figure-7-variety",
    "pmp/figure-8-descent",
    "crbm_bp/discussion-matched",
    "crbm_bp/discussion-damping",
    "crbm_bp/discussion-schedule",
    "crbm_bp/discussion-schedule-converged",
    "tap/figure-3-seeds",
    "tap/figure-10",
    "pmp/figure-5-step-size",
    "pmp/figure-5-mmd",  # siblings stay fast
    "dcp/figure-6b",
    "dcp/figure-3",
    "dcp/figure-4",
    "dcp/figure-7a",
    "dcp/figure-7b",
    "dcp/figure-5",
    "dcp/figure-6a",
    "dcp/figure-1",
    "dcp/figure-2",
    "dcp/table-1",
    "crbm_bp/figure-3",
    "crbm_bp/lr-grid",
    "crbm_bp/lr-grid-caltech",
    "crbm_bp/ssvm-lr-occlude",
    "crbm_bp/table-1",
    "crbm_bp/table-2",
    "crbm_bp/table-3a",
    "crbm_bp/table-3b",
    "frank_wolfe/alpha-learned",
    "frank_wolfe/cd-fw-lr-control",
    "frank_wolfe/figure-1a",
    "frank_wolfe/figure-1b",
    "frank_wolfe/figure-2a",
    "frank_wolfe/figure-2b",
    "frank_wolfe/hyperparameters-converged",
    "frank_wolfe/model-size",
    "frank_wolfe/plateau-control",
    "frank_wolfe/sampling-control",
    "frank_wolfe/step-control",
    "pmp/figure-1b",
    "pmp/figure-1c",
    "pmp/figure-1c-train",
    "pmp/figure-2-er-persistent-mmd",
    "pmp/figure-2-er-persistent-rmse",
    "pmp/figure-2-lattice-persistent-mmd",
    "pmp/figure-2-lattice-persistent-rmse",
    "pmp/figure-2-mmd",
    "pmp/figure-2-rmse",
    "pmp/figure-3",
    "pmp/figure-3-train",
    "pmp/figure-5-rmse",
    "pmp/figure-7",
    "pmp/figure-8",
    "pmp/lp-small",
    "pmp/sec-5-1-theta",
    "tap/figure-3",
    "tap/figure-8-denoising",
    "tap/figure-8-denoising-seeds",
    "tap/figure-10-paper-lr",
}
MAX_REPORTED = 20  # mismatches listed in one failure message
# Experiments without a fixture, and why: each one's results are not fixed numbers of its own.
NOT_COVERED = {
    # runs_of experiments whose runs table is their source's, row for row (the same runs; every
    # final.* column they report is in the source's recorded table): the source's fixture pins it
    **{
        name: f"reports the runs of {source} (runs_of), whose fixture records the same runs table"
        for name, source in (
            ("crbm_bp/table-1-changed", "crbm_bp/table-1"),
            ("crbm_bp/table-2-changed", "crbm_bp/table-2"),
            ("crbm_bp/table-3a-changed", "crbm_bp/table-3a"),
            ("crbm_bp/table-3b-changed", "crbm_bp/table-3b"),
            ("pmp/sec-5-1-kl-samples", "pmp/sec-5-1-theta"),
            ("tap/figure-11-train", "tap/figure-11"),
            ("tap/table-1", "tap/figure-3"),
        )
    },
    # leaderboards: every entrant's numbers are its learner's, whose paper experiments have fixtures;
    # their own checks are tests/test_leaderboard.py and tests/test_budget.py
    "leaderboard/binarized_mnist": "a leaderboard of learners whose paper experiments have fixtures",
    "leaderboard/caltech101": "a leaderboard of learners whose paper experiments have fixtures",
    "leaderboard/exact": "a leaderboard of learners whose paper experiments have fixtures",
    "leaderboard/potts": "a leaderboard of learners whose paper experiments have fixtures",
    # timings (bench:): every number is wall-clock time on this machine
    "crbm_bp/bp-speed": "a timing (bench part bp_speed): wall-clock seconds",
    "dcp/speed": "a timing (bench part dcp_speed): wall-clock seconds",
    "pmp/speed": "a timing (bench part sampler_speed): wall-clock seconds",
    "pmp/speed-log-z": "a timing (bench part pmap_speed): wall-clock seconds",
    "tap/figure-10-speed": "a timing (bench part tap_speed): wall-clock seconds",
    "frank_wolfe/cost": "its metric is wall_time (training seconds and their ratios) over the runs "
    "of frank_wolfe/figure-1a and figure-1b, whose metrics have fixtures",
    # the MNIST experiments of dcp Secs. 5.2-5.4 on OMNIGLOT: the same learners and code paths as
    # their MNIST files (fixtures in SLOW) on dcp/figure-4's data (fixture in SLOW); a fixture
    # would add slow-suite time and no path
    **{
        f"dcp/{name}-omniglot": f"dcp/{name} on dcp/figure-4's OMNIGLOT: both have fixtures"
        for name in ("figure-6b", "figure-7a", "figure-7b")
    },
    # galleries (gallery:): a PNG of other experiments' models, which have fixtures
    "crbm_bp/figure-2": "an image gallery of the models of crbm_bp/table-1 and table-2",
    "pmp/figure-3-samples": "an image gallery of samples of the models of pmp/figure-3-train",
    "pmp/figure-4-zeros": "an image gallery of samples of the models of pmp/figure-1c-train",
    "pmp/figure-6": "an image gallery of samples of the models of pmp/figure-3-train",
    "pmp/figure-7-samples": "an image gallery of samples of the models of pmp/figure-7",
    "pmp/figure-8-samples": "an image gallery of samples of the models of pmp/figure-3-train and "
    "figure-8-train",
    # figures (figure:) and inference runs (inference:): files a figure or a sampler writes, not a
    # run's metrics. Each was compared at smoke with the script it replaced when it became an
    # experiment (issue 32: every .md/.csv byte-identical, the deconvolution's metrics.json and
    # samples.npz identical but for the wall-clock seconds); their sources have fixtures. Open:
    # fixtures of their text outputs.
    **{
        f"tap/{name}": "a figure (figure kind) of the runs of tap/figure-3 or figure-3-seeds, "
        "or figure-8-denoising(-seeds): its md/PNG, no metrics of its own"
        for name in (
            "figure-4",
            "figure-4-localisation-seeds",
            "figure-4-features",
            "figure-4-features-seeds",
            "figure-5",
            "figure-5-seeds",
            "figure-5-counting-seeds",
            "figure-6",
            "figure-7",
            "figure-7-attractors-seeds",
            "figure-8",
            "figure-8-seeds",
            "figure-9",
            "figure-9-structure-seeds",
            "figure-12",
            "figure-12-seeds",
        )
    },
    **{
        f"pmp/{name}": "posterior samples of a fixed model (inference kind): metrics.json with "
        "wall-clock seconds, samples.npz and PNGs, no run"
        for name in (
            "figure-4-deconvolution",
            "figure-4-deconvolution-gibbs",
            "figure-4-deconvolution-gwg",
            "figure-4-deconvolution-gwg-clamp-w",
            "figure-4-deconvolution-gwg-clamp-s",
            "discussion-deconvolution-lp",
            "discussion-deconvolution-pmp",
        )
    },
}


def _params() -> list:
    params = []
    for path in sorted(FIXTURES.glob("*.json")):
        name = json.loads(path.read_text())["experiment"]
        marks = [pytest.mark.slow] if name in SLOW else []
        params.append(pytest.param(path, id=name, marks=marks))
    return params


def _value(text: str):
    for parse in (int, float):
        try:
            return parse(text)
        except ValueError:
            pass
    return text


def _read_metrics(path: Path) -> tuple[list[str], list[list]]:
    with open(path, newline="") as fh:
        rows = list(csv.reader(fh))
    header = rows[0] if rows else []
    keep = [i for i, c in enumerate(header) if c not in IGNORED]
    return [header[i] for i in keep], [[_value(r[i]) for i in keep] for r in rows[1:]]


def _same(expected, actual) -> bool:
    if isinstance(expected, int) and isinstance(actual, int):
        return expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        e, a = float(expected), float(actual)
        if math.isnan(e) or math.isnan(a):
            return math.isnan(e) and math.isnan(a)
        if math.isinf(e) or math.isinf(a):
            return e == a
        return abs(a - e) <= ATOL + RTOL * abs(e)
    return expected == actual


def _read_runs(path: Path) -> tuple[list[str], list[list]]:
    """A report's runs table: RUN_COLUMNS and final.* (not those of IGNORED)."""
    header, rows = _read_metrics(path)
    keep = [
        i
        for i, c in enumerate(header)
        if c in RUN_COLUMNS or (c.startswith("final.") and c[len("final.") :] not in IGNORED)
    ]
    return [header[i] for i in keep], [[r[i] for i in keep] for r in rows]


def _differences(where: str, columns: list[str], rows: list[list], want: dict) -> list[str]:
    """What differs between the rows read and the recorded ones (``want``: columns, rows, and a
    job's overrides), floats within RTOL and ATOL."""
    ran = f" (overrides: {' '.join(want['overrides'])})" if "overrides" in want else ""
    kept = [j for j, c in enumerate(want["columns"]) if c.removeprefix("final.") not in IGNORED]
    want = {
        **want,
        "columns": [want["columns"][j] for j in kept],
        "rows": [[row[j] for j in kept] for row in want["rows"]],
    }  # recorded before IGNORED grew
    # a final.* column the report writes since the recording (a paper-layout table's further
    # metrics: final.early_stopping.test_changed_error) is not compared until recorded anew; the
    # metrics rows it comes from are
    added = [i for i, c in enumerate(columns) if c.startswith("final.") and c not in want["columns"]]
    columns = [c for i, c in enumerate(columns) if i not in added]
    rows = [[v for i, v in enumerate(row) if i not in added] for row in rows]
    if sorted(columns) != sorted(want["columns"]):
        return [f"{where}{ran}: columns {columns}, recorded {want['columns']}"]
    if len(rows) != len(want["rows"]):
        return [f"{where}{ran}: {len(rows)} rows, recorded {len(want['rows'])}"]
    index = {c: columns.index(c) for c in columns}
    return [
        f"{where}, column {col}, {_where(want['columns'], exp, i)}: "
        f"got {got[index[col]]!r}, recorded {exp[j]!r}"
        for i, (got, exp) in enumerate(zip(rows, want["rows"]))
        for j, col in enumerate(want["columns"])
        if not _same(exp[j], got[index[col]])
    ]


def _where(columns: list[str], row: list, i: int) -> str:
    labels = [f"row {i}"] + [
        f"{k} {row[columns.index(k)]}" for k in ("run_dir", "epoch", "trial") if k in columns
    ]
    return ", ".join(labels)


@pytest.mark.parametrize("fixture", _params())
def test_smoke_metrics_match_the_recorded_ones(fixture: Path, tmp_path: Path):
    if not dispatch.applies():
        pytest.skip("recorded under tests/dispatch.py's x86-64 pin, which this CPU cannot run")
    recorded = json.loads(fixture.read_text())
    name = recorded["experiment"]
    assert recorded.get("dispatch") == dispatch.PINNED, (
        f"{name}: recorded under dispatch {recorded.get('dispatch')}, not tests/dispatch.py's "
        f"{dispatch.PINNED}: python -m tests.record_smoke_metrics {name}"
    )
    unpinned = dispatch.problems()
    assert not unpinned, f"this process is not pinned as tests/dispatch.py says: {unpinned}"
    outputs = tmp_path / "outputs"
    with one_blas_thread():  # the recorded summation order
        run_experiment(name, ["scale=smoke"], results_root=tmp_path / "results", outputs_root=outputs)
        unlimited = threads_beyond_one()
        assert not unlimited, f"{name}: ran beside runtimes not limited to one thread: {unlimited}"
    sweep = outputs / name / "smoke"
    actual = {p.parent.relative_to(sweep).as_posix(): p for p in sweep.rglob("metrics.csv")}
    expected_jobs = recorded["jobs"]
    assert sorted(actual) == sorted(expected_jobs), (
        f"{name}: job set differs from {recorded['source']}: "
        f"missing {sorted(set(expected_jobs) - set(actual))}, "
        f"unexpected {sorted(set(actual) - set(expected_jobs))}"
    )

    problems: list[str] = []
    for job, want in sorted(expected_jobs.items()):
        problems += _differences(f"{name} job {job}", *_read_metrics(actual[job]), want)
    if "runs" in recorded:
        paper, artefact = name.split("/")
        table = tmp_path / "results" / paper / f"{artefact}_smoke_runs.csv"
        problems += _differences(f"{name} runs table", *_read_runs(table), recorded["runs"])
    shown = problems[:MAX_REPORTED]
    more = f"\n... and {len(problems) - len(shown)} more" if len(problems) > len(shown) else ""
    if problems:
        versions = library_versions()
        moved = (
            f"\n(recorded with {recorded.get('versions')}, here {versions}: re-record if the libraries "
            "are the change)"
            if recorded.get("versions") != versions
            else ""
        )
        pytest.fail(
            f"{name}: {len(problems)} metric(s) differ from {recorded['source']}:\n"
            + "\n".join(shown)
            + more
            + moved
        )


def test_every_experiment_has_a_fixture_or_a_reason():
    recorded = {json.loads(p.read_text())["experiment"] for p in FIXTURES.glob("*.json")}
    experiments, excused = set(available()), set(NOT_COVERED)
    assert not recorded & excused, f"both recorded and NOT_COVERED: {sorted(recorded & excused)}"
    assert not excused - experiments, f"NOT_COVERED names no experiment: {sorted(excused - experiments)}"
    assert all(reason.strip() for reason in NOT_COVERED.values())
    for name, reason in NOT_COVERED.items():  # "reports the runs of X (runs_of)": X is its source
        if "(runs_of)" in reason:
            sources = load_spec(name)["runs_of"]
            assert reason.split()[4] in (sources if isinstance(sources, list) else [sources]), name
    assert not SLOW - recorded, f"SLOW names no fixture: {sorted(SLOW - recorded)}"
    uncovered = experiments - recorded - excused
    assert not uncovered, (
        f"experiments with neither a fixture nor a reason in NOT_COVERED: "
        f"{sorted(uncovered)} (python -m tests.record_smoke_metrics --new NAME)"
    )
