"""The test processes run under tests/dispatch.py's pin, and the regression fixtures' comparison
catches a 1 % change of a recorded value under it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests import dispatch
from tests import test_regression_smoke as regression
from tests.test_regression_smoke import ATOL, FIXTURES, RTOL, _differences

pytestmark = pytest.mark.skipif(not dispatch.applies(), reason="the pin names x86-64 features")
CHECKOUT = Path(__file__).resolve().parents[1]


def test_this_process_runs_pinned():
    assert dispatch.problems() == []


def test_a_process_a_test_starts_inherits_the_pin():
    probe = "import scipy.linalg; from tests import dispatch; print(dispatch.problems())"
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=CHECKOUT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_pinning_after_numpy_loaded_is_refused(monkeypatch):
    monkeypatch.setenv("OPENBLAS_CORETYPE", "SkylakeX")  # as if the pin had not been set at start
    with pytest.raises(RuntimeError, match="after numpy was imported"):
        dispatch.pin()


def _floats(rows: list[list]) -> list[tuple[int, int]]:
    return [
        (i, j)
        for i, row in enumerate(rows)
        for j, v in enumerate(row)
        if isinstance(v, float) and v == v and abs(v) not in (0.0, float("inf"))
    ]


def _tables(recorded: dict):
    """Each recorded table of a fixture: its jobs' metrics rows, and its report's runs table."""
    yield from recorded["jobs"].items()
    if "runs" in recorded:
        yield "runs table", recorded["runs"]


@pytest.mark.parametrize("fixture", sorted(FIXTURES.glob("*.json")), ids=lambda p: p.stem)
def test_every_recorded_float_changed_by_one_percent_is_a_difference(fixture: Path):
    """Each float of each recorded table, moved by 1 % in the recording, is reported at its row and
    column, and nothing else is; a value so near 0 that 1 % of it is within ATOL (1e-6) could not
    be: the fixtures hold none."""
    recorded = json.loads(fixture.read_text())
    assert recorded["dispatch"] == dispatch.PINNED
    for where, want in _tables(recorded):
        ran = [list(row) for row in want["rows"]]  # what a run that reproduces the recording reads
        assert _differences(where, want["columns"], ran, want) == []
        for i, j in _floats(ran):
            value = ran[i][j]
            assert 0.01 * abs(value) > ATOL + RTOL * abs(value), (where, i, want["columns"][j], value)
            want["rows"][i][j] = value * 1.01
            found = _differences(where, want["columns"], ran, want)
            want["rows"][i][j] = value
            assert len(found) == 1 and f", column {want['columns'][j]}, row {i}," in found[0], (where, found)


@pytest.mark.slow  # the fast suite runs frank_wolfe/cd-grid against its recording already
def test_a_run_against_its_recording_moved_by_one_percent_fails(tmp_path: Path):
    """End to end, under the pin: frank_wolfe/cd-grid at smoke (one job; AIS) against its fixture
    with the last AIS log Z moved by 1 %: the regression test fails on that value alone."""
    recorded = json.loads((FIXTURES / "frank_wolfe__cd-grid.json").read_text())
    (job,) = recorded["jobs"].values()
    column = job["columns"].index("log_z")
    job["rows"][-1][column] *= 1.01
    moved = tmp_path / "moved.json"
    moved.write_text(json.dumps(recorded))
    with pytest.raises(pytest.fail.Exception, match=r"1 metric\(s\) differ(.|\n)*column log_z, row 3"):
        regression.test_smoke_metrics_match_the_recorded_ones(moved, tmp_path)
