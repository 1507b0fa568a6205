"""Bad input, bounds (issue 33): counts and sizes past their bound in rbmlab.limits, and the
exact-enumeration checks that must come before any enumeration. Every case ends in one
``rbmlab: error:`` line naming the key (and, for a bound, the bound and why), at validation,
before any data is read or sampled: each takes well under a second (tests.test_bad_input's
conventions: exit 2, no traceback, nothing that looks finished).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from rbmlab import limits
from rbmlab.cli import main
from tests.test_bad_input import Case, assert_one_error_line, rbm_npz

BIG = 10**12  # an integer (Hydra reads 1e12 as a float, refused as "expected an integer")
RUN = ["run", "train.progress=false"]
CRBM = [*RUN, "model=crbm", "task=flip", "evaluator=pixel_error"]
ISING = [*RUN, "model=ising", "learner=pcd", "dataset=ising_samples", "dataset.sampler=gibbs"]
BOUND = "must be <= "
UPDATE, EVALUATION = f"{BOUND}{limits.UPDATE_STEPS} (", f"{BOUND}{limits.EVALUATION_STEPS} ("


def ising_npz(n: int):
    """A valid n-variable Ising checkpoint (J symmetric, zero diagonal)."""

    def setup(root: Path) -> None:
        rng = np.random.default_rng(0)
        J = np.triu(0.1 * rng.standard_normal((n, n)), 1)
        np.savez(root / "ising.npz", J=J + J.T, h=np.zeros(n), spins=np.array("01"))

    return setup


def rbm_checkpoint(root: Path) -> None:
    rbm_npz(root / "m.npz")


CASES = [
    # ---------------------------------------------------------------- iterations inside an update
    Case("bounds-cd-percloss-k", [*CRBM, "learner=cd_percloss", f"learner.k={BIG}"], f"learner.k: {UPDATE}"),
    Case(
        "bounds-conditional-cd-k",
        [*CRBM, "learner=conditional_cd", f"learner.k={BIG}"],
        f"learner.k: {UPDATE}",
    ),
    Case("bounds-cd-k", [*RUN, f"learner.k={BIG}"], f"learner.k: {UPDATE}"),
    Case("bounds-pcd-k", [*RUN, "learner=pcd", "learner.k=100001"], f"learner.k: {UPDATE}"),
    Case("bounds-reset-k", [*RUN, "learner=reset", f"learner.k={BIG}"], f"learner.k: {UPDATE}"),
    Case(
        "bounds-sdcp-d-times-k",
        [*RUN, "learner=sdcp", "learner.d=1000", "learner.k=1000"],
        "learner.k: d x k (sampler sweeps an update) is 1000000; must be <= 100000",
    ),
    Case("bounds-csdcp-d", [*RUN, "learner=csdcp", f"learner.d={BIG}"], f"learner.d: {UPDATE}"),
    Case(
        "bounds-tap-max-iter-tol-zero",
        [*RUN, "learner=tap", "learner.tol=0", f"learner.max_iter={BIG}"],
        f"learner.max_iter: {UPDATE}",
    ),
    Case(
        "bounds-tap-dbm-max-iter",
        [*RUN, "model=dbm", "learner=tap_dbm", "evaluator=tap_dbm", f"learner.max_iter={BIG}"],
        f"learner.max_iter: {UPDATE}",
    ),
    Case(
        "bounds-tap-dbm-pretrain-epochs",
        [*RUN, "model=dbm", "learner=tap_dbm", "evaluator=tap_dbm", f"learner.pretrain_epochs={BIG}"],
        f"learner.pretrain_epochs: {BOUND}{limits.EPOCHS} (",
    ),
    Case(
        "bounds-mle-bp-base-iterations",
        [*CRBM, "learner=mle_bp", f"learner.base_iterations={BIG}"],
        f"learner.base_iterations: {UPDATE}",
    ),
    Case(
        "bounds-mle-mf-base-iterations-plus-epochs",
        [*CRBM, "learner=mle_mf", "learner.base_iterations=99000", "train.epochs=2000"],
        "learner.base_iterations: base_iterations + train.epochs (T of the last epoch) is 101000; "
        "must be <= 100000",
    ),
    Case(
        "bounds-mle-bp-per-epoch-times-epochs",
        [*CRBM, "learner=mle_bp", "learner.per_epoch=60", "train.epochs=2000"],
        "learner.base_iterations: base_iterations + per_epoch × train.epochs (T of the last epoch) "
        "is 120007; must be <= 100000",
    ),
    Case(
        "bounds-mle-bp-no-iterations",
        [*CRBM, "learner=mle_bp", "learner.base_iterations=0", "learner.per_epoch=0"],
        "learner.base_iterations: 0 with learner.per_epoch=0 leaves inference no iterations",
    ),
    Case(
        "bounds-mle-mf-per-epoch-negative",
        [*CRBM, "learner=mle_mf", "learner.per_epoch=-1"],
        "learner.per_epoch: ",
    ),
    Case(
        "bounds-mssvm-base-iterations",
        [*CRBM, "learner=mssvm", "learner.tol=0", f"learner.base_iterations={BIG}"],
        f"learner.base_iterations: {UPDATE}",
    ),
    Case(
        "bounds-fw-bias-max-steps",
        [*RUN, "learner=frank_wolfe", f"learner.bias_max_steps={BIG}"],
        f"learner.bias_max_steps: {UPDATE}",
    ),
    Case(
        "bounds-fw-sample-steps",
        [*RUN, "learner=frank_wolfe", f"learner.sample_steps={BIG}"],
        f"learner.sample_steps: {UPDATE}",
    ),
    Case(
        "bounds-fw-restarts",
        [*RUN, "learner=frank_wolfe", "learner.restarts=1001"],
        f"learner.restarts: {BOUND}{limits.REPEATS} (",
    ),
    Case(
        "bounds-fw-maxiter",
        [*RUN, "learner=frank_wolfe", f"learner.maxiter={BIG}"],
        f"learner.maxiter: {UPDATE}",
    ),
    # ---------------------------------------------------------------- training length and sizes
    Case("bounds-epochs", [*RUN, f"train.epochs={BIG}"], f"train.epochs: {BOUND}{limits.EPOCHS} ("),
    Case(
        "bounds-checkpoint-every",
        [*RUN, f"train.checkpoint_every={BIG}"],
        "train.checkpoint_every: must be <=",
    ),
    Case(
        "bounds-patience",
        [*RUN, "train.stop_rule=valid", "train.stop_metric=valid_log_likelihood", f"train.patience={BIG}"],
        "train.patience: must be <=",
    ),
    Case("bounds-trials", [*RUN, "train.trials=1000000"], f"train.trials: {BOUND}{limits.TRIALS} ("),
    Case("bounds-n-hidden", [*RUN, "model.n_hidden=1000001"], f"model.n_hidden: {BOUND}{limits.UNITS} ("),
    Case(
        "bounds-dbm-layer",
        [*RUN, "model=dbm", "learner=tap_dbm", "evaluator=tap_dbm", f"model.n_hidden=[10,{BIG}]"],
        "model.n_hidden: must be <=",
    ),
    Case(
        "bounds-batch-size",
        [*RUN, f"learner.batch_size={BIG}"],
        f"learner.batch_size: {BOUND}{limits.EXAMPLES} (",
    ),
    Case(
        "bounds-before-the-backend-is-imported",
        [*RUN, "backend=cupy", f"learner.k={BIG}"],  # not "no GPU"
        f"learner.k: {UPDATE}",
    ),
    Case(
        "bounds-pcd-chains",
        [*RUN, "learner=pcd", f"learner.n_chains={BIG}"],
        f"learner.n_chains: {BOUND}{limits.CHAINS} (",
    ),
    # ---------------------------------------------------------------- evaluations
    Case(
        "bounds-ais-temperatures",
        [*RUN, "evaluator.schedule=linear", f"evaluator.n_temperatures={BIG}"],
        f"evaluator.n_temperatures: {EVALUATION}",
    ),
    Case(
        "bounds-ais-curve-temperatures",
        [*RUN, f"evaluator.curve_n_temperatures={BIG}"],
        f"evaluator.curve_n_temperatures: {EVALUATION}",
    ),
    Case("bounds-ais-chains", [*RUN, "evaluator.n_chains=1000001"], "evaluator.n_chains: must be <="),
    Case(
        "bounds-kl-sweeps",
        [*ISING, "evaluator=kl", f"evaluator.sweeps={BIG}"],
        f"evaluator.sweeps: {EVALUATION}",
    ),
    Case(
        "bounds-kl-samples",
        [*ISING, "evaluator=kl", f"evaluator.n_samples={BIG}"],
        "evaluator.n_samples: must be <=",
    ),
    Case(
        "bounds-mmd-sweeps",
        [*ISING, "evaluator=mmd", f"evaluator.sweeps={BIG}"],
        f"evaluator.sweeps: {EVALUATION}",
    ),
    Case(
        "bounds-pmap-max-sweeps",
        [
            *ISING,
            "evaluator=pmap_log_z",
            "evaluator.solver=mplp",
            "evaluator.tol=1e-300",
            f"evaluator.max_sweeps={BIG}",
        ],
        f"evaluator.max_sweeps: {EVALUATION}",
    ),
    Case(
        "bounds-tap-evaluator-max-iter",
        [*RUN, "evaluator=tap", f"evaluator.max_iter={BIG}"],
        f"evaluator.max_iter: {EVALUATION}",
    ),
    Case(
        "bounds-pixel-error-max-iter",
        [*CRBM, "learner=mle_bp", f"evaluator.max_iter={BIG}"],
        f"evaluator.max_iter: {EVALUATION}",
    ),
    Case(
        "bounds-test-error-max-iter",
        [*RUN, "evaluator=test_error", f"evaluator.max_iter={BIG}"],
        f"evaluator.max_iter: {EVALUATION}",
    ),
    Case(
        "bounds-max-examples", [*RUN, f"evaluator.max_examples={BIG}"], "evaluator.max_examples: must be <="
    ),
    # ---------------------------------------------------------------- datasets
    Case("bounds-ising-burn-in", [*ISING, f"dataset.burn_in={BIG}"], f"dataset.burn_in: {EVALUATION}"),
    Case(
        "bounds-ising-rows-times-variables",
        [*ISING, "dataset.structure=dense", "dataset.n=4096", "dataset.n_train=5000000"],
        "dataset.n_train: (n_train + n_test) x 4096 variables (elements of the data) is",
    ),
    Case(
        "bounds-deconvolution-candidates-times-grid",
        [*RUN, "dataset=deconvolution", "dataset.grid=1000", "dataset.n_candidates=10000"],
        "dataset.n_candidates: n_candidates x 4 features x grid^2",
    ),
    Case(
        "bounds-mnist-n-train",
        [*RUN, f"dataset.n_train={BIG}"],
        f"dataset.n_train: {BOUND}{limits.EXAMPLES} (",
    ),
    # ---------------------------------------------------------------- exact enumeration, before any
    Case(
        "bounds-kl-on-a-25-variable-lattice",
        [*ISING, "dataset.side=5", "evaluator=kl"],
        f"evaluator=kl: enumerates every state; at most {limits.EXACT_SAMPLING_UNITS} units, "
        "this model has 25",
    ),
    Case(
        "bounds-kl-on-25-dense-variables",
        [*ISING, "dataset.structure=dense", "dataset.n=25", "evaluator=kl"],
        "evaluator=kl: enumerates every state",
    ),
    Case(
        "bounds-exact-on-26-variables",
        [*ISING, "dataset.structure=dense", "dataset.n=26", "evaluator=exact"],
        f"evaluator=exact: enumeration needs at most {limits.ENUMERATION_UNITS} enumerated units",
    ),
    Case(
        "bounds-pmap-log-z-lattice-beyond-transfer-matrices",
        [
            *ISING,
            "dataset.side=20",
            "model.init=truth",
            "learner=reset",
            "train.epochs=0",
            "evaluator=pmap_log_z",
        ],
        "evaluator=pmap_log_z: the exact log Z of a 20 x 20 lattice needs transfer "
        f"matrices of side <= {limits.TRANSFER_MATRIX_SIDE}",
    ),
    Case(
        "bounds-sweep-refused-before-any-job-reads-data",  # side=4's data would be sampled first
        [*ISING, "-m", "dataset.side=4,5", "evaluator=kl", "hydra.sweep.dir=s"],
        "evaluator=kl: enumerates every state",
    ),
    Case(
        "bounds-evaluate-kl-on-25-variables",
        [
            "evaluate",
            "checkpoint=ising.npz",
            "dataset=ising_samples",
            "dataset.side=5",
            "dataset.sampler=gibbs",
            "evaluator=kl",
        ],
        "evaluator=kl: enumerates every state",
        setup=ising_npz(25),
    ),
    Case(
        "bounds-evaluate-exact-on-26-variables",
        [
            "evaluate",
            "checkpoint=ising.npz",
            "dataset=ising_samples",
            "dataset.structure=dense",
            "dataset.n=26",
            "dataset.sampler=gibbs",
            "evaluator=exact",
        ],
        "evaluator=exact: enumeration needs at most 25",
        setup=ising_npz(26),
    ),
    Case(
        "bounds-evaluate-ais-chains",
        [
            "evaluate",
            "checkpoint=m.npz",
            "dataset=bars_stripes",
            "evaluator=ais",
            f"evaluator.n_chains={BIG}",
        ],
        "evaluator.n_chains: must be <=",
        setup=rbm_checkpoint,
    ),
    # -------------------------- a start already beyond the divergence limit (models.PARAMETER_LIMIT)
    Case(
        "bounds-rbm-weight-std",
        [*RUN, "model.weight_std=1e200"],
        "model.weight_std: must be in [0, 1000000.0]",
    ),
    Case(
        "bounds-ising-coupling-std",
        [*ISING, "model.coupling_std=1e7"],
        "model.coupling_std: must be in [0.0, 1000000.0]",
    ),
]

SECONDS = 3.0  # each case takes well under 1 s on an idle machine; 3 s tolerates a loaded one


def test_the_bounds_corpus_counts_and_ids_are_unique():
    assert len(CASES) >= 25, len(CASES)
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_bound_or_an_enumeration_limit_gives_one_error_line_at_once(case, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("RBMLAB_CACHE", str(tmp_path / "cache"))  # no cached samples to lean on
    start = time.perf_counter()
    assert_one_error_line(main, case, tmp_path, monkeypatch, capsys)
    assert time.perf_counter() - start < SECONDS
    assert not (tmp_path / "cache").exists()  # nothing sampled or cached


@pytest.mark.parametrize(
    "argv, needle",
    [
        (
            [
                "run",
                "model=ising",
                "learner=pcd",
                "dataset=ising_samples",
                "dataset.side=5",
                "dataset.sampler=gibbs",
                "evaluator=kl",
                "train.progress=false",
            ],
            "evaluator=kl: enumerates every state",
        ),
        (
            [
                "run",
                "model=ising",
                "learner=pcd",
                "dataset=ising_samples",
                "dataset.structure=dense",
                "dataset.n=26",
                "dataset.sampler=gibbs",
                "evaluator=exact",
                "train.progress=false",
            ],
            "evaluator=exact: enumeration needs",
        ),
    ],
    ids=["kl-on-25-variables", "exact-on-26-variables"],
)
def test_the_enumeration_refusal_takes_seconds_not_minutes(argv, needle, tmp_path):
    """The tester's case, as a user runs it (a process of its own, an empty sample cache): one
    line in < 5 s. Before the fix the pre-flight sampled the data and enumerated its 2^25 states
    for the dataset's log Z before the size check (7 minutes, then the same refusal)."""
    env = {**os.environ, "RBMLAB_CACHE": str(tmp_path / "cache"), "HYDRA_FULL_ERROR": "0"}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "rbmlab", *argv, f"hydra.run.dir={tmp_path / 'run'}"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    seconds = time.perf_counter() - start
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert done.returncode == 2 and len(lines) == 1 and lines[0].startswith(f"rbmlab: error: {needle}"), (
        done.stderr
    )
    assert seconds < 5, f"{seconds:.1f} s"
    assert not (tmp_path / "run").exists() and not (tmp_path / "cache").exists()


def test_a_value_at_its_bound_is_accepted():
    """The bound itself is allowed (hi is inclusive): the largest run a user may ask for."""
    from rbmlab.hydra_app import validated_run_config

    cfg = validated_run_config(
        [
            "learner=cd_percloss",
            f"learner.k={limits.UPDATE_STEPS}",
            f"train.epochs={limits.EPOCHS}",
            f"evaluator.n_chains={limits.CHAINS}",
        ]
    )
    assert (cfg.learner.k, cfg.train.epochs, cfg.evaluator.n_chains) == (100_000, 1_000_000, 1_000_000)
