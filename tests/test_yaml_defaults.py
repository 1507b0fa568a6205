"""conf/<group>/<name>.yaml and the component's configuration class state the same default for every
option the component declares itself: a run from the command line (Hydra composes the yaml) and a
component built in Python (``LEARNERS.parse({"name": ...})``, the estimators) start from the same
settings. Options inherited from a base configuration (a learner's lr, batch_size, an evaluator's
splits) are the yaml's to tune per component and are not compared; the yaml that sets an own option
to a paper's value instead is declared below with the reason. (The solvers' and parallel
tempering's yaml files have tests of their own: tests/test_solvers.py, tests/test_parallel_tempering.py.)
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from rbmlab.evaluators import EVALUATORS
from rbmlab.learners import LEARNERS
from rbmlab.models import MODELS
from rbmlab.optimizers import OPTIMIZERS

CONF = Path(__file__).resolve().parent.parent / "conf"
GROUPS = {"learner": LEARNERS, "evaluator": EVALUATORS, "model": MODELS, "learner/optimizer": OPTIMIZERS}
PAPER_SETTING = {  # (group, name, option): why the yaml states another value than the class
    (
        "learner",
        "cg",
        "k",
    ): "dcp Sec. 4.1: K = 24 for the large datasets (S-DCP's d = 6, K' = 4); the class keeps CD's 1",
    (
        "learner",
        "ssd",
        "k",
    ): "dcp Sec. 4.2.2: K = 25 as in Carlson et al. (2015); ssd is CD-k with the spectral optimizer",
}
CASES = [(group, name) for group, registry in GROUPS.items() for name in registry.names()]


def own_defaults(config_class) -> dict:
    """{option: default} for the options ``config_class`` declares itself (not inherited)."""
    own = set(vars(config_class).get("__annotations__", {})) - {"name"}
    return {
        f.name: f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[misc]
        for f in dataclasses.fields(config_class)
        if f.name in own
    }


@pytest.mark.parametrize("group, name", CASES, ids=[f"{g}-{n}" for g, n in CASES])
def test_the_yaml_states_a_components_own_options_at_their_defaults(group, name):
    stated = yaml.safe_load((CONF / group / f"{name}.yaml").read_text()) or {}
    defaults = own_defaults(GROUPS[group].get(name).config_class)
    differ = {
        key: (stated[key], default)
        for key, default in defaults.items()
        if key in stated and not dataclasses.is_dataclass(default) and stated[key] != default
    }
    declared = {key for (g, n, key) in PAPER_SETTING if (g, n) == (group, name)}
    assert set(differ) == declared, f"yaml vs class default: {differ}"


def test_the_comparison_covers_the_registries():
    compared = sum(
        len(
            set(own_defaults(GROUPS[g].get(n).config_class))
            & set(yaml.safe_load((CONF / g / f"{n}.yaml").read_text()) or {})
        )
        for g, n in CASES
    )
    assert compared >= 140, compared


@pytest.mark.parametrize("group, name", CASES, ids=[f"{g}-{n}" for g, n in CASES])
def test_the_yaml_lists_every_option_so_the_command_line_can_set_it(group, name):
    """Hydra refuses ``<group>.<key>=...`` for a key its yaml lacks: every option the component
    declares itself is in its yaml (a DBM's unit types were once settable from Python only)."""
    stated = yaml.safe_load((CONF / group / f"{name}.yaml").read_text()) or {}
    missing = set(own_defaults(GROUPS[group].get(name).config_class)) - set(stated)
    assert not missing, f"conf/{group}/{name}.yaml lacks {sorted(missing)}"
