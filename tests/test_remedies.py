"""Every fix an error message suggests runs: each case triggers a refusal, reads the suggested
overrides out of its one line, applies them to the command (a suggested key replaces the
command's own; ``drop`` names keys the suggestion makes moot) and runs the result to completion.
Suggestions outside ``rbmlab run`` are checked for what they name: the pip extras exist."""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from rbmlab.cli import main
from rbmlab.hydra_app import PLUGINS

QUICK = ["train.epochs=1", "train.progress=false"]
SMALL = ["dataset=bars_stripes", "model.n_hidden=4", "learner.batch_size=full", "evaluator=exact", *QUICK]
FW_SMALL = [o for o in SMALL if not o.startswith("model.n_hidden=")]  # frank_wolfe grows its own units
MNIST = ["dataset=mnist", "dataset.n_train=200", "dataset.n_test=100", "model.n_hidden=8", *QUICK]


def csv_file(name: str, draw):
    def setup(root: Path) -> None:
        np.savetxt(root / name, draw(np.random.default_rng(0)), delimiter=",", fmt="%g")

    return setup


GREY = csv_file("grey.csv", lambda rng: rng.random((60, 6)))
COUNTS = csv_file("counts.csv", lambda rng: rng.integers(0, 4, (60, 6)))
SPINS = csv_file("spins.csv", lambda rng: 2 * rng.integers(0, 2, (60, 6)) - 1)


@dataclass
class Remedy:
    id: str
    argv: list[str]
    pattern: str  # group 1: the suggested overrides, as the error line gives them
    setup: object = None
    drop: tuple[str, ...] = ()  # keys of the command the suggestion makes moot
    extra: tuple[str, ...] = ()  # values the suggestion leaves to the user (a key it names)
    form: str = "{}"  # the override a suggested name stands for


CASES = [
    Remedy(
        "grey-data-binarized",
        ["dataset=file", "dataset.path=grey.csv", *QUICK],
        r"\(set (dataset\.binarize)",
        GREY,
        extra=("dataset.binarize=threshold",),
    ),
    Remedy(
        "grey-data-real-valued-model",
        ["dataset=file", "dataset.path=grey.csv", *QUICK],
        r"or (model=grbm [^()]*?) takes these",
        GREY,
    ),
    Remedy(
        "counts-potts",
        ["dataset=file", "dataset.path=counts.csv", *QUICK],
        r"\((model\.visible_units=potts [^()]*?) takes these",
        COUNTS,
    ),
    Remedy(
        "spins",
        ["dataset=file", "dataset.path=spins.csv", *QUICK],
        r"\((model\.visible_units=spin[^()]*?) takes these",
        SPINS,
    ),
    Remedy(
        "trials-one-at-a-time",
        [*FW_SMALL, "learner=frank_wolfe", "train.trials=2"],
        r"use seeds \((-m seed=\S+)\)",
        drop=("train.trials",),
    ),
    Remedy(
        "alpha-learned-on-an-rbm",
        [*FW_SMALL, "learner=frank_wolfe", "learner.alpha=learned", "learner.alpha_lr=1.0"],
        r"use (model=fractional_rbm)",
    ),
    Remedy(
        "alpha-learned-needs-its-step",
        [*FW_SMALL, "model=fractional_rbm", "learner=frank_wolfe", "learner.alpha=learned"],
        r"e\.g\. (learner\.alpha_lr=\S+)",
    ),
    Remedy(
        "exact-too-large",
        [
            "dataset=ocr_letters",
            "dataset.n_train=100",
            "dataset.n_test=50",
            "model.n_hidden=30",
            "evaluator=exact",
            *QUICK,
        ],
        r"use (evaluator=ais) \(",
    ),
    Remedy(
        "evaluator-does-not-apply",
        [*SMALL, "evaluator=tap_dbm"],
        r"evaluators that apply to model rbm with [^:]*: (\w+)",
        form="evaluator={}",
    ),
    Remedy(
        "gap-rule-needs-both-splits",
        [*MNIST, "dataset.validation=true", "evaluator=exact", "train.stop_rule=gap"],
        r"\(use evaluator=free_energy, exact or ais with (evaluator\.splits=\S+)\)",
    ),
    Remedy(
        "unknown-key",
        [*SMALL, "model=ising", "dataset=ising_samples", "learner=pcd", "evaluator=exact"],
        r"\(`rbmlab run (--cfg job)` shows",
    ),
]


def key(override: str) -> str:
    return override.lstrip("+~").split("=", 1)[0]


def error_line(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main(["run", *argv])
    err = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("rbmlab: error:")]
    assert exit_info.value.code == 2 and len(err) == 1, err
    return err[0]


def completes(argv: list[str], out: Path) -> None:
    """``rbmlab run argv`` (a sweep with -m) ends with status 0 and completed runs."""
    sweep = "-m" in argv
    where = f"hydra.sweep.dir={out}" if sweep else f"hydra.run.dir={out}"
    try:
        main(["run", *argv, where])
    except SystemExit as e:
        assert e.code in (0, None), argv
    summaries = list(out.rglob("summary.json"))
    assert summaries and all(json.loads(s.read_text())["status"] == "completed" for s in summaries), argv


SLOW = {"exact-too-large", "gap-rule-needs-both-splits"}  # a 14,500-temperature AIS; MNIST


@pytest.mark.parametrize(
    "case", [pytest.param(c, id=c.id, marks=[pytest.mark.slow] if c.id in SLOW else []) for c in CASES]
)
def test_every_suggested_fix_runs(case, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    if case.setup is not None:
        case.setup(tmp_path)
    line = error_line(case.argv, capsys)
    found = re.search(case.pattern, line)
    assert found, line
    suggested = case.form.format(found.group(1)).split()
    if suggested == ["--cfg", "job"]:  # a command to look with: it prints the config, runs nothing
        bad = line.removeprefix("rbmlab: error: ").split(":", 1)[0]
        main(["run", *(a for a in case.argv if key(a) != bad), "--cfg", "job"])  # without it
        assert "\nmodel:\n  name: ising\n" in capsys.readouterr().out
        return
    flags = [s for s in suggested if s.startswith("-")]
    overrides = [s for s in suggested if not s.startswith("-")]
    if case.extra:  # the suggestion names a key; the user gives its value
        overrides = [o for o in overrides if "=" in o] + list(case.extra)
    replaced = {key(o) for o in overrides} | set(case.drop)
    command = [*flags, *(a for a in case.argv if key(a) not in replaced), *overrides]
    completes(command, tmp_path / "suggested")


def test_every_missing_plugin_names_an_extra_that_installs_it():
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    extras = pyproject["project"]["optional-dependencies"]
    for (group, option), (module, extra) in PLUGINS.items():
        package = module.removeprefix("hydra_plugins.").replace("_", "-")
        assert any(package in dep for dep in extras[extra]), (group, option, extra)
