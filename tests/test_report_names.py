"""Names in words: every declared metric and every key a committed report shows has a label that
comes from a declaration or the experiment's own report.names, and a rendered report's tables
name no config key or metrics column in their headers."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest
import yaml

from rbmlab.evaluators import declared_metrics
from rbmlab.evaluators.metrics import RUN_METRICS
from rbmlab.report import make_report
from rbmlab.report.names import Names, declared_label, metric_label, metric_spec_of
from tests.test_report import table_rows, write_run, write_variant_run

REPO = Path(__file__).resolve().parents[1]
# runs-table columns that are no config key (rbmlab.report.render.runs_csv)
NOT_KEYS = {
    "run_dir",
    "seed",
    "status",
    "problem",
    "epochs_done",
    "source",
    "commit_from_history",  # rbmlab.report.load.HISTORY_COMMIT: a source the git history names
    "cost_seconds",  # rbmlab.report.load.RUN_COST
    "scale",  # the header's
    "early_stopping.epoch",
}
# a config key or a metrics column as it is spelled: dotted or snake_case
IDENTIFIER = re.compile(r"\b[A-Za-z][A-Za-z0-9]*(?:[._][A-Za-z0-9]+)+\b")


def _report_section(experiment: Path) -> dict:
    return (yaml.safe_load(experiment.read_text()) or {}).get("report") or {}


def _as_list(value) -> list[str]:
    return [value] if isinstance(value, str) else list(value or [])


def _experiment_of(runs_csv: Path) -> Path:
    """results/<paper>/<artefact>_<tier>_runs.csv -> experiments/<paper>/<artefact>.yaml."""
    return REPO / "experiments" / runs_csv.parent.name / f"{runs_csv.name.split('_')[0]}.yaml"


def _shown_keys() -> dict[Path, set[str]]:
    """Per experiment file: the keys its report puts on an axis, in lines or panels, and the keys
    that vary across the runs of its committed results."""
    shown: dict[Path, set[str]] = {}
    for experiment in sorted((REPO / "experiments").glob("*/*.yaml")):
        report = _report_section(experiment)
        keys = {report.get("x", "epoch"), *_as_list(report.get("lines")), *_as_list(report.get("panels"))}
        shown.setdefault(experiment, set()).update(keys)
    for runs_csv in sorted((REPO / "results").glob("*/*_runs.csv")):
        with runs_csv.open() as f:
            header = next(csv.reader(f))
        keys = {c for c in header if c not in NOT_KEYS and not c.startswith("final.")}
        shown.setdefault(_experiment_of(runs_csv), set()).update(keys)
    return shown


def test_every_declared_metric_has_a_label_in_words() -> None:
    specs = [*RUN_METRICS, *declared_metrics()]
    assert len({s.name for s in specs}) > 40
    unlabelled = sorted({s.name for s in specs if not s.label.strip()})
    assert unlabelled == []
    spelled = sorted({s.label for s in specs if IDENTIFIER.search(s.label) or s.label == s.name})
    assert spelled == []


def test_every_key_a_committed_report_shows_has_a_declared_label() -> None:
    shown = _shown_keys()
    assert sum(len(keys) for keys in shown.values()) > 100  # the experiments and results were read
    missing = []
    for experiment, keys in shown.items():
        own = Names.parse(_report_section(experiment).get("names")) if experiment.exists() else Names()
        for key in sorted(keys):
            label = own.labels.get(key) or declared_label(key)
            if not label or IDENTIFIER.search(label):
                missing.append(f"{experiment.relative_to(REPO)}: {key} -> {label!r}")
    assert missing == []


def test_same_key_same_label_and_the_ones_a_reader_meets_most() -> None:
    names = Names()
    assert [
        names.key(k)
        for k in (
            "model.n_hidden",
            "learner.lr",
            "learner.batch_size",
            "task.rate",
            "task.size",
            "learner.name",
            "evaluator.sampler.name",
            "variant",
        )
    ] == [
        "hidden units",
        "learning rate",
        "mini-batch size",
        "fraction of pixels flipped",
        "occluded square (pixels)",
        "learner",
        "sampler",
        "method",
    ]
    assert names.key("learner.k") == "sampler steps per update (k)"  # cd, pcd, reset, s-dcp alike
    assert declared_label("learner.sampler.damping") == declared_label("evaluator.sampler.damping")
    assert declared_label("learner.not_an_option") is None  # the fallback is not a declaration
    assert names.key("learner.not_an_option") == "not an option"


@pytest.mark.parametrize(
    "column, words",
    [
        ("test_log_likelihood", "test log-likelihood (nats)"),
        ("log_z", "log Z (nats)"),
        ("train_log_mmd2", "training log MMD²"),
        ("wall_time", "wall-clock time (s)"),
        ("theta", "coupling θ"),
        ("early_stopping.n_hidden", "hidden units selected by early stopping"),
        ("early_stopping.test_pixel_error", "test pixel error (%) at the early-stopping epoch"),
        ("valid_changed_error", "validation error on changed pixels (%)"),
        ("log_rmse", "log RMSE of the couplings"),
    ],
)
def test_metric_labels_read_as_words_with_their_unit_once(column: str, words: str) -> None:
    assert metric_label(column) == words


def test_every_metric_a_committed_report_uses_is_declared() -> None:
    columns = {_report_section(e).get("metric") for e in (REPO / "experiments").glob("*/*.yaml")}
    for runs_csv in (REPO / "results").glob("*/*_runs.csv"):
        with runs_csv.open() as f:
            columns |= {c[len("final.") :] for c in next(csv.reader(f)) if c.startswith("final.")}
    undeclared = sorted(c for c in columns - {None} if metric_spec_of(c) is None)
    assert undeclared == []
    assert not [c for c in columns - {None} if IDENTIFIER.search(metric_label(c))]


def _header_cells(text: str) -> list[str]:
    """The header cells of every markdown table in ``text``."""
    lines = text.splitlines()
    return [
        c.strip()
        for i, ln in enumerate(lines)
        if ln.startswith("| ") and (i == 0 or not lines[i - 1].startswith("|"))
        for c in ln.strip().strip("|").split("|")
    ]


@pytest.fixture(scope="module")
def small_sweep(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """cd and pcd at two learning rates and two sizes, two seeds: every report kind has groups."""
    root = tmp_path_factory.mktemp("names") / "sweep"
    for learner in ("cd", "pcd"):
        for lr in (0.01, 0.1):
            for n_hidden in (2, 4):
                for seed in (0,):
                    write_run(
                        root / f"{learner}_{lr}_{n_hidden}_{seed}",
                        learner,
                        lr,
                        seed,
                        n_hidden=n_hidden,
                        epochs=[0, 10],
                        recon=True,
                    )
    return root


@pytest.mark.parametrize(
    "options",
    [
        {"lines": "learner.name", "panels": "learner.lr"},  # over epochs
        {
            "x": "model.n_hidden",
            "lines": "learner.name",
            "panels": "learner.lr",
            "markers": {"kind": "fraction_of_max", "fraction": 0.9},
        },
        {
            "x": "learner.name",
            "metric": "test_reconstruction_error",
            "paper": [{"match": {"learner.name": "cd", "model.n_hidden": 2}, "value": -9.0}],
        },
    ],
)
def test_a_rendered_report_names_no_key_or_column_in_its_headers(
    small_sweep: Path, tmp_path: Path, options: dict
) -> None:
    result = make_report(small_sweep, tmp_path / "out", **options)
    text = Path(result["table"]).read_text()
    runs = [c for c in result["summary"].columns if "." in c]
    headers = _header_cells(text)
    assert headers and [c for c in headers if IDENTIFIER.search(c)] == [], headers
    assert not any(key in text.splitlines()[0] for key in [*runs, "test_log_likelihood"])  # the title
    words = result["summary"][["line", "panel", "label"]].to_numpy().ravel()
    assert [w for w in words if IDENTIFIER.search(w)] == []


def test_the_experiments_own_names_and_the_paper_matched_by_the_configs_spelling(tmp_path: Path) -> None:
    root = tmp_path / "sweep"
    for variant, h in (("cd1", 2), ("mle_bp", 4)):
        rows = [{"epoch": e, "test_pixel_error": 10.0 - e - h} for e in range(3)]
        write_variant_run(root / variant / "0", "cd", h, 0, rows, {"test_pixel_error": 7.0 - h})
    result = make_report(
        root,
        tmp_path / "out",
        metric="test_pixel_error",
        lines="variant",
        variants=["cd1", "mle_bp"],
        names={"variant": {"label": "method", "values": {"cd1": "CD-1", "mle_bp": "MLE-BP"}}},
        paper=[{"label": "cd1", "value": 4.5}, {"match": {"variant": "mle_bp"}, "value": 2.5}],
    )
    rows = {r["method"]: r for r in table_rows(Path(result["table"]).read_text())}
    assert set(rows) == {"CD-1", "MLE-BP"}
    assert [rows["CD-1"]["paper"], rows["MLE-BP"]["paper"]] == ["4.5", "2.5"]
    assert rows["CD-1"]["final test pixel error (%): mean ± std"] == "5 ± —"
    assert list(result["summary"]["line"]) == ["CD-1", "MLE-BP"]
    assert list(result["summary"]["line_key"]) == ["cd1", "mle_bp"]
