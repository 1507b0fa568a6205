"""rbmlab.hydra_app.compose keeps the composition of the overrides that choose (config groups,
packages, hydra.*) and applies the value overrides to a copy with Hydra's own override step: the
result and the errors must be those of Hydra composing every override itself."""

import os
import shutil

import pytest
from omegaconf import OmegaConf

from rbmlab import hydra_app
from rbmlab.errors import RbmlabError

COMPOSED = [
    ("config", []),
    ("config", ["learner=sdcp", "dataset=bars_stripes", "learner.lr=0.07", "seed=5"]),
    ("config", ["learner.lr=0.07", "learner=pcd", "train.epochs=3"]),  # a value before its group's choice
    # add, force-add, delete, a dict merged
    ("config", ["+extra=1", "++seed=4", "~tags", "train={epochs: 2, eval_every: 0}"]),
    ("config", ["evaluator=exact", "model.n_hidden=7", "~train.budgets=[]", "hydra.run.dir=x"]),
    ("config", ["learner=pcd", "learner/optimizer=adam", "learner.lr=0.2"]),
    (
        "config",
        ["model.n_hidden=7", "model={n_hidden: 9}", "learner.lr=0.5", "learner={lr: 0.1}"],
    ),  # in order
    ("evaluate", ["checkpoint=a.npz", "dataset=mnist", "evaluator=exact", "split=valid", "trial=2"]),
]

REFUSED = [
    ("config", ["learner.no_such_key=1"]),
    ("config", ["tags={a: 1}"]),  # a merge Hydra refuses
    ("config", ["+seed=3"]),
    ("config", ["~no_such_key"]),
    ("config", ["~seed=7"]),
    ("config", ["learner=no_such_learner", "seed=2"]),
    ("config", ["learner.lr=0.1,0.2"]),  # a sweep: Hydra's compose refuses it
    ("config", ["learner@x=cd"]),
    ("config", ["~model.n_hidden", "model={n_hidden: 9}"]),  # a group's dict value merged after the deletion
    ("evaluate", ["checkpoint=a.npz", "no_such_key=1"]),
]


def full(config_name, overrides):
    return hydra_app._hydra_compose(hydra_app.CONF_DIR, config_name, tuple(overrides), hydra_config=False)


@pytest.mark.parametrize("config_name,overrides", COMPOSED)
def test_a_kept_composition_with_the_values_applied_is_hydras_full_composition(config_name, overrides):
    ours, hydras = hydra_app.compose(config_name, overrides), full(config_name, overrides)
    assert OmegaConf.to_yaml(ours) == OmegaConf.to_yaml(hydras)
    assert OmegaConf.is_struct(ours) and OmegaConf.is_struct(hydras)


@pytest.mark.parametrize("config_name,overrides", REFUSED)
def test_a_refused_override_is_refused_in_hydras_words(config_name, overrides):
    with pytest.raises(RbmlabError) as hydras:
        full(config_name, overrides)
    with pytest.raises(RbmlabError) as ours:
        hydra_app.compose(config_name, overrides)
    assert str(ours.value) == str(hydras.value)


def test_each_composition_is_a_copy_of_the_kept_one():
    first = hydra_app.compose("config", ["learner=sdcp", "seed=3"])
    first.learner.lr = 123.0
    again = hydra_app.compose("config", ["learner=sdcp"])
    assert again.seed == 0 and again.learner.lr != 123.0


def test_an_edited_configuration_is_composed_again(tmp_path, monkeypatch):
    conf = shutil.copytree(hydra_app.CONF_DIR, tmp_path / "conf")  # mtimes kept: the stamp too
    monkeypatch.setattr(hydra_app, "CONF_DIR", conf)
    epochs = hydra_app.compose("config", ["learner=sdcp"]).train.epochs
    learner = conf / "config.yaml"
    learner.write_text(learner.read_text().replace(f"  epochs: {epochs}\n", f"  epochs: {epochs + 4}\n"))
    later = learner.stat().st_mtime_ns + 10**9  # a second on: coarse file-system clocks too
    os.utime(learner, ns=(later, later))
    assert hydra_app.compose("config", ["learner=sdcp"]).train.epochs == epochs + 4


def test_the_groups_hydra_knows_outside_its_own_are_the_directories_of_conf():
    from hydra import initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    with initialize_config_dir(config_dir=str(hydra_app.CONF_DIR), version_base="1.3"):
        groups = set(GlobalHydra.instance().config_loader().list_groups("")) - {"hydra"}
    GlobalHydra.instance().clear()
    assert groups == {p.name for p in hydra_app.CONF_DIR.iterdir() if p.is_dir()} - {"hydra"}


def test_a_composition_resolves_its_interpolations_afresh():
    """Hydra resolves ``${now:}`` while composing; a copy of the kept composition must not carry
    those values (a second run's directory would get the first one's time)."""
    import datetime

    hydra_app.compose("config", ["seed=1"])  # kept, with whatever composing resolved
    stamps = iter(["first", "second"])
    OmegaConf.register_new_resolver("now", lambda pattern: next(stamps), use_cache=True, replace=True)
    try:
        cfg = hydra_app.compose("config", ["seed=2", "+stamp=${now:%H-%M-%S}"])
        assert cfg.stamp == "first"
    finally:
        OmegaConf.register_new_resolver(
            "now", lambda pattern: datetime.datetime.now().strftime(pattern), use_cache=True, replace=True
        )
