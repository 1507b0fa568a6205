"""A run stopped and resumed ends where the run that was never stopped ends, at settings where the
state a checkpoint must carry changes the result (issue 57, item 7: every other resume test ran
at momentum 0, where a lost momentum buffer changes nothing): SGD's momentum buffers, Adam's
moments and step count, PCD's persistent chains."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rbmlab.hydra_app import validated_run_config
from rbmlab.run.runner import train
from rbmlab.storage.faults import InjectedFault

RUN = [
    "dataset=bars_stripes",
    "model.n_hidden=4",
    "evaluator=exact",
    "learner.batch_size=5",
    "train.epochs=4",
    "train.checkpoint_every=1",
    "train.progress=false",
    "seed=2",
]
SETTINGS = {
    "sgd-momentum": ["learner=cd", "learner.optimizer.momentum=0.9"],
    "adam": ["learner=cd", "learner/optimizer=adam", "learner.lr=0.01"],
    "pcd-chains": ["learner=pcd", "learner.k=1"],
    # a DBM's chains hold layers 0 and 2, and its PT replicas the same (rbmlab.models.layer_stack)
    "pcd-dbm": ["learner=pcd", "model=dbm", "model.n_hidden=[4,3]", "learner.mean_field_iterations=3"],
    "pt-pcd-dbm": ["learner=pcd", "model=dbm", "model.n_hidden=[4,3]", "learner.sampler=parallel_tempering"],
}


def final(out: Path) -> dict[str, np.ndarray]:
    with np.load(out / "checkpoint.npz", allow_pickle=False) as saved:
        return {k: saved[k].copy() for k in saved.files if k != "meta"}


def run(out: Path, overrides: list[str]) -> None:
    train(validated_run_config([*RUN, *overrides]), out, echo=lambda s: None)


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_a_resumed_run_ends_where_the_straight_one_does(name, tmp_path, monkeypatch):
    settings = SETTINGS[name]
    run(tmp_path / "straight", settings)
    monkeypatch.setenv("RBMLAB_FAULT", "raise_after_epoch:2")
    with pytest.raises(InjectedFault):
        run(tmp_path / "stopped", settings)
    monkeypatch.delenv("RBMLAB_FAULT")
    run(tmp_path / "stopped", [*settings, "resume=true"])
    straight, resumed = final(tmp_path / "straight"), final(tmp_path / "stopped")
    assert straight.keys() == resumed.keys()
    assert ("W2" in straight) == ("model=dbm" in settings)  # the family these settings name
    for key in straight:
        np.testing.assert_array_equal(resumed[key], straight[key], err_msg=key)
    summary = json.loads((tmp_path / "stopped" / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["epochs_done"] == 4


def test_the_state_matters_here():
    """The control: the buffers these runs resume with change their result (so the test above
    would see them lost): a step with a zeroed momentum buffer moves the model elsewhere."""
    from rbmlab.models.rbm import RBM  # noqa: PLC0415
    from rbmlab.optimizers import OPTIMIZERS  # noqa: PLC0415

    model = RBM(np.zeros((3, 2)), np.zeros(3), np.zeros(2))
    optimizer = OPTIMIZERS.build(OPTIMIZERS.parse({"name": "sgd", "momentum": 0.9}))
    grad = {"W": np.ones((3, 2)), "b_v": np.ones(3), "b_h": np.ones(2)}
    with_buffer, state = optimizer.update(model, grad, {}, 0.1)
    again, _ = optimizer.update(with_buffer, grad, state, 0.1)
    lost, _ = optimizer.update(with_buffer, grad, {}, 0.1)
    assert not np.allclose(again.W, lost.W)
