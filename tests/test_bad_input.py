"""The bad-input corpus: every case must end in exactly one ``rbmlab: error: ...`` line on stderr,
exit status 2, no traceback, and no file that looks like a finished result.

Cases run in-process through ``rbmlab.cli.main`` (a subprocess per case would cost ~1.5 s each),
each in its own empty working directory. A case is ``Case(id, argv, needle, setup, env)``:
``setup(tmp_path)`` writes the bad files the case needs; ``needle`` must appear in the error line
(the key or file it names). Sections are grouped by command; add a case to the list of its command.
"""

from __future__ import annotations

import io
import json
import sys
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from rbmlab.cli import main

SMALL = [
    "dataset=bars_stripes",
    "model.n_hidden=4",
    "evaluator=exact",
    "learner.k=1",
    "learner.batch_size=full",
    "train.epochs=1",
    "train.progress=false",
]


@dataclass
class Case:
    id: str
    argv: list[str]
    needle: str
    setup: Callable[[Path], None] | None = None
    env: dict[str, str] = field(default_factory=dict)


def rbm_npz(path: Path, **replace) -> None:
    """A valid 9-visible, 4-hidden RBM checkpoint (bars_stripes size), with entries replaced."""
    rng = np.random.default_rng(0)
    arrays = {"W": 0.1 * rng.standard_normal((9, 4)), "b_v": np.zeros(9), "b_h": np.zeros(4)}
    arrays.update(replace)
    np.savez(path, **arrays)


EVALUATE = ["evaluate", "dataset=bars_stripes", "evaluator=exact"]


# ---------------------------------------------------------------- rbmlab run
def completed_run(directory: str) -> Callable[[Path], None]:
    """A directory holding what a finished run leaves (its summary says completed)."""

    def setup(root: Path) -> None:
        (root / directory).mkdir(parents=True)
        (root / directory / "summary.json").write_text(json.dumps({"status": "completed", "final": {}}))

    return setup


def file_at(name: str, content: bytes = b"not a directory") -> Callable[[Path], None]:
    return lambda root: (root / name).write_bytes(content)


def trained_run(directory: str, damage: Callable[[Path], None]) -> Callable[[Path], None]:
    """A real 2-epoch run killed (status running) and then damaged, for resume cases."""

    def setup(root: Path) -> None:
        main(["run", *SMALL, "train.epochs=2", f"hydra.run.dir={directory}"])
        summary = root / directory / "summary.json"
        summary.write_text(json.dumps({**json.loads(summary.read_text()), "status": "running"}))
        damage(root / directory)

    return setup


RESUME = [*SMALL, "train.epochs=2", "hydra.run.dir=r", "resume=true"]
FW = [
    "dataset=bars_stripes",
    "learner=frank_wolfe",
    "evaluator=exact",
    "train.epochs=1",
    "train.progress=false",
]

RUN_CASES = [
    Case("run-unknown-key", ["run", "learner.lrr=0.1"], "learner.lrr"),
    Case("run-unknown-top-level-key", ["run", "+colour=red"], "colour"),
    Case("run-lr-not-a-number", ["run", "learner.lr=abc"], "learner.lr"),
    Case("run-lr-inf", ["run", "learner.lr=inf"], "learner.lr"),
    Case("run-lr-nan", ["run", "learner.lr=nan"], "learner.lr"),
    Case("run-lr-negative", ["run", "learner.lr=-0.1"], "learner.lr"),
    Case("run-weight-std-inf", ["run", "model.weight_std=inf"], "model.weight_std"),
    Case(
        "run-weight-decay-inf",
        ["run", "learner.optimizer.weight_decay=inf"],
        "learner.optimizer.weight_decay",
    ),
    Case("run-epochs-negative", ["run", "train.epochs=-1"], "train.epochs"),
    Case("run-epochs-fraction", ["run", "train.epochs=1.5"], "train.epochs"),
    Case("run-eval-every-text", ["run", "train.eval_every=often"], "train.eval_every"),
    Case("run-trials-zero", ["run", "train.trials=0"], "train.trials"),
    Case("run-k-zero", ["run", "learner.k=0"], "learner.k"),
    Case("run-batch-size-negative", ["run", "learner.batch_size=-5"], "learner.batch_size"),
    Case("run-unknown-learner", ["run", "learner=nope"], "learner=nope"),
    Case("run-tap-inference-a-list", ["run", "learner=tap", "learner.inference=[tap]"], "learner.inference"),
    Case(
        "run-tap-inference-not-tap", ["run", "learner=tap", "learner.inference=bp_sum"], "learner.inference"
    ),
    Case(
        "run-pixel-error-inference-a-list",
        ["run", "model=crbm", "task=flip", "evaluator=pixel_error", "evaluator.inference=[sum]"],
        "evaluator.inference",
    ),
    Case(
        "run-pixel-error-inference-unknown",
        ["run", "model=crbm", "task=flip", "evaluator=pixel_error", "evaluator.inference=nope"],
        "evaluator.inference",
    ),
    Case(
        "run-learner-without-a-sampler-for-the-model",
        ["run", "model=crbm", "dataset=bars_stripes"],
        "model crbm has no default sampler",
    ),
    Case(
        "run-occlusion-patch-larger-than-the-images",
        ["run", "dataset=bars_stripes", "task=occlude", "task.size=9"],
        "task.size: a 9×9 patch does not fit",
    ),
    Case(
        "run-conditional-learner-without-a-task",
        ["run", "model=crbm", "learner=mle_bp", "dataset=bars_stripes", "evaluator=pixel_error"],
        "use task=flip or task=occlude",
    ),
    Case(
        "run-recognised-on-the-train-split",
        ["run", "dataset=bars_stripes", "evaluator=recognised", "evaluator.splits=[train]"],
        "evaluator.splits",
    ),
    Case(
        "run-recognised-quantile-above-1",
        ["run", "dataset=bars_stripes", "evaluator=recognised", "evaluator.quantile=1.5"],
        "evaluator.quantile",
    ),
    Case(
        "run-bethe-learner-on-an-rbm",
        ["run", "dataset=bars_stripes", "learner=bethe"],
        "learner=bethe: model rbm lacks PairwiseCouplings",
    ),
    Case(
        "run-sampler-for-a-learner-that-draws-none",
        ["run", "dataset=bars_stripes", "learner=tap", "learner.sampler=gibbs"],
        "learner.sampler: learner=tap draws no samples",
    ),
    Case(
        "run-bethe-evaluator-damping-1",
        ["run", "dataset=bars_stripes", "evaluator=bethe", "evaluator.damping=1.0"],
        "evaluator.damping",
    ),
    Case(
        "run-variety-on-the-train-split",
        ["run", "dataset=bars_stripes", "evaluator=variety", "evaluator.splits=[train]"],
        "evaluator.splits",
    ),
    Case(
        "run-variety-quantile-above-1",
        ["run", "dataset=bars_stripes", "evaluator=variety", "evaluator.quantile=1.5"],
        "evaluator.quantile",
    ),
    Case(
        "run-map-time-on-an-rbm",
        ["run", "dataset=bars_stripes", "evaluator=map_time", "evaluator.sampler=gibbs"],
        "evaluator=map_time: times samplers on fully visible",
    ),
    Case(
        "run-map-time-with-an-lp-sampler",
        [
            "run",
            "dataset=ising_samples",
            "dataset.structure=chain",
            "dataset.n=6",
            "model=ising",
            "evaluator=map_time",
            "evaluator.sampler=pmap_lp",
        ],
        "evaluator=map_time: sampler pmap_lp is neither a chain",
    ),
    Case(
        "run-pixel-error-on-an-unconditional-model",
        ["run", "dataset=bars_stripes", "evaluator=pixel_error"],
        "evaluator=pixel_error: model rbm lacks Conditional",
    ),
    Case("run-unicode-group-value", ["run", "learner=cdé"], "learner=cdé: not a valid override"),
    Case("run-unparseable-override", ["run", "learner.lr=[1,"], "learner.lr=[1,"),
    Case("run-unknown-dataset", ["run", "dataset=nope"], "dataset=nope"),
    Case(
        "run-dataset-option-out-of-range", ["run", "dataset=bars_stripes", "dataset.size=99"], "dataset.size"
    ),
    Case("run-hidden-zero", ["run", *SMALL, "model.n_hidden=0"], "model.n_hidden"),
    Case(
        "run-model-cannot-fit-in-memory",
        ["run", "dataset=bars_stripes", "model.n_hidden=1000000000000", "evaluator=reconstruction"],
        "model",
    ),
    Case(
        "run-exact-too-large",
        ["run", "dataset=shifting_bar", "dataset.n=30", "evaluator=exact", "model.n_hidden=30"],
        "evaluator=exact",
    ),
    Case("run-backend-float16", ["run", "backend.dtype=float16"], "backend.dtype"),
    Case("run-seed-negative", ["run", "seed=-1"], "seed"),
    Case("run-tags-not-a-list", ["run", "tags=5"], "tags"),
    Case("run-unknown-scale", ["run", "scale=huge"], "scale"),
    Case("run-resume-not-a-flag", ["run", "resume=maybe"], "resume"),
    Case("run-resume-and-overwrite", ["run", *SMALL, "resume=true", "overwrite=true"], "overwrite"),
    Case("run-lock-wait-negative", ["run", "lock_wait=-1"], "lock_wait"),
    Case(
        "run-ising-with-ais",
        ["run", "model=ising", "dataset=ising_samples", "evaluator=ais"],
        "evaluator=ais",
    ),
    Case("run-sweep-without-m", ["run", *SMALL, "learner=cd,pcd"], "-m"),
    Case("run-sweep-bad-value", ["run", "-m", *SMALL, "learner.lr=0.1,abc"], "learner.lr"),
    Case(
        "run-sweep-infeasible-job",
        [
            "run",
            "-m",
            "dataset=shifting_bar",
            "dataset.n=30",
            "evaluator=exact",
            "model.n_hidden=4,30",
            "train.epochs=1",
        ],
        "model.n_hidden=30",
    ),
    Case(
        "run-sweep-infeasible-product",
        [
            "run",
            "-m",
            "dataset=shifting_bar",
            "dataset.n=30,3",
            "dataset.bar=1,5",
            "evaluator=exact",
            "model.n_hidden=4",
        ],
        "dataset.bar",
    ),
    Case("run-unknown-launcher", ["run", "-m", *SMALL, "hydra/launcher=nope"], "hydra/launcher=nope"),
    Case(
        "run-packed-max-runs-0",
        ["run", "-m", *SMALL, "hydra/launcher=packed", "hydra.launcher.max_runs=0"],
        "hydra.launcher.max_runs",
    ),
    Case(
        "run-packed-max-runs-text",
        ["run", "-m", *SMALL, "hydra/launcher=packed", "hydra.launcher.max_runs=many"],
        "hydra.launcher.max_runs",
    ),
    Case("run-packed-without-m", ["run", *SMALL, "hydra/launcher=packed"], "add -m"),
    Case("run-config-name", ["run", "--config-name=nope"], "--config-name"),
    Case("run-dir-is-a-file", ["run", *SMALL, "hydra.run.dir=afile"], "afile", setup=file_at("afile")),
    Case("run-dir-under-a-file", ["run", *SMALL, "hydra.run.dir=afile/run"], "afile", setup=file_at("afile")),
    Case(
        "run-sweep-dir-is-a-file",
        ["run", "-m", *SMALL, "learner=cd,pcd", "hydra.sweep.dir=afile"],
        "afile",
        setup=file_at("afile"),
    ),
    Case("run-dir-interpolation", ["run", *SMALL, "hydra.run.dir=${oops}"], "hydra.run.dir"),
    Case(
        "run-read-only-directory",
        ["run", *SMALL],
        "Read-only file system",
        env={"RBMLAB_FAULT": "erofs:.rbmlab.lock"},
    ),
    Case(
        "run-completed-dir-without-resume",
        ["run", *SMALL, "hydra.run.dir=done"],
        "overwrite=true",
        setup=completed_run("done"),
    ),
    Case(
        "run-completed-sweep-without-resume",
        ["run", "-m", *SMALL, "learner=cd,pcd", "hydra.sweep.dir=s"],
        "overwrite=true",
        setup=completed_run("s/0"),
    ),
    Case("run-interpolation-in-a-value", ["run", "learner.lr=${oops}"], "learner.lr"),
    Case("run-interpolation-in-seed", ["run", "seed=${oops}"], "seed"),
    Case("run-interpolation-in-a-list", ["run", "tags=[a,${oops}]"], "tags"),
    Case(
        "run-environment-variable-unset",
        ["run", "learner.lr=${oc.env:RBMLAB_NO_SUCH_VARIABLE}"],
        "learner.lr",
    ),
    Case("run-sweep-interval", ["run", "-m", *SMALL, "learner.lr=interval(0.1,0.2)"], "interval"),
    Case("run-sweep-glob", ["run", "-m", *SMALL, "learner=glob(*)"], "glob"),
    Case("run-hydra-mode", ["run", *SMALL, "hydra.mode=MULTIRUN"], "hydra.mode"),
    Case(
        "run-hydra-sweep-subdir",
        ["run", "-m", *SMALL, "learner=cd,pcd", "hydra.sweep.subdir=x"],
        "hydra.sweep.subdir",
    ),
    Case(
        "run-pcd-absurd-chains",
        ["run", *SMALL, "learner=pcd", "learner.n_chains=100000000000"],
        "learner.n_chains",
    ),
    Case(
        "run-ising-samples-absurd-size",
        ["run", "model=ising", "dataset=ising_samples", "dataset.n_train=100000000000", "evaluator=pl"],
        "dataset.n_train",
    ),
    Case(
        "run-record-name-is-a-directory",
        ["run", *SMALL, "hydra.run.dir=q", "overwrite=true"],
        "checkpoint.npz",
        setup=lambda d: (d / "q" / "checkpoint.npz").mkdir(parents=True),
    ),
    Case("run-model-init-missing", ["run", *SMALL, "model.init=nope.npz"], "model.init: file not found"),
    Case(
        "run-ising-samples-uniform-lattice",
        ["run", "model=ising", "dataset=ising_samples", "dataset.weights=uniform"],
        "dataset.weights",
    ),
    Case(
        "run-model-init-truth-without-one",
        ["run", *SMALL, "model.init=truth"],
        "model.init: truth needs a dataset sampled from a known model (ising_samples, potts_samples); "
        "dataset bars_stripes",
    ),
    Case(
        "run-model-init-truth-other-family",
        ["run", "dataset=ising_samples", "model.init=truth", "learner.k=1", "train.epochs=0", "evaluator=pl"],
        "model.init: truth",
    ),
    Case(
        "run-model-init-truth-other-spins",
        [
            "run",
            "model=ising",
            "dataset=ising_samples",
            "dataset.spins=pm1",
            "dataset.n_train=2",
            "dataset.n_test=2",
            "model.init=truth",
            "learner=reset",
            "train.epochs=0",
            "evaluator=pl",
        ],
        "model.spins: 01, but model.init=truth is a model with spins=pm1; set model.spins=pm1",
    ),
    Case(
        "run-model-init-other-units",
        ["run", *SMALL, "model.init=m.npz", "model.hidden_units=spin"],
        "model.hidden_units: spin, but model.init=m.npz is a model with hidden=bernoulli",
        setup=lambda d: rbm_npz(d / "m.npz"),
    ),
    Case(
        "run-kl-without-a-ground-truth",
        [
            "run",
            "dataset=bars_stripes",
            "model=ising",
            "evaluator=kl",
            "train.epochs=1",
            "train.progress=false",
        ],
        "evaluator=kl: needs a dataset sampled from a known model (ising_samples); "
        "dataset bars_stripes has none",
    ),
    Case(
        "run-kl-too-many-units",
        [
            "run",
            "model=ising",
            "dataset=ising_samples",
            "dataset.structure=dense",
            "dataset.n=21",
            "dataset.sampler=gibbs",
            "dataset.burn_in=2",
            "dataset.thin=1",
            "dataset.n_train=20",
            "dataset.n_test=10",
            "evaluator=kl",
        ],
        "evaluator=kl: enumerates every state",
    ),
    Case(
        "run-ising-tie-with-a-field",
        ["run", "model=ising", "dataset=ising_samples", "model.tie=uniform"],
        "model.tie",
    ),
    Case(
        "run-param-rmse-on-an-rbm",
        ["run", "dataset=ising_samples", "evaluator=param_rmse", "train.epochs=1"],
        "evaluator=param_rmse: compares Ising couplings J; model rbm has none",
    ),
    Case(
        "run-ising-samples-constant-fields-on-a-lattice",
        ["run", "model=ising", "dataset=ising_samples", "dataset.fields=constant"],
        "dataset.fields",
    ),
    Case(
        "run-pmap-log-z-no-exact-value",
        [
            "run",
            "model=ising",
            "dataset=ising_samples",
            "dataset.structure=dense",
            "dataset.n=30",
            "dataset.sampler=gibbs",
            "dataset.n_train=2",
            "dataset.n_test=2",
            "dataset.burn_in=0",
            "model.init=truth",
            "learner=reset",
            "train.epochs=0",
            "train.progress=false",
            "evaluator=pmap_log_z",
        ],  # refused at the epoch-0 evaluation
        "evaluator=pmap_log_z: no exact log Z",
    ),
    Case(
        "run-model-init-not-npz",
        ["run", *SMALL, "model.init=bad.npz"],
        "model.init",
        setup=file_at("bad.npz"),
    ),
    Case(
        "run-model-init-other-family",
        ["run", *SMALL, "model.init=m.npz"],
        "model.init",
        setup=lambda d: np.savez(d / "m.npz", J=np.zeros((9, 9)), h=np.zeros(9)),
    ),
    Case(
        "run-model-init-other-dimension",
        ["run", *SMALL, "model.init=m.npz"],
        "model.init",
        setup=lambda d: rbm_npz(d / "m.npz", W=np.zeros((5, 4)), b_v=np.zeros(5)),
    ),
    Case(
        "run-model-init-selector-no-run",
        ["run", *SMALL, "model.init='sweep?seed=7'"],
        "model.init: no run under sweep with seed=7",
        setup=lambda d: (d / "sweep" / "0").mkdir(parents=True),
    ),
    Case("run-frank-wolfe-mini-batches", ["run", *FW, "learner.batch_size=10"], "learner.batch_size"),
    Case("run-frank-wolfe-trials", ["run", *FW, "train.trials=2"], "train.trials"),
    Case(
        "run-frank-wolfe-spin-units",
        ["run", *FW, "model.hidden_units=spin"],
        "frank_wolfe is written for Bernoulli",
    ),
    Case("run-frank-wolfe-unknown-step", ["run", *FW, "learner.step=half"], "learner.step"),
    Case("run-frank-wolfe-step-points-zero", ["run", *FW, "learner.step_points=0"], "learner.step_points"),
    Case(
        "run-frank-wolfe-one-pool-of-two-sizes",
        ["run", *FW, "learner.chain_pool=one"],
        "learner.bias_chains: chain_pool=one",
    ),
    Case(
        "run-frank-wolfe-refit-without-line-search",
        ["run", *FW, "learner.step_bias=refit"],
        "learner.step_bias: applies to step=line_search only",
    ),
    Case(
        "run-frank-wolfe-step-points-without-line-search",
        ["run", *FW, "learner.step_points=5"],
        "learner.step_points: applies to step=line_search only",
    ),
    Case(
        "run-frank-wolfe-refit-of-nothing",
        [
            "run",
            *FW,
            "learner.step=line_search",
            "learner.step_bias=refit",
            "learner.bias_fit=fixed",
            "learner.bias_steps=0",
        ],
        "learner.step_bias: refit scores each scale with its refitted bias",
    ),
    Case(
        "run-frank-wolfe-unknown-step-bias",
        ["run", *FW, "learner.step=line_search", "learner.step_bias=moved"],
        "learner.step_bias",
    ),
    Case(
        "run-frank-wolfe-unknown-chain-pool", ["run", *FW, "learner.chain_pool=three"], "learner.chain_pool"
    ),
    Case(
        "run-tap-unknown-count",
        ["run", "evaluator=tap", "evaluator.count=some"],
        "evaluator.count: expected one of converged, all; got 'some'",
    ),
    Case(
        "run-test-error-unlabelled",
        ["run", *SMALL, "evaluator=test_error", "evaluator.C=[1.0]", "evaluator.splits=[test]"],
        "has no labels",
    ),
    Case(
        "run-test-error-choice-without-valid",
        ["run", *SMALL, "evaluator=test_error", "evaluator.splits=[test]"],
        "evaluator.C",
    ),
    Case("run-snapshot-every-negative", ["run", *SMALL, "train.snapshot_every=-1"], "train.snapshot_every"),
    Case(
        "run-mnist-validation-seed-negative",
        ["run", "dataset=mnist", "dataset.validation=true", "dataset.validation_seed=-1"],
        "dataset.validation_seed",
    ),
    Case(
        "resume-corrupt-summary",
        ["run", *RESUME],
        "summary.json",
        setup=trained_run("r", lambda d: (d / "summary.json").write_bytes(b"{\xff garbage")),
    ),
    Case(
        "resume-nested-summary",
        ["run", *RESUME],
        "summary.json",
        setup=trained_run("r", lambda d: (d / "summary.json").write_text("[" * 100000 + "]" * 100000)),
    ),
    Case(
        "resume-non-utf8-metrics",
        ["run", *RESUME],
        "metrics.csv",
        setup=trained_run("r", lambda d: (d / "metrics.csv").write_bytes(b"epoch,updates\n\xff\xfe,1\n")),
    ),
    Case(
        "resume-non-numeric-metrics",
        ["run", *RESUME],
        "metrics.csv",
        setup=trained_run("r", lambda d: (d / "metrics.csv").write_text("epoch,updates\nabc,1\n")),
    ),
    Case(
        "resume-foreign-checkpoint",
        ["run", *RESUME, "learner.lr=0.5"],
        "different configuration",
        setup=trained_run("r", lambda d: None),
    ),
]


# ---------------------------------------------------------------- rbmlab evaluate
def _npy(array) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def raw_w_npz(path: Path, shape: tuple[int, ...], data: bytes = b"") -> None:
    """An .npz with valid b_v, b_h and a W member whose .npy header claims ``shape`` (float64)
    over ``data``: a lying header (40 GB) or a short member."""
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False, "shape": shape})
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("W.npy", header.getvalue() + data)
        z.writestr("b_v.npy", _npy(np.zeros(9)))
        z.writestr("b_h.npy", _npy(np.zeros(4)))


def bit_flipped_npz(path: Path) -> None:
    """A checkpoint with one bit of W's data flipped after writing (its CRC-32 no longer matches)."""
    rbm_npz(path, W=np.full((9, 4), 0.5))
    raw = bytearray(path.read_bytes())
    raw[raw.index(np.float64(0.5).tobytes()) + 7] ^= 0x01
    path.write_bytes(raw)


def truncated_npz(path: Path) -> None:
    rbm_npz(path)
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def with_non_npy_member(path: Path) -> None:
    rbm_npz(path)
    with zipfile.ZipFile(path, "a") as z:
        z.writestr("notes.txt", "not an array")


def bit_flipped_compressed_npz(path: Path) -> None:
    """A compressed checkpoint with a byte of its deflate stream changed."""
    np.savez_compressed(path, W=np.arange(36.0).reshape(9, 4), b_v=np.zeros(9), b_h=np.zeros(4))
    with zipfile.ZipFile(path) as z:
        info = z.getinfo("W.npy")
    raw = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    raw[start + info.compress_size // 2] ^= 0xFF
    path.write_bytes(raw)


def objects(shape=(9, 4)) -> np.ndarray:
    array = np.empty(shape, dtype=object)
    array[...] = 0.0
    return array


def nan_in_trial(path: Path) -> None:
    W = np.zeros((2, 9, 4))
    W[1, 0, 0] = np.nan
    np.savez(path, W=W, b_v=np.zeros((2, 9)), b_h=np.zeros((2, 4)))


AIS = ["evaluate", "dataset=bars_stripes", "evaluator=ais", "evaluator.progress=false"]

EVALUATE_CASES = [
    Case("evaluate-missing-file", [*EVALUATE, "checkpoint=missing.npz"], "missing.npz"),
    Case(
        "evaluate-no-b_v",
        [*EVALUATE, "checkpoint=bad.npz"],
        "b_v",
        setup=lambda d: np.savez(d / "bad.npz", W=np.zeros((9, 4))),
    ),
    Case("evaluate-no-checkpoint", EVALUATE, "checkpoint"),
    Case(
        "evaluate-checkpoint-is-a-directory",
        [*EVALUATE, "checkpoint=ck"],
        "directory",
        setup=lambda d: (d / "ck").mkdir(),
    ),
    Case(
        "evaluate-empty-file",
        [*EVALUATE, "checkpoint=e.npz"],
        "e.npz",
        setup=lambda d: (d / "e.npz").write_bytes(b""),
    ),
    Case(
        "evaluate-garbage-file",
        [*EVALUATE, "checkpoint=g.npz"],
        "g.npz",
        setup=lambda d: (d / "g.npz").write_bytes(bytes(range(256)) * 40),
    ),
    Case(
        "evaluate-truncated-file",
        [*EVALUATE, "checkpoint=t.npz"],
        "t.npz",
        setup=lambda d: truncated_npz(d / "t.npz"),
    ),
    Case(
        "evaluate-short-member",
        [*EVALUATE, "checkpoint=s.npz"],
        "W",
        setup=lambda d: raw_w_npz(d / "s.npz", (9, 4), b"\0" * 10),
    ),
    Case(
        "evaluate-header-claims-40GB",
        [*EVALUATE, "checkpoint=h.npz"],
        "W",
        setup=lambda d: raw_w_npz(d / "h.npz", (100_000, 50_000), b"\0" * 64),
    ),
    Case(
        "evaluate-bit-flipped-member",
        [*EVALUATE, "checkpoint=f.npz"],
        "f.npz",
        setup=lambda d: bit_flipped_npz(d / "f.npz"),
    ),
    Case(
        "evaluate-non-npy-member",
        [*EVALUATE, "checkpoint=n.npz"],
        "notes.txt",
        setup=lambda d: with_non_npy_member(d / "n.npz"),
    ),
    Case(
        "evaluate-pickled-W",
        [*EVALUATE, "checkpoint=p.npz"],
        "W",
        setup=lambda d: rbm_npz(d / "p.npz", W=objects()),
    ),
    Case(
        "evaluate-pickled-extra-key",
        [*EVALUATE, "checkpoint=p.npz"],
        "extra",
        setup=lambda d: rbm_npz(d / "p.npz", extra=objects((2,))),
    ),
    Case(
        "evaluate-pickled-meta",
        [*EVALUATE, "checkpoint=p.npz"],
        "meta",
        setup=lambda d: rbm_npz(d / "p.npz", meta=np.array({"epoch": 1}, dtype=object)),
    ),
    Case(
        "evaluate-meta-deeply-nested-json",
        [*EVALUATE, "checkpoint=m.npz"],
        "meta",
        setup=lambda d: rbm_npz(d / "m.npz", meta=np.array("[" * 100_000 + "]" * 100_000)),
    ),
    Case(
        "evaluate-meta-not-an-object",
        [*EVALUATE, "checkpoint=m.npz"],
        "meta",
        setup=lambda d: rbm_npz(d / "m.npz", meta=np.array("[1, 2]")),
    ),
    Case(
        "evaluate-nan-in-W",
        [*EVALUATE, "checkpoint=nan.npz"],
        "W",
        setup=lambda d: rbm_npz(d / "nan.npz", W=np.where(np.eye(9, 4) > 0, np.nan, 0.1)),
    ),
    Case(
        "evaluate-inf-in-b_h",
        [*EVALUATE, "checkpoint=inf.npz"],
        "b_h",
        setup=lambda d: rbm_npz(d / "inf.npz", b_h=np.array([0.0, np.inf, 0.0, 0.0])),
    ),
    Case(
        "evaluate-nan-in-chosen-trial",
        [*EVALUATE, "checkpoint=tr.npz", "trial=1"],
        "trial 1",
        setup=lambda d: nan_in_trial(d / "tr.npz"),
    ),
    Case(
        "evaluate-W-shape-mismatch",
        [*EVALUATE, "checkpoint=w.npz"],
        "b_h",
        setup=lambda d: rbm_npz(d / "w.npz", b_h=np.zeros(5)),
    ),
    Case(
        "evaluate-visible-size-mismatch",
        [*EVALUATE, "checkpoint=w.npz"],
        "visible",
        setup=lambda d: rbm_npz(d / "w.npz", W=np.zeros((8, 4)), b_v=np.zeros(8)),
    ),
    Case(
        "evaluate-0d-W",
        [*EVALUATE, "checkpoint=w.npz"],
        "W",
        setup=lambda d: rbm_npz(d / "w.npz", W=np.float64(1.0)),
    ),
    Case(
        "evaluate-bool-W",
        [*EVALUATE, "checkpoint=w.npz"],
        "numeric",
        setup=lambda d: rbm_npz(d / "w.npz", W=np.ones((9, 4), dtype=bool)),
    ),
    Case(
        "evaluate-string-W",
        [*EVALUATE, "checkpoint=w.npz"],
        "numeric",
        setup=lambda d: rbm_npz(d / "w.npz", W=np.full((9, 4), "0.1")),
    ),
    Case(
        "evaluate-complex-W",
        [*EVALUATE, "checkpoint=w.npz"],
        "numeric",
        setup=lambda d: rbm_npz(d / "w.npz", W=np.zeros((9, 4), dtype=complex)),
    ),
    Case(
        "evaluate-trial-on-single-model",
        [*EVALUATE, "checkpoint=c.npz", "trial=5"],
        "trial",
        setup=lambda d: rbm_npz(d / "c.npz"),
    ),
    Case(
        "evaluate-trial-out-of-range",
        [*EVALUATE, "checkpoint=tr.npz", "trial=2"],
        "trial",
        setup=lambda d: nan_in_trial(d / "tr.npz"),
    ),
    Case(
        "evaluate-split-unknown",
        [*EVALUATE, "checkpoint=c.npz", "split=nope"],
        "split",
        setup=lambda d: rbm_npz(d / "c.npz"),
    ),
    Case(
        "evaluate-seed-negative",
        [*EVALUATE, "checkpoint=c.npz", "seed=-1"],
        "seed",
        setup=lambda d: rbm_npz(d / "c.npz"),
    ),
    Case("evaluate-checkpoint-interpolation", [*EVALUATE, "checkpoint=${oops}.npz"], "checkpoint"),
    Case(
        "evaluate-out-interpolation",
        [*EVALUATE, "checkpoint=c.npz", "out=${oops}.json"],
        "out",
        setup=lambda d: rbm_npz(d / "c.npz"),
    ),
    Case(
        "evaluate-ais-option-interpolation",
        [*AIS, "checkpoint=c.npz", "evaluator.n_chains=${oops}"],
        "evaluator.n_chains",
        setup=lambda d: rbm_npz(d / "c.npz"),
    ),
    Case(
        "evaluate-ais-absurd-temperatures",
        [*AIS, "checkpoint=c.npz", "evaluator.schedule=linear", "evaluator.n_temperatures=1000000000000"],
        "evaluator.n_temperatures",
        setup=lambda d: rbm_npz(d / "c.npz"),
    ),
    Case(
        "evaluate-ais-absurd-chains",
        [*AIS, "checkpoint=c.npz", "evaluator.n_chains=1000000000000"],
        "evaluator.n_chains",
        setup=lambda d: rbm_npz(d / "c.npz"),
    ),
    Case(
        "evaluate-ais-chains-exceed-memory",
        [*AIS, "checkpoint=big.npz", "evaluator.n_chains=1000000"],
        "evaluator.n_chains",
        setup=lambda d: rbm_npz(d / "big.npz", W=np.zeros((9, 20_000)), b_h=np.zeros(20_000)),
    ),
    Case(
        "evaluate-pl-units-exceed-visible",
        ["evaluate", "dataset=bars_stripes", "evaluator=pl", "evaluator.n_units=10", "checkpoint=c.npz"],
        "evaluator.n_units",
        setup=lambda d: rbm_npz(d / "c.npz"),
    ),
    Case(
        "evaluate-unknown-evaluator",
        ["evaluate", "dataset=bars_stripes", "evaluator=nope", "checkpoint=c.npz"],
        "evaluator=nope",
        setup=lambda d: rbm_npz(d / "c.npz"),
    ),
    Case("evaluate-checkpoint-null", [*EVALUATE, "checkpoint=null"], "checkpoint"),
    Case("evaluate-checkpoint-name-too-long", [*EVALUATE, f"checkpoint={'c' * 300}.npz"], "checkpoint"),
    Case(
        "evaluate-npy-not-npz",
        [*EVALUATE, "checkpoint=w.npy"],
        ".npz",
        setup=lambda d: np.save(d / "w.npy", np.zeros((9, 4))),
    ),
    Case(
        "evaluate-bit-flipped-compressed",
        [*EVALUATE, "checkpoint=z.npz"],
        "z.npz",
        setup=lambda d: bit_flipped_compressed_npz(d / "z.npz"),
    ),
    Case(
        "evaluate-meta-not-json",
        [*EVALUATE, "checkpoint=m.npz"],
        "meta",
        setup=lambda d: rbm_npz(d / "m.npz", meta=np.array("{epoch: 1")),
    ),
    Case(
        "evaluate-unknown-family",
        [*EVALUATE, "checkpoint=c.npz"],
        "family",
        setup=lambda d: rbm_npz(d / "c.npz", family=np.array("nope")),
    ),
    Case(
        "evaluate-unknown-unit-type",
        [*EVALUATE, "checkpoint=c.npz"],
        "visible",
        setup=lambda d: rbm_npz(d / "c.npz", visible=np.array("poisson")),
    ),
    Case(
        "evaluate-ising-with-ais",
        [*AIS, "checkpoint=i.npz"],
        "evaluator=ais",
        setup=lambda d: np.savez(
            d / "i.npz", J=0.1 * (np.ones((9, 9)) - np.eye(9)), h=np.zeros(9), spins=np.array("01")
        ),
    ),
    Case(
        "evaluate-overflowing-parameters",
        [*EVALUATE, "checkpoint=o.npz"],
        "not finite",
        setup=lambda d: rbm_npz(d / "o.npz", W=np.full((9, 4), 1e308), b_v=np.full(9, 1e308)),
    ),
    Case(
        "evaluate-ais-curve-temperatures-absurd",
        [*AIS, "checkpoint=c.npz", "evaluator.curve_n_temperatures=1000000000000"],
        "evaluator.curve_n_temperatures",
        setup=lambda d: rbm_npz(d / "c.npz"),
    ),
    Case(
        "evaluate-out-missing-directory",
        [*EVALUATE, "checkpoint=c.npz", "out=nowhere/r.json"],
        "out",
        setup=lambda d: rbm_npz(d / "c.npz"),
    ),
    Case(
        "evaluate-out-is-a-directory",
        [*EVALUATE, "checkpoint=c.npz", "out=res"],
        "directory",
        setup=lambda d: (rbm_npz(d / "c.npz"), (d / "res").mkdir()),
    ),
    Case(
        "evaluate-out-name-too-long",
        [*EVALUATE, "checkpoint=c.npz", f"out={'r' * 300}.json"],
        "out",
        setup=lambda d: rbm_npz(d / "c.npz"),
    ),
    Case(
        "evaluate-out-read-only-disk",
        [*EVALUATE, "checkpoint=c.npz", "out=r.json"],
        "out",
        setup=lambda d: rbm_npz(d / "c.npz"),
        env={"RBMLAB_FAULT": "erofs:r.json"},
    ),
    Case(
        "evaluate-out-in-symlink-loop",
        [*EVALUATE, "checkpoint=c.npz", "out=loop/r.json"],
        "out",
        setup=lambda d: (rbm_npz(d / "c.npz"), (d / "loop").symlink_to("loop")),
    ),
    Case(
        "evaluate-out-disk-full",
        [*EVALUATE, "checkpoint=c.npz", "out=r.json"],
        "out",
        setup=lambda d: rbm_npz(d / "c.npz"),
        env={"RBMLAB_FAULT": "enospc:r.json"},
    ),
]


# ---------------------------------------------------------------- rbmlab report
def fake_run(**damage: bytes) -> Callable[[Path], None]:
    """A finished run in ``runs/a`` as the runner writes it, with files replaced by ``damage``
    (file name with '.' as '_' → bytes)."""
    files = {
        "summary.json": json.dumps({"status": "completed", "final": {"test_log_likelihood": -3.0}}),
        "config.yaml": "learner:\n  name: cd\n",
        "overrides.yaml": "[]\n",
        "metrics.csv": "epoch,updates,wall_time,test_log_likelihood\n0,0,0.0,-5.0\n1,1,0.1,-3.0\n",
    }

    def setup(root: Path) -> None:
        (root / "runs" / "a").mkdir(parents=True)
        for name, text in files.items():
            content = damage.get(name.replace(".", "_"), text.encode())
            (root / "runs" / "a" / name).write_bytes(content)

    return setup


REPORT_CASES = [
    Case("report-no-such-dir", ["report", "nowhere"], "nowhere"),
    Case("report-no-runs", ["report", "empty"], "no runs", setup=lambda d: (d / "empty").mkdir()),
    Case(
        "report-non-utf8-metrics",
        ["report", "runs"],
        "metrics.csv",
        setup=fake_run(metrics_csv=b"epoch,test_log_likelihood\n\xff\xfe,1\n"),
    ),
    Case(
        "report-garbage-metrics",
        ["report", "runs"],
        "metrics.csv",
        setup=fake_run(metrics_csv=b'epoch,"unterminated\n1,2\n'),
    ),
    Case(
        "report-summary-not-json",
        ["report", "runs"],
        "summary.json",
        setup=fake_run(summary_json=b"{status: completed"),
    ),
    Case(
        "report-summary-nested",
        ["report", "runs"],
        "summary.json",
        setup=fake_run(summary_json=b"[" * 100000 + b"]" * 100000),
    ),
    Case(
        "report-summary-not-an-object",
        ["report", "runs"],
        "summary.json",
        setup=fake_run(summary_json=b"[1, 2]"),
    ),
    Case(
        "report-config-not-a-mapping",
        ["report", "runs"],
        "config.yaml",
        setup=fake_run(config_yaml=b"- a\n- b\n"),
    ),
    Case(
        "report-out-is-a-file",
        ["report", "runs", "--out", "afile"],
        "afile",
        setup=lambda d: (fake_run()(d), file_at("afile")(d)),
    ),
    Case("report-unknown-metric", ["report", "runs", "--metric", "nope"], "nope", setup=fake_run()),
    Case("report-unknown-lines-key", ["report", "runs", "--lines", "nope.key"], "nope.key", setup=fake_run()),
    Case(
        "report-read-only-out",
        ["report", "runs", "--out", "out"],
        "Read-only file system",
        setup=fake_run(),
        env={"RBMLAB_FAULT": "erofs:test_log_likelihood.md"},
    ),
]

# ---------------------------------------------------------------- rbmlab data / experiment
OTHER_CASES = [
    Case("data-unknown-action", ["data", "nope"], "rbmlab data"),
    Case("data-no-action", ["data"], "action"),
    Case("data-list-extra-argument", ["data", "list", "extra"], "extra"),
    Case("data-fetch-no-name", ["data", "fetch"], "name"),
    Case("data-fetch-unknown", ["data", "fetch", "nope"], "'nope'"),
    Case("data-verify-unknown", ["data", "verify", "bars_stripes", "nope"], "'nope'"),
    # data roots: only ./data (RBMLAB_DATA) and ./cache; a file of ocr_letters, same bytes count or not
    Case(
        "data-fetch-missing-file",
        ["data", "fetch", "caltech101"],
        "caltech101_silhouettes_28_split1.mat",
        env={"RBMLAB_DATA": "data", "RBMLAB_CACHE": "cache", "RBMLAB_NO_SHARED": "1"},
    ),
    Case(
        "data-fetch-corrupt-file",
        ["data", "fetch", "ocr_letters"],
        "data/ocr_letters/ocr_letters_taskar.npz",
        setup=lambda d: [
            (d / "data/ocr_letters").mkdir(parents=True),
            (d / "data/ocr_letters/ocr_letters_taskar.npz").write_bytes(b"corrupt"),
        ],
        env={"RBMLAB_DATA": "data", "RBMLAB_CACHE": "cache", "RBMLAB_NO_SHARED": "1"},
    ),
    Case(
        "data-verify-corrupt-file",
        ["data", "verify"],
        "data/ocr_letters/ocr_letters_taskar.npz",
        setup=lambda d: [
            (d / "data/ocr_letters").mkdir(parents=True),
            (d / "data/ocr_letters/ocr_letters_taskar.npz").write_bytes(b"corrupt"),
        ],
        env={"RBMLAB_DATA": "data", "RBMLAB_CACHE": "cache", "RBMLAB_NO_SHARED": "1"},
    ),
    Case("experiment-unknown", ["experiment", "nope/nothing"], "nope/nothing"),
    Case("experiment-no-name", ["experiment"], "name missing"),
    Case("experiment-no-slash", ["experiment", "demo"], "PAPER/ARTEFACT"),
    # paths to a real experiment file; scale=nope keeps a regression from starting a sweep
    Case(
        "experiment-relative-path",
        ["experiment", "../experiments/demo/bars-cd-vs-pcd", "scale=nope"],
        "PAPER/ARTEFACT",
    ),
    Case(
        "experiment-absolute-path",
        [
            "experiment",
            str(Path(__file__).resolve().parents[1] / "experiments/demo/bars-cd-vs-pcd"),
            "scale=nope",
        ],
        "PAPER/ARTEFACT",
    ),
    Case("experiment-unknown-scale", ["experiment", "demo/bars-cd-vs-pcd", "scale=huge"], "'huge'"),
    # a gallery (crbm_bp Figure 2) asked for report only, before the runs it draws exist
    Case(
        "experiment-gallery-without-runs",
        ["experiment", "crbm_bp/figure-2", "scale=smoke", "report_only=true"],
        "gallery: no runs in outputs/experiments/crbm_bp/table-1/smoke/mle_bp",
    ),
    Case(
        "experiment-unknown-variant",
        ["experiment", "crbm_bp/table-1", "scale=smoke", "variants=mle_pb"],
        "variants= names unknown variant(s) mle_pb",
    ),
    # an inference experiment (pmp Sec 5.6's deconvolution): options on the command line
    *[
        Case(
            f"deconvolution-{id_}", ["experiment", "pmp/figure-4-deconvolution", "scale=smoke", *argv], needle
        )
        for id_, argv, needle in [
            ("not-key-value", ["sweeps"], "sweeps: expected key=value"),
            ("unknown-key", ["sweep=2"], "inference.sweep"),
            ("out-of-range", ["damping=0"], "inference.damping"),
            ("wrong-type", ["n_features=many"], "inference.n_features"),
            ("unknown-dataset-key", ["dataset.images=3"], "inference.dataset.images"),
            ("dataset-out-of-range", ["dataset.p_location=2"], "inference.dataset.p_location"),
            ("unknown-sampler", ["sampler=metropolis"], "inference.sampler"),
            ("report-only", ["report_only=true"], "report_only"),
        ]
    ],
    # its results directory under a file: refused before the sampling starts
    Case(
        "deconvolution-results-dir-is-a-file",
        [
            "experiment",
            "pmp/figure-4-deconvolution",
            "scale=smoke",
            "dataset.n_images=2",
            "dataset.grid=3",
            "sweeps=2",
            "n_samples=1",
        ],
        "outputs/results/pmp/figure-4-deconvolution_smoke",
        setup=lambda root: ((root / "outputs").mkdir(), file_at("outputs/results")(root)),
    ),
    # a figure (tap Figs. 4-9, 12): its options refused before its source experiment would run
    Case(
        "figure-not-key-value",
        ["experiment", "tap/figure-5", "scale=smoke", "n_init"],
        "n_init: expected key=value",
    ),
    Case("figure-unknown-option", ["experiment", "tap/figure-5", "scale=smoke", "inits=3"], "figure.inits"),
    Case("figure-out-of-range", ["experiment", "tap/figure-5", "scale=smoke", "n_init=0"], "figure.n_init"),
    Case("figure-wrong-type", ["experiment", "tap/figure-5", "scale=smoke", "epochs=many"], "figure.epochs"),
    Case(
        "figure-no-runs",
        ["experiment", "tap/figure-5", "scale=smoke", "sweep=nowhere"],
        "no completed runs under nowhere",
    ),
    Case("figure-unknown-source", ["experiment", "tap/figure-5", "scale=smoke", "source=figure-4"], "source"),
    Case(
        "figure-size-of-a-figure-without-one",
        ["experiment", "tap/figure-6", "scale=smoke", "n_hidden=6"],
        "figure.n_hidden: unknown option",
    ),
    Case(
        "figure-without-runs",
        ["experiment", "tap/figure-8", "scale=smoke", "report_only=true"],
        "report_only: no runs of tap/figure-8-denoising at scale smoke",
    ),
]

CASES = RUN_CASES + EVALUATE_CASES + REPORT_CASES + OTHER_CASES


def looks_complete(paths, root: Path) -> list[str]:
    """Those of ``paths`` (under ``root``) that a user could take for a finished result."""
    found = []
    for path in paths:
        if not path.is_file():
            continue
        rel = path.relative_to(root).as_posix()
        if path.name.endswith(".tmp"):
            found.append(f"{rel} (temporary file left behind)")
        elif path.name == "summary.json":
            status = json.loads(path.read_text()).get("status")
            if status in ("completed", "running"):
                found.append(f"{rel} (status {status})")
        elif path.name == "checkpoint.npz" or path.suffix in (".md", ".png"):
            found.append(rel)
        elif path.stat().st_size == 0 and path.suffix in (".json", ".csv"):
            found.append(f"{rel} (empty)")
    return found


def test_the_corpus_is_large_and_ids_are_unique():
    assert len(CASES) >= 60, f"the corpus has {len(CASES)} cases; the acceptance asks for 60"
    assert len({c.id for c in CASES}) == len(CASES)


def assert_one_error_line(entry, case, tmp_path, monkeypatch, capsys):
    """Run ``entry(case.argv)`` in ``tmp_path`` after the case's setup and environment: exit
    status 2, one ``rbmlab: error:`` line naming ``case.needle``, no traceback, nothing that
    looks like a finished result."""
    monkeypatch.chdir(tmp_path)
    for key, value in {"HYDRA_FULL_ERROR": "0", **case.env}.items():
        monkeypatch.setenv(key, value)
    if case.setup is not None:
        case.setup(tmp_path)
        capsys.readouterr()  # what the setup printed is not the case's output
    before = set(tmp_path.rglob("*"))
    with pytest.raises(SystemExit) as exit_info:
        entry(case.argv)
    err = capsys.readouterr().err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert exit_info.value.code == 2, err
    assert len(lines) == 1 and lines[0].startswith("rbmlab: error:"), err
    assert case.needle in lines[0], lines[0]
    assert "Traceback" not in err
    left = looks_complete(set(tmp_path.rglob("*")) - before, tmp_path)
    assert not left, left


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_gives_one_error_line(case, tmp_path, monkeypatch, capsys):
    assert_one_error_line(main, case, tmp_path, monkeypatch, capsys)


# ---------------------------------------------------------------- scripts/*.py
def script_main(name: str):
    """``main`` of ``scripts/<name>.py`` (scripts are files, not a package)."""
    import importlib.util  # noqa: PLC0415

    path = Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a script's dataclasses look their module up there
    spec.loader.exec_module(module)
    return module.main


# scripts/pmp_er_restatement.py: refused before the data are loaded
RESTATEMENT_CASES = [
    Case("restatement-unknown-key", ["sweeps=10"], "sweeps=10: expected key=value with key one of T,"),
    Case("restatement-not-key-value", ["T"], "T: expected key=value"),
    Case("restatement-wrong-type", ["lr=fast"], "lr: expected float, got 'fast'"),
    Case("restatement-fractional-int", ["iterations=2.5"], "iterations: expected int"),
]
# scripts/frank_wolfe_bias_exact.py: refused before any run starts
BIAS_EXACT_CASES = [
    Case("bias-exact-no-out", [], "OUT: the first argument"),
    Case("bias-exact-key-as-out", ["units=2"], "OUT: the first argument"),
    Case("bias-exact-out-dir-missing", ["nowhere/x.md"], "OUT: directory not found: nowhere"),
    Case("bias-exact-not-key-value", ["x.md", "units"], "units: expected key=value"),
    Case("bias-exact-unknown-key", ["x.md", "unit=2"], "bias_exact.unit: unknown option"),
    Case("bias-exact-out-of-range", ["x.md", "units=0"], "bias_exact.units: must be in [1, 50]"),
    Case("bias-exact-unknown-form", ["x.md", "forms=[fixed]"], "bias_exact.forms"),
]
# scripts/frank_wolfe_oracle_gain.py: refused before any sampling
ORACLE_GAIN_CASES = [
    Case("oracle-gain-no-out", [], "OUT: the first argument"),
    Case("oracle-gain-no-checkpoints", ["x.md"], "oracle_gain.checkpoints: give at least one"),
    Case(
        "oracle-gain-missing-checkpoint",
        ["x.md", "checkpoints=[nope.npz]"],
        "oracle_gain.checkpoints: checkpoint: file not found: nope.npz",
    ),
    Case("oracle-gain-out-of-range", ["x.md", "n_fresh=5"], "oracle_gain.n_fresh: must be in [1000"),
    Case("oracle-gain-not-key-value", ["x.md", "seed"], "seed: expected key=value"),
]
LP_DIAGNOSIS_CASES = [
    Case("lp-diagnosis-no-out", [], "OUT: the first argument"),
    Case("lp-diagnosis-no-runs", ["x.md", "sweep=nowhere"], "sweep: no completed runs under nowhere"),
    Case("lp-diagnosis-out-of-range", ["x.md", "perturbations=0"], "diagnosis.perturbations: must be"),
]
# scripts/crbm_bp_shared_stop.py: refused before any run starts
SHARED_STOP_CASES = [
    Case("shared-stop-no-out", [], "OUT: the first argument"),
    Case("shared-stop-key-as-out", ["seeds=0"], "OUT: the first argument"),
    Case("shared-stop-not-key-value", ["out", "seeds"], "seeds: expected key=value"),
    Case("shared-stop-unknown-key", ["out", "seed=0"], "seed: unknown key"),
    Case("shared-stop-wrong-type", ["out", "seeds=a"], "seeds: expected comma-separated ints"),
    Case("shared-stop-committed-stream", ["out", "shuffle_stream=3"], "shuffle_stream: must be"),
    Case("shared-stop-unknown-method", ["out", "methods=lr,sgd"], "methods: expected some of lr,"),
    Case("shared-stop-unknown-experiment", ["out", "experiment=figure-3"], "experiment: expected table-1"),
    Case("shared-stop-grid-unset", ["out", "experiment=table-1"], "extra: table-1 sweeps task.rate"),
]
SCRIPT_CASES = (
    [("pmp_er_restatement", c) for c in RESTATEMENT_CASES]
    + [("crbm_bp_shared_stop", c) for c in SHARED_STOP_CASES]
    + [("frank_wolfe_bias_exact", c) for c in BIAS_EXACT_CASES]
    + [("frank_wolfe_oracle_gain", c) for c in ORACLE_GAIN_CASES]
    + [("pmp_lp_diagnosis", c) for c in LP_DIAGNOSIS_CASES]
)


@pytest.mark.parametrize("script, case", SCRIPT_CASES, ids=[c.id for _, c in SCRIPT_CASES])
def test_script_bad_input_gives_one_error_line(script, case, tmp_path, monkeypatch, capsys):
    assert_one_error_line(script_main(script), case, tmp_path, monkeypatch, capsys)


@pytest.mark.parametrize(
    "choice, extra",
    [
        ("hydra/launcher=joblib", "parallel"),
        ("hydra/sweeper=optuna", "optuna"),
        ("hydra/launcher=submitit_local", "slurm"),
    ],
)
def test_a_missing_hydra_plugin_names_its_pip_extra(choice, extra, tmp_path, monkeypatch, capsys):
    import importlib.util

    from rbmlab.hydra_app import PLUGINS

    group, option = choice.split("=")
    missing, find = PLUGINS[(group, option)][0], importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == missing else find(name, *a)
    )
    needle = f"pip install 'rbmlab[{extra}]'"
    assert_one_error_line(
        main, Case(choice, ["run", "-m", *SMALL, choice], needle), tmp_path, monkeypatch, capsys
    )
