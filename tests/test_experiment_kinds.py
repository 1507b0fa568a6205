"""The experiment kinds registry (rbmlab.experiment.kinds.KINDS): every kind declares its name,
section and keys; one kind is the default; a kind registered with one line runs the files that
have its section, and its keys are the only ones such a file may add."""

from __future__ import annotations

from pathlib import Path

import pytest

import rbmlab.experiment.kinds as kinds
import rbmlab.experiment.spec as spec_file
from rbmlab.errors import RbmlabError
from rbmlab.experiment import KINDS, run_experiment


def test_every_kind_declares_itself_and_one_is_the_default():
    classes = [cls for _, cls in KINDS.items()]
    assert [name for name, _ in KINDS.items()] == [cls.name for cls in classes]
    assert sum(cls.section is None for cls in classes) == 1
    sections = [cls.section for cls in classes if cls.section is not None]
    assert len(sections) == len(set(sections))
    assert all(callable(getattr(cls, "run", None)) and isinstance(cls.keys, frozenset) for cls in classes)


class Echo:
    """A toy kind: writes its section's text to results/<paper>/<artefact>_<scale>.md."""

    name = "echo"
    section = "echo"
    keys = frozenset({"echo"})

    def run(self, name, spec, argv, results_root, outputs_root):
        paper, artefact = name.split("/")
        out = Path(results_root) / paper / f"{artefact}_{argv[0].split('=')[1]}.md"
        out.parent.mkdir(parents=True)
        out.write_text(spec["echo"])
        return {"table": out}


def test_a_kind_registered_with_one_line_runs_its_files(tmp_path, monkeypatch):
    monkeypatch.setattr(kinds, "KINDS", KINDS.with_entries(echo="tests.test_experiment_kinds:Echo"))
    monkeypatch.setattr(spec_file, "EXPERIMENTS_DIR", tmp_path)
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.yaml").write_text("title: toy\necho: hello\n")
    (tmp_path / "p" / "b.yaml").write_text("echo: hello\ngrid: {seed: [1]}\n")
    (tmp_path / "p" / "c.yaml").write_text("echo: hello\ngallery: {}\n")
    result = run_experiment("p/a", ["scale=smoke"], results_root=tmp_path / "r")
    assert result["table"].read_text() == "hello"
    with pytest.raises(RbmlabError, match=r"unknown key\(s\) grid for the echo kind$"):
        run_experiment("p/b", ["scale=smoke"], results_root=tmp_path / "r")
    with pytest.raises(RbmlabError, match=r"one kind per file; it has (echo and gallery|gallery and echo)$"):
        run_experiment("p/c", ["scale=smoke"], results_root=tmp_path / "r")


class Count:
    """A toy inference problem: writes ``n`` (an int option, 1 unless set) to count.txt."""

    name = "count"

    def parse(self, options, prefix):
        if set(options) - {"n"} or not isinstance(options.get("n", 1), int):
            raise RbmlabError(f"{prefix}.n: expected the one int option n, got {options!r}")
        return options.get("n", 1)

    def run(self, n, out):
        out.mkdir(parents=True)
        (out / "count.txt").write_text(str(n))
        return {"n": n}


def test_an_inference_problem_registered_with_one_line_runs_at_the_tiers_options(tmp_path, monkeypatch):
    """``inference: {problem, options}``: the tier's options over the section's, the command
    line's over both; the files go to results/<paper>/<artefact>_<scale>/."""
    import rbmlab.experiment.inference as inference

    monkeypatch.setattr(
        inference, "PROBLEMS", inference.PROBLEMS.with_entries(count="tests.test_experiment_kinds:Count")
    )
    monkeypatch.setattr(spec_file, "EXPERIMENTS_DIR", tmp_path)
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.yaml").write_text(
        "inference: {problem: count, n: 2}\nscales: {smoke: {n: 3}, reduced: }\n"
    )
    assert run_experiment("p/a", ["scale=reduced"], results_root=tmp_path / "r") == {"n": 2}
    assert run_experiment("p/a", ["scale=smoke"], results_root=tmp_path / "s") == {"n": 3}
    assert (tmp_path / "s" / "p" / "a_smoke" / "count.txt").read_text() == "3"
    assert run_experiment("p/a", ["scale=smoke", "n=4"], results_root=tmp_path / "c") == {"n": 4}
    with pytest.raises(RbmlabError, match=r"^experiment p/a: inference.n: expected the one int option n"):
        run_experiment("p/a", ["scale=smoke", "n=four"], results_root=tmp_path / "e")
    with pytest.raises(
        RbmlabError, match=r"^experiment p/a: no settings for scale 'paper'; defined: smoke, reduced$"
    ):
        run_experiment("p/a", ["scale=paper"], results_root=tmp_path / "e")
