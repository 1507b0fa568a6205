"""The bad-input corpus: every case must end in exactly one ``rbmlab: error: ...`` line on stderr,
exit status 2, no traceback, and no file that looks like a finished result.

Cases run in-process through ``rbmlab.cli.main`` (a subprocess per case would cost ~1.5 s each),
each in its own empty working directory. A case is ``Case(id, argv, needle, setup, env)``:
``setup(tmp_path)`` writes the bad files the case needs; ``needle`` must appear in the error line
(the key or file it names). Sections are grouped by command; add a case to the list of its command.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from rbmlab.cli import main

SMALL = ["dataset=bars_stripes", "model.n_hidden=4", "evaluator=exact", "learner.k=1",
         "learner.batch_size=full", "train.epochs=1", "train.progress=false"]


@dataclass
class Case:
    id: str
    argv: list[str]
    needle: str
    setup: Callable[[Path], None] | None = None
    env: dict[str, str] = field(default_factory=dict)


def rbm_npz(path: Path, **replace) -> None:
    """A valid 9-visible, 4-hidden RBM checkpoint (bars_stripes size), with entries replaced."""
    rng = np.random.default_rng(0)
    arrays = {"W": 0.1 * rng.standard_normal((9, 4)), "b_v": np.zeros(9), "b_h": np.zeros(4)}
    arrays.update(replace)
    np.savez(path, **arrays)


EVALUATE = ["evaluate", "dataset=bars_stripes", "evaluator=exact"]

# ---------------------------------------------------------------- rbmlab run
RUN_CASES = [
    Case("run-unknown-key", ["run", "learner.lrr=0.1"], "learner.lrr"),
    Case("run-lr-not-a-number", ["run", "learner.lr=abc"], "learner.lr"),
    Case("run-lr-inf", ["run", "learner.lr=inf"], "learner.lr"),
]

# ---------------------------------------------------------------- rbmlab evaluate
EVALUATE_CASES = [
    Case("evaluate-missing-file", [*EVALUATE, "checkpoint=missing.npz"], "missing.npz"),
    Case("evaluate-no-b_v", [*EVALUATE, "checkpoint=bad.npz"], "b_v",
         setup=lambda d: np.savez(d / "bad.npz", W=np.zeros((9, 4)))),
]

# ---------------------------------------------------------------- rbmlab report
REPORT_CASES = [
    Case("report-no-such-dir", ["report", "nowhere"], "nowhere"),
]

# ---------------------------------------------------------------- rbmlab data / experiment
OTHER_CASES = [
    Case("data-unknown-action", ["data", "nope"], "rbmlab data"),
    Case("experiment-unknown", ["experiment", "nope/nothing"], "nope/nothing"),
]

CASES = RUN_CASES + EVALUATE_CASES + REPORT_CASES + OTHER_CASES


def looks_complete(paths, root: Path) -> list[str]:
    """Those of ``paths`` (under ``root``) that a user could take for a finished result."""
    found = []
    for path in paths:
        if not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if path.name.endswith(".tmp"):
            found.append(f"{rel} (temporary file left behind)")
        elif path.name == "summary.json":
            status = json.loads(path.read_text()).get("status")
            if status in ("completed", "running"):
                found.append(f"{rel} (status {status})")
        elif path.name == "checkpoint.npz" or path.suffix in (".md", ".png"):
            found.append(rel)
        elif path.stat().st_size == 0 and path.suffix in (".json", ".csv"):
            found.append(f"{rel} (empty)")
    return found


def test_the_corpus_is_large_and_ids_are_unique():
    assert len(CASES) >= 60, f"the corpus has {len(CASES)} cases; the acceptance asks for 60"
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_gives_one_error_line(case, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    for key, value in {"HYDRA_FULL_ERROR": "0", **case.env}.items():
        monkeypatch.setenv(key, value)
    if case.setup is not None:
        case.setup(tmp_path)
    before = set(tmp_path.rglob("*"))
    with pytest.raises(SystemExit) as exit_info:
        main(case.argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert exit_info.value.code == 2, err
    assert len(lines) == 1 and lines[0].startswith("rbmlab: error:"), err
    assert case.needle in lines[0], lines[0]
    assert "Traceback" not in err
    left = looks_complete(set(tmp_path.rglob("*")) - before, tmp_path)
    assert not left, left
