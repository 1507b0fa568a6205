"""Evaluators against exact answers on small models (numpy; cupy too when a GPU is visible)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import logsumexp

from rbmlab.backend import cupy_available, get_backend
from rbmlab.backend.ops import uniform
from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import ais, exact
from rbmlab.evaluators.pseudo_likelihood import pseudo_log_likelihood
from rbmlab.evaluators.reconstruction import reconstruction_error
from rbmlab.models import rbm as rbm_exact  # exact enumeration of an RBM lives with the family
from rbmlab.models.rbm import RBM, free_energy
from rbmlab.units import Bernoulli

BACKENDS = [
    "numpy",
    pytest.param(
        "cupy",
        marks=[pytest.mark.gpu, pytest.mark.skipif(not cupy_available(), reason="needs cupy and a GPU")],
    ),
]


@pytest.fixture(params=BACKENDS)
def backend_name(request):
    return request.param


def make_rbm(backend, m, n, seed, w_std=1.0, b_std=1.0):
    """A random RBM whose parameters are drawn in float64 numpy, then moved to ``backend``."""
    g = np.random.default_rng(seed)
    W, b_v, b_h = (
        w_std * g.standard_normal((m, n)),
        b_std * g.standard_normal(m),
        b_std * g.standard_normal(n),
    )
    return RBM(backend.asarray(W), backend.asarray(b_v), backend.asarray(b_h))


def to_np(backend, rbm):
    return RBM(*(backend.to_numpy(p).astype(np.float64) for p in (rbm.W, rbm.b_v, rbm.b_h)))


def all_states(n):
    return np.array(list(itertools.product([0.0, 1.0], repeat=n)))[:, ::-1] if n else np.zeros((1, 0))


def brute_log_z(rbm):
    """logsumexp of −E(v, h) over all 2^(m+n) joint states, float64."""
    V, H = all_states(rbm.n_visible), all_states(rbm.n_hidden)
    neg_e = V @ rbm.W @ H.T + (V @ rbm.b_v)[:, None] + (H @ rbm.b_h)[None, :]
    return float(logsumexp(neg_e))


def exact_p_v(rbm):
    V = all_states(rbm.n_visible)
    neg_f = -free_energy(rbm, V)
    return V, np.exp(neg_f - logsumexp(neg_f))


# --------------------------------------------------------------------------- exact


def test_binary_states(backend_name):
    be = get_backend(backend_name, "float64")
    s = be.to_numpy(Bernoulli.states(be.xp, 5, 3, 11, be.dtype))
    expected = np.array([[(i >> j) & 1 for j in range(5)] for i in range(3, 11)], dtype=float)
    np.testing.assert_array_equal(s, expected)
    np.testing.assert_array_equal(be.to_numpy(Bernoulli.states(be.xp, 4, 0, 16, be.dtype)), all_states(4))


@pytest.mark.parametrize("m,n", [(12, 12), (5, 9), (9, 5), (1, 7), (12, 3)])
def test_log_partition_matches_brute_force(backend_name, m, n):
    be = get_backend(backend_name, "float64")
    rbm = make_rbm(be, m, n, seed=m * 100 + n)
    ref = brute_log_z(to_np(be, rbm))
    got = rbm_exact.log_partition(rbm)
    assert isinstance(got, float)
    assert got == pytest.approx(ref, rel=1e-6)
    assert exact.log_partition(rbm) == got  # the evaluator's generic entry point: the family's
    for chunk in (1, 3, 7):  # tiny chunks, including ones that do not divide 2^n
        if min(m, n) <= 9:
            assert rbm_exact.log_partition(rbm, chunk_size=chunk) == pytest.approx(got, rel=1e-12)
            assert exact.log_partition(rbm, chunk_size=chunk) == pytest.approx(got, rel=1e-12)


def test_log_partition_float32(backend_name):
    be = get_backend(backend_name, "float32")
    rbm = make_rbm(be, 10, 7, seed=3)
    assert rbm_exact.log_partition(rbm) == pytest.approx(brute_log_z(to_np(be, rbm)), rel=1e-6)


def test_log_partition_too_large():
    be = get_backend("numpy", "float64")
    rbm = make_rbm(be, 30, 27, seed=0)
    with pytest.raises(ValueError):
        rbm_exact.log_partition(rbm)
    with pytest.raises(ValueError):
        exact.log_partition(rbm)
    with pytest.raises(ValueError):
        rbm_exact.log_partition(make_rbm(be, 10, 6, seed=0), max_units=5)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_log_likelihood_normalised(backend_name, dtype):
    be = get_backend(backend_name, dtype)
    for m, n in [(7, 4), (4, 9)]:
        rbm = make_rbm(be, m, n, seed=m + n)
        ll = rbm_exact.log_likelihood(rbm, be.asarray(all_states(m)))
        assert ll.dtype == be.xp.float64
        assert float(be.xp.exp(ll).sum()) == pytest.approx(1.0, abs=1e-6)
        log_z = rbm_exact.log_partition(rbm)
        np.testing.assert_allclose(
            be.to_numpy(rbm_exact.log_likelihood(rbm, be.asarray(all_states(m)), log_z=log_z)),
            be.to_numpy(ll),
            rtol=0,
            atol=1e-10,
        )


@pytest.mark.parametrize("m,n", [(6, 4), (4, 6)])
def test_sample_exact_distribution(backend_name, m, n):
    be = get_backend(backend_name, "float64")
    rbm = make_rbm(be, m, n, seed=11)
    samples = be.to_numpy(rbm_exact.sample_exact(rbm, be.rng(1), 20_000))
    assert samples.shape == (20_000, m)
    assert set(np.unique(samples)) <= {0.0, 1.0}
    V, p = exact_p_v(to_np(be, rbm))
    idx = (samples @ (1 << np.arange(m))).astype(int)
    emp = np.bincount(idx, minlength=1 << m) / len(idx)
    p_by_int = np.zeros(1 << m)
    p_by_int[(V @ (1 << np.arange(m))).astype(int)] = p
    assert 0.5 * np.abs(emp - p_by_int).sum() < 0.05


# --------------------------------------------------------------------------- AIS


def test_temperature_schedules():
    b = ais.temperature_schedule("salakhutdinov")
    assert b.dtype == np.float64 and b.shape == (14_501,)
    assert b[0] == 0.0 and b[-1] == 1.0 and np.all(np.diff(b) > 0)
    np.testing.assert_allclose(
        np.diff(b)[[0, 499, 500, 4499, 4500, -1]], [1e-3, 1e-3, 1e-4, 1e-4, 1e-5, 1e-5], rtol=1e-6
    )
    lin = ais.temperature_schedule("linear", 10)
    np.testing.assert_allclose(lin, np.arange(11) / 10)
    for bad in [("linear", None), ("linear", 0), ("nope", 3), ("salakhutdinov", 5)]:
        with pytest.raises(ValueError):
            ais.temperature_schedule(*bad)


def test_base_rate_bias():
    mean = np.array([0.0, 0.25, 0.5, 1.0])
    b = ais.base_rate_bias(mean)
    expected = np.log(np.array([1e-3, 0.25, 0.5, 1 - 1e-3]) / (1 - np.array([1e-3, 0.25, 0.5, 1 - 1e-3])))
    np.testing.assert_allclose(b, expected)


def _ais_problem(be):
    rbm = make_rbm(be, 10, 8, seed=5, w_std=0.5, b_std=0.5)
    mean = np.random.default_rng(6).uniform(0.05, 0.95, 10)
    return rbm, be.asarray(ais.base_rate_bias(mean))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_forward_ais(backend_name, dtype):
    be = get_backend(backend_name, dtype)
    rbm, base = _ais_problem(be)
    log_z = exact.log_partition(rbm)
    res = ais.ais_log_partition(
        rbm, be.rng(7), base_bias=base, betas=ais.temperature_schedule("linear", 2000), n_chains=200
    )
    assert res.direction == "forward" and res.n_chains == 200 and res.n_temperatures == 2001
    assert isinstance(res.log_w, np.ndarray) and res.log_w.dtype == np.float64
    assert res.log_w.shape == (200,)
    base_np = be.to_numpy(base).astype(np.float64)
    assert res.log_z_base == pytest.approx(np.logaddexp(0, base_np).sum() + 8 * math.log(2))
    assert abs(res.log_z - log_z) < 0.1
    assert res.log_z_lower <= log_z <= res.log_z_upper
    assert res.log_z_lower < res.log_z < res.log_z_upper


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_reverse_ais(backend_name, dtype):
    be = get_backend(backend_name, dtype)
    rbm, base = _ais_problem(be)
    log_z = exact.log_partition(rbm)
    init_v = ais.target_samples(rbm, be.rng(8), 200)
    res = ais.reverse_ais_log_partition(
        rbm, be.rng(9), base_bias=base, betas=ais.temperature_schedule("linear", 2000), init_v=init_v
    )
    assert res.direction == "reverse" and res.n_chains == 200
    assert abs(res.log_z - log_z) < 0.1
    assert res.log_z_lower <= log_z <= res.log_z_upper
    assert res.log_z_lower < res.log_z < res.log_z_upper


def test_ais_exact_when_target_is_base():
    """W = 0, b_h = 0, b_v = base bias: every intermediate distribution equals the base model."""
    be = get_backend("numpy", "float64")
    base = be.asarray(np.linspace(-2, 2, 6))
    rbm = RBM(be.xp.zeros((6, 3)), base.copy(), be.xp.zeros(3))
    betas = ais.temperature_schedule("linear", 50)
    fwd = ais.ais_log_partition(rbm, be.rng(0), base_bias=base, betas=betas, n_chains=10)
    rev = ais.reverse_ais_log_partition(
        rbm, be.rng(0), base_bias=base, betas=betas, init_v=rbm_exact.sample_exact(rbm, be.rng(1), 10)
    )
    for res in (fwd, rev):
        np.testing.assert_allclose(res.log_w, 0.0, atol=1e-12)
        assert res.log_z == pytest.approx(exact.log_partition(rbm), abs=1e-10)


def test_ais_single_step_is_importance_sampling():
    """With betas = [0, 1] forward AIS is plain importance sampling from the base model."""
    be = get_backend("numpy", "float64")
    rbm, base = _ais_problem(be)
    res = ais.ais_log_partition(rbm, be.rng(3), base_bias=base, betas=[0.0, 1.0], n_chains=5)
    g = be.rng(3)  # replay the same base samples
    v0 = (uniform(g, (5, 10), np.float64) < 1 / (1 + np.exp(-base))).astype(float)
    log_fb = -free_energy(rbm, v0)  # log f_1(v)
    log_fa = v0 @ base + 8 * math.log(2)  # log f_0(v)
    np.testing.assert_allclose(res.log_w, log_fb - log_fa, rtol=1e-10)


def test_ais_bad_arguments():
    be = get_backend("numpy", "float64")
    rbm, base = _ais_problem(be)
    for betas in ([0.0, 0.5], [0.1, 1.0], [0.0, 0.6, 0.4, 1.0], [1.0]):
        with pytest.raises(ValueError):
            ais.ais_log_partition(rbm, be.rng(0), base_bias=base, betas=betas)
    with pytest.raises(ValueError):
        ais.ais_log_partition(rbm, be.rng(0), base_bias=base[:3], betas=[0.0, 1.0])


def test_target_samples_gibbs_branch(backend_name):
    """The Gibbs branch (forced with max_exact_units=0) reaches the exact visible marginals."""
    be = get_backend(backend_name, "float64")
    rbm = make_rbm(be, 6, 4, seed=2, w_std=0.5, b_std=0.5)
    data = be.asarray((np.random.default_rng(0).random((50, 6)) < 0.5).astype(float))
    with pytest.raises(ValueError):
        ais.target_samples(rbm, be.rng(0), 10, max_exact_units=0)
    for n in (40, 4000):  # fewer and more chains than data rows
        s = ais.target_samples(rbm, be.rng(4), n, data=data, burn_in=50, max_exact_units=0)
        assert s.shape == (n, 6)
    V, p = exact_p_v(to_np(be, rbm))
    np.testing.assert_allclose(be.to_numpy(s).mean(0), p @ V, atol=0.05)


# --------------------------------------------------------------------------- pseudo-likelihood


def brute_pl(rbm, v):
    out = np.zeros(len(v))
    for r, row in enumerate(v):
        neg_f = -free_energy(rbm, row[None])[0]
        for i in range(len(row)):
            flipped = row.copy()
            flipped[i] = 1 - flipped[i]
            neg_f_flip = -free_energy(rbm, flipped[None])[0]
            out[r] += neg_f - np.logaddexp(neg_f, neg_f_flip)
    return out


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_pseudo_likelihood_exact(backend_name, dtype):
    be = get_backend(backend_name, dtype)
    rbm = make_rbm(be, 7, 5, seed=21)
    v_np = (np.random.default_rng(1).random((13, 7)) < 0.5).astype(float)
    ref = brute_pl(to_np(be, rbm), v_np)
    tol = 1e-10 if dtype == "float64" else 1e-4
    for chunk in (64, 1, 4):
        pl = pseudo_log_likelihood(rbm, be.asarray(v_np), chunk_size=chunk)
        assert pl.dtype == be.xp.float64 and pl.shape == (13,)
        np.testing.assert_allclose(be.to_numpy(pl), ref, rtol=tol, atol=tol)
    # a row's PL is a sum of log-probabilities: negative, above −n·log(huge)
    assert np.all(ref < 0)


def test_pseudo_likelihood_stochastic(backend_name):
    be = get_backend(backend_name, "float64")
    rbm = make_rbm(be, 8, 5, seed=22)
    v_np = (np.random.default_rng(2).random((3, 8)) < 0.5).astype(float)
    v = be.asarray(v_np)
    exact_pl = be.to_numpy(pseudo_log_likelihood(rbm, v))
    full = pseudo_log_likelihood(rbm, v, rng=be.rng(0), n_units=8, chunk_size=2)
    np.testing.assert_allclose(be.to_numpy(full), exact_pl, rtol=1e-12)
    reps = 4000
    draws = be.to_numpy(
        pseudo_log_likelihood(rbm, be.xp.tile(v, (reps, 1)), rng=be.rng(1), n_units=2, chunk_size=1000)
    ).reshape(reps, 3)
    se = draws.std(0) / math.sqrt(reps)
    assert np.all(np.abs(draws.mean(0) - exact_pl) < 5 * se + 1e-9)
    assert np.all(draws.std(0) > 0)
    with pytest.raises(ValueError):
        pseudo_log_likelihood(rbm, v, n_units=2)  # no rng
    with pytest.raises(ValueError):
        pseudo_log_likelihood(rbm, v, rng=be.rng(0), n_units=9)


# --------------------------------------------------------------------------- reconstruction


def test_reconstruction_error(backend_name):
    be = get_backend(backend_name, "float64")
    W = np.array([[1.0, -2.0], [0.5, 0.0], [-1.0, 3.0]])
    b_v, b_h = np.array([0.1, -0.2, 0.3]), np.array([-0.5, 0.25])
    v = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    sig = lambda z: 1 / (1 + math.exp(-z))  # noqa: E731
    expected = []
    for row in v:
        ph = [sig(sum(row[i] * W[i, j] for i in range(3)) + b_h[j]) for j in range(2)]
        r = [sig(sum(W[i, j] * ph[j] for j in range(2)) + b_v[i]) for i in range(3)]
        expected.append(sum((row[i] - r[i]) ** 2 for i in range(3)))
    rbm = RBM(be.asarray(W), be.asarray(b_v), be.asarray(b_h))
    got = reconstruction_error(rbm, be.asarray(v))
    assert got.shape == (3,)
    np.testing.assert_allclose(be.to_numpy(got), expected, rtol=1e-12)
    rbm32 = rbm.astype("float32")
    np.testing.assert_allclose(
        be.to_numpy(reconstruction_error(rbm32, be.asarray(v, "float32"))), expected, rtol=1e-5
    )
    # the evaluator reports the mean over rows of that per-row sum (not a per-pixel mean)
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.evaluators.base import Context

    out = EVALUATORS.build(EVALUATORS.parse("reconstruction")).evaluate(
        rbm, {"test": Batch(be.asarray(v))}, Context(rng=None, final=True)
    )
    assert out == {"test_reconstruction_error": pytest.approx(sum(expected) / 3, rel=1e-12)}


def test_ais_progress_bar(capsys):
    """progress=True draws a bar labelled AIS over the 20 temperature steps on stderr;
    progress=False writes nothing; the estimate does not depend on it."""
    be = get_backend("numpy", "float32")
    rbm, base = _ais_problem(be)
    capsys.readouterr()
    res = ais.ais_log_partition(
        rbm,
        be.rng(0),
        base_bias=base,
        betas=ais.temperature_schedule("linear", 20),
        n_chains=4,
        progress=True,
    )
    out, err = capsys.readouterr()
    assert np.isfinite(res.log_z)
    assert out == "" and "AIS:" in err and "/20 " in err, err
    quiet = ais.ais_log_partition(
        rbm, be.rng(0), base_bias=base, betas=ais.temperature_schedule("linear", 20), n_chains=4
    )
    assert capsys.readouterr() == ("", "")
    assert quiet.log_z == res.log_z


def test_reverse_ais_chains_of_a_large_model_start_from_the_training_data(monkeypatch):
    """Gibbs chains for reverse AIS start from ``train``, never from the split being scored."""
    from rbmlab.data.batch import Batch
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.evaluators.base import Context
    from rbmlab.run.evaluation import evaluate

    be = get_backend("numpy", "float64")
    rng = np.random.default_rng(3)
    rbm = RBM(0.1 * rng.standard_normal((24, 22)), np.zeros(24), np.zeros(22))  # > 20 units: Gibbs
    train, test = ((rng.random((n, 24)) < 0.5).astype(float) for n in (30, 10))
    seen = []
    real = ais.target_samples
    monkeypatch.setattr(
        ais,
        "target_samples",
        lambda rbm, rng, n, data=None, **kw: seen.append(data) or real(rbm, rng, n, data=data, burn_in=2),
    )
    cfg = ais.AISConfig(n_chains=4, schedule="linear", n_temperatures=10, reverse=True, progress=False)
    context = Context(
        rng=be.rng(0), final=True, progress=False, train=Batch(train), data_mean=train.mean(axis=0)
    )
    metrics = evaluate(rbm, {"test": Batch(test)}, EVALUATORS.build(cfg), context)
    assert len(seen) == 1 and seen[0] is train and np.isfinite(metrics["reverse_log_z"])


def test_ais_refuses_more_chains_than_memory_allows():
    """The chains' working memory is checked before any allocation, naming evaluator.n_chains."""
    from rbmlab.evaluators import EVALUATORS

    mnist = {"n_visible": 784, "n_hidden": 500}
    EVALUATORS.build(ais.AISConfig(n_chains=100_000)).check(RBM, mnist)  # ~3.6 GiB: fine
    with pytest.raises(RbmlabError, match=r"evaluator\.n_chains: 1000000 chains .* GiB"):
        EVALUATORS.build(ais.AISConfig(n_chains=10**6)).check(RBM, mnist)
    with pytest.raises(RbmlabError, match=r"evaluator\.n_chains: must be <= 1000000 \(chains"):
        EVALUATORS.parse({"name": "ais", "n_chains": 10**12})


def test_checkpoint_reader_takes_every_array_numpy_writes(tmp_path):
    """The header-checked .npz reader: compressed members, Fortran order, big-endian floats,
    empty state arrays and version 2.0 headers load as np.load would load them."""
    import io
    import zipfile

    from rbmlab.run.checkpoint import load_checkpoint

    W = np.asfortranarray(np.random.default_rng(0).standard_normal((9, 4)))
    np.savez_compressed(
        tmp_path / "c.npz",
        W=W.astype(">f8"),
        b_v=np.zeros(9),
        b_h=np.zeros(4),
        **{"state.empty": np.zeros((0, 3)), "state.n": np.arange(5)},
    )
    model, _, state = load_checkpoint(tmp_path / "c.npz")
    assert model.W.dtype == np.float64 and np.array_equal(model.W, W)
    assert state["empty"].shape == (0, 3) and state["n"].tolist() == [0, 1, 2, 3, 4]
    with zipfile.ZipFile(tmp_path / "v2.npz", "w") as z:
        for name, array in {"W": W, "b_v": np.zeros(9), "b_h": np.zeros(4)}.items():
            buf = io.BytesIO()
            np.lib.format.write_array(buf, array, version=(2, 0))
            z.writestr(f"{name}.npy", buf.getvalue())
    assert np.array_equal(load_checkpoint(tmp_path / "v2.npz")[0].W, W)


def test_a_checkpoint_array_larger_than_memory_is_refused_before_reading(tmp_path, monkeypatch):
    import rbmlab.run.checkpoint as ckpt

    np.savez_compressed(tmp_path / "big.npz", W=np.zeros((100, 100)), b_v=np.zeros(100), b_h=np.zeros(100))
    monkeypatch.setattr(ckpt, "memory_bytes", lambda name: 50_000)  # W needs 80,000 bytes
    with pytest.raises(RbmlabError, match=r"W of shape \(100, 100\) needs .* GiB, more than"):
        ckpt.load_checkpoint(tmp_path / "big.npz")
    monkeypatch.setattr(ckpt, "memory_bytes", lambda name: 10**6)
    assert ckpt.load_checkpoint(tmp_path / "big.npz")[0].W.shape == (100, 100)


def test_the_float32_weight_increment_matches_float64_to_its_own_precision():
    """Σ softplus(β₁x) − softplus(β₀x) formed in float32 (expm1 form, no cancellation) against the
    float64 difference of logaddexps, over AIS's range of step sizes and pre-activations."""
    rng = np.random.default_rng(0)
    x = (8.0 * rng.standard_normal((50, 500))).astype(np.float32)
    bufs = (np.empty_like(x), np.empty_like(x))
    for b0, b1 in [(0.0, 1e-3), (0.5, 0.5001), (0.99999, 1.0), (0.3, 0.7)]:
        got = ais._softplus_increment(np, x, b0, b1, bufs)
        x64 = x.astype(np.float64)
        want = (np.logaddexp(0, b1 * x64) - np.logaddexp(0, b0 * x64)).sum(axis=1)
        scale = (b1 - b0) * np.abs(x64).sum(axis=1)  # the size of the increment's terms
        assert np.max(np.abs(got - want) / scale) < 1e-6, (b0, b1)


def test_feature_classifier_is_logistic_regression_on_hidden_means_with_C_chosen_on_valid():
    """Errors equal scikit-learn's own fit on E[h|v] (each C fitted alone, no warm start), and the
    C kept is the one with the lowest valid error."""
    from sklearn.linear_model import LogisticRegression

    from rbmlab.data.batch import Batch
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.evaluators.base import Context
    from rbmlab.evaluators.feature_classifier import features

    rng = np.random.default_rng(0)
    model = RBM(rng.normal(size=(12, 40)), rng.normal(size=12), rng.normal(size=40))

    def split(n):
        x = (rng.random((n, 12)) < 0.5).astype(float)
        y = (x[:, :3].sum(1) + (rng.random(n) < 0.2)).astype(int)  # 5 classes, noisy
        return Batch(x, targets=y)

    train, valid, test = split(300), split(200), split(200)
    Cs = [0.01, 1.0, 100.0]
    evaluator = EVALUATORS.build(EVALUATORS.parse({"name": "test_error", "C": Cs}))
    out = evaluator.evaluate(
        model, {"test": test, "valid": valid}, Context(rng=None, final=True, train=train)
    )
    errors = {}
    for C in Cs:
        clf = LogisticRegression(C=C, max_iter=1000, tol=1e-8).fit(
            features(model, train.inputs), train.targets
        )
        errors[C] = {
            s: 100 * np.mean(clf.predict(features(model, b.inputs)) != b.targets)
            for s, b in (("valid", valid), ("test", test))
        }
    best = min(Cs, key=lambda C: errors[C]["valid"])
    assert out["classifier_c"] == best
    assert out["valid_error"] == pytest.approx(errors[best]["valid"], abs=1.0)  # ≤ 2 of 200 rows differ
    assert out["test_error"] == pytest.approx(errors[best]["test"], abs=1.0)
    majority = 100 * (1 - np.bincount(test.targets).max() / len(test))
    assert out["test_error"] < majority - 5  # the features carry the labels' information


@pytest.mark.parametrize("visible_bias, hidden_bias", [("normal", "normal"), ("zero", "normal")])
def test_normal_bias_inits_draw_standard_normal_biases(visible_bias, hidden_bias):
    """The pmp authors' init (Sec 5.5; 0.01 a std, as in their code): W ~ N(0, 0.01²),
    b_v, b_h ~ N(0, 1), per trial."""
    from rbmlab.models.rbm import init_rbm

    rbm = init_rbm(
        np, np.random.default_rng(0), 400, 300, visible_bias=visible_bias, hidden_bias=hidden_bias, trials=3
    )
    assert rbm.b_v.shape == (3, 400) and rbm.b_h.shape == (3, 300) and rbm.b_h.dtype == np.float32
    assert abs(rbm.b_h.std() - 1) < 0.05 and abs(rbm.b_h.mean()) < 0.05
    assert not np.array_equal(rbm.b_h[0], rbm.b_h[1])
    if visible_bias == "normal":
        assert abs(rbm.b_v.std() - 1) < 0.05 and not np.array_equal(rbm.b_v[0], rbm.b_v[1])
    else:
        assert not rbm.b_v.any()


def test_exact_takes_a_model_at_the_enumeration_limit_and_refuses_one_above():
    """The bound is inclusive: the smaller layer may have exactly MAX_EXACT_UNITS units."""
    limit = int(exact.MAX_EXACT_UNITS)
    assert exact.enumeration_problem(RBM, {"n_visible": 784, "n_hidden": limit}) is None
    assert exact.enumeration_problem(RBM, {"n_visible": limit, "n_hidden": 784}) is None
    too_many = exact.enumeration_problem(RBM, {"n_visible": 784, "n_hidden": limit + 1})
    assert (
        too_many
        == f"enumeration needs at most {limit} enumerated units, this model (784x{limit + 1}) has {limit + 1}"
    )


@pytest.mark.parametrize("direction", ["forward", "reverse"])
def test_ais_is_unbiased_on_a_coarse_schedule(direction):
    """Neal (2001): with transitions that leave each intermediate distribution invariant,
    E[w] = Z_B / Z_A (forward) or Z_A / Z_B (reverse, from exact target samples) for ANY schedule.
    On 5 temperatures, far too few to make w concentrate, the mean of 200,000 weights must meet the
    exact log Z within 4 standard errors of that mean (a transition that breaks invariance, or a
    reverse run annealed the wrong way, misses by far more)."""
    be = get_backend("numpy", "float64")
    rbm = make_rbm(be, 6, 4, seed=11, w_std=1.0, b_std=0.5)
    base = be.asarray(ais.base_rate_bias(np.random.default_rng(12).uniform(0.1, 0.9, 6)))
    betas, n = ais.temperature_schedule("linear", 4), 200_000
    if direction == "forward":
        res = ais.ais_log_partition(rbm, be.rng(13), base_bias=base, betas=betas, n_chains=n)
    else:
        init_v = rbm_exact.sample_exact(rbm, be.rng(14), n)
        res = ais.reverse_ais_log_partition(rbm, be.rng(13), base_bias=base, betas=betas, init_v=init_v)
    w = np.exp(res.log_w - res.log_w.max())
    se = w.std(ddof=1) / np.sqrt(n) / w.mean()  # relative standard error of mean(w): of log mean(w)
    assert w.std() / w.mean() > 0.3  # the premise: the weights vary (the schedule is coarse)
    assert abs(res.log_z - exact.log_partition(rbm)) < 4 * se + 1e-9, (
        res.log_z,
        exact.log_partition(rbm),
        se,
    )


def test_exact_refuses_a_dbm_whose_rows_need_too_many_latent_states():
    """A 2-22-22 DBM: log Z enumerates 22 units (within the limit), but each row's log p̃(x) sums
    2^22 states of layer 2 (above MARGINAL_UNITS): refused at check, before any work."""
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.models.dbm import DBM, DBMConfig

    evaluator = EVALUATORS.build(EVALUATORS.parse("exact"))
    evaluator.check(DBM, DBM.sizes(DBMConfig(n_hidden=[4, 4]), 2))  # small: fine
    with pytest.raises(RbmlabError, match=r"^evaluator=exact: log p̃\(x\) of a dbm model enumerates 2\^22"):
        evaluator.check(DBM, DBM.sizes(DBMConfig(n_hidden=[22, 22]), 2))


def test_the_stochastic_pseudo_likelihood_scales_its_units_by_n_over_k():
    """n_units = 3 of 10 (3 does not divide 10): per row, the 3 units the stream's argsort picks,
    each log σ(F(v⁽ⁱ⁾) − F(v)) by free energies, times 10/3, replayed here from the same stream."""
    be = get_backend("numpy", "float64")
    rbm = make_rbm(be, 10, 4, seed=17, w_std=0.8, b_std=0.5)
    v = (np.random.default_rng(18).random((5, 10)) < 0.5).astype(float)
    got = pseudo_log_likelihood(rbm, v, rng=np.random.default_rng(19), n_units=3)
    units = np.argsort(np.random.default_rng(19).random((5, 10)), axis=1)[:, :3]
    want = np.zeros(5)
    for r in range(5):
        for i in units[r]:
            flipped = v[r].copy()
            flipped[i] = 1 - flipped[i]
            gap = free_energy(rbm, flipped[None])[0] - free_energy(rbm, v[r][None])[0]
            want[r] += -np.logaddexp(0.0, -gap) * 10 / 3
    np.testing.assert_allclose(got, want, rtol=1e-10)
