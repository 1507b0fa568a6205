"""Unit-type requirements (rbmlab.units.requirements): a learner, its sampler or an evaluator
written for other units than the configuration chooses is refused in one line naming the model
key, before a run directory exists; a saved model through ``rbmlab evaluate`` names the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from rbmlab.cli import main
from rbmlab.evaluators import EVALUATORS
from rbmlab.inference import INFERENCE
from rbmlab.learners import LEARNERS
from rbmlab.units import CATEGORICAL_TYPES, PRIOR_NAMES
from tests.test_bad_input import Case, assert_one_error_line

BARS = ["dataset=bars_stripes", "model.n_hidden=3", "train.epochs=1", "train.progress=false"]


def grown(settings: list[str]) -> list[str]:
    """``settings`` for learner=frank_wolfe, which grows its hidden units (refuses model.n_hidden)."""
    return [o for o in settings if not o.startswith("model.n_hidden=")]


PM1 = [
    "dataset=ising_samples",
    "dataset.side=3",
    "dataset.spins=pm1",
    "dataset.n_train=20",
    "dataset.n_test=20",
    "model.n_hidden=3",
    "train.epochs=1",
    "train.progress=false",
]
REAL = ["model=grbm", "model.visible_prior=truncated_gaussian"]


def tap_grbm(root: Path) -> None:
    """A truncated-Gaussian GRBM trained for one epoch by TAP (its checkpoint in ``g``)."""
    main(["run", *REAL, "learner=tap", "evaluator=tap", *BARS, "hydra.run.dir=g"])


CASES = [
    *(
        Case(
            f"grbm-real-{learner}",
            ["run", *REAL, f"learner={learner}", "evaluator=tap", *BARS],
            f"model.visible_prior: truncated_gaussian visible units; learner={learner} is written for",
        )
        for learner in ("cd", "pcd", "sdcp", "csdcp", "cg", "ssd")
    ),
    *(
        Case(
            f"grbm-gauss-bernoulli-{evaluator}",
            [
                "run",
                "model=grbm",
                "model.visible_prior=gauss_bernoulli",
                "learner=tap",
                f"evaluator={evaluator}",
                *BARS,
            ],
            f"model.visible_prior: gauss_bernoulli visible units; evaluator={evaluator} is written for",
        )
        for evaluator in ("ais", "pl", "exact")
    ),
    Case(
        "rbm-spin-hidden-ais",
        ["run", "model.hidden_units=spin", "evaluator=ais", *BARS],
        "model.hidden_units: spin hidden units; evaluator=ais is written for Bernoulli {0,1} hidden units",
    ),
    Case(
        "rbm-spin-pl",
        ["run", "model.visible_units=spin", "model.hidden_units=spin", "evaluator=pl", *PM1],
        "model.visible_units: spin visible units; evaluator=pl",
    ),
    Case(
        "rbm-spin-frank-wolfe",
        ["run", "model.visible_units=spin", "learner=frank_wolfe", "evaluator=exact", *grown(PM1)],
        "learner=frank_wolfe is written for Bernoulli",
    ),
    Case(
        "grbm-spin-hidden-frank-wolfe",
        [
            "run",
            "model=grbm",
            "model.hidden_prior=spin",
            "learner=frank_wolfe",
            "evaluator=exact",
            *grown(BARS),
        ],
        "model.hidden_prior: spin hidden units",
    ),
    Case(
        "evaluate-real-grbm-ais",
        ["evaluate", "checkpoint=g/checkpoint.npz", "dataset=bars_stripes", "evaluator=ais"],
        "checkpoint: g/checkpoint.npz: truncated_gaussian visible",
        setup=tap_grbm,
    ),
]


def test_the_cases_are_many_and_unique():
    assert len(CASES) >= 14 and len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_component_written_for_other_units_is_refused(case, tmp_path, monkeypatch, capsys):
    assert_one_error_line(main, case, tmp_path, monkeypatch, capsys)
    assert not (tmp_path / "outputs").exists()  # refused before any run directory


def _declared(registry):
    for name, cls in registry.items():
        yield name, getattr(cls, "units", {})


@pytest.mark.parametrize(
    "registry", [EVALUATORS, LEARNERS, INFERENCE], ids=["evaluators", "learners", "inference"]
)
def test_every_declared_requirement_names_settings_and_unit_types_that_exist(registry):
    for name, units in _declared(registry):
        for setting, allowed in units.items():
            assert setting in ("visible", "hidden"), (name, setting)
            assert allowed and set(allowed) <= {*PRIOR_NAMES, *CATEGORICAL_TYPES}, (name, allowed)


def test_a_real_valued_grbm_still_trains_and_scores_with_tap(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    main(["run", *REAL, "learner=tap", "evaluator=tap", *BARS, "hydra.run.dir=g"])
    assert "test log-likelihood (TAP" in capsys.readouterr().out
