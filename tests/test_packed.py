"""Packed runs (rbmlab.run.packed, ``hydra/launcher=packed``): each run of a pack equals the same
run trained alone, bit for bit on numpy: its metrics rows (the wall clock aside), checkpoint
arrays, final metrics, stop rule's selection; and a run's resume or interruption leaves the
others as they would be alone.

The packs differ in seed, learning rate, a task condition (flipped pixels: another training set)
and train.epochs; the models are small RBMs on bars and stripes, exact log-likelihoods (TAP
learning's at couplings strong enough that each run's TAP chains stop at iterations of their own),
and small conditional RBMs on flipped bars and stripes, pixel errors (crbm_bp's learners)."""

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

from rbmlab.backend import cupy_available, get_backend, ops
from rbmlab.backend.run_streams import RunStreams
from rbmlab.cli import main
from rbmlab.data import load_dataset
from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.hydra_app import validated_run_config
from rbmlab.inference.matrix_bp import loopy_bp, pairwise_beliefs
from rbmlab.inference.mean_field import mean_field
from rbmlab.learners import LEARNERS
from rbmlab.models import MODELS
from rbmlab.optimizers.base import RunRates
from rbmlab.run.packed import Job, stack_models, stack_states, train_jobs
from rbmlab.run.runner import train
from rbmlab.storage.faults import InjectedFault
from tests.sync_counting import Counted, counted, reset

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


def alone_and_packed(configs: list, tmp_path: Path, lines: list[str] | None = None) -> list:
    """Train each configuration alone into alone<i> and all of them packed into packed<i> (their
    lines into ``lines``); the packed runs' results."""
    for i, cfg in enumerate(configs):
        train(cfg, tmp_path / f"alone{i}", echo=quiet)
    echo = quiet if lines is None else lines.append
    return train_jobs([Job(cfg, tmp_path / f"packed{i}", [], echo) for i, cfg in enumerate(configs)])


@pytest.mark.parametrize("learner", LEARNER_SETTINGS)
def test_each_packed_run_equals_the_run_alone(learner, tmp_path):
    configs = [validated_run_config(BASE + LEARNER_SETTINGS[learner] + job) for job in JOBS]
    lines: list[str] = []
    results = alone_and_packed(configs, tmp_path, lines)
    assert all(r["status"] == "completed" for r in results)
    assert lines.count("packed with 3 other run(s)") == 4
    for i, cfg in enumerate(configs):  # each run's log: its lines and one per epoch
        log = (tmp_path / f"packed{i}" / "rbmlab.log").read_text()
        assert log.count(" - epoch ") == cfg.train.epochs and "packed with 3 other run(s)" in log
    for i in range(len(JOBS)):
        assert summary_of(tmp_path / f"packed{i}")["packed_runs"] == 4
        assert_same_run(tmp_path / f"alone{i}", tmp_path / f"packed{i}")
    if learner in TAP_SETTINGS:  # the runs' TAP iterations ended apart: each stopped on its own
        iterations = {tuple(metrics_of(tmp_path / f"alone{i}")["tap_train_iterations"]) for i in range(3)}
        assert len(iterations) > 1, iterations


CRBM_BASE = [
    "model=crbm",
    "model.n_hidden=4",
    "model.weight_std=0.5",  # couplings that BP and mean field take iterations to settle
    "dataset=bars_stripes",
    "task=flip",
    "evaluator=pixel_error",
    "evaluator.splits=[test]",
    "train.epochs=3",
    "train.progress=false",
    "learner.batch_size=8",
]
# seeds, rates, the flip rate (each run its own training set) and a shorter run
CRBM_JOBS = [
    ["seed=0", "learner.lr=0.3", "task.rate=0.2"],
    ["seed=1", "learner.lr=1.0", "task.rate=0.2"],
    ["seed=2", "learner.lr=0.3", "task.rate=0.1"],
    ["seed=3", "learner.lr=0.1", "task.rate=0.3", "train.epochs=2"],
]
# tolerances at which some runs' instances all converge in a step and others' only in part
CRBM_LEARNER_SETTINGS = {
    "mle_bp_damped": [
        "learner=mle_bp",
        "learner.damping=0.3",
        "learner.tol=1e-6",
        "learner.base_iterations=10",
    ],
    "mle_bp_adam": [
        "learner=mle_bp",
        "learner/optimizer=adam",
        "learner.batch_size=full",
        "learner.tol=1e-9",
    ],
    "mle_mf": ["learner=mle_mf", "learner.tol=1e-6", "evaluator.inference=mf"],
    "mssvm": ["learner=mssvm", "learner.tol=1e-6", "learner.base_iterations=1", "evaluator.inference=mixed"],
    "lssvm": ["learner=lssvm", "learner.tol=1e-6", "evaluator.inference=max"],
    "conditional_cd": ["learner=conditional_cd", "learner.k=2", "evaluator.inference=mf"],
    "cd_percloss": ["learner=cd_percloss", "learner.k=3", "evaluator.inference=mf"],
    "logistic": ["learner=logistic", "evaluator.inference=none"],
}


@pytest.mark.parametrize("learner", CRBM_LEARNER_SETTINGS)
def test_each_packed_conditional_rbm_run_equals_the_run_alone(learner, tmp_path):
    """crbm_bp's learners on a flip task: BP and mean field stop each run's instances where they
    stop alone (the share that converged is each run's own), the Gibbs chains draw from each run's
    streams."""
    configs = [validated_run_config(CRBM_BASE + CRBM_LEARNER_SETTINGS[learner] + job) for job in CRBM_JOBS]
    lines: list[str] = []
    results = alone_and_packed(configs, tmp_path, lines)
    assert all(r["status"] == "completed" for r in results)
    assert lines.count("packed with 3 other run(s)") == 4
    for i in range(len(CRBM_JOBS)):
        assert_same_run(tmp_path / f"alone{i}", tmp_path / f"packed{i}")


def test_a_run_that_cannot_pack_trains_alone_and_says_why(tmp_path):
    configs = [validated_run_config(BASE + job) for job in (["seed=0"], ["seed=1", "train.trials=2"])]
    lines: list[str] = []
    results = train_jobs([Job(cfg, tmp_path / f"r{i}", [], lines.append) for i, cfg in enumerate(configs)])
    assert [r["status"] for r in results] == ["completed", "completed"]
    assert "trains alone: train.trials batches its own models" in lines
    train(configs[0], tmp_path / "alone", echo=quiet)
    assert_same_run(tmp_path / "alone", tmp_path / "r0")


def test_on_the_host_runs_too_large_to_stack_train_one_after_another(tmp_path, monkeypatch):
    """Above HOST_STACK_PARAMETERS (here: 9 × 6 + 9 + 6 = 69 > 60) a CPU trains a pack's runs one
    after another, says so, and each equals its run alone; a device would stack them."""
    from rbmlab.run import packed

    monkeypatch.setattr(packed, "HOST_STACK_PARAMETERS", 60)
    monkeypatch.setattr(packed, "train_pack", lambda members: pytest.fail("stacked on the host"))
    configs = [validated_run_config(BASE + job) for job in JOBS]
    lines: list[str] = []
    train_jobs([Job(c, tmp_path / f"r{i}", [], lines.append) for i, c in enumerate(configs)])
    assert (
        lines.count(
            "packed with 3 other run(s), one after another on the CPU (models this size stack on a device)"
        )
        == 4
    )
    for i, cfg in enumerate(configs):
        assert "packed_runs" not in summary_of(tmp_path / f"r{i}")
        train(cfg, tmp_path / f"alone{i}", echo=quiet)
        assert_same_run(tmp_path / f"alone{i}", tmp_path / f"r{i}")


def test_max_runs_splits_the_jobs_into_packs_in_job_order(tmp_path, monkeypatch):
    """Groups of max_runs in job order, each finished before the next is opened (no run waits
    as running while another group trains)."""
    from rbmlab.run import packed

    configs = [validated_run_config(BASE + [f"seed={s}"]) for s in range(5)]
    lines: dict[int, list[str]] = {i: [] for i in range(5)}
    seen, real = [], packed._train_group

    def group(jobs, max_runs):
        statuses = [
            summary_of(tmp_path / f"r{i}").get("status") if (tmp_path / f"r{i}").exists() else None
            for i in range(5)
        ]
        seen.append(statuses)
        return real(jobs, max_runs)

    monkeypatch.setattr(packed, "_train_group", group)
    train_jobs([Job(c, tmp_path / f"r{i}", [], lines[i].append) for i, c in enumerate(configs)], max_runs=2)
    assert seen == [
        [None] * 5,
        ["completed"] * 2 + [None] * 3,
        ["completed"] * 4 + [None],
    ]
    packed = [summary_of(tmp_path / f"r{i}").get("packed_runs") for i in range(5)]
    assert packed == [2, 2, 2, 2, None]  # the fifth trains alone
    assert [("packed with 1 other run(s)" in lines[i]) for i in range(5)] == [True] * 4 + [False]
    train(configs[4], tmp_path / "alone", echo=quiet)
    assert_same_run(tmp_path / "alone", tmp_path / "r4")


STOPPING = [
    "learner=cd",
    "dataset=caltech101",
    "dataset.n_train=20",
    "model.n_hidden=8",
    "evaluator=exact",
    "evaluator.splits=[train,valid]",
    "learner.batch_size=5",
    "train.epochs=12",
    "train.eval_every=1",
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
    alone_and_packed([validated_run_config(STOPPING + job) for job in jobs], tmp_path)
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


def test_a_packed_sweep_interrupted_and_resumed_equals_the_runs_alone(tmp_path, monkeypatch):
    """``rbmlab run -m hydra/launcher=packed``: job 1 already has a checkpoint at epoch 2 (trained
    alone, failed there), the others start at 0 and catch up; SIGTERM after the pack's epoch 3
    records every run interrupted; resume=true finishes each, equal to the run alone."""
    sweep = ["seed=0,1,2", "learner.lr=0.05", "train.epochs=5", *BASE[:-3], "learner.batch_size=4"]
    one = validated_run_config([o for o in sweep if not o.startswith("seed")] + ["seed=1"])
    monkeypatch.setenv("RBMLAB_FAULT", "raise_after_epoch:2")
    with pytest.raises(InjectedFault):
        train(one, tmp_path / "sweep" / "1", echo=quiet)
    monkeypatch.delenv("RBMLAB_FAULT")
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
    main([*args, "resume=true"])  # in this process: the launcher's resume, as rbmlab run does it
    for j in range(3):
        cfg = validated_run_config(
            [*BASE[:-3], "learner.batch_size=4", "learner.lr=0.05", "train.epochs=5", f"seed={j}"]
        )
        train(cfg, tmp_path / f"alone{j}", echo=quiet)
        assert_same_run(tmp_path / f"alone{j}", tmp_path / "sweep" / str(j))


@pytest.mark.gpu
@pytest.mark.skipif(not cupy_available(), reason="needs cupy and a GPU")
@pytest.mark.parametrize(
    "learner", ["cd", "pcd_full_batch_adam", "sdcp", "mle_bp_damped", "mle_mf", "conditional_cd"]
)
def test_on_the_device_each_packed_run_equals_the_run_alone(learner, tmp_path):
    """backend=cupy: one launch per draw for every run (rbmlab.backend.cupy_kernels), each run's
    block keyed as it is alone; the products batched (cuBLAS). Equal to the bit where the batched
    products equal the single ones; a difference in the last bit of a logit can flip a draw, so a
    failure here is a trajectory that parted, to be read against the runs' spread, not a tolerance."""
    base, jobs, settings = (
        (BASE, JOBS, LEARNER_SETTINGS)
        if learner in LEARNER_SETTINGS
        else (CRBM_BASE, CRBM_JOBS, CRBM_LEARNER_SETTINGS)
    )
    alone_and_packed(
        [validated_run_config(base + settings[learner] + job + ["backend=cupy"]) for job in jobs], tmp_path
    )
    for i in range(len(jobs)):
        assert_same_run(tmp_path / f"alone{i}", tmp_path / f"packed{i}")


# ---------------------------------------------------------------- every learner and family that packs


def packed_pairs():
    """(learner, family, optimizer) for every learner that packs on every family it trains whose
    negative-phase sampler packs too (rbmlab.run.packed.alone_because), with sgd and adam."""
    from rbmlab.errors import RbmlabError  # noqa: PLC0415

    for name in LEARNERS.names():
        learner = LEARNERS.build(LEARNERS.parse({"name": name}))
        for family in MODELS.names():
            cls = MODELS.get(family)
            try:
                learner.check(cls)
            except RbmlabError:
                continue
            if learner.packs and (not learner.samples or learner.sampler_for(cls).packs):
                for optimizer in ("sgd", "adam"):
                    yield pytest.param(name, family, optimizer, id=f"{name}-{family}-{optimizer}")


def packed_epoch(name: str, family: str, optimizer: str, wrap=lambda a: a, runs: int = 3):
    """An epoch (two steps) of ``runs`` runs of learner ``name`` on small models of ``family``
    (seeds 0, 1, ..., each its own rate and data), packed, every array of models, states and data
    through ``wrap``; (packed model, [(model, state) of each run trained alone])."""
    from rbmlab.run.training import epoch_pass, packed_epoch_pass  # noqa: PLC0415
    from tests.test_conformance import examples, make_model, symmetric  # noqa: PLC0415

    options = {"name": name, "batch_size": 8, "optimizer": {"name": optimizer}}
    rates = [0.01 * (seed + 1) for seed in range(runs)]
    alone, models, states, trains = [], [], [], []
    for seed in range(runs):
        learner = LEARNERS.build(LEARNERS.parse({**options, "lr": rates[seed]}))
        backend, cls, _, model = make_model(family, seed=seed)
        train = examples(backend, cls, 16, 3 + seed)
        model = learner.initial_model(symmetric(model), pretrained=True, train=train)
        state = learner.init_state(model, train, backend.rng(seed))
        models.append(model)
        states.append(state)
        trains.append(train)
        alone.append(epoch_pass(learner, backend, seed, 1, train, 16, 8, model, state)[:2])
    learner = LEARNERS.build(LEARNERS.parse(options))
    learner.lr = RunRates(rates)
    model, state = stack_models(models).map(wrap), wrap(stack_states(states))
    trains = [
        Batch(
            wrap(t.inputs), targets=wrap(t.targets) if t.targets.dtype.kind == "f" else t.targets, mask=t.mask
        )
        for t in trains
    ]
    keys = [(seed, 1) for seed in range(runs)]
    model, _, _ = packed_epoch_pass(learner, backend, keys, trains, 16, 8, model, state)
    return model, alone


@pytest.mark.parametrize("name,family,optimizer", list(packed_pairs()))
def test_every_learner_that_packs_steps_each_run_as_it_steps_alone(name, family, optimizer):
    packed, alone = packed_epoch(name, family, optimizer)
    for r, (model, _) in enumerate(alone):
        for p in type(model).PARAMS:
            np.testing.assert_array_equal(getattr(packed, p)[r], getattr(model, p), err_msg=f"run {r} {p}")


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
    """Adam's chain (lr · a / b · s) on packed rates rounds each run's rate to float32 as the chain
    on its float does; the base rates are shaped once per number of dimensions, not per step."""
    theta = np.ones((3, 2, 2), np.float32)
    rates = RunRates([0.1, 0.3, 1e-3])
    for t in range(1, 40):
        a, b = (1.0 - 0.999**t) ** 0.5, 1.0 - 0.9**t
        shaped = (rates * a / b * 1.7).shaped_like(theta)
        assert shaped.shape == (3, 1, 1) and shaped.dtype == np.float32
        for r, lr in enumerate((0.1, 0.3, 1e-3)):
            assert (theta[r] * (lr * a / b * 1.7))[0, 0] == (theta * shaped)[r, 0, 0]
        (rates * a).shaped_like(theta[:, 0])
    assert len(rates._cache) == 2  # one base array per number of dimensions (3-d, 2-d)


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


def packed_rbms(rng, rows=7, n_v=6, n_h=4):
    """Packed batches of three runs' RBMs: run r's W scaled by 0.5, 2 or 4 (the stronger its
    couplings, the later its instances converge), every third instance with strong fields (it
    converges first)."""
    scales = np.array([0.5, 2.0, 4.0], np.float32)[:, None, None]
    W = rng.standard_normal((len(scales), n_v, n_h)).astype(np.float32) * scales
    b_v = rng.standard_normal((len(scales), rows, n_v)).astype(np.float32)
    b_h = rng.standard_normal((len(scales), rows, n_h)).astype(np.float32)
    b_v[:, ::3] *= 4.0
    return W, b_v, b_h


def assert_each_run_alone(packed, alone: list, fields: tuple[str, ...], case: str) -> None:
    """Slice r of each of ``packed``'s ``fields`` equals ``alone[r]``'s."""
    for r, solo in enumerate(alone):
        for field in fields:
            want = getattr(solo, field)
            np.testing.assert_array_equal(
                np.asarray(getattr(packed, field)[r]), want, err_msg=f"{case} {field}"
            )


@pytest.mark.parametrize("mode", ["sum", "max", "mixed"])
def test_packed_bp_gives_each_runs_instances_what_they_get_alone(mode):
    """Every damping and tolerance, from fresh and warm messages, on the host path (instances set
    aside where they converge) and the device path (masked, no read): run r's beliefs, messages
    and flags are those of its batch alone, though the runs stop at different iterations; Γ too."""
    W, b_v, b_h = packed_rbms(np.random.default_rng(8))
    runs = range(len(W))
    warm = [loopy_bp(W[r], b_v[r], b_h[r], mode=mode, max_iter=2, tol=None) for r in runs]
    packed_warm = loopy_bp(W, b_v, b_h, mode=mode, max_iter=2, tol=None)
    fields = ("eta_v", "eta_h", "L", "K", "converged")
    for damping in (0.0, 0.3):
        for tol in (None, 1e-3, 1e-6):
            for starts, packed_start in (([None] * len(W), None), (warm, packed_warm)):
                case = f"damping={damping} tol={tol} warm={packed_start is not None}"
                options = {"mode": mode, "max_iter": 12, "tol": tol, "damping": damping}
                alone = [loopy_bp(W[r], b_v[r], b_h[r], init=starts[r], **options) for r in runs]
                host = loopy_bp(W, b_v, b_h, init=packed_start, **options)
                reset()
                device = loopy_bp(counted(W), counted(b_v), counted(b_h), init=packed_start, **options)
                assert Counted.reads == 0, case
                assert_each_run_alone(host, alone, fields, case)
                assert_each_run_alone(device, alone, fields, f"{case} device")
                gamma = pairwise_beliefs(W, host)
                for r, solo in enumerate(alone):
                    np.testing.assert_array_equal(gamma[r], pairwise_beliefs(W[r], solo), err_msg=case)
    stopped = [solo.iterations for solo in alone]  # damping 0.3, tol 1e-6, warm
    assert len(set(stopped)) > 1 and min(stopped) < 12, stopped  # runs that stop apart
    assert not all(solo.converged.all() for solo in alone)  # one iterates to the end


def test_packed_mean_field_stops_each_run_where_it_stops_alone():
    """Host and device paths: run r's marginals, flags and iteration count are its batch's alone,
    though the runs stop at different iterations."""
    W, b_v, b_h = packed_rbms(np.random.default_rng(8))
    for tol in (1e-2, 1e-4, 1e-6):
        alone = [mean_field(W[r], b_v[r], b_h[r], max_iter=15, tol=tol) for r in range(len(W))]
        host = mean_field(W, b_v, b_h, max_iter=15, tol=tol)
        reset()
        device = mean_field(counted(W), counted(b_v), counted(b_h), max_iter=15, tol=tol)
        assert Counted.reads == 0
        fields = ("tau_v", "tau_h", "converged", "iterations")
        assert_each_run_alone(host, alone, fields, f"tol={tol}")
        assert_each_run_alone(device, alone, fields, f"tol={tol} device")
        stopped = [solo.iterations for solo in alone]
        assert len(set(stopped)) > 1 and min(stopped) < 15, stopped
    assert not all(solo.converged.all() for solo in alone)  # at 1e-6 a run iterates to the end


@pytest.mark.parametrize(
    "differ",
    [
        ["evaluator.splits=[train]", "evaluator.splits=[test]"],  # the splits each evaluation scores
        ["model.visible_units=bernoulli", "model.visible_units=potts"],  # a one-hot encoding of the data
    ],
)
def test_jobs_of_one_dataset_keep_the_data_their_own_settings_make(differ, tmp_path):
    """Data shared between jobs (one dataset and task) are only those every such job prepares alike:
    a job whose evaluator scores other splits, or whose model encodes the data otherwise, keeps its own."""
    configs = [validated_run_config(BASE + ["learner=cd", f"seed={i}", o]) for i, o in enumerate(differ)]
    results = train_jobs([Job(c, tmp_path / f"packed{i}", [], quiet) for i, c in enumerate(configs)])
    assert [r["status"] for r in results] == ["completed", "completed"]
    for i, cfg in enumerate(configs):
        train(cfg, tmp_path / f"alone{i}", echo=quiet)
        assert_same_run(tmp_path / f"alone{i}", tmp_path / f"packed{i}")


def test_a_job_whose_directory_is_refused_fails_alone(tmp_path):
    """A job whose directory holds earlier work (or is locked) fails with that reason; the jobs
    before and after it train, their records untouched by its error."""
    configs = [validated_run_config(BASE + ["learner=cd", f"seed={i}"]) for i in range(3)]
    train(configs[1], tmp_path / "r1", echo=quiet)
    results = train_jobs([Job(c, tmp_path / f"r{i}", [], quiet) for i, c in enumerate(configs)])
    assert isinstance(results[1], RbmlabError) and "resume=true" in str(results[1])
    assert [results[0]["status"], results[2]["status"]] == ["completed", "completed"]
    assert summary_of(tmp_path / "r1")["status"] == "completed"  # the earlier run, left as it was


def test_a_job_hydra_could_not_collect_keeps_its_error(tmp_path, monkeypatch, capsys):
    """A job whose collection raised (simulated) is reported with its own error,
    the others trained; not Hydra's ``raise None`` (TypeError) from a return value set over it."""
    from rbmlab.run import packed

    def job(cfg, out, *args, **kwargs):
        if Path(out).name == "1":
            raise RuntimeError("job 1 cannot be collected (simulated)")
        return Job(cfg, out, *args, **kwargs)

    monkeypatch.setattr(packed, "Job", job)
    sweep = tmp_path / "sweep"
    with pytest.raises(SystemExit) as ended:
        main(["run", "-m", "seed=0,1,2", *BASE, "hydra/launcher=packed", f"hydra.sweep.dir={sweep}"])
    assert ended.value.code == 2
    err = capsys.readouterr().err
    assert "TypeError" not in err and "job 1 cannot be collected" in err, err
    assert [summary_of(sweep / str(j))["status"] for j in (0, 2)] == ["completed", "completed"]
