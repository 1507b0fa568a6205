"""Bad input to the surfaces added since the first hardening (issue 57): report commands over a
results tree that is missing, a file, or damaged; own data outside float32; launchers that cannot
launch here; compute budgets never reached. Each case ends in one ``rbmlab: error:`` line and exit
2 before any work (tests.test_bad_input's conventions)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rbmlab.cli import main
from tests.test_bad_input import Case, assert_one_error_line, file_at


def results_tree(**files: bytes):
    """A results tree under ``results/``: {"<paper>/<file>": bytes} (keys spelled with "__" for "/")."""

    def setup(root: Path) -> None:
        for name, content in files.items():
            path = root / "results" / name.replace("__", "/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)

    return setup


RERENDER = ["report", "rerender", "--results-root"]
INDEX = ["report", "index", "--results-root"]
REPORT_CASES = [
    Case("rerender-root-missing", [*RERENDER, "nope"], "--results-root: nope is missing"),
    Case("rerender-root-a-file", [*RERENDER, "f"], "--results-root: f is a file", setup=file_at("f")),
    Case(
        "rerender-nothing-to-draw",
        [*RERENDER, "results"],
        "no sweep report under results",
        setup=results_tree(**{"dcp__README.md": b"# dcp\n"}),
    ),
    Case(
        "rerender-report-without-its-runs",
        [*RERENDER, "results"],
        "figure-3_reduced.md is a sweep's report whose runs CSV (figure-3_reduced_runs.csv) is gone",
        setup=results_tree(**{"dcp__figure-3_reduced.md": b"# a table\n"}),
    ),
    Case(
        "rerender-one-paper-nothing-to-draw",
        [*RERENDER, "results", "tap"],
        "no sweep report under results/tap",
        setup=results_tree(**{"dcp__README.md": b"# dcp\n"}),
    ),
    Case("index-root-missing", [*INDEX, "nope"], "--results-root: nope is missing"),
    Case(
        "index-readme-not-utf8",
        [*INDEX, "results"],
        "report index: cannot read results/dcp/README.md: not UTF-8 text",
        setup=results_tree(**{"dcp__README.md": b"# dcp \xff\xfe\n"}),
    ),
    Case(
        "index-check-readme-not-utf8",
        [*INDEX, "results", "--check"],
        "not UTF-8 text",
        setup=results_tree(**{"dcp__README.md": b"# dcp \xff\xfe\n"}),
    ),
]

CASES = REPORT_CASES


def test_the_cases_are_counted_and_ids_unique():
    assert len(CASES) == 8
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_gives_one_error_line(case, tmp_path, monkeypatch, capsys):
    assert_one_error_line(main, case, tmp_path, monkeypatch, capsys)
