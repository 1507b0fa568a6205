"""The measures of tap/figure-7-attractors-seeds and tap/figure-9-structure-seeds
(rbmlab.experiment.figures.tap_attractors, tap_structure) against answers worked by hand, and both
figures end to end on two tiny runs."""

from __future__ import annotations

import numpy as np
import pytest

from rbmlab.experiment import run_experiment
from rbmlab.experiment.figures import tap_attractors as ta
from rbmlab.experiment.figures import tap_structure


def test_mean_pair_correlation_averages_the_pairs_and_is_undefined_for_one_row():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 2.0, 1.0]])
    assert ta.mean_pair_correlation(a) == pytest.approx((1.0 - 1.0 - 1.0) / 3, abs=1e-12)
    assert np.isnan(ta.mean_pair_correlation(a[:1]))


def test_neighbour_mean_takes_the_k_nearest_other_points():
    points = np.array([[0.0], [1.0], [3.0], [10.0]])
    values = np.array([1.0, 2.0, 4.0, 8.0])
    np.testing.assert_array_equal(ta.neighbour_mean(points, values, 1), [2.0, 1.0, 2.0, 4.0])
    np.testing.assert_array_equal(ta.neighbour_mean(points, values, 2), [3.0, 2.5, 1.5, 3.0])


def test_neighbour_agreement_is_the_correlation_with_the_neighbour_means_and_its_z_against_shuffles():
    points = np.linspace(0.0, 1.0, 40)[:, None]
    smooth = np.sin(3.0 * points[:, 0])  # F that varies smoothly over the points
    r, z = ta.neighbour_agreement(points, smooth, 3, 100, np.random.default_rng(0))
    assert r == pytest.approx(np.corrcoef(smooth, ta.neighbour_mean(points, smooth, 3))[0, 1], abs=1e-12)
    assert r > 0.9 and z > 5
    shuffled = np.random.default_rng(1).permutation(smooth)
    _, z_random = ta.neighbour_agreement(points, shuffled, 3, 100, np.random.default_rng(0))
    assert abs(z_random) < 3
    assert all(np.isnan(ta.neighbour_agreement(points[:4], smooth[:4], 3, 10, np.random.default_rng(0))))


def test_basins_send_a_converged_row_to_its_nearest_representative_and_the_rest_nowhere():
    a = np.array([[0.0, 0.0], [1.0, 1.0], [0.1, 0.0], [1.0, 0.9], [0.9, 1.0]])
    got = ta.basins(a, np.array([True, True, True, False, True]), np.array([0, 1]))
    np.testing.assert_array_equal(got, [0, 1, 0, -1, 1])


def test_purity_counts_each_basins_commonest_label_over_the_rows_in_basins():
    basin = np.array([0, 0, 0, 1, 1, -1])
    labels = np.array([3, 3, 6, 7, 7, 6])
    assert ta.purity(basin, labels) == pytest.approx(4 / 5)
    # one basin: any shuffle gives the commonest label's share
    assert ta.shuffled_purity(
        np.zeros(3, dtype=int), np.array([1, 1, 2]), 5, np.random.default_rng(0)
    ) == pytest.approx(2 / 3)
    assert np.isnan(ta.purity(np.array([-1, -1]), np.array([1, 2])))


def test_within_basin_distance_ratio_against_the_pairs_counted_by_hand():
    x = np.array([[0.0], [1.0], [10.0], [11.0], [50.0]])
    basin = np.array([0, 0, 1, 1, -1])  # the last row is in no basin: left out
    within = (1.0 + 1.0) / 2  # (0, 1) and (10, 11)
    every = (1 + 100 + 121 + 81 + 100 + 1) / 6  # the six pairs of the four rows in basins
    assert ta.within_basin_distance_ratio(x, basin) == pytest.approx(within / every, rel=1e-12)
    assert np.isnan(ta.within_basin_distance_ratio(x, np.array([0, 1, 2, 3, -1])))


@pytest.fixture(scope="module")
def smoke_runs(tmp_path_factory):
    """Two tiny binary-MNIST runs of tap/figure-3-seeds (N_h = 12, seeds 0 and 1)."""
    root = tmp_path_factory.mktemp("tap_runs")
    run_experiment(
        "tap/figure-3-seeds", ["scale=smoke", "model.n_hidden=12"], root / "results", root / "outputs"
    )
    return root


def test_the_attractor_figure_writes_both_tables_over_the_seeds(smoke_runs, tmp_path):
    results = tmp_path / "results"
    run_experiment("tap/figure-7-attractors-seeds", ["scale=smoke"], results, smoke_runs / "outputs")
    text = (results / "tap" / "figure-7-attractors-seeds_smoke.md").read_text()
    assert "seeds 0, 1" in text and "N_h = 12" in text
    fig7 = [line for line in text.splitlines() if line.startswith("| 2 |")][-1].split(" | ")
    assert fig7[2] == "1.000 ± 0.000"  # every chain of the tiny model converges
    assert float(fig7[3].split(" ")[0]) >= float(fig7[4].split(" ")[0])  # purity >= chance
    assert (results / "tap" / "figure-7-attractors-seeds_smoke.png").stat().st_size > 0


def test_scores_count_the_confident_near_rows_and_those_named_as_their_own_label():
    fit = (np.array([[10.0, 0.0], [0.0, 10.0]]), np.zeros(2), np.array([3, 7]))
    train = np.array([[1.0, 0.0], [0.0, 1.0]])
    rows = np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])  # class 3, undecided (p = 1/2), class 7
    labels = np.array([3, 3, 3])
    assert tap_structure.scores(rows, labels, fit, train, 0.0, 0.9) == pytest.approx((200 / 3, 100 / 3))
    assert tap_structure.scores(rows, labels, fit, train, 0.0, 0.99999) == (0.0, 0.0)  # p = 0.99995


def test_the_structure_figure_scores_the_noiseless_input_as_the_clean_images(smoke_runs, tmp_path):
    results = tmp_path / "results"
    run_experiment(
        "tap/figure-9-structure-seeds", ["scale=smoke", "n_test=60"], results, smoke_runs / "outputs"
    )
    text = (results / "tap" / "figure-9-structure-seeds_smoke.md").read_text()
    clean = text.split("the clean test images: ")[1].split(" %")[0]
    p0 = next(line for line in text.splitlines() if line.startswith("| 0 |")).split(" | ")
    assert p0[1] == f"{clean} ± 0.0"  # at p = 0 the channel flips nothing
    assert "the first 60 test images" in text and "the first 300 training images" in text
    assert (results / "tap" / "figure-9-structure-seeds_smoke.png").stat().st_size > 0
