"""``rbmlab evaluate`` without a dataset (issue 34, item 4): the evaluators that need no data give
log Z and say so; those that score data are refused in one line naming the ones that work; with a
dataset, it scores it as before."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from rbmlab.cli import main
from rbmlab.models.ising import Ising
from rbmlab.models.rbm import RBM
from rbmlab.run.checkpoint import save_checkpoint
from tests.test_bad_input import Case, assert_one_error_line

N = 16
RNG = np.random.default_rng(3)
UPPER = np.triu(RNG.normal(0, 0.3, (N, N)), 1)
ISING = Ising(UPPER + UPPER.T, RNG.normal(0, 0.5, N), spins="01")
RBM_16 = RBM(0.3 * RNG.standard_normal((N, 4)), 0.2 * RNG.standard_normal(N), 0.2 * RNG.standard_normal(4))


def enumerate_states(n: int) -> np.ndarray:
    return ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.float64)


def logsumexp(a: np.ndarray) -> float:
    return float(a.max() + np.log(np.exp(a - a.max()).sum()))


def ising_log_z(J, h) -> float:
    """log Σ_x exp(½ xᵀJx + hᵀx) over all x in {0,1}^n, by enumeration."""
    x = enumerate_states(J.shape[0])
    return logsumexp(0.5 * ((x @ J) * x).sum(1) + x @ h)


def rbm_log_z(W, b_v, b_h) -> float:
    """log Σ_v exp(b_vᵀv + Σ_j softplus(b_h + vW)_j) over all v in {0,1}^n_visible."""
    v = enumerate_states(W.shape[0])
    return logsumexp(v @ b_v + np.logaddexp(0, v @ W + b_h).sum(1))


def evaluate_json(tmp_path, monkeypatch, capsys, *argv: str) -> dict:
    monkeypatch.chdir(tmp_path)
    main(["evaluate", *argv])
    return json.loads(capsys.readouterr().out)


def test_the_acceptance_exact_log_z_of_a_16_variable_ising_checkpoint_with_no_dataset(tmp_path):
    """`rbmlab evaluate checkpoint=<16-variable Ising.npz> evaluator=exact out=F.json`: log Z
    equal to the enumeration of its 2^16 states, printed and written."""
    save_checkpoint(tmp_path / "ising16.npz", ISING)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rbmlab",
            "evaluate",
            "checkpoint=ising16.npz",
            "evaluator=exact",
            "out=F.json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HYDRA_FULL_ERROR": "0"},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    printed, written = json.loads(proc.stdout), json.loads((tmp_path / "F.json").read_text())
    assert printed == written
    assert written["dataset"] is None and written["note"] == "no dataset: log Z only, by enumeration"
    assert written["model"] == "ising" and written["n"] == N
    assert written["log_z"] == pytest.approx(ising_log_z(ISING.J, ISING.h), rel=1e-6)
    assert "split" not in written and "mean_log_likelihood" not in written


def test_ais_and_tap_give_log_z_of_an_rbm_with_no_dataset(tmp_path, monkeypatch, capsys):
    """AIS from the uniform base model brackets the exact log Z; TAP (random binary starts) is
    within 0.05 nats of it for this weakly coupled RBM; each says how it did without data."""
    save_checkpoint(tmp_path / "rbm.npz", RBM_16)
    exact = rbm_log_z(RBM_16.W, RBM_16.b_v, RBM_16.b_h)
    got = evaluate_json(tmp_path, monkeypatch, capsys, "checkpoint=rbm.npz", "evaluator=exact")
    assert got["log_z"] == pytest.approx(exact, rel=1e-6)
    ais = evaluate_json(
        tmp_path,
        monkeypatch,
        capsys,
        "checkpoint=rbm.npz",
        "evaluator=ais",
        "evaluator.schedule=linear",
        "evaluator.n_temperatures=2000",
        "evaluator.progress=false",
    )
    assert ais["log_z_lower"] <= exact <= ais["log_z_upper"] and abs(ais["log_z"] - exact) < 0.05
    assert (
        ais["note"] == "no dataset: log Z only, AIS from the uniform base model (no data for its base rates)"
    )
    tap = evaluate_json(
        tmp_path,
        monkeypatch,
        capsys,
        "checkpoint=rbm.npz",
        "evaluator=tap",
        "evaluator.n_init=50",
        "evaluator.progress=false",
    )
    assert abs(tap["log_z"] - exact) < 0.05 and tap["dataset"] is None
    assert tap["note"].startswith("no dataset: log Z only, TAP")


def test_with_a_dataset_it_scores_the_data_as_before(tmp_path, monkeypatch, capsys):
    save_checkpoint(tmp_path / "ising16.npz", ISING)
    got = evaluate_json(
        tmp_path,
        monkeypatch,
        capsys,
        "checkpoint=ising16.npz",
        "evaluator=exact",
        "dataset=bars_stripes",
        "dataset.size=4",
    )
    assert got["dataset"] == "bars_stripes" and got["split"] == "test" and "note" not in got
    from rbmlab.data import load_dataset  # noqa: PLC0415

    x = load_dataset("bars_stripes", size=4).test.astype(np.float64)
    log_z = ising_log_z(ISING.J, ISING.h)
    expected = (0.5 * ((x @ ISING.J) * x).sum(1) + x @ ISING.h).mean() - log_z
    assert got["log_z"] == pytest.approx(log_z, rel=1e-6)
    assert got["mean_log_likelihood"] == pytest.approx(expected, rel=1e-6)


def with_checkpoints(root) -> None:
    save_checkpoint(root / "ising16.npz", ISING)
    save_checkpoint(root / "rbm.npz", RBM_16)


CASES = [
    Case(
        "pl-needs-data",
        ["evaluate", "checkpoint=rbm.npz", "evaluator=pl"],
        "dataset: missing; evaluator=pl scores data (dataset=NAME, or dataset=file dataset.path=FILE); "
        "with no dataset, log Z by evaluator=exact | ais | tap",
        with_checkpoints,
    ),
    Case(
        "reconstruction-needs-data",
        ["evaluate", "checkpoint=rbm.npz", "evaluator=reconstruction"],
        "evaluator=reconstruction scores data",
        with_checkpoints,
    ),
    Case(
        "ising-pl-names-its-own",
        ["evaluate", "checkpoint=ising16.npz", "evaluator=pl"],
        "log Z by evaluator=exact | pmap_log_z",
        with_checkpoints,
    ),
    Case(
        "reverse-ais-needs-data",
        ["evaluate", "checkpoint=rbm.npz", "evaluator=ais", "evaluator.reverse=true"],
        "evaluator.reverse: reverse AIS starts its chains from data",
        with_checkpoints,
    ),
    Case(
        "tap-all-starts-needs-data",
        ["evaluate", "checkpoint=rbm.npz", "evaluator=tap", "evaluator.n_init=0", "evaluator.progress=false"],
        "evaluator.n_init: 0 starts TAP from every training example",
        with_checkpoints,
    ),
    Case(
        "task-needs-data",
        ["evaluate", "checkpoint=rbm.npz", "evaluator=exact", "task=flip"],
        "task: flip corrupts data",
        with_checkpoints,
    ),
    Case(
        "dataset-option-without-dataset",
        ["evaluate", "checkpoint=rbm.npz", "evaluator=exact", "dataset.path=x.npy"],
        "dataset.path",
        with_checkpoints,
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_without_a_dataset_a_bad_request_gives_one_error_line(case, tmp_path, monkeypatch, capsys):
    assert_one_error_line(main, case, tmp_path, monkeypatch, capsys)


def test_a_split_with_no_dataset_is_refused_in_one_line(tmp_path):
    """split= names part of a dataset: with none named it is an error, not silently ignored."""
    save_checkpoint(tmp_path / "ising16.npz", ISING)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "rbmlab",
            "evaluate",
            "checkpoint=ising16.npz",
            "evaluator=exact",
            "split=valid",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HYDRA_FULL_ERROR": "0"},
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.strip().splitlines() == [
        "rbmlab: error: split: valid of what? no dataset is named; "
        "log Z needs none (score a split with dataset=NAME)"
    ]
