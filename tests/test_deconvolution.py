"""The ``deconvolution`` dataset (pmp Sec 5.6 generator) and the PMP posterior-sampling experiment
(rbmlab.experiment.deconvolution, an ``inference`` experiment): the generator's rule, its ground
truth, the metrics, the files; the experiment files at every tier, their one-line errors."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import pytest

from rbmlab.backend import host_rng
from rbmlab.data import load_dataset
from rbmlab.data.deconvolution import FEATURES, truth_arrays
from rbmlab.errors import RbmlabError
from rbmlab.experiment import SCALE_TIERS, load_spec, run_experiment
from rbmlab.experiment.deconvolution import (
    DeconvolutionConfig,
    PosteriorSamples,
    feature_matches,
    metrics,
    reconstruction,
    run,
    sample_posterior,
)
from rbmlab.experiment.inference import tier_options
from rbmlab.models.convolution_or import or_convolve


def test_the_features_are_the_papers():
    square, plus, triangle, diamond = FEATURES
    assert square.sum() == 16 and square[1:4, 1:4].sum() == 0
    np.testing.assert_array_equal(plus, np.maximum.outer(np.arange(5) == 2, np.arange(5) == 2))
    assert triangle[4].sum() == 5 and triangle[0, 2] == 1 and diamond.sum() == 8


def test_dataset_follows_the_generators_rule():
    data = load_dataset("deconvolution")
    W, S = truth_arrays(data)
    assert data.train.shape == (100, 196) and data.image_shape == (14, 14) and data.train.dtype == np.float32
    assert S.shape == (100, 4, 10, 10) and S.sum(axis=(1, 2, 3)).min() >= 3
    np.testing.assert_array_equal(W, FEATURES)
    np.testing.assert_array_equal(data.train.reshape(-1, 14, 14), or_convolve(S, W))
    np.testing.assert_array_equal(data.test, data.train)
    again = load_dataset("deconvolution")
    np.testing.assert_array_equal(again.train, data.train)
    assert not np.array_equal(load_dataset("deconvolution", seed=1).train, data.train)


def test_dataset_sizes_follow_the_options():
    data = load_dataset("deconvolution", n_images=7, grid=6, p_location=0.05, min_placements=2)
    assert data.train.shape == (7, 100) and data.image_shape == (10, 10)
    assert truth_arrays(data)[1].sum(axis=(1, 2, 3)).min() >= 2


def test_too_few_candidates_is_one_error_line_naming_the_key():
    with pytest.raises(RbmlabError) as excinfo:
        load_dataset("deconvolution", n_images=200, n_candidates=100)
    assert str(excinfo.value).startswith("dataset.n_images:") and "\n" not in str(excinfo.value)


def test_feature_matches_find_translated_features():
    W = np.zeros((2, 3, 6, 6), np.float32)
    W[0, 0, 1:, 1:] = FEATURES[2]  # the triangle, shifted by (1, 1)
    W[0, 1, :5, :5] = FEATURES[0]  # the square in place
    W[0, 2, :5, :5] = FEATURES[0]  # a second copy of it
    W[1, 0, :5, 1:] = FEATURES[1]
    W[1, 0, 5, 0] = 1  # the plus with an extra pixel: no match
    match = feature_matches(W, FEATURES)
    np.testing.assert_array_equal(match.any(axis=2).sum(axis=1), [3, 0])
    np.testing.assert_array_equal(match.any(axis=1).sum(axis=1), [2, 0])


def test_metrics_of_the_truth_are_perfect():
    data = load_dataset("deconvolution", n_images=5)
    W, S = truth_arrays(data)
    X = data.train.reshape(-1, 14, 14)
    samples = PosteriorSamples(W[None], S[None], np.zeros(1, np.float32))
    np.testing.assert_array_equal(reconstruction(W[None], S[None], X), [1.0])
    m = metrics(samples, X, W)
    assert m["features_matching"] == [4.0] and m["truth_recovered"] == [4.0] and m["empty_features"] == [0.0]


def test_posterior_samples_nearly_explain_small_data():
    """10 images on a 4 x 4 grid, K = 4 features of 5 x 5, 200 sweeps: every PMP sample reproduces
    at least 99% of the pixels and one reproduces them all (PMP is approximate on this loopy graph;
    the exact-answer checks are in tests/test_logical_factors.py)."""
    data = load_dataset("deconvolution", n_images=10, grid=4, p_location=0.1, min_placements=2, seed=3)
    X = data.train.reshape((-1,) + data.image_shape)
    config = DeconvolutionConfig(n_features=4, feature_side=5, n_samples=3, sweeps=200)
    samples = sample_posterior(X, config, host_rng(0))
    assert samples.W.shape == (3, 4, 5, 5) and samples.S.shape == (3, 10, 4, 4, 4)
    share = reconstruction(samples.W, samples.S, X)
    assert share.min() >= 0.99 and share.max() == 1.0


def test_run_writes_samples_metrics_and_the_figure(tmp_path):
    config = DeconvolutionConfig(n_samples=2, sweeps=3)
    result = run(tmp_path, {"n_images": 9, "grid": 4, "p_location": 0.1}, config, echo=lambda *_: None)
    assert {p.name for p in tmp_path.iterdir()} == {
        "samples.npz",
        "metrics.json",
        "figure-4.png",
        "figure-5-data.png",
    }
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["config"]["sweeps"] == 3 and len(saved["reconstruction"]) == 2 == len(result["objective"])
    with np.load(tmp_path / "samples.npz") as f:
        assert f["W"].shape == (2, 5, 6, 6) and f["S"].shape == (2, 9, 5, 3, 3)


def test_gibbs_chains_run_in_the_same_experiment_and_score_their_own_log_joint(tmp_path):
    """sampler=gibbs (and gwg): one chain per sample, each for its sweeps (or its share of a time budget);
    the objective is the unperturbed ln p(W, S, X) of the state reached."""
    from rbmlab.inference import deconvolution_gibbs as dg

    config = DeconvolutionConfig(n_samples=2, sweeps=4, sampler="gibbs")
    result = run(tmp_path, {"n_images": 9, "grid": 4, "p_location": 0.1}, config, echo=lambda *_: None)
    assert result["sweeps"] == [4, 4]
    with np.load(tmp_path / "samples.npz") as f:
        assert f["W"].shape == (2, 5, 6, 6) and f["S"].shape == (2, 9, 5, 3, 3)
        for b in range(2):
            assert result["objective"][b] == pytest.approx(
                dg.log_joint(f["W"][b], f["S"][b], f["X"], config.p_w, config.p_s, config.p_e)
            )
    timed = run(
        tmp_path / "t",
        {"n_images": 9, "grid": 4, "p_location": 0.1},
        DeconvolutionConfig(n_samples=2, sampler="gibbs", seconds=0.2),
        echo=lambda *_: None,
    )
    assert all(s >= 1 for s in timed["sweeps"])
    informed = run(
        tmp_path / "g",
        {"n_images": 9, "grid": 4, "p_location": 0.1},
        DeconvolutionConfig(n_samples=2, sampler="gwg", seconds=0.2),
        echo=lambda *_: None,
    )
    assert all(0 < s for s in informed["sweeps"]) and len(informed["reconstruction"]) == 2


@pytest.mark.parametrize("clamp", ["W", "S"])
def test_gwg_with_a_block_clamped_keeps_it_at_the_truth_and_reports_the_truths_log_joint(tmp_path, clamp):
    from rbmlab.data import load_dataset
    from rbmlab.data.deconvolution import truth_arrays
    from rbmlab.inference import deconvolution_gibbs as dg

    small = {"n_images": 9, "grid": 4, "p_location": 0.1}
    config = DeconvolutionConfig(
        n_samples=2, sampler="gwg", sweeps=1, n_features=4, feature_side=5, clamp=clamp
    )
    result = run(tmp_path, small, config, echo=lambda *_: None)
    truth_W, truth_S = truth_arrays(load_dataset("deconvolution", **small))
    with np.load(tmp_path / "samples.npz") as f:
        held, truth = (f["W"], truth_W) if clamp == "W" else (f["S"], truth_S)
        np.testing.assert_array_equal(held, np.broadcast_to(truth, held.shape))
        assert result["truth_objective"] == pytest.approx(
            dg.log_joint(truth_W, truth_S, f["X"], config.p_w, config.p_s, config.p_e)
        )
    # a sweep is one proposal per site of the free block
    assert result["sweeps"] == [1.0, 1.0]


def test_lp_samples_are_rounded_relaxations_scored_by_their_own_log_joint(tmp_path):
    """sampler=lp: one LP solve a sample of the perturbed problem, rounded; the share of fractional
    sites and the unperturbed ln p(W, S, X) of the rounded state are reported."""
    from rbmlab.inference import deconvolution_gibbs as dg

    small = {"n_images": 3, "grid": 3, "p_location": 0.2}
    config = DeconvolutionConfig(n_samples=2, sampler="lp", n_features=2, feature_side=3)
    result = run(tmp_path, small, config, echo=lambda *_: None)
    assert result["sweeps"] == [1.0, 1.0] and len(result["fractional"]) == 2
    assert all(0.0 <= f <= 1.0 for f in result["fractional"])
    with np.load(tmp_path / "samples.npz") as f:
        assert set(np.unique(f["W"])) <= {0.0, 1.0} and set(np.unique(f["S"])) <= {0.0, 1.0}
        for b in range(2):
            assert result["objective"][b] == pytest.approx(
                dg.log_joint(f["W"][b], f["S"][b], f["X"], config.p_w, config.p_s, config.p_e)
            )


EXPERIMENTS = [
    "pmp/figure-4-deconvolution",
    "pmp/figure-4-deconvolution-gibbs",
    "pmp/figure-4-deconvolution-gwg",
]
SMALL = ["dataset.n_images=9", "dataset.grid=4", "dataset.p_location=0.1"]


def test_the_experiment_files_load_at_every_tier_with_the_makefiles_old_settings():
    """The three files (pmp Figure 4 bottom; its Gibbs and GWG baselines) carry the settings of
    the Makefile variables they replace: smoke 2 samples of 10 images, else the paper's (Sec 5.6)."""
    found = {}
    for name in EXPERIMENTS:
        spec = load_spec(name)
        for tier in SCALE_TIERS:
            problem, options = tier_options(name, spec, tier)
            assert problem.name == "deconvolution"
            found[name, tier] = (options.config, options.dataset["n_images"])
    paper = DeconvolutionConfig()
    assert found[EXPERIMENTS[0], "paper"] == found[EXPERIMENTS[0], "reduced"] == (paper, 100)
    assert found[EXPERIMENTS[0], "smoke"] == (DeconvolutionConfig(sweeps=20, n_samples=2), 10)
    assert found[EXPERIMENTS[1], "paper"] == (DeconvolutionConfig(sampler="gibbs", sweeps=30000), 100)
    assert found[EXPERIMENTS[1], "smoke"] == (
        DeconvolutionConfig(sampler="gibbs", sweeps=20, n_samples=2),
        10,
    )
    assert found[EXPERIMENTS[2], "reduced"] == (DeconvolutionConfig(sampler="gwg", seconds=420.0), 100)
    assert found[EXPERIMENTS[2], "smoke"] == (
        DeconvolutionConfig(sampler="gwg", seconds=2.0, n_samples=2),
        10,
    )


DECONVOLUTION = {"problem": "deconvolution"}


@pytest.mark.parametrize(
    "section, argv, needle",
    [
        (DECONVOLUTION, ["sweep=2"], "inference.sweep: unknown option for inference problem deconvolution"),
        (
            DECONVOLUTION,
            ["dataset.images=3"],
            "inference.dataset.images: unknown option for dataset deconvolution",
        ),
        (DECONVOLUTION, ["damping=0"], "inference.damping:"),
        (DECONVOLUTION, ["sampler=metropolis"], "inference.sampler:"),
        (DECONVOLUTION, ["sweeps"], "sweeps: expected key=value"),
        ({"problem": "nope"}, [], "inference.problem: unknown inference problem 'nope'"),
        ({**DECONVOLUTION, "sweeps": "many"}, [], "inference.sweeps:"),
        ({"n_samples": 2}, [], "inference.problem: missing"),
        (
            DECONVOLUTION,
            ["clamp=W", "n_features=4", "feature_side=5"],
            "inference.clamp: applies to sampler=gwg only, not pmp",
        ),
        (
            {**DECONVOLUTION, "sampler": "gwg"},
            ["clamp=S"],
            "inference.clamp: holds a block at the ground truth, which "
            "has 4 features of 5 x 5: set n_features=4 and feature_side=5",
        ),
        ({**DECONVOLUTION, "sampler": "gwg"}, ["clamp=both"], "inference.clamp:"),
        (
            {**DECONVOLUTION, "sampler": "lp"},
            ["seconds=10"],
            "inference.seconds: applies to sampler=gibbs or gwg, not lp",
        ),
    ],
)
def test_a_bad_option_in_the_file_or_on_the_command_line_is_one_line(
    tmp_path, monkeypatch, section, argv, needle
):
    import yaml

    import rbmlab.experiment.spec as spec_file

    monkeypatch.setattr(spec_file, "EXPERIMENTS_DIR", tmp_path)
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "d.yaml").write_text(yaml.safe_dump({"inference": section, "scales": {"smoke": {}}}))
    with pytest.raises(RbmlabError) as excinfo:
        run_experiment("p/d", ["scale=smoke", *argv], results_root=tmp_path / "results")
    assert str(excinfo.value).startswith(f"experiment p/d: {needle}") and "\n" not in str(excinfo.value)
    assert not (tmp_path / "results").exists()


def test_the_experiment_writes_its_files_under_results_with_command_line_options(tmp_path):
    result = run_experiment(EXPERIMENTS[0], ["scale=smoke", "sweeps=3", *SMALL], results_root=tmp_path)
    out = tmp_path / "pmp" / "figure-4-deconvolution_smoke"
    assert {p.name for p in out.iterdir()} == {
        "samples.npz",
        "metrics.json",
        "figure-4.png",
        "figure-5-data.png",
    }
    saved = json.loads((out / "metrics.json").read_text())
    assert saved["config"] == asdict(DeconvolutionConfig(sweeps=3, n_samples=2))
    assert saved["dataset"]["n_images"] == 9 and len(result["reconstruction"]) == 2
