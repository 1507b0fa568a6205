"""Dataset potts_samples: exact samples of a known Potts-visible RBM, its truth and a CLI run."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.special import logsumexp

from rbmlab.data import ground_truth, has_ground_truth, load_dataset
from rbmlab.errors import RbmlabError
from rbmlab.models.rbm import RBM

SMALL = {"n": 5, "q": 3, "n_hidden": 4, "n_train": 15000, "n_test": 5000}


def exact_log_p(truth: RBM, codes: np.ndarray) -> np.ndarray:
    """log p(v) of integer-coded rows, every joint state of (v, h) enumerated here."""
    units = truth.visible_units
    v = units.encode(codes, np.float64)
    hs = np.array(list(itertools.product([0.0, 1.0], repeat=truth.n_hidden)))
    every = units.encode(np.array(list(itertools.product(range(units.q), repeat=codes.shape[1]))), np.float64)

    def neg_f(x):
        return logsumexp(x @ truth.W @ hs.T + (x @ truth.b_v)[:, None] + (hs @ truth.b_h)[None, :], axis=1)

    return neg_f(v) - logsumexp(neg_f(every))


def test_rows_are_codes_and_deterministic_by_seed():
    d = load_dataset("potts_samples", **SMALL)
    assert d.train.shape == (15000, 5) and d.test.shape == (5000, 5) and d.train.dtype == np.float32
    assert set(np.unique(np.concatenate([d.train, d.test]))) == {0.0, 1.0, 2.0}
    again = load_dataset("potts_samples", **SMALL)
    np.testing.assert_array_equal(d.train, again.train)
    np.testing.assert_array_equal(d.test, again.test)
    other = load_dataset("potts_samples", **{**SMALL, "sample_seed": 1})
    assert not np.array_equal(d.train, other.train)
    other_model = ground_truth("potts_samples", **{**SMALL, "model_seed": 1})
    assert not np.allclose(other_model.W, ground_truth("potts_samples", **SMALL).W)


def test_frequencies_match_the_truths_exact_marginals():
    d = load_dataset("potts_samples", **SMALL)
    truth = ground_truth("potts_samples", **SMALL)
    assert has_ground_truth("potts_samples") and isinstance(truth, RBM)
    assert (truth.visible, truth.visible_states, truth.hidden) == ("potts", "3", "bernoulli")
    units = truth.visible_units
    states = np.array(list(itertools.product(range(3), repeat=5)))
    p = np.exp(exact_log_p(truth, states))
    marginals = p @ units.encode(states, np.float64)  # (15,) one-hot columns
    rows = np.concatenate([d.train, d.test])
    freq = units.encode(rows, np.float64).mean(axis=0)
    se = np.sqrt(marginals * (1 - marginals) / rows.shape[0])
    assert np.all(np.abs(freq - marginals) < 4 * se + 1e-12)
    assert marginals.min() < 0.2 < 0.5 < marginals.max()  # far from uniform: the test can fail
    # info's truth: its exact log Z and mean log-likelihoods
    info = d.info["ground_truth"]
    assert info["log_partition"] == pytest.approx(truth.exact_log_partition())
    assert info["mean_loglik"]["test"] == pytest.approx(float(np.mean(exact_log_p(truth, d.test))), abs=1e-9)


def test_options_are_checked_in_one_line():
    with pytest.raises(RbmlabError, match="dataset.n_hidden: exact sampling enumerates the smaller layer"):
        load_dataset("potts_samples", n_hidden=21, n=14)  # 2^21 hidden, 3^14 > 2^21 visible
    assert load_dataset("potts_samples", n_hidden=21, n=3, n_train=5, n_test=5).train.shape == (5, 3)
    with pytest.raises(RbmlabError, match="q"):
        load_dataset("potts_samples", q=1)


def test_evaluators_that_read_an_ising_truth_refuse_in_one_line():
    from rbmlab.evaluators.kl import KL, KLConfig
    from rbmlab.evaluators.param_rmse import ParamRMSE, ParamRMSEConfig
    from rbmlab.units.requirements import check_unit_types

    with pytest.raises(RbmlabError, match="evaluator=param_rmse: compares Ising couplings J; model rbm"):
        ParamRMSE(ParamRMSEConfig()).check(RBM, {"n_visible": 15, "n_hidden": 4})
    with pytest.raises(RbmlabError, match="model.visible_units: potts visible units; evaluator=kl"):
        check_unit_types(
            {"visible": "potts", "hidden": "bernoulli"},
            KL(KLConfig()).units,
            "evaluator=kl",
            lambda s: f"model.{s}_units",
        )


def rbmlab(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "rbmlab", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HYDRA_FULL_ERROR": "0"},
    )
    assert proc.returncode == 0, f"{proc.stdout}\n{proc.stderr}"
    return proc


DATA = [
    "dataset=potts_samples",
    "dataset.n=5",
    "dataset.n_hidden=4",
    "dataset.n_train=300",
    "dataset.n_test=200",
    "model.visible_units=potts",
    "model.visible_states=3",
    "model.n_hidden=4",
    "train.progress=false",
]


@pytest.mark.slow  # two CLI runs: about 10 s
def test_truth_scored_exactly_and_a_learned_model_by_ais(tmp_path):
    rbmlab("run", *DATA, "model.init=truth", "evaluator=exact", "train.epochs=0", cwd=tmp_path)
    rbmlab(
        "run",
        *DATA,
        "learner=pcd",
        "evaluator=ais",
        "evaluator.schedule=linear",
        "evaluator.n_temperatures=300",
        "evaluator.curve_n_temperatures=50",
        "evaluator.n_chains=50",
        "evaluator.exact_check=true",
        "train.epochs=2",
        "train.eval_every=1",
        cwd=tmp_path,
    )
    (truth_run, ais_run) = sorted(
        (p.parent for p in (tmp_path / "outputs").rglob("metrics.csv")),
        key=lambda p: "log_z_error" in pd.read_csv(p / "metrics.csv"),
    )
    data = load_dataset("potts_samples", n=5, n_hidden=4, n_train=300, n_test=200)
    truth_ll = pd.read_csv(truth_run / "metrics.csv").test_log_likelihood.iloc[-1]
    assert truth_ll == pytest.approx(data.info["ground_truth"]["mean_loglik"]["test"], abs=1e-6)
    ais = pd.read_csv(ais_run / "metrics.csv")
    assert list(ais.epoch) == [0, 1, 2] and ais.log_z_within.iloc[-1] == 1.0
    assert np.all(np.isfinite(ais.test_log_likelihood))
