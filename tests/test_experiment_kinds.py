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
    with pytest.raises(RbmlabError, match=r"unknown key\(s\) grid for a echo experiment$"):
        run_experiment("p/b", ["scale=smoke"], results_root=tmp_path / "r")
    with pytest.raises(RbmlabError, match=r"one kind per file; it has (echo and gallery|gallery and echo)$"):
        run_experiment("p/c", ["scale=smoke"], results_root=tmp_path / "r")
