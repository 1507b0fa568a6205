"""Packed runs (rbmlab.run.packed, ``hydra/launcher=packed``): each run of a pack equals the same
run trained alone, bit for bit on numpy: its metrics rows (the wall clock aside), checkpoint
arrays, final metrics, stop rule's selection; and a run's resume or interruption leaves the
others as they would be alone.

The packs differ in seed, learning rate, a task condition (flipped pixels: another training set)
and train.epochs; the models are small RBMs on bars and stripes, exact log-likelihoods (TAP
learning's at couplings strong enough that each run's TAP chains stop at iterations of their own)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rbmlab.backend import get_backend, ops
from rbmlab.backend.run_streams import RunStreams
from rbmlab.data import load_dataset
from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.hydra_app import validated_run_config
from rbmlab.learners import LEARNERS
from rbmlab.models import MODELS
from rbmlab.optimizers.base import RunRates
from rbmlab.run.packed import Job, stack_models, stack_states, train_jobs
from rbmlab.run.runner import train

BASE = [
    "dataset=bars_stripes",
    "model.n_hidden=6",
    "evaluator=exact",
    "train.epochs=3",
    "train.progress=false",
    "learner.batch_size=4",
]
# seeds, rates, a task condition and a shorter run: what a paper tier's jobs differ in
JOBS = [
    ["seed=0", "learner.lr=0.05"],
    ["seed=1", "learner.lr=0.1"],
    ["seed=2", "learner.lr=0.05", "task=flip", "task.rate=0.2"],
    ["seed=3", "learner.lr=0.02", "train.epochs=2"],
]
TAP = ["learner=tap", "model.weight_std=1.5"]
LEARNER_SETTINGS = {
    "cd": ["learner=cd", "learner.k=2"],
    "pcd": ["learner=pcd"],
    "pcd_full_batch_adam": ["learner=pcd", "learner.batch_size=full", "learner/optimizer=adam"],
    "sdcp": ["learner=sdcp", "learner.d=2", "learner.k=2"],
    "csdcp": ["learner=csdcp", "learner.d=2", "learner.k=1"],
    "cg_momentum": ["learner=cg", "learner.optimizer.momentum=0.5"],
    "cd_spectral": ["learner=cd", "learner/optimizer=spectral"],
    # TAP learning (tap paper Alg. 2) at couplings where chains converge at different iterations:
    # each run's chains are set aside and its iteration stops by its own count, as alone
    "tap": [*TAP, "learner.max_iter=60", "learner.tol=1e-6"],
    "tap_persistent_decay": [
        *TAP,
        "learner.persistent=true",
        "learner.lr_decay=0.8",
        "learner.max_iter=60",
        "learner.tol=1e-6",
        "learner.optimizer.momentum=0.5",
        "learner.optimizer.momentum_on=interactions",
    ],
    "tap_grbm_decay": [  # tap Fig. 3(b)'s real-valued prior and decayed rate
        *TAP,
        "model=grbm",
        "model.visible_prior=gauss_bernoulli",
        "evaluator=tap",
        "evaluator.progress=false",
        "learner.lr_decay=0.8",
        "learner.max_iter=60",
        "learner.tol=1e-6",
    ],
    "nmf_adam": [*TAP, "learner.inference=nmf", "learner.max_iter=60", "learner/optimizer=adam"],
    "adatap": [*TAP, "learner.inference=adatap", "learner.max_iter=40", "learner.tol=1e-6"],
    "adatap_persistent_decay": [
        *TAP,
        "learner.inference=adatap",
        "learner.persistent=true",
        "learner.lr_decay=0.8",
        "learner.max_iter=40",
        "learner.tol=1e-6",
    ],
}
TAP_SETTINGS = [name for name, overrides in LEARNER_SETTINGS.items() if overrides[: len(TAP)] == TAP]


def quiet(line: str) -> None:
    pass


def checkpoint_arrays(run_dir: Path) -> dict[str, np.ndarray]:
    with np.load(run_dir / "checkpoint.npz", allow_pickle=True) as f:
        return {k: f[k] for k in f.files if k != "meta"}


def metrics_of(run_dir: Path) -> pd.DataFrame:
    return pd.read_csv(run_dir / "metrics.csv").drop(columns="wall_time")


def summary_of(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text())


def assert_same_run(alone: Path, packed: Path) -> None:
    pd.testing.assert_frame_equal(metrics_of(packed), metrics_of(alone), check_exact=True)
    a, b = checkpoint_arrays(alone), checkpoint_arrays(packed)
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(b[k], a[k], err_msg=k)
    sa, sb = summary_of(alone), summary_of(packed)
    for key in ("status", "final", "epochs_done", "updates", "stopped"):
        assert sb.get(key) == sa.get(key), key


@pytest.mark.parametrize("learner", LEARNER_SETTINGS)
def test_each_packed_run_equals_the_run_alone(learner, tmp_path):
    configs = [validated_run_config(BASE + LEARNER_SETTINGS[learner] + job) for job in JOBS]
    for i, cfg in enumerate(configs):
        train(cfg, tmp_path / f"alone{i}", echo=quiet)
    lines: list[str] = []
    results = train_jobs(
        [Job(cfg, tmp_path / f"packed{i}", [], lines.append) for i, cfg in enumerate(configs)]
    )
    assert all(r["status"] == "completed" for r in results)
    assert lines.count("packed with 3 other run(s)") == 4
    for i in range(len(JOBS)):
        assert summary_of(tmp_path / f"packed{i}")["packed_runs"] == 4
        assert_same_run(tmp_path / f"alone{i}", tmp_path / f"packed{i}")
    if learner in TAP_SETTINGS:  # the runs' TAP iterations ended apart: each stopped on its own
        iterations = {tuple(metrics_of(tmp_path / f"alone{i}")["tap_train_iterations"]) for i in range(3)}
        assert len(iterations) > 1, iterations


def test_a_run_that_cannot_pack_trains_alone_and_says_why(tmp_path):
    configs = [validated_run_config(BASE + job) for job in (["seed=0"], ["seed=1", "train.trials=2"])]
    lines: list[str] = []
    results = train_jobs([Job(cfg, tmp_path / f"r{i}", [], lines.append) for i, cfg in enumerate(configs)])
    assert [r["status"] for r in results] == ["completed", "completed"]
    assert "trains alone: train.trials batches its own models" in lines
    train(configs[0], tmp_path / "alone", echo=quiet)
    assert_same_run(tmp_path / "alone", tmp_path / "r0")


STOPPING = [
    "dataset=caltech101",
    "dataset.n_train=20",
    "model.n_hidden=8",
    "evaluator=exact",
    "evaluator.splits=[train,valid]",
    "learner.batch_size=5",
    "train.epochs=12",
    "train.progress=false",
    "train.stop_rule=valid",
    "train.stop_metric=valid_log_likelihood",
    "train.patience=2",
]


def test_a_stopped_run_leaves_the_pack_with_its_selection_and_the_others_go_on(tmp_path):
    """lr 0.5 stops at epoch 2 (patience 2 points), lr 0.02 trains on after them: each equals
    itself alone, selected.npz included."""
    try:
        load_dataset("caltech101", n_train=20)
    except RbmlabError:
        pytest.skip("caltech101 files not here")
    jobs = [["seed=0", "learner.lr=0.5"], ["seed=1", "learner.lr=0.02"], ["seed=2", "learner.lr=0.5"]]
    configs = [validated_run_config(STOPPING + job) for job in jobs]
    for i, cfg in enumerate(configs):
        train(cfg, tmp_path / f"alone{i}", echo=quiet)
    train_jobs([Job(cfg, tmp_path / f"packed{i}", [], quiet) for i, cfg in enumerate(configs)])
    epochs = [summary_of(tmp_path / f"alone{i}")["epochs_done"] for i in range(3)]
    assert min(epochs) < max(epochs)  # a case where one stops and another goes on
    for i in range(3):
        assert_same_run(tmp_path / f"alone{i}", tmp_path / f"packed{i}")
        with (
            np.load(tmp_path / f"alone{i}" / "selected.npz", allow_pickle=True) as a,
            np.load(tmp_path / f"packed{i}" / "selected.npz", allow_pickle=True) as b,
        ):
            for k in a.files:
                if k != "meta":
                    np.testing.assert_array_equal(b[k], a[k])


def rbmlab(*args: str, env: dict | None = None, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "rbmlab", *args],
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        **kw,
    )


def test_a_packed_sweep_interrupted_and_resumed_equals_the_runs_alone(tmp_path):
    """``rbmlab run -m hydra/launcher=packed``: job 1 already has a checkpoint at epoch 2 (trained
    alone, killed), the others start at 0 and catch up; SIGTERM after the pack's epoch 3 records
    every run interrupted; resume=true finishes each, equal to the run alone."""
    sweep = ["seed=0,1,2", "learner.lr=0.05", "train.epochs=5", *BASE[:-3], "learner.batch_size=4"]
    one = rbmlab(
        "run",
        *[o for o in sweep if not o.startswith("seed")],
        "seed=1",
        f"hydra.run.dir={tmp_path / 'sweep' / '1'}",
        "train.progress=false",
        env={"RBMLAB_FAULT": "after_epoch:2"},
    )
    one.communicate(timeout=120)
    assert one.returncode == -signal.SIGKILL
    assert summary_of(tmp_path / "sweep" / "1")["epochs_done"] == 2
    args = [
        "run",
        "-m",
        *sweep,
        "hydra/launcher=packed",
        f"hydra.sweep.dir={tmp_path / 'sweep'}",
        "train.progress=false",
    ]
    first = rbmlab(*args, "resume=true", env={"RBMLAB_FAULT": "stall_after_epoch:3"})
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done = [(tmp_path / "sweep" / str(j) / "summary.json") for j in range(3)]
        if all(p.exists() and summary_of(p.parent).get("epochs_done") == 3 for p in done):
            break
        time.sleep(0.2)
    first.send_signal(signal.SIGTERM)
    out, _ = first.communicate(timeout=60)
    assert first.returncode != 0, out
    for j in range(3):
        s = summary_of(tmp_path / "sweep" / str(j))
        assert (s["status"], s["epochs_done"]) == ("interrupted", 3), out
    second = rbmlab(*args, "resume=true")
    out, _ = second.communicate(timeout=120)
    assert second.returncode == 0, out
    for j in range(3):
        cfg = validated_run_config(
            [*BASE[:-3], "learner.batch_size=4", "learner.lr=0.05", "train.epochs=5", f"seed={j}"]
        )
        train(cfg, tmp_path / f"alone{j}", echo=quiet)
        assert_same_run(tmp_path / f"alone{j}", tmp_path / "sweep" / str(j))


# ---------------------------------------------------------------- the parts


def test_run_streams_draw_each_slice_as_its_run_alone():
    be = get_backend()
    streams = RunStreams([be.rng(s, 1, 4) for s in (3, 5)])
    u = ops.uniform(streams, (2, 4, 7), np.float32)
    for r, s in enumerate((3, 5)):
        np.testing.assert_array_equal(u[r], ops.uniform(be.rng(s, 1, 4), (4, 7), np.float32))
    logits = np.random.default_rng(0).normal(size=(2, 4, 7)).astype(np.float32)
    bias = np.random.default_rng(1).normal(size=(2, 1, 7)).astype(np.float32)
    packed = ops.bernoulli_logits_(
        logits.copy(), RunStreams([be.rng(s, 2) for s in (3, 5)]), bias=bias, scale=2.0
    )
    for r, s in enumerate((3, 5)):
        alone = ops.bernoulli_logits_(logits[r].copy(), be.rng(s, 2), bias=bias[r], scale=2.0)
        np.testing.assert_array_equal(packed[r], alone)
    with pytest.raises(ValueError, match="run axis"):
        ops.uniform(streams, (3, 7), np.float32)


def test_run_rates_scale_each_run_as_its_float_would():
    theta = np.ones((3, 2, 2), np.float32)
    rates = RunRates([0.1, 0.3, 1e-3]) * 0.7
    shaped = rates.shaped_like(theta)
    assert shaped.shape == (3, 1, 1) and shaped.dtype == np.float32
    for r, lr in enumerate((0.1, 0.3, 1e-3)):
        assert (theta[r] * (lr * 0.7))[0, 0] == (theta * shaped)[r, 0, 0]


def test_stacked_states_keep_host_counters_and_refuse_disagreeing_ones():
    rbm = MODELS.get("rbm")
    be = get_backend()
    cfg = MODELS.parse({"name": "rbm", "n_hidden": 3})
    models = [
        rbm.initialize(cfg, xp=np, rng=be.rng(s, 0), data_mean=np.full(4, 0.5), dtype=be.dtype)
        for s in (0, 1)
    ]
    packed = stack_models(models)
    assert packed.W.shape == (2, 4, 3) and np.array_equal(packed.W[1], models[1].W)
    learner = LEARNERS.build(LEARNERS.parse({"name": "pcd", "batch_size": 2}))
    data = Batch(np.zeros((4, 4), np.float32))
    states = [learner.init_state(m, data, be.rng(0)) for m in models]
    assert stack_states([{**s, "adam_t": 3} for s in states])["adam_t"] == 3
    with pytest.raises(RuntimeError, match="adam_t"):
        stack_states([{**states[0], "adam_t": 3}, {**states[1], "adam_t": 4}])
