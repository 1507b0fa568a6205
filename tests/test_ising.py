"""Tests of the Ising family: exact log Z, conventions, chromatic Gibbs, gradients, trials, data.

Imports only the modules under test (the core is being refactored around them).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from rbmlab.data.model_samples import IsingSamplesOptions, ising_ground_truth, load_ising_samples
from rbmlab.errors import RbmlabError
from rbmlab.inference.site_gibbs import SiteGibbs, SiteGibbsConfig
from rbmlab.models.base import Enumerable, GradientStatistics, LocalFields, LogProbability, supports
from rbmlab.models.ising import (
    Ising,
    IsingConfig,
    erdos_renyi,
    fully_connected,
    lattice_2d,
    lattice_edges,
    sample_exact,
    to_spins,
)
from rbmlab.units import Bernoulli, Spin
from rbmlab.validation import parse_options

VALUES = {"01": (0.0, 1.0), "pm1": (-1.0, 1.0)}


def one_line(excinfo) -> str:
    msg = str(excinfo.value)
    assert msg and "\n" not in msg, msg
    return msg


def all_states(n: int, spins: str) -> np.ndarray:
    """Every configuration, listed explicitly (itertools), independent of Unit.states."""
    return np.array(list(itertools.product(VALUES[spins], repeat=n)), dtype=np.float64).reshape(-1, n)


def brute_log_p(model: Ising, states: np.ndarray) -> np.ndarray:
    """log p̃ by the defining double sum Σ_{i<j} J_ij x_i x_j + Σ_i h_i x_i (no matrix shortcuts)."""
    J, h, n = np.asarray(model.J, np.float64), np.asarray(model.h, np.float64), model.n
    out = states @ h
    for i, j in itertools.combinations(range(n), 2):
        out = out + J[i, j] * states[:, i] * states[:, j]
    return out


def exact_moments(model: Ising) -> tuple[np.ndarray, np.ndarray]:
    """E[x] and E[x xᵀ] (diagonal zeroed) under the model, by enumeration."""
    x = all_states(model.n, model.spins)
    p = np.exp(model.log_probability(x))
    second = (x * p[:, None]).T @ x
    np.fill_diagonal(second, 0.0)
    return p @ x, second


def dense(n: int, spins: str = "01", seed: int = 0, coupling_std: float = 0.5, field_std: float = 0.5):
    return fully_connected(
        n,
        rng=np.random.default_rng(seed),
        coupling_std=coupling_std,
        field_std=field_std,
        spins=spins,
        dtype="float64",
    )


# ------------------------------------------------------------------ family interface
def test_capabilities_and_settings() -> None:
    for capability in (LogProbability, Enumerable, GradientStatistics, LocalFields):
        assert supports(Ising, capability)
    m = dense(4, "pm1")
    assert m.settings() == {"spins": "pm1", "tie": "none"} and set(m.arrays()) == {"J", "h"}
    assert m.units is Spin and dense(3).units is Bernoulli and m.n_visible == 4
    assert Ising.sizes(IsingConfig(), 7) == {"n": 7} and Ising.enumeration_size({"n": 7}) == 7
    assert Ising.config_class is IsingConfig and Ising.default_sampler == "gibbs"
    assert SiteGibbs.config_class is SiteGibbsConfig and SiteGibbsConfig().name == "gibbs"
    with pytest.raises(ValueError):
        Ising(m.J, m.h, "pm")


@pytest.mark.parametrize("spins", ["01", "pm1"])
def test_initialize(spins: str) -> None:
    mean = np.array([0.2, 0.5, 0.9]) if spins == "01" else np.array([-0.6, 0.0, 0.8])
    cfg = IsingConfig(spins=spins, coupling_std=0.3)
    m = Ising.initialize(cfg, xp=np, rng=np.random.default_rng(1), data_mean=mean, dtype="float32", trials=4)
    assert m.J.shape == (4, 3, 3) and m.h.shape == (4, 3) and m.dtype == np.float32
    assert np.array_equal(m.J, m.J.swapaxes(-1, -2)) and not np.diagonal(m.J, axis1=1, axis2=2).any()
    assert not np.array_equal(m.J[0], m.J[1])
    # with J = 0 the base-rate field reproduces the data mean exactly
    single = Ising.initialize(
        IsingConfig(spins=spins),
        xp=np,
        rng=np.random.default_rng(1),
        data_mean=mean,
        dtype="float64",
        trials=0,
    )
    assert single.n_trials == 0 and not single.J.any()
    np.testing.assert_allclose(exact_moments(single)[0], mean, atol=1e-12)
    zero = Ising.initialize(
        IsingConfig(field_init="zero"), xp=np, rng=None, data_mean=mean, dtype="float32", trials=2
    )
    assert zero.h.shape == (2, 3) and not zero.h.any()


# ------------------------------------------------------------------ exact log Z
@pytest.mark.parametrize("spins", ["01", "pm1"])
@pytest.mark.parametrize("n", [1, 2, 5, 10])
def test_exact_log_partition_matches_brute_force(n: int, spins: str) -> None:
    m = dense(n, spins, seed=n, coupling_std=0.8, field_std=0.7)
    states = all_states(n, spins)
    expected = np.logaddexp.reduce(brute_log_p(m, states))
    np.testing.assert_allclose(m.log_unnormalized(states), brute_log_p(m, states), rtol=1e-12, atol=1e-12)
    for chunk in (4096, 37):
        assert m.exact_log_partition(chunk_size=chunk) == pytest.approx(expected, rel=1e-10)
    # a float32 model still enumerates in float64
    assert m.astype(np.float32).exact_log_partition() == pytest.approx(expected, rel=1e-6)


def test_exact_log_partition_refuses_large_n() -> None:
    with pytest.raises(ValueError, match="25"):
        Ising(np.zeros((26, 26)), np.zeros(26)).exact_log_partition()
    with pytest.raises(ValueError, match="20"):
        sample_exact(Ising(np.zeros((21, 21)), np.zeros(21)), np.random.default_rng(0), 1)


def test_independent_units_closed_form() -> None:
    h = np.array([0.3, -1.2, 2.0])
    assert Ising(np.zeros((3, 3)), h, "01").exact_log_partition() == pytest.approx(np.logaddexp(0, h).sum())
    assert Ising(np.zeros((3, 3)), h, "pm1").exact_log_partition() == pytest.approx(
        np.log(2 * np.cosh(h)).sum()
    )


# ------------------------------------------------------------------ conventions
@pytest.mark.parametrize("source", ["01", "pm1"])
def test_convention_change_keeps_every_probability(source: str) -> None:
    m = dense(7, source, seed=3, coupling_std=0.9, field_std=0.6)
    target = "pm1" if source == "01" else "01"
    m2, shift = to_spins(m, target)
    assert m2.spins == target and isinstance(shift, float)
    assert np.array_equal(m2.J, m2.J.T) and not np.diagonal(m2.J).any()
    x = all_states(7, source)
    lo, hi = VALUES[source]
    s = (x - lo) / (hi - lo) * (VALUES[target][1] - VALUES[target][0]) + VALUES[target][0]
    log_z, log_z2 = m.exact_log_partition(), m2.exact_log_partition()
    assert log_z2 == pytest.approx(log_z + shift, rel=1e-12)
    np.testing.assert_allclose(m.log_probability(x), m2.log_probability(s), rtol=0, atol=1e-11)
    # unnormalised values differ by the constant −shift
    np.testing.assert_allclose(m.log_unnormalized(x) - m2.log_unnormalized(s), -shift, atol=1e-11)
    back, shift_back = to_spins(m2, source)
    np.testing.assert_allclose(back.J, m.J, atol=1e-14)
    np.testing.assert_allclose(back.h, m.h, atol=1e-14)
    assert shift + shift_back == pytest.approx(0.0, abs=1e-12)
    same, zero = to_spins(m, source)
    assert same is m and zero == 0.0


def test_conversion_matches_pmp_stob() -> None:
    """The pmp authors' ``stob``, E2 (±1, sᵀWs + bᵀs) → E1 with J = 2W:
    W1 = 8 W2, b1 = 2 b2 − 4 W2 1, log Z1 = log Z2 + Σb2 − ΣW2."""
    m = dense(5, "pm1", seed=8)
    W2, b2 = m.J / 2, m.h
    m1, shift = to_spins(m, "01")
    np.testing.assert_allclose(m1.J, 8 * W2, atol=1e-14)
    np.testing.assert_allclose(m1.h, 2 * b2 - 4 * W2.sum(axis=1), atol=1e-14)
    assert shift == pytest.approx(b2.sum() - W2.sum(), abs=1e-12)


# ------------------------------------------------------------------ exact sampling
def test_sample_exact_frequencies() -> None:
    m = dense(4, "pm1", seed=5, coupling_std=0.8)
    x = sample_exact(m, np.random.default_rng(0), 40_000)
    assert x.shape == (40_000, 4) and x.dtype == np.float64 and set(np.unique(x)) == {-1.0, 1.0}
    index = ((x > 0).astype(int) << np.arange(4)).sum(axis=1)
    freq = np.bincount(index, minlength=16) / len(x)
    p = np.exp(m.log_probability(Spin.states(np, 4, 0, 16, np.float64)))
    assert np.all(np.abs(freq - p) < 4.5 * np.sqrt(p * (1 - p) / len(x)))


# ------------------------------------------------------------------ Gibbs sampling
def assert_marginals(model: Ising, x: np.ndarray) -> None:
    """Single and pairwise moments of independent chains within 4.5 standard errors."""
    mean, second = exact_moments(model)
    c = len(x)
    lo, hi = VALUES[model.spins]
    var1 = (mean - lo) * (hi - mean)  # variance of a two-valued variable
    pair = x.T @ x / c
    if model.spins == "01":  # x_i x_j ∈ {0, 1}
        var2 = second * (1 - second)
    else:  # s_i s_j ∈ {−1, +1}
        var2 = 1 - second**2
    z1 = np.abs(x.mean(axis=0) - mean) / np.sqrt(var1 / c)
    iu = np.triu_indices(model.n, 1)
    z2 = np.abs(pair - second)[iu] / np.sqrt(var2[iu] / c)
    assert z1.max() < 4.5 and z2.max() < 4.5, (z1.max(), z2.max())


@pytest.mark.parametrize("spins", ["01", "pm1"])
def test_gibbs_marginals_dense(spins: str) -> None:
    m = dense(10, spins, seed=11, coupling_std=0.4, field_std=0.4)
    if spins == "01":  # a {0,1} model with the same spread of conditionals as the ±1 one
        m = to_spins(dense(10, "pm1", seed=11, coupling_std=0.4, field_std=0.4), "01")[0]
    rng = np.random.default_rng(2)
    lo, hi = VALUES[spins]
    x0 = lo + (hi - lo) * (rng.random((20_000, 10)) < 0.5)
    x = SiteGibbs(SiteGibbsConfig()).run(m, x0, rng, 40)
    assert len(m.color_classes()) == 10
    assert_marginals(m, x)


@pytest.mark.parametrize("spins", ["01", "pm1"])
def test_gibbs_marginals_lattice(spins: str) -> None:
    m = lattice_2d(3, coupling=0.25 if spins == "pm1" else 1.0, field=0.2, spins=spins, dtype="float64")
    rng = np.random.default_rng(3)
    x0 = np.full((10_000, 9), VALUES[spins][0])  # all chains from one state: needs mixing
    x = SiteGibbs().run(m, x0, rng, 40)
    assert len(m.color_classes()) == 3  # odd torus
    assert_marginals(m, x)


@pytest.mark.parametrize("path", ["compiled", "compiled-float32", "numpy"])
@pytest.mark.parametrize("spins", ["01", "pm1"])
def test_gwg_marginals_dense(spins: str, path: str, monkeypatch) -> None:
    """Gibbs-with-gradients (rbmlab.inference.gwg) on a 10-site dense model matches the exact
    first and second moments within sampling error, from chains all started in one state, on
    the numba kernel's path (where numba is installed; float64 and float32, whose exponentials
    the kernel computes itself) and on the numpy path."""
    from rbmlab.backend import numba_kernels
    from rbmlab.inference.gwg import GibbsWithGradients

    if path == "numpy":
        monkeypatch.setenv("RBMLAB_NUMBA", "0")
    elif not numba_kernels.available():
        pytest.skip("numba kernels unavailable")
    m = dense(10, "pm1", seed=12, coupling_std=0.4, field_std=0.4)
    if spins == "01":
        m = to_spins(m, "01")[0]
    dtype = "float32" if path == "compiled-float32" else "float64"
    rng = np.random.default_rng(5)
    x = GibbsWithGradients().run(
        m.replace(J=m.J.astype(dtype), h=m.h.astype(dtype)),
        np.full((10_000, 10), VALUES[spins][0], dtype=dtype),
        rng,
        15,
    )
    assert x.dtype == np.dtype(dtype)
    assert_marginals(m, x.astype("float64"))


def test_single_site_gibbs_steps_match_exact_marginals_and_continue_their_scan() -> None:
    """step=site: 30 n single-site updates in site order match the exact moments; a scan split
    in two runs at the carried position is the scan run at once (same draws), and one step
    changes one site only."""
    m = dense(10, "pm1", seed=11, coupling_std=0.4, field_std=0.4)
    sampler = SiteGibbs(SiteGibbsConfig(step="site"))
    assert sampler.continues_scan and not SiteGibbs().continues_scan
    x0 = np.where(np.random.default_rng(2).random((20_000, 10)) < 0.5, 1.0, -1.0)
    assert_marginals(m, sampler.run(m, x0, np.random.default_rng(3), 300, position=7))
    x0 = x0[:50]
    whole = sampler.run(m, x0, np.random.default_rng(4), 17, position=6)
    rng = np.random.default_rng(4)
    half = sampler.run(m, x0, rng, 9, position=6)
    np.testing.assert_array_equal(sampler.run(m, half, rng, 8, position=(6 + 9) % 10), whole)
    changed = sampler.run(m, x0, np.random.default_rng(5), 1, position=13) != x0
    assert changed[:, 3].any() and not np.delete(changed, 3, axis=1).any()


@pytest.mark.parametrize("coupling_std", [0.2, 40.0])
@pytest.mark.parametrize("spins", ["01", "pm1"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gwg_kernel_makes_the_numpy_paths_moves(
    spins: str, dtype: str, coupling_std: float, monkeypatch
) -> None:
    """The numba kernel (rbmlab.inference.gwg_numba) draws the same uniforms as the numpy path and
    computes the same quantities in another order, so from the same seed the chains end in the same
    states (a uniform within rounding of a CDF boundary may go the other way: allow 1 % of the
    chains). Couplings of std 40 move δ by hundreds of nats a flip, so the kernel's shift bound
    is too loose and it takes the exact maximum instead."""
    from rbmlab.backend import numba_kernels
    from rbmlab.inference.gwg import GibbsWithGradients

    if not numba_kernels.available():
        pytest.skip("numba kernels unavailable")
    m = dense(40, "pm1", seed=13, coupling_std=coupling_std, field_std=0.3)
    if spins == "01":
        m = to_spins(m, "01")[0]
    m = m.replace(J=m.J.astype(dtype), h=m.h.astype(dtype))
    x0 = np.full((300, 40), VALUES[spins][0], dtype=dtype)
    compiled = GibbsWithGradients().run(m, x0, np.random.default_rng(8), 3)
    monkeypatch.setenv("RBMLAB_NUMBA", "0")
    plain = GibbsWithGradients().run(m, x0, np.random.default_rng(8), 3)
    assert compiled.dtype == plain.dtype == np.dtype(dtype)
    assert (compiled != x0).any(axis=1).mean() > 0.9
    assert (compiled != plain).any(axis=1).sum() <= 3


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gwg_kernel_exponentials_and_their_sums(dtype: str) -> None:
    """The kernel's exponentials (its own in float32) against float64 numpy within 5e-7 relative
    (arguments from −87 to 0; below, < 1e-37), its block sums and total the sums of its
    exponentials, and log Σ exp(δ/t) right whether the shift is the maximum, an upper bound 30
    nats above it, or one 100 nats above (too loose: the exact maximum is taken instead)."""
    kernel = pytest.importorskip("rbmlab.inference.gwg_numba")
    rng = np.random.default_rng(0)
    scaled = np.concatenate([np.linspace(-100.0, 0.0, 2001), rng.uniform(-20.0, 0.0, 500)]).astype(dtype)
    rng.shuffle(scaled)
    n = scaled.size
    e, bits = np.empty(n, dtype), np.empty(n, np.int32)
    blocks = np.empty(-(-n // kernel.BLOCK), dtype)
    total = kernel._exponentials_(e, blocks, bits, scaled, 0.0, dtype == "float32")
    exact = np.exp(scaled.astype("float64"))
    inside = scaled >= -87
    assert np.max(np.abs(e[inside] - exact[inside]) / exact[inside]) < 5e-7
    assert np.all(e[~inside] < 1e-37)
    padded = np.concatenate([e, np.zeros(blocks.size * kernel.BLOCK - n, dtype)]).astype("float64")
    np.testing.assert_allclose(blocks, padded.reshape(-1, kernel.BLOCK).sum(axis=1), rtol=1e-5)
    np.testing.assert_allclose(total, e.astype("float64").sum(), rtol=1e-5)
    exact_log_norm = np.log(exact.sum())
    top = float(scaled.max())
    for shift in (top, top + 30.0, top + 100.0):
        log_norm, total = kernel._distribution_(scaled, e, blocks, bits, shift, dtype == "float32")
        assert log_norm == pytest.approx(exact_log_norm, abs=1e-5)
        assert total >= kernel.LOOSEST
    assert total == pytest.approx(np.exp(exact_log_norm - top), rel=1e-5)  # the maximum taken
    # large δ/t: log Σ is formed with the shift the exponentials used (float32's, not the bound's)
    big = (scaled.astype("float64")[:600] * 10.0 + 1000.0).astype(dtype)
    e, bits, blocks = e[:600], bits[:600], np.empty(-(-600 // kernel.BLOCK), dtype)
    exact = np.log(np.exp(big.astype("float64") - big.max()).sum()) + float(big.max())
    log_norm, _ = kernel._distribution_(big, e, blocks, bits, float(big.max()) + 30.1, dtype == "float32")
    assert log_norm == pytest.approx(exact, abs=5e-6)
    # a shift 100 nats *below* the maximum (a bound that failed): in float32 the exponentials
    # overflow and are refused (the maximum taken); float64 holds e^100
    log_norm, total = kernel._distribution_(
        scaled,
        np.empty(n, dtype),
        np.empty(-(-n // kernel.BLOCK), dtype),
        np.empty(n, np.int32),
        top - 100.0,
        dtype == "float32",
    )
    assert log_norm == pytest.approx(exact_log_norm, abs=1e-5)
    shift = top if dtype == "float32" else top - 100.0
    assert total == pytest.approx(np.exp(exact_log_norm - shift), rel=1e-5)
    # one argument far above the shift (y = 100: 2^144 has no float32 bits) is refused too
    few = np.array([100.0, 0.0, -1.0], dtype)
    log_norm, _ = kernel._distribution_(
        few, np.empty(3, dtype), np.empty(1, dtype), np.empty(3, np.int32), 0.0, dtype == "float32"
    )
    assert log_norm == pytest.approx(100.0 + np.log1p(np.exp(-100.0) + np.exp(-101.0)), abs=1e-5)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gwg_kernel_carries_the_block_sums_across_moves(dtype: str, monkeypatch) -> None:
    """64 sites (two blocks) whose proposal mass moves from the second block to the first as the
    chains flip: the kernel's block sums must follow each accepted move (the numpy path's moves)."""
    from rbmlab.backend import numba_kernels
    from rbmlab.inference.gwg import GibbsWithGradients

    if not numba_kernels.available():
        pytest.skip("numba kernels unavailable")
    m = dense(64, "pm1", seed=16, coupling_std=0.1, field_std=0.0)
    h = np.where(np.arange(64) < 32, -2.0, 2.0)
    m = m.replace(J=m.J.astype(dtype), h=h.astype(dtype))
    x0 = np.full((300, 64), -1.0, dtype=dtype)
    compiled = GibbsWithGradients().run(m, x0, np.random.default_rng(10), 3)
    monkeypatch.setenv("RBMLAB_NUMBA", "0")
    plain = GibbsWithGradients().run(m, x0, np.random.default_rng(10), 3)
    assert (compiled != x0).any(axis=1).all()
    assert (compiled != plain).any(axis=1).sum() <= 3


def test_gwg_kernel_walk_is_the_inverse_cdf() -> None:
    """The block walk picks the first site whose running sum exceeds the threshold (the last site
    when none does; sites of zero weight never), n not a multiple of the block."""
    kernel = pytest.importorskip("rbmlab.inference.gwg_numba")
    rng = np.random.default_rng(1)
    n = 3 * kernel.BLOCK + 7
    e = rng.random(n)
    e[rng.random(n) < 0.3] = 0.0
    blocks = np.array([e[b : b + kernel.BLOCK].sum() for b in range(0, n, kernel.BLOCK)])
    cdf = np.cumsum(e)
    thresholds = np.concatenate([rng.random(2000) * cdf[-1], cdf[:-1] * (1 + 1e-12), [0.0, 2 * cdf[-1]]])
    for threshold in thresholds:
        i = kernel._walk_(e, blocks, threshold)
        assert i == min(int(np.searchsorted(cdf, threshold, side="right")), n - 1)
        assert e[i] > 0 or threshold >= cdf[-1]
    # integer weights (exact sums), a block of zeros, thresholds exactly at the CDF's steps
    e = rng.integers(0, 4, n).astype("float64")
    e[kernel.BLOCK : 2 * kernel.BLOCK] = 0.0
    blocks = np.array([e[b : b + kernel.BLOCK].sum() for b in range(0, n, kernel.BLOCK)])
    cdf = np.cumsum(e)
    for threshold in np.concatenate([cdf[:-1], [0.0]]):
        assert kernel._walk_(e, blocks, threshold) == int(np.searchsorted(cdf, threshold, side="right"))


def test_gwg_kernel_gives_each_trial_its_own_couplings(monkeypatch) -> None:
    """A trial-batched model (J of shape (trials, n, n)): the kernel's chain groups are the
    trials, as on the numpy path."""
    from rbmlab.backend import numba_kernels
    from rbmlab.inference.gwg import GibbsWithGradients

    if not numba_kernels.available():
        pytest.skip("numba kernels unavailable")
    one, two = (dense(12, "pm1", seed=s, coupling_std=0.5, field_std=0.3) for s in (14, 15))
    m = one.replace(J=np.stack([one.J, two.J]), h=np.stack([one.h, two.h]))
    assert m.n_trials == 2
    x0 = np.full((100, 12), -1.0)
    compiled = GibbsWithGradients().run(m, x0, np.random.default_rng(9), 4)
    monkeypatch.setenv("RBMLAB_NUMBA", "0")
    plain = GibbsWithGradients().run(m, x0, np.random.default_rng(9), 4)
    assert compiled.shape == (2, 100, 12)
    assert (compiled != plain).any(axis=2).sum() <= 2
    assert np.abs(compiled[0].mean(axis=0) - compiled[1].mean(axis=0)).max() > 0.2  # two models


def test_gwg_single_site_steps_are_single_proposals() -> None:
    """step=site: n GWG steps are one step=sweep step (the same draws)."""
    from rbmlab.inference.gwg import GibbsWithGradients, GWGConfig

    m = dense(10, "pm1", seed=12, coupling_std=0.4, field_std=0.4)
    x0 = np.full((40, 10), -1.0)
    sweep = GibbsWithGradients().run(m, x0, np.random.default_rng(6), 2)
    sites = GibbsWithGradients(GWGConfig(step="site")).run(m, x0, np.random.default_rng(6), 20)
    np.testing.assert_array_equal(sites, sweep)
    one = GibbsWithGradients(GWGConfig(step="site")).run(m, x0, np.random.default_rng(7), 1)
    assert ((one != x0).sum(axis=1) <= 1).all()


def test_persistent_chains_carry_the_scan_position_through_a_checkpoint(tmp_path) -> None:
    """PCD with single-site Gibbs steps: the position advances k per update (mod n) and a run
    resumed from its checkpoint goes on from it (its chains equal an uninterrupted run's)."""
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS
    from rbmlab.run.checkpoint import load_checkpoint, save_checkpoint

    m = dense(10, "pm1", seed=13, coupling_std=0.4, field_std=0.4)
    data = Batch(np.where(np.random.default_rng(8).random((30, 10)) < 0.5, 1.0, -1.0))
    learner = LEARNERS.build(
        LEARNERS.parse(
            {
                "name": "pcd",
                "k": 4,
                "n_chains": 6,
                "batch_size": "full",
                "sampler": {"name": "gibbs", "step": "site"},
            }
        )
    )
    rng = np.random.default_rng(9)
    state = learner.init_state(m, data, rng)
    assert state["scan_position"] == 0
    models, states = [m], [state]
    for _ in range(5):
        new, state = learner.step(models[-1], states[-1], data, rng)
        models.append(new)
        states.append(state)
    assert [int(s["scan_position"]) for s in states] == [0, 4, 8, 2, 6, 0]
    save_checkpoint(tmp_path / "c.npz", models[3], state=states[3])
    _, _, saved = load_checkpoint(tmp_path / "c.npz")
    rng_a, rng_b = np.random.default_rng(10), np.random.default_rng(10)
    _, a = learner.step(models[3], states[3], data, rng_a)
    _, b = learner.step(models[3], saved, data, rng_b)
    np.testing.assert_array_equal(a["chains"], b["chains"])
    assert int(b["scan_position"]) == 6


def test_persistent_chains_start_at_the_data_or_at_uniform_states() -> None:
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS

    m = dense(10, "pm1", seed=13)
    data = Batch(np.ones((30, 10)))
    build = lambda init: LEARNERS.build(LEARNERS.parse({"name": "pcd", "n_chains": 4000, "chain_init": init}))  # noqa: E731
    assert (build("data").init_state(m, data, np.random.default_rng(0))["chains"] == 1).all()
    chains = build("uniform").init_state(m, data, np.random.default_rng(0))["chains"]
    assert set(np.unique(chains)) == {-1.0, 1.0} and abs(chains.mean()) < 0.02


def test_gibbs_is_stationary_from_exact_samples_float32() -> None:
    m = dense(8, "pm1", seed=4, coupling_std=1.0).astype(np.float32)
    rng = np.random.default_rng(4)
    x0 = sample_exact(m, rng, 20_000)
    x = SiteGibbs().run(m, x0, rng, 2)
    assert x.dtype == np.float32 and x0.dtype == np.float32
    assert_marginals(m.astype(np.float64), x.astype(np.float64))


def test_gibbs_leaves_input_alone_and_copies() -> None:
    m = lattice_2d(4, coupling=0.3, spins="01", dtype="float32")
    x0 = np.zeros((5, 16), np.float32)
    kept = x0.copy()
    out = SiteGibbs().run(m, x0, np.random.default_rng(0), 3)
    assert np.array_equal(x0, kept) and out is not x0 and set(np.unique(out)) <= {0.0, 1.0}
    copy = SiteGibbs().run(m, x0, np.random.default_rng(0), 0)
    assert copy is not x0 and np.array_equal(copy, x0)


# ------------------------------------------------------------------ colouring
def assert_valid_colouring(model: Ising, classes: list) -> None:
    J = np.asarray(model.J)
    coupled = np.any(J != 0, axis=tuple(range(J.ndim - 2))) if J.ndim > 2 else J != 0
    assert sorted(np.concatenate(classes).tolist()) == list(range(model.n))
    for c in classes:
        assert c.dtype.kind == "i" and not coupled[np.ix_(c, c)].any()


@pytest.mark.parametrize("side", [2, 3, 4, 5, 6, 7])
@pytest.mark.parametrize("periodic", [True, False])
def test_lattice_colouring(side: int, periodic: bool) -> None:
    m = lattice_2d(side, coupling=0.3, periodic=periodic)
    classes = m.color_classes()
    assert_valid_colouring(m, classes)
    if side % 2 == 0 or not periodic:
        assert len(classes) == 2
    else:
        assert len(classes) == 3
    degree = (np.asarray(m.J) != 0).sum(axis=1)
    if periodic and side > 2:
        assert np.all(degree == 4) and len(lattice_edges(side)) == 2 * side * side


def test_uniform_dense_draws_pmps_random_ising_models() -> None:
    """pmp Sec 5.2's rand_ising: J_ij the average of two U[−c, c] draws (triangular: variance c²/6),
    symmetric with zero diagonal; h_i ~ U[−f, f] (variance f²/3)."""
    from rbmlab.models.ising import uniform_dense

    model = uniform_dense(400, rng=np.random.default_rng(0), coupling=4.0, field=0.1, dtype="float64")
    J, h, upper = model.J, model.h, np.triu_indices(400, 1)
    assert np.array_equal(J, J.T) and not np.diagonal(J).any()
    assert np.abs(J).max() <= 4.0 and np.abs(h).max() <= 0.1
    assert J[upper].var() == pytest.approx(16.0 / 6.0, rel=0.02)
    assert h.var() == pytest.approx(0.01 / 3.0, rel=0.2)
    assert not np.allclose(
        uniform_dense(5, rng=np.random.default_rng(1), coupling=4.0).J,
        uniform_dense(5, rng=np.random.default_rng(2), coupling=4.0).J,
    )


def test_colouring_dense_random_and_trial_union() -> None:
    d = dense(9)
    assert len(d.color_classes()) == 9
    assert_valid_colouring(d, d.color_classes())
    er = erdos_renyi(60, 0.08, rng=np.random.default_rng(0), coupling_std=1.0)
    assert_valid_colouring(er, er.color_classes())
    assert len(er.color_classes()) < 60
    J = np.zeros((2, 3, 3))
    J[0, 0, 1] = J[0, 1, 0] = 1.0  # trial 0: edge 0-1; trial 1: edge 1-2
    J[1, 1, 2] = J[1, 2, 1] = 1.0
    both = Ising(J, np.zeros((2, 3)))
    assert_valid_colouring(both, both.color_classes())
    assert len(both.color_classes()) == 2


def test_constructors() -> None:
    rng = np.random.default_rng(0)
    er = erdos_renyi(300, 0.02, rng=rng, coupling_std=0.5, field_std=0.1)
    edges = np.count_nonzero(np.triu(er.J, 1))
    assert abs(edges - 0.02 * 300 * 299 / 2) < 5 * np.sqrt(0.02 * 300 * 299 / 2)
    assert er.J.dtype == np.float32 and np.array_equal(er.J, er.J.T) and not np.diagonal(er.J).any()
    fc = fully_connected(200, rng=rng, coupling_std=0.5)
    assert np.std(fc.J[np.triu_indices(200, 1)]) == pytest.approx(0.5, rel=0.03) and not fc.h.any()
    a = fully_connected(5, rng=np.random.default_rng(7), coupling_std=1.0, field_std=1.0, dtype="float64")
    b = fully_connected(5, rng=np.random.default_rng(7), coupling_std=1.0, field_std=1.0, dtype="float32")
    np.testing.assert_allclose(a.J, b.J, rtol=1e-6)
    lat = lattice_2d(4, coupling=-0.2, field=0.1, spins="pm1")
    assert np.allclose(np.unique(lat.J), [-0.2, 0.0])
    assert np.allclose(lat.h, 0.1) and lat.spins == "pm1"


# ------------------------------------------------------------------ gradient
@pytest.mark.parametrize("spins", ["01", "pm1"])
def test_statistics_are_the_gradient(spins: str) -> None:
    m = dense(6, spins, seed=9, coupling_std=0.7, field_std=0.5)
    rng = np.random.default_rng(9)
    lo, hi = VALUES[spins]
    data = lo + (hi - lo) * (rng.random((50, 6)) < 0.3)

    def mean_loglik(model: Ising) -> float:
        return float(np.mean(model.log_unnormalized(data))) - model.exact_log_partition()

    stats = m.statistics(data)
    assert np.array_equal(stats["J"], stats["J"].T) and not np.diagonal(stats["J"]).any()
    mean, second = exact_moments(m)
    grad_J, grad_h = stats["J"] - second, stats["h"] - mean
    eps = 1e-5
    for i, j in itertools.combinations(range(6), 2):
        step = np.zeros((6, 6))
        step[i, j] = step[j, i] = eps  # J_ij and J_ji move together
        fd = (mean_loglik(m.replace(J=m.J + step)) - mean_loglik(m.replace(J=m.J - step))) / (2 * eps)
        assert fd == pytest.approx(grad_J[i, j], abs=1e-8)
    for i in range(6):
        step = np.zeros(6)
        step[i] = eps
        fd = (mean_loglik(m.replace(h=m.h + step)) - mean_loglik(m.replace(h=m.h - step))) / (2 * eps)
        assert fd == pytest.approx(grad_h[i], abs=1e-8)


@pytest.mark.parametrize("spins", ["01", "pm1"])
def test_a_tied_models_statistic_is_the_derivative_in_theta(spins: str) -> None:
    """tie=uniform: J = θ(11ᵀ − I), h = 0; statistics(data) − E_θ[statistics] on every pair is
    d/dθ of the mean log-likelihood (finite differences in θ), and 0 for h."""
    n, theta = 5, 0.3
    off = np.ones((n, n)) - np.eye(n)
    m = Ising(theta * off, np.zeros(n), spins, "uniform")
    lo, hi = VALUES[spins]
    data = lo + (hi - lo) * (np.random.default_rng(4).random((40, n)) < 0.6)

    def mean_loglik(t: float) -> float:
        model = m.replace(J=t * off)
        return float(np.mean(model.log_unnormalized(data))) - model.exact_log_partition()

    states = all_states(n, spins)
    p = np.exp(m.log_probability(states))
    expected = p @ np.array([m.statistics(s[None])["J"][0, 1] for s in states])  # E_θ[Σ_{i<j} x_i x_j]
    stats = m.statistics(data)
    assert np.allclose(stats["J"], stats["J"][0, 1] * off) and not stats["h"].any()
    direct = np.mean([sum(x[i] * x[j] for i, j in itertools.combinations(range(n), 2)) for x in data])
    assert stats["J"][0, 1] == pytest.approx(direct, abs=1e-12)
    eps = 1e-5
    fd = (mean_loglik(theta + eps) - mean_loglik(theta - eps)) / (2 * eps)
    assert fd == pytest.approx(stats["J"][0, 1] - expected, abs=1e-7)
    assert m.scalar_parameters() == {"theta": pytest.approx(theta)}
    assert dense(3).scalar_parameters() == {}


def test_a_tied_model_is_checked_at_the_edge() -> None:
    with pytest.raises(Exception, match="model.coupling_std=0 model.field_init=zero"):
        parse_options(IsingConfig, {"tie": "uniform"}, "model", "model ising")
    off = np.ones((3, 3)) - np.eye(3)
    ok = Ising.from_arrays({"J": 0.2 * off, "h": np.zeros(3)}, {"spins": "pm1", "tie": "uniform"})
    assert ok.tie == "uniform" and ok.scalar_parameters()["theta"] == pytest.approx(0.2)
    J = 0.2 * off
    J[0, 1] = J[1, 0] = 0.3
    for arrays in ({"J": J, "h": np.zeros(3)}, {"J": 0.2 * off, "h": np.full(3, 0.1)}):
        with pytest.raises(RbmlabError, match="tie=uniform must have one value on every pair"):
            Ising.from_arrays(arrays, {"spins": "pm1", "tie": "uniform"})
    diverged = np.stack([0.2 * off, np.full((3, 3), np.nan)])  # a diverged trial still loads
    loaded = Ising.from_arrays({"J": diverged, "h": np.zeros((2, 3))}, {"spins": "pm1", "tie": "uniform"})
    assert loaded.finite_trials() == [True, False]


def test_the_constant_dense_dataset_is_pmps_toy() -> None:
    truth = ising_ground_truth(
        parse_options(
            IsingSamplesOptions,
            {"structure": "dense", "n": 4, "weights": "constant", "coupling": 0.5, "spins": "pm1"},
            "dataset",
            "dataset ising_samples",
        )
    )
    assert np.allclose(truth.J, 0.5 * (np.ones((4, 4)) - np.eye(4))) and not truth.h.any()
    # Z = Σ_s exp(θ Σ_{i<j} s_i s_j): by the number k of +1 spins, Σ_{i<j} s_i s_j = ((2k − 4)² − 4)/2
    z = sum(math.comb(4, k) * math.exp(0.5 * ((2 * k - 4) ** 2 - 4) / 2) for k in range(5))
    assert truth.exact_log_partition() == pytest.approx(math.log(z), abs=1e-12)


# ------------------------------------------------------------------ trial axis
def test_trial_axis_matches_each_trial_alone() -> None:
    T, n = 3, 5
    singles = [dense(n, "pm1", seed=20 + t) for t in range(T)]
    batched = Ising(np.stack([s.J for s in singles]), np.stack([s.h for s in singles]), "pm1")
    assert batched.n_trials == T and batched.trial(1).n_trials == 0
    rng = np.random.default_rng(0)
    shared = np.where(rng.random((7, n)) < 0.5, -1.0, 1.0)
    per_trial = np.where(rng.random((T, 7, n)) < 0.5, -1.0, 1.0)
    sites = np.array([0, 3])
    log_z = batched.exact_log_partition(chunk_size=8)
    assert log_z.shape == (T,)
    lu_shared, lu_trial = batched.log_unnormalized(shared), batched.log_unnormalized(per_trial)
    stats = batched.statistics(per_trial)
    fields_shared, fields_trial = batched.local_fields(shared, sites), batched.local_fields(per_trial, sites)
    converted, shifts = to_spins(batched, "01")
    assert shifts.shape == (T,)
    for t, s in enumerate(singles):
        assert log_z[t] == pytest.approx(s.exact_log_partition(), rel=1e-12)
        np.testing.assert_allclose(lu_shared[t], s.log_unnormalized(shared), rtol=1e-12)
        np.testing.assert_allclose(lu_trial[t], s.log_unnormalized(per_trial[t]), rtol=1e-12)
        single_stats = s.statistics(per_trial[t])
        for k in ("J", "h"):
            np.testing.assert_allclose(stats[k][t], single_stats[k], rtol=1e-12)
        np.testing.assert_allclose(fields_shared[t], s.local_fields(shared, sites), rtol=1e-12)
        np.testing.assert_allclose(fields_trial[t], s.local_fields(per_trial[t], sites), rtol=1e-12)
        conv, shift = to_spins(s, "01")
        np.testing.assert_allclose(converted.J[t], conv.J)
        np.testing.assert_allclose(converted.h[t], conv.h)
        assert shifts[t] == pytest.approx(shift, rel=1e-12)
        np.testing.assert_allclose(batched.trial(t).J, s.J)
    assert batched.finite_trials() == [True] * T


def test_trial_axis_samplers_keep_trials_apart() -> None:
    """Trial 0 pins every unit on, trial 1 off: both samplers must return exactly that per trial."""
    n = 6
    J = np.zeros((2, n, n), np.float32)
    J[:, 0, 1] = J[:, 1, 0] = 0.5
    h = np.stack([np.full(n, 40.0), np.full(n, -40.0)]).astype(np.float32)
    for spins in ("01", "pm1"):
        m = Ising(J, h, spins)
        lo, hi = VALUES[spins]
        x = sample_exact(m, np.random.default_rng(0), 9)
        assert x.shape == (2, 9, n) and x.dtype == np.float32
        assert np.all(x[0] == hi) and np.all(x[1] == lo)
        shared = np.full((9, n), lo, np.float32)
        g = SiteGibbs().run(m, shared, np.random.default_rng(1), 2)
        assert g.shape == (2, 9, n) and np.all(g[0] == hi) and np.all(g[1] == lo)
        g2 = SiteGibbs().run(m, g[::-1].copy(), np.random.default_rng(1), 1)
        assert np.all(g2[0] == hi) and np.all(g2[1] == lo)


def test_sample_exact_trials_distribution() -> None:
    singles = [dense(3, "01", seed=30 + t, coupling_std=1.0) for t in range(2)]
    batched = Ising(np.stack([s.J for s in singles]), np.stack([s.h for s in singles]), "01")
    x = sample_exact(batched, np.random.default_rng(5), 20_000)
    for t, s in enumerate(singles):
        freq = np.bincount((x[t].astype(int) << np.arange(3)).sum(axis=1), minlength=8) / 20_000
        p = np.exp(s.log_probability(Bernoulli.states(np, 3, 0, 8, np.float64)))
        assert np.all(np.abs(freq - p) < 4.5 * np.sqrt(p * (1 - p) / 20_000))


# ------------------------------------------------------------------ checkpoints
def test_from_arrays_round_trip() -> None:
    m = dense(4, "pm1").astype(np.float32)
    settings = {k: np.array(v) for k, v in m.settings().items()}  # 0-d strings, as saved
    back = Ising.from_arrays({k: np.asarray(v) for k, v in m.arrays().items()}, settings)
    assert back.spins == "pm1" and np.array_equal(back.J, m.J) and np.array_equal(back.h, m.h)
    trials = Ising.from_arrays({"J": np.stack([m.J, m.J]), "h": np.stack([m.h, m.h])}, {"spins": "01"})
    assert trials.n_trials == 2
    nearly = m.J.astype(np.float64)
    nearly[0, 1] += 1e-16  # float rounding is tolerated and made exact
    fixed = Ising.from_arrays({"J": nearly, "h": m.h}, {"spins": "pm1"})
    assert np.array_equal(fixed.J, fixed.J.T)
    diverged = np.full_like(m.J, np.nan)  # a diverged model still loads
    assert not Ising.from_arrays({"J": diverged, "h": m.h}, {"spins": "01"}).is_finite()


@pytest.mark.parametrize(
    "arrays, settings, words",
    [
        ({"J": np.array([[0.0, 1.0], [0.5, 0.0]]), "h": np.zeros(2)}, {"spins": "01"}, "symmetric"),
        ({"J": np.array([[0.3, 1.0], [1.0, 0.0]]), "h": np.zeros(2)}, {"spins": "01"}, "zero diagonal"),
        ({"J": np.zeros((2, 2)), "h": np.zeros(2)}, {"spins": "+-1"}, "spins"),
        ({"J": np.zeros((2, 2)), "h": np.zeros(2)}, {}, "spins"),
        (
            {"J": np.zeros((2, 2)), "h": np.zeros(3)},
            {"spins": "01"},
            "h has shape (3,), expected (2,) = (n,)",
        ),
        (
            {"J": np.zeros((2, 3)), "h": np.zeros(2)},
            {"spins": "01"},
            "J has shape (2, 3), expected (2, 2) = (n, n)",
        ),
        ({"J": np.zeros((2, 2), bool), "h": np.zeros(2)}, {"spins": "01"}, "numeric"),
        ({"J": np.zeros((0, 0)), "h": np.zeros(0)}, {"spins": "01"}, "n is 0"),
        ({"W": np.zeros((2, 2)), "b_v": np.zeros(2)}, {"spins": "01"}, "missing J, h"),
    ],
)
def test_from_arrays_rejects_bad_input(arrays, settings, words) -> None:
    with pytest.raises(RbmlabError) as excinfo:
        Ising.from_arrays(arrays, settings)
    msg = one_line(excinfo)
    assert msg.startswith("checkpoint: ") and words in msg


# ------------------------------------------------------------------ dataset
def ising_data(**given):
    return load_ising_samples(parse_options(IsingSamplesOptions, given, "dataset", "dataset ising_samples"))


def test_dataset_defaults_and_info() -> None:
    ds = ising_data()
    assert ds.name == "ising_samples" and ds.train.shape == (2000, 16) and ds.test.shape == (1000, 16)
    assert ds.train.dtype == np.float32 and set(np.unique(ds.train)) == {0.0, 1.0}
    assert ds.image_shape == (4, 4) and ds.valid is None
    truth = ds.info["ground_truth"]
    model = Ising(np.array(truth["J"]), np.array(truth["h"]), truth["spins"])
    assert model.color_classes() and len(model.color_classes()) == 2
    assert np.count_nonzero(np.triu(model.J)) == 32 and np.allclose(model.J[model.J != 0], 0.3)
    states = Bernoulli.states(np, 16, 0, 2**16, np.float64)  # one enumeration, one matmul
    log_p = model.log_unnormalized(states)
    log_z = np.logaddexp.reduce(log_p)
    assert truth["log_partition"] == pytest.approx(log_z, rel=1e-12)
    assert truth["mean_loglik"]["test"] == pytest.approx(
        float(np.mean(model.log_unnormalized(ds.test.astype(np.float64)))) - log_z, rel=1e-10
    )
    assert "4x4 periodic lattice" in ds.info["generation"] and ds.info["options"]["sampler"] == "exact"
    # the samples follow the model: single-site means within sampling error
    mean = np.exp(log_p - log_z) @ states
    assert np.all(np.abs(ds.train.mean(axis=0) - mean) < 4.5 * np.sqrt(mean * (1 - mean) / 2000))


def test_dataset_is_deterministic_under_its_seeds() -> None:
    kw = {"structure": "dense", "n": 8, "coupling": 0.5, "field": 0.3, "n_train": 50, "n_test": 20}
    a, b = ising_data(**kw), ising_data(**kw)
    assert np.array_equal(a.train, b.train) and np.array_equal(a.test, b.test)
    assert a.info["ground_truth"] == b.info["ground_truth"]
    c = ising_data(**kw, sample_seed=1)
    assert c.info["ground_truth"]["J"] == a.info["ground_truth"]["J"] and not np.array_equal(c.train, a.train)
    d = ising_data(**kw, model_seed=1)
    assert d.info["ground_truth"]["J"] != a.info["ground_truth"]["J"]


def test_dataset_gibbs_and_erdos_renyi() -> None:
    ds = ising_data(
        structure="erdos_renyi",
        n=30,
        density=0.1,
        coupling=0.5,
        spins="pm1",
        sampler="gibbs",
        burn_in=20,
        thin=2,
        chains=16,
        n_train=40,
        n_test=10,
    )
    assert ds.train.shape == (40, 30) and set(np.unique(ds.train)) <= {-1.0, 1.0}
    assert ds.info["ground_truth"]["log_partition"] is None and ds.image_shape is None
    again = ising_data(
        structure="erdos_renyi",
        n=30,
        density=0.1,
        coupling=0.5,
        spins="pm1",
        sampler="gibbs",
        burn_in=20,
        thin=2,
        chains=16,
        n_train=40,
        n_test=10,
    )
    assert np.array_equal(ds.train, again.train)
    small = ising_data(side=3, spins="pm1", coupling=-0.2, sampler="gibbs", burn_in=5, n_train=30, n_test=5)
    assert small.train.shape == (30, 9) and small.info["ground_truth"]["log_partition"] is not None
    assert "one chain per sample" in small.info["generation"]


def test_ground_truth_matches_pmp_lattice_reading() -> None:
    """pmp lattice (θ = −0.1 counted twice, ±1): J = −0.2 on each of the 2·side² torus edges."""
    m = ising_ground_truth(IsingSamplesOptions(side=5, spins="pm1", coupling=-0.2, sampler="gibbs"))
    assert m.n == 25 and np.count_nonzero(np.triu(m.J)) == 50 and np.allclose(m.J[m.J != 0], -0.2)


@pytest.mark.parametrize(
    "given, key",
    [
        ({"side": 5}, "sampler"),  # 25 variables: exact sampling refused
        ({"structure": "dense", "n": 21}, "sampler"),
        ({"structure": "grid"}, "structure"),
        ({"spins": "+-1"}, "spins"),
        ({"density": 1.5}, "density"),
        ({"structure": "dense", "coupling": -1.0}, "coupling"),
        ({"structure": "erdos_renyi", "field": -0.1}, "field"),
        ({"n_train": 0}, "n_train"),
        ({"thin": 0}, "thin"),
        ({"side": 1}, "side"),
        ({"colour": 1}, "colour"),
        ({"coupling": "strong"}, "coupling"),
    ],
)
def test_dataset_bad_options(given, key) -> None:
    with pytest.raises(RbmlabError) as excinfo:
        ising_data(**given)
    assert one_line(excinfo).startswith(f"dataset.{key}: ")


def test_dataset_registered() -> None:
    from rbmlab.data.registry import SPECS, load_dataset  # noqa: PLC0415 - the registry is shared

    assert SPECS["ising_samples"].options is IsingSamplesOptions
    ds = load_dataset("ising_samples", side=2, n_train=5, n_test=3)
    assert ds.train.shape == (5, 4)
    with pytest.raises(RbmlabError) as excinfo:
        load_dataset("ising_samples", side=6)
    assert one_line(excinfo).startswith("dataset.sampler: ")


# ------------------------------------------------------------------ backends
def test_backend_agrees_with_numpy(backend) -> None:
    """The same model on numpy or cupy (float64): exact quantities equal, samplers correct."""
    from rbmlab.backend import namespace, to_numpy  # noqa: PLC0415

    host = dense(6, "pm1", seed=40, coupling_std=0.6)
    m = host.map(backend.asarray)
    assert m.xp is backend.xp
    assert m.exact_log_partition() == pytest.approx(host.exact_log_partition(), rel=1e-12)
    m01, shift = to_spins(m, "01")
    assert shift == pytest.approx(to_spins(host, "01")[1], rel=1e-12)
    np.testing.assert_allclose(to_numpy(m01.h), to_spins(host, "01")[0].h, rtol=1e-12)
    x = np.where(np.random.default_rng(0).random((9, 6)) < 0.5, -1.0, 1.0)
    stats, host_stats = m.statistics(backend.asarray(x)), host.statistics(x)
    for k in ("J", "h"):
        np.testing.assert_allclose(to_numpy(stats[k]), host_stats[k], rtol=1e-12)
    np.testing.assert_allclose(
        to_numpy(m.local_fields(backend.asarray(x), np.array([1, 4]))),
        host.local_fields(x, np.array([1, 4])),
        rtol=1e-12,
    )
    assert [c.tolist() for c in m.color_classes()] == [c.tolist() for c in host.color_classes()]
    rng = backend.rng(1)
    exact = sample_exact(m, rng, 20_000)
    assert namespace(exact) is backend.xp and exact.shape == (20_000, 6)
    assert_marginals(host, to_numpy(exact))
    lat = lattice_2d(3, coupling=0.25, field=0.2, spins="pm1", xp=backend.xp, dtype=backend.dtype)
    chains = SiteGibbs().run(lat, backend.xp.full((10_000, 9), -1.0), rng, 40)
    assert_marginals(lattice_2d(3, coupling=0.25, field=0.2, spins="pm1", dtype="float64"), to_numpy(chains))
    init = Ising.initialize(
        IsingConfig(coupling_std=0.1),
        xp=backend.xp,
        rng=rng,
        data_mean=backend.asarray([0.3, 0.6]),
        dtype="float32",
        trials=2,
    )
    assert init.xp is backend.xp and init.J.shape == (2, 2, 2) and init.dtype == np.float32


# ------------------------------------------------------------------ learning with restarted chains
@pytest.mark.parametrize("sampler", ["gibbs", "gwg"])
def test_a_reset_learner_step_is_the_exact_gradient_within_sampling_error(sampler):
    """learner=reset: fresh uniform chains and k sweeps every update; with enough sweeps the
    negative phase is the model's exact moments, so an SGD step is lr × (data − exact model)."""
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS

    model = dense(6, "pm1", seed=21, coupling_std=0.5, field_std=0.3)
    data = sample_exact(dense(6, "pm1", seed=22, coupling_std=0.5), np.random.default_rng(0), 200)
    learner = LEARNERS.build(
        LEARNERS.parse(
            {
                "name": "reset",
                "lr": 1e-3,
                "k": 20,
                "n_chains": 20_000,
                "batch_size": "full",
                "sampler": sampler,
                "optimizer": {"name": "sgd"},
            }
        )
    )
    new, _ = learner.step(model, {}, Batch(data), np.random.default_rng(1))
    mean, second = exact_moments(model)
    expected_J = model.statistics(data)["J"] - second
    expected_h = model.statistics(data)["h"] - mean
    np.testing.assert_allclose((new.J - model.J) / 1e-3, expected_J, atol=0.05)
    np.testing.assert_allclose((new.h - model.h) / 1e-3, expected_h, atol=0.05)


def test_gibbs_datasets_are_cached_and_the_cache_is_only_a_shortcut(tmp_path, monkeypatch) -> None:
    """The second load serves the cached file (a planted marker comes back) without sampling; a
    damaged or empty file is redrawn and replaced; other options draw afresh."""
    from rbmlab.data import model_samples

    monkeypatch.setenv("RBMLAB_CACHE", str(tmp_path))
    calls = []
    sample = model_samples._gibbs_samples
    monkeypatch.setattr(model_samples, "_gibbs_samples", lambda *a: calls.append(1) or sample(*a))
    given = {
        "structure": "erdos_renyi",
        "n": 12,
        "density": 0.3,
        "sampler": "gibbs",
        "burn_in": 20,
        "n_train": 30,
        "n_test": 5,
    }
    first = ising_data(**given)
    [cached] = list((tmp_path / "ising_samples").glob("*.npy"))
    assert calls == [1] and np.array_equal(np.load(cached), np.concatenate([first.train, first.test]))
    marked = np.load(cached)
    marked[0, 0] = 7.0
    np.save(cached, marked)
    assert ising_data(**given).train[0, 0] == 7.0 and calls == [1]
    for damage in (b"damaged", b""):
        cached.write_bytes(damage)
        assert np.array_equal(ising_data(**given).train, first.train)
        assert np.array_equal(np.load(cached), np.concatenate([first.train, first.test]))
    assert calls == [1, 1, 1]
    assert not np.array_equal(ising_data(**{**given, "burn_in": 21}).train, first.train)
    assert len(list((tmp_path / "ising_samples").glob("*.npy"))) == 2


def test_the_ground_truth_log_partition_of_a_large_dataset_is_cached(tmp_path, monkeypatch) -> None:
    """Above CACHED_LOG_Z_FROM variables the enumerated log Z is kept in the cache: a second load
    reads it (a planted value comes back), a damaged entry is recomputed."""
    from rbmlab.data import load_dataset, model_samples  # noqa: PLC0415 - the module, to patch it

    monkeypatch.setenv("RBMLAB_CACHE", str(tmp_path))
    monkeypatch.setattr(model_samples, "CACHED_LOG_Z_FROM", 4)
    options = {"name": "ising_samples", "n": 6, "structure": "dense", "n_train": 20, "n_test": 20}
    exact = ising_ground_truth(
        IsingSamplesOptions(**{k: v for k, v in options.items() if k != "name"})
    ).exact_log_partition()
    assert load_dataset(**options).info["ground_truth"]["log_partition"] == pytest.approx(exact, abs=1e-12)
    [entry] = (tmp_path / "ising_samples").glob("log_z-*.json")
    entry.write_text('{"log_partition": 123.5}')
    assert load_dataset(**options).info["ground_truth"]["log_partition"] == 123.5
    entry.write_text("not json")
    assert load_dataset(**options).info["ground_truth"]["log_partition"] == pytest.approx(exact, abs=1e-12)
