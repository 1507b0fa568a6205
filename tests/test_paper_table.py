"""report.table: a table artefact in the paper's layout (rbmlab.report.paper_table) and its dot
chart (rbmlab.report.table_figure), on a fixture with known values."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rbmlab.errors import RbmlabError
from rbmlab.report import make_report
from rbmlab.report.names import Names
from rbmlab.report.paper_table import TableSpec, check_table_keys, paper_table_markdown, table_cells
from rbmlab.report.spec import ReportSpec
from rbmlab.report.table_figure import dot_chart, dot_figure
from tests.test_report import write_run

# (variant, rate) -> (pixel errors of seeds 0, 1; log-likelihoods of seeds 0, 1)
VALUES = {
    ("a", 0.1): ([2.0, 4.0], [-10.0, -12.0]),
    ("a", 0.2): ([5.0, 7.0], [-20.0, -20.0]),
    ("b", 0.1): ([1.0, 2.0], [-30.0, -30.0]),
    ("b", 0.2): ([8.0, 8.0], [-5.0, -7.0]),
}
NAMES = Names.parse(
    {
        "variant": {"label": "method", "values": {"b": "B-method", "a": "A-method"}},
        "task.rate": {"label": "noise", "values": {0.2: "20 %", 0.1: "10 %"}},
    }
)
LL = Names().metric("test_log_likelihood")  # its declared name in words
PIXEL_PAPER = [
    {"match": {"variant": "a", "task.rate": 0.1}, "value": 2.5},
    {"match": {"variant": "b", "task.rate": 0.1}, "value": 1.0},
    {"match": {"variant": "a", "task.rate": 0.2}, "value": 6.5},
    {"match": {"variant": "c"}, "value": 9.0},
]


@pytest.fixture(scope="module")
def fixture() -> tuple[pd.DataFrame, dict[str, pd.Series]]:
    """Two methods × two rates × two seeds, and a diverged third seed of (a, 0.1)."""
    rows, pixel, ll = [], {}, {}
    for (variant, rate), (errors, lls) in VALUES.items():
        for seed, (e, v) in enumerate(zip(errors, lls)):
            run = f"{variant}/{rate}/{seed}"
            rows.append(
                {"run_dir": run, "variant": variant, "task.rate": rate, "seed": seed, "status": "completed"}
            )
            pixel[run], ll[run] = e, v
    rows.append({"run_dir": "a/0.1/2", "variant": "a", "task.rate": 0.1, "seed": 2, "status": "diverged"})
    pixel["a/0.1/2"] = ll["a/0.1/2"] = np.nan
    return pd.DataFrame(rows), {"test_pixel_error": pd.Series(pixel), "test_log_likelihood": pd.Series(ll)}


def spec(**more) -> TableSpec:
    return TableSpec.parse(
        {
            "rows": "variant",
            "columns": "task.rate",
            "metrics": [
                {"metric": "test_pixel_error", "label": "All", "paper": PIXEL_PAPER},
                {"metric": "test_log_likelihood", "label": "LL"},
            ],
            **more,
        }
    )


def test_cells_mean_std_n_and_order(fixture) -> None:
    runs, finals = fixture
    data = table_cells(runs, finals, spec(), NAMES)
    assert data.rows == [("b",), ("a",)] and data.columns == [("0.2",), ("0.1",)]  # names' order
    cell = data.cells.set_index(["row", "column", "metric"]).loc[(("a",), ("0.1",), "test_pixel_error")]
    assert (cell["mean"], cell["n"], cell["runs"], cell["paper"]) == (3.0, 2, 3, 2.5)
    assert cell["std"] == pytest.approx(math.sqrt(2.0))
    assert data.unmatched == ["All: {'variant': 'c'}"]


def test_markdown_layout_delta_and_bold(fixture) -> None:
    runs, finals = fixture
    text = paper_table_markdown(table_cells(runs, finals, spec(), NAMES), spec(), NAMES)
    lines = text.splitlines()
    assert lines[0] == (
        "| method | 20 % All: ours | paper | Δ | 20 % LL: ours | 10 % All: ours | paper | Δ | 10 % LL: ours |"
    )
    # pixel error: lower is best (b at 10 %: 1.5, a at 20 %: 6); log-likelihood: higher (b at 20 %, a at 10 %)
    assert lines[2] == (
        "| B-method | 8 ± 0 (2) | — | — | **-6 ± 1.414 (2)** | "
        "**1.500 ± 0.707 (2)** | **1** | +0.500 | -30 ± 0 (2) |"
    )
    assert lines[3] == (
        "| A-method | **6 ± 1.414 (2)** | **6.5** | -0.500 | -20 ± 0 (2) | "
        "3 ± 1.414 (2 of 3) | 2.5 | +0.500 | **-11 ± 1.414 (2 of 3)** |"
    )
    assert "**Bold**: the best of ours in each column, and the best of the paper's" in lines[5]
    assert "All: lower is better; LL: higher is better" in lines[5]


def test_text_paper_entries_are_a_column_without_delta(fixture) -> None:
    runs, finals = fixture
    table = TableSpec.parse(
        {
            "rows": "variant",
            "metrics": [
                {
                    "metric": "test_log_likelihood",
                    "paper": [
                        {"match": {"variant": "a"}, "value": "Init 1"},
                        {"match": {"variant": "b"}, "value": "Init 2"},
                    ],
                }
            ],
        }
    )
    runs = runs[runs["task.rate"] == 0.2]
    lines = paper_table_markdown(table_cells(runs, finals, table, NAMES), table, NAMES).splitlines()
    assert lines[0] == f"| method | paper | {LL}: ours |"
    assert lines[2:4] == ["| B-method | Init 2 | **-6 ± 1.414 (2)** |", "| A-method | Init 1 | -20 ± 0 (2) |"]
    assert "Δ" not in lines[5] and "the paper's own words" in lines[5]


@pytest.mark.parametrize(
    "table, error",
    [
        (
            {"rows": "variant", "colums": "x"},
            "exp: report.table: unknown key(s) colums; known: rows, columns, metrics, bold",
        ),
        (
            {"columns": "task.rate"},
            "exp: report.table.rows: missing; the config key(s) whose values make the rows",
        ),
        ({"rows": 3}, "exp: report.table.rows: expected a config key or a list of them, got 3"),
        (
            {"rows": "variant", "columns": "variant"},
            "exp: report.table.columns: variant already makes the rows",
        ),
        (
            {"rows": "variant", "metrics": [{"metric": "m", "lable": "x"}]},
            "exp: report.table.metrics[0]: expected a metric or {metric, label, paper}, "
            "got {'metric': 'm', 'lable': 'x'}",
        ),
    ],
)
def test_validation_one_line(table, error) -> None:
    with pytest.raises(RbmlabError) as excinfo:
        ReportSpec.parse({"table": table}, "exp")
    assert str(excinfo.value) == error


def test_rows_must_be_config_keys(fixture) -> None:
    with pytest.raises(
        RbmlabError, match=r"^report.table.columns: unknown key 'task.size'; keys: variant, task.rate"
    ):
        check_table_keys(fixture[0], TableSpec.parse({"rows": "variant", "columns": "task.size"}))


def test_dot_chart_has_paper_legend_and_named_labels(fixture) -> None:
    runs, finals = fixture
    data = table_cells(runs, finals, spec(), NAMES)
    fig = dot_figure(data, spec(), NAMES, "title")
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["ours (mean ± std)", "paper"]
    axes = [ax for ax in fig.axes if ax.get_visible()]
    assert [ax.get_title() for ax in axes] == ["20 % · All", "20 % · LL", "10 % · All", "10 % · LL"]
    assert [t.get_text() for t in axes[0].get_yticklabels()] == ["B-method", "A-method"]  # top first
    assert axes[0].get_xlabel() == Names().metric("test_pixel_error") and axes[0].get_ylabel() == "method"
    assert dot_chart(data, spec(), NAMES).startswith(b"\x89PNG")


def test_make_report_writes_the_paper_table(tmp_path: Path) -> None:
    for learner in ("cd", "pcd"):
        for seed in (0, 1):
            write_run(tmp_path / "runs" / learner / str(seed), learner, 0.1, seed, epochs=[0, 5])
    report = {
        "metric": "test_log_likelihood",
        "paper": {"cd": -13.0},
        "table": {"rows": "learner.name"},
        "names": {"learner.name": {"label": "learner", "values": {"pcd": "PCD", "cd": "CD"}}},
    }
    out = make_report(tmp_path / "runs", tmp_path / "out", ReportSpec.parse(report, "exp"), filename_stem="t")
    text = out["table"].read_text()
    assert f"| learner | {LL}: ours | paper | Δ |" in text
    assert (
        "| PCD | **-13.177 ± 0.247 (2)** | — | — |\n| CD | -15.177 ± 0.247 (2) | **-13** | -2.177 |" in text
    )
    assert out["plot"].read_bytes().startswith(b"\x89PNG")
    with pytest.raises(RbmlabError, match=r"^report.table.rows: unknown key 'variant'"):
        make_report(
            tmp_path / "runs",
            tmp_path / "out2",
            ReportSpec.parse({**report, "table": {"rows": "variant"}}, "e"),
        )
    with pytest.raises(
        RbmlabError, match=r"^report.table.metrics\[1\]: unknown metric 'test_changed_error'; available: "
    ):
        make_report(
            tmp_path / "runs",
            tmp_path / "out2",
            ReportSpec.parse(
                {
                    **report,
                    "table": {
                        "rows": "learner.name",
                        "metrics": ["test_log_likelihood", "test_changed_error"],
                    },
                },
                "e",
            ),
        )


def test_bold_false_marks_nothing(fixture) -> None:
    runs, finals = fixture
    table = TableSpec.parse(
        {
            "rows": "variant",
            "columns": "task.rate",
            "bold": False,
            "metrics": [{"metric": "test_pixel_error", "paper": PIXEL_PAPER}],
        }
    )
    text = paper_table_markdown(table_cells(runs, finals, table, NAMES), table, NAMES)
    assert "**" not in text and "| B-method | 8 ± 0 (2) | — | — | 1.500 ± 0.707 (2) | 1 | +0.500 |" in text
    with pytest.raises(RbmlabError, match=r"^exp: report.table.bold: expected true or false, got 'no'$"):
        ReportSpec.parse({"table": {"rows": "variant", "bold": "no"}}, "exp")
