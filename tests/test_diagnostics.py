"""Training diagnostics (issue 38): evaluator=spectrum, moments and overlap against exact answers.

spectrum: numpy's SVD of W and a planted W = U diag(s) Vᵀ. moments: samples equal to the data
give zero errors, and a 4-row, 3-unit case worked by hand. overlap: planted train/test sets whose
nearest-neighbour distances are known (samples copying train, copying test, far from both), in
{0, 1} and ±1 units; the blocked nearest-neighbour search against scipy's cdist.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.distance import cdist

from rbmlab.backend import get_backend
from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.base import Context
from rbmlab.evaluators.metrics import metric_spec
from rbmlab.evaluators.moments import Moments, compare
from rbmlab.evaluators.overlap import Overlap, nearest
from rbmlab.evaluators.sampling import draw, sampler_for
from rbmlab.models import MODELS
from rbmlab.models.rbm import RBM
from tests.conftest import random_rbm

NUMPY = get_backend("numpy", "float64")


def build(node: dict):
    return EVALUATORS.build(EVALUATORS.parse(node))


def context(train=None, seed: int = 9) -> Context:
    return Context(rng=NUMPY.rng(seed), final=True, train=train)


# ------------------------------------------------------------------------------------ spectrum
def test_spectrum_is_numpy_svd_of_w_and_k_is_its_length():
    model = random_rbm(NUMPY, 12, 15, seed=1)
    expected = np.linalg.svd(model.W, compute_uv=False)
    for k, n in ((10, 10), (3, 3)):  # default k, and a non-default one
        evaluator = build({"name": "spectrum", **({"k": k} if k != 10 else {})})
        got = evaluator.evaluate(model, {}, context())
        assert list(got) == [f"sv_{i}" for i in range(1, n + 1)]
        np.testing.assert_allclose(list(got.values()), expected[:n], rtol=1e-12)
        assert [s.name for s in evaluator.metrics] == list(got)


def test_spectrum_of_a_planted_w_and_fewer_values_than_k():
    rng = np.random.default_rng(0)
    u, _ = np.linalg.qr(rng.standard_normal((7, 4)))
    v, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    s = np.array([5.0, 3.0, 2.0, 0.5])
    model = RBM(u @ np.diag(s) @ v.T, np.zeros(7), np.zeros(4))
    got = build({"name": "spectrum", "k": 6}).evaluate(model, {}, context())
    assert list(got) == ["sv_1", "sv_2", "sv_3", "sv_4"]  # min(k, 7, 4) values
    np.testing.assert_allclose(list(got.values()), s, rtol=1e-12)
    assert build({"name": "spectrum"}).headline(got, "test") == "largest singular value of W: 5.0000"


def test_spectrum_refusals_and_declarations():
    with pytest.raises(RbmlabError, match=r"^evaluator=spectrum: reads the weights W; model ising has none$"):
        build({"name": "spectrum"}).check(MODELS.get("ising"), {"n": 4})
    with pytest.raises(RbmlabError, match=r"^evaluator\.k: "):
        build({"name": "spectrum", "k": 0})
    assert metric_spec("sv_12").label == "singular value 12 of the weights"
    assert metric_spec("spectrum.sv_2").name == "spectrum.sv_2"  # a later part of evaluator=combined


# ------------------------------------------------------------------------------------- moments
X = np.array([[1, 0, 0], [1, 1, 0], [0, 1, 1], [1, 1, 1]], dtype=np.float64)
Y = np.array([[1, 1, 0], [1, 1, 0], [0, 0, 1], [0, 0, 0]], dtype=np.float64)


def test_moments_worked_by_hand():
    # X: means (3/4, 3/4, 1/2); C12 = 1/2 − 9/16, C13 = 1/4 − 3/8, C23 = 1/2 − 3/8
    # Y: means (1/2, 1/2, 1/4); C12 = 1/2 − 1/4, C13 = 0 − 1/8,   C23 = 0 − 1/8
    a, b = np.array([-1 / 16, -1 / 8, 1 / 8]), np.array([1 / 4, -1 / 8, -1 / 8])
    got = compare(X, Y)
    assert got["sample_mean"] == pytest.approx(5 / 12, rel=1e-15)  # Y: 5 of 12 units on
    assert got["mean_gap"] == pytest.approx(5 / 12 - 2 / 3, rel=1e-14)  # X: 8 of 12
    assert got["moment1_rmse"] == pytest.approx(0.25, abs=1e-15)
    assert got["moment2_rmse"] == pytest.approx(math.sqrt(((5 / 16) ** 2 + (1 / 4) ** 2) / 3), rel=1e-14)
    a0 = a - a.mean()  # (−1/24, −5/48, 7/48); b has mean 0; a0·b = −1/64
    assert got["moment2_corr"] == pytest.approx(-(1 / 64) / math.sqrt(a0 @ a0 * (b @ b)), rel=1e-12)
    assert compare(X, X) == {
        "sample_mean": pytest.approx(2 / 3, rel=1e-15),
        "mean_gap": 0.0,
        "moment1_rmse": 0.0,
        "moment2_rmse": 0.0,
        "moment2_corr": pytest.approx(1.0, rel=1e-14),
    }
    assert compare(X, np.ones((4, 3)))["moment2_corr"] == 0.0  # constant C: no correlation to measure


def test_moments_of_samples_equal_to_the_data_are_zero(monkeypatch):
    data = (np.random.default_rng(2).random((30, 6)) < 0.4).astype(np.float64)
    asked = []
    monkeypatch.setattr(Moments, "samples", lambda self, model, n, rng: asked.append(n) or data[:n])
    got = build({"name": "moments"}).evaluate(random_rbm(NUMPY, 6, 3), {"test": Batch(data)}, context())
    assert asked == [30]  # n_samples=0: the split's size
    assert got["test_moment1_rmse"] == 0.0 and got["test_moment2_rmse"] == pytest.approx(0.0, abs=1e-15)
    assert got["test_moment2_corr"] == pytest.approx(1.0, rel=1e-14)


def test_moments_draws_with_its_options():
    """n_samples, sweeps, chunk and sampler at non-default values: the shared draw, same stream."""
    node = {"name": "moments", "n_samples": 7, "sweeps": 3, "chunk": 2, "sampler": {"name": "block_gibbs"}}
    evaluator = build(node)
    model = random_rbm(NUMPY, 5, 3, seed=4)
    data = (np.random.default_rng(5).random((11, 5)) < 0.5).astype(np.float64)
    got = evaluator.evaluate(model, {"valid": Batch(data)}, context(seed=3))
    drawn = draw(model, sampler_for(evaluator.config.sampler, RBM, "moments"), 7, 3, 2, NUMPY.rng(3))
    assert drawn.shape == (7, 5)
    assert got == {f"valid_{k}": v for k, v in compare(data, drawn).items()}
    assert got != build({"name": "moments", "n_samples": 7}).evaluate(
        model, {"valid": Batch(data)}, context(seed=3)
    )
    with pytest.raises(RbmlabError, match="at least 2 visible units"):
        compare(X[:, :1], Y[:, :1])


# ------------------------------------------------------------------------------------- overlap
def planted() -> tuple[np.ndarray, np.ndarray]:
    """4 train rows with ones at {2k, 2k+1} and 4 test rows with ones at {8+3k, 9+3k, 10+3k}, D = 20:
    train–train distance 4, test–test 6, train–test 5."""
    train, test = np.zeros((4, 20)), np.zeros((4, 20))
    for k in range(4):
        train[k, 2 * k : 2 * k + 2] = 1
        test[k, 8 + 3 * k : 11 + 3 * k] = 1
    return train, test


@pytest.mark.parametrize("spins", [False, True])
@pytest.mark.parametrize(
    "case, expected",
    [
        # copies of train: AA_train = ½(1(0 > 4) + 1(0 > 4)) = 0; AA_test = ½(1(5 > 6) + 1(5 > 4)) = ½
        (
            "train",
            {
                "train_aa": 0.0,
                "test_aa": 0.5,
                "test_privacy_loss": 0.5,
                "train_nn_distance": 0.0,
                "test_nn_distance": 5.0,
                "test_data_nn_distance": 5.0,
            },
        ),
        # copies of test: AA_train = ½(1(5 > 4) + 1(5 > 6)) = ½; AA_test = 0
        (
            "test",
            {
                "train_aa": 0.5,
                "test_aa": 0.0,
                "test_privacy_loss": -0.5,
                "train_nn_distance": 5.0,
                "test_nn_distance": 0.0,
                "test_data_nn_distance": 5.0,
            },
        ),
        # 4 copies of the all-ones row: 18 from train rows, 17 from test rows, 0 from each other
        (
            "far",
            {
                "train_aa": 1.0,
                "test_aa": 1.0,
                "test_privacy_loss": 0.0,
                "train_nn_distance": 18.0,
                "test_nn_distance": 17.0,
                "test_data_nn_distance": 5.0,
            },
        ),
    ],
)
def test_overlap_of_planted_samples(monkeypatch, case, expected, spins):
    train, test = planted()
    samples = {"train": train, "test": test, "far": np.ones((4, 20))}[case]
    code = (lambda a: 2 * a - 1) if spins else (lambda a: a)  # ±1 units: the same Hamming distances
    asked = []
    monkeypatch.setattr(Overlap, "samples", lambda self, model, n, rng: asked.append(n) or code(samples)[:n])
    model = RBM(np.zeros((20, 2)), np.zeros(20), np.zeros(2), visible="spin" if spins else "bernoulli")
    got = build({"name": "overlap"}).evaluate(model, {"test": Batch(code(test))}, context(Batch(code(train))))
    assert asked == [4]  # n_samples=1000, capped at the smallest set
    assert got == expected


def test_overlap_n_samples_takes_the_first_rows(monkeypatch):
    train, test = planted()
    extra = np.vstack([test, np.ones((3, 20))])  # 7 test rows; the first 2 of each set are compared
    asked = []
    monkeypatch.setattr(Overlap, "samples", lambda self, model, n, rng: asked.append(n) or train[:n])
    got = build({"name": "overlap", "n_samples": 2}).evaluate(
        RBM(np.zeros((20, 2)), np.zeros(20), np.zeros(2)), {"test": Batch(extra)}, context(Batch(train))
    )
    assert asked == [2] and got["train_aa"] == 0.0 and got["test_aa"] == 0.5
    with pytest.raises(RbmlabError, match="^evaluator=overlap: needs the training set$"):
        build({"name": "overlap"}).evaluate(
            RBM(np.zeros((20, 2)), np.zeros(20), np.zeros(2)), {"test": Batch(test)}, context()
        )


def test_overlap_draws_with_its_options():
    node = {"name": "overlap", "n_samples": 5, "sweeps": 2, "chunk": 3, "sampler": {"name": "block_gibbs"}}
    evaluator = build(node)
    model = random_rbm(NUMPY, 6, 3, seed=2)
    data = (np.random.default_rng(1).random((9, 6)) < 0.5).astype(np.float64)
    got = evaluator.evaluate(model, {"test": Batch(data[4:])}, context(Batch(data), seed=5))
    drawn = draw(model, sampler_for(evaluator.config.sampler, RBM, "overlap"), 5, 2, 3, NUMPY.rng(5))
    d_ss, _ = nearest(drawn)
    d_tt, _ = nearest(data[:5])
    d_ts, d_st = nearest(data[:5], drawn)
    assert got["train_aa"] == 0.5 * (np.mean(d_ts > d_tt) + np.mean(d_st > d_ss))
    assert got["train_nn_distance"] == np.mean(d_st)


def test_nearest_by_blocks_is_cdist():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((11, 4)), rng.standard_normal((7, 4))
    full = cdist(x, y, "sqeuclidean")
    to_y, to_x = nearest(x, y, block=3)
    np.testing.assert_allclose(to_y, full.min(axis=1), rtol=1e-12)
    np.testing.assert_allclose(to_x, full.min(axis=0), rtol=1e-12)
    own = cdist(x, x, "sqeuclidean") + np.diag(np.full(11, np.inf))
    np.testing.assert_allclose(nearest(x, block=4)[0], own.min(axis=1), rtol=1e-12)


def test_every_backend_gives_the_host_answers(backend):
    """The SVD, the moments and the blocked nearest-neighbour search on the model's backend (cupy
    where a GPU is present) equal numpy's and scipy's."""
    model = random_rbm(backend, 9, 6, seed=7)
    got = build({"name": "spectrum", "k": 6}).evaluate(model, {}, context())
    np.testing.assert_allclose(
        list(got.values()), np.linalg.svd(backend.to_numpy(model.W), compute_uv=False), rtol=1e-10
    )
    x, y = ((np.random.default_rng(s).random((13, 9)) < 0.5).astype(np.float64) for s in (1, 2))
    assert compare(backend.asarray(x), backend.asarray(y)) == pytest.approx(compare(x, y), rel=1e-12)
    to_y, to_x = nearest(backend.asarray(x), backend.asarray(y), block=4)
    np.testing.assert_array_equal(to_y, cdist(x, y, "sqeuclidean").min(axis=1))
    np.testing.assert_array_equal(to_x, cdist(x, y, "sqeuclidean").min(axis=0))
