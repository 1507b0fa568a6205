"""Optimizer groups swap cleanly: for every learner with a ``learner/optimizer`` group and every
optimizer of the registry, ``learner=L learner/optimizer=O`` composes, validates and takes a
training step with O. A learner's own settings of an optimizer (tap Table 1's momentum and decay)
live in conf/learner/optimizer_tuning/<learner>_<optimizer>.yaml, chosen with the optimizer, so
that they never leak into another optimizer's group (issue 33)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import yaml

from rbmlab.errors import RbmlabError
from rbmlab.hydra_app import CONF_DIR, validated_run_config
from rbmlab.learners import LEARNERS
from rbmlab.models import MODELS
from rbmlab.optimizers import OPTIMIZERS
from tests.test_conformance import examples, make_model, symmetric
from tests.test_run_identity import recorded_hash

TUNING = CONF_DIR / "learner" / "optimizer_tuning"


def learner_files() -> dict[str, dict]:
    return {p.stem: yaml.safe_load(p.read_text()) for p in sorted((CONF_DIR / "learner").glob("*.yaml"))}


def with_optimizer_group() -> list[str]:
    """The learners whose conf file has an optimizer group in its defaults list."""
    return [
        name
        for name, conf in learner_files().items()
        if any(isinstance(d, dict) and "optimizer" in d for d in conf.get("defaults", []))
    ]


PAIRS = [(learner, optimizer) for learner in with_optimizer_group() for optimizer in OPTIMIZERS.names()]


def test_the_pairs_cover_every_learner_and_optimizer():
    assert {learner for learner, _ in PAIRS} == set(learner_files()) and len(PAIRS) >= 3 * 17
    assert {optimizer for _, optimizer in PAIRS} == set(OPTIMIZERS.names())


def test_no_learner_file_sets_optimizer_keys_itself():
    """Keys under ``optimizer:`` in a learner's own body would be merged into whichever optimizer
    group is chosen (the leak of issue 33): they belong in optimizer_tuning/<learner>_<optimizer>."""
    assert [name for name, conf in learner_files().items() if "optimizer" in conf] == []


def test_every_tuning_file_names_a_learner_and_optimizer_and_only_their_options():
    files = sorted(TUNING.glob("*.yaml"))
    assert [p.stem for p in files] == ["tap_adam", "tap_sgd"]
    for path in files:
        learner, optimizer = path.stem.rsplit("_", 1)
        assert learner in learner_files() and optimizer in OPTIMIZERS.names()
        assert (
            f"optimizer_tuning@optimizer: {learner}_${{learner/optimizer}}"
            in (CONF_DIR / "learner" / f"{learner}.yaml").read_text()
        )
        fields = {f.name for f in dataclasses.fields(OPTIMIZERS.get(optimizer).config_class)}
        assert set(yaml.safe_load(path.read_text())) <= fields - {"name"}


FAST = ("cd", "tap", "tap_dbm")  # the pairs and the default learner in make test; the rest: slow set


@pytest.mark.parametrize(
    "learner,optimizer",
    [pytest.param(a, b, marks=() if a in FAST else pytest.mark.slow) for a, b in PAIRS],
    ids=[f"{a}-{b}" for a, b in PAIRS],
)
def test_every_learner_takes_every_optimizer_and_steps_with_it(learner, optimizer):
    reads = ["learner.bias_fit=fixed"] if learner == "frank_wolfe" else []  # converge reads no optimizer
    cfg = validated_run_config([f"learner={learner}", *reads, f"learner/optimizer={optimizer}"])
    chosen = cfg.learner.optimizer
    assert chosen.name == optimizer and type(chosen) is OPTIMIZERS.get(optimizer).config_class
    built = LEARNERS.build(dataclasses.replace(cfg.learner, batch_size="full"))
    assert type(built.optimizer) is OPTIMIZERS.get(optimizer)
    for family in MODELS.names():  # the first small family the learner trains
        try:
            built.check(MODELS.get(family))
        except RbmlabError:
            continue
        break
    else:
        pytest.fail(f"learner {learner} trains no model family")
    backend, model_class, _, model = make_model(family, trials=2 if built.trains_trials else 0)
    model = built.initial_model(symmetric(model), pretrained=True)
    train = examples(backend, model_class, 16, 3)
    state = built.init_state(model, train, backend.rng(0))
    new, _ = built.step(model, state, train, backend.rng(1))
    assert all(np.isfinite(getattr(new, p)).all() for p in model_class.PARAMS)
    assert any(not np.array_equal(getattr(new, p), getattr(model, p)) for p in model_class.PARAMS)


def test_tap_keeps_table_1_settings_with_sgd_and_its_decay_with_adam():
    """The paper's optimizer settings come with the optimizer they belong to; the hash of the
    default tap job is the one it had when they were in tap.yaml (runs resume as before)."""
    sgd = validated_run_config(["learner=tap"])
    assert dataclasses.asdict(sgd.learner.optimizer) == {
        "name": "sgd",
        "momentum": 0.5,
        "weight_decay": 0.001,
        "l1": 0.0,
        "momentum_on": "interactions",
    }
    assert recorded_hash(["learner=tap"]) == "a32e68b25b8fd813"  # under the run defaults of then
    adam = validated_run_config(["learner=tap", "learner/optimizer=adam"]).learner.optimizer
    assert (adam.name, adam.weight_decay, adam.beta1) == ("adam", 0.001, 0.9)
    spectral = validated_run_config(["learner=tap", "learner/optimizer=spectral"]).learner.optimizer
    assert dataclasses.asdict(spectral) == {"name": "spectral", "bias_lr": 0.0}
    dbm = validated_run_config(["learner=tap_dbm", "learner/optimizer=adam"]).learner.optimizer
    assert (dbm.name, dbm.weight_decay) == ("adam", 0.0)
    # an explicit key still wins over the tuning, and a key of another optimizer is still refused
    assert (
        validated_run_config(["learner=tap", "learner.optimizer.momentum=0.9"]).learner.optimizer.momentum
        == 0.9
    )
    with pytest.raises(RbmlabError, match=r"^learner.optimizer.momentum: unknown config key"):
        validated_run_config(["learner=tap", "learner/optimizer=adam", "learner.optimizer.momentum=0.5"])
