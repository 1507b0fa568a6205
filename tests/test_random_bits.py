"""The counter-based sampler: numba kernel and numpy fallback give the same bits, the uniforms are
uniform, and the Bernoulli step draws with P(1) = σ(a)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from rbmlab.backend import random_bits
from rbmlab.backend.ops import bernoulli_logits_, uniform
from rbmlab.backend.splitmix import mixed_counter

KEY = np.uint64(0x0123456789ABCDEF)
needs_numba = pytest.mark.skipif(not random_bits.numba_available(), reason="numba not installed")


def test_splitmix_matches_the_reference_sequence():
    """SplitMix64 seeded with 0 (Vigna's splitmix64.c): the first outputs are known constants."""
    assert [int(z) for z in mixed_counter(np.uint64(0), 3)] == [
        0xE220A8397B1DCDAF,
        0x6E789E6AA1B965F4,
        0x06C45D188009454F,
    ]


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("size", [1, 2, 7, 1000, 50_001])
def test_numba_and_numpy_give_the_same_sample(dtype, size):
    a = 4.0 * np.random.default_rng(size).standard_normal(size).astype(dtype)
    e = np.exp(-a)
    e[::97] = np.inf  # a ≪ 0: always 0
    fused, fallback = e.copy(), e.copy()
    random_bits._numba_kernels()[np.dtype(dtype)](fused, KEY)
    random_bits.accept_numpy_(fallback, KEY)
    np.testing.assert_array_equal(fused, fallback)
    assert not fused[::97].any()


@needs_numba
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_one_element_at_a_time_gives_the_numpy_uniforms(dtype):
    """random_bits_numba.uniform_at (the GWG kernel's draws) is element c of random_bits.uniforms."""
    from rbmlab.backend.random_bits_numba import uniform_at

    expected = random_bits.uniforms(KEY, 1001, dtype)
    got = np.array([uniform_at(KEY, c, dtype == np.float32) for c in range(1001)])
    np.testing.assert_array_equal(got.astype(dtype), expected)
    assert (got == expected.astype(np.float64)).all()  # exact in float64 too


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_uniforms_are_uniform_and_keyed(dtype):
    u = random_bits.uniforms(KEY, (1000, 400), dtype)
    assert u.dtype == dtype and u.shape == (1000, 400)
    assert u.min() >= 0.0 and u.max() < 1.0
    assert stats.kstest(u.ravel(), "uniform").pvalue > 1e-3
    pairs = u.ravel()[: u.size // 2 * 2].reshape(-1, 2)  # the two halves of one z are independent
    assert abs(np.corrcoef(pairs.T)[0, 1]) < 0.01
    other = random_bits.uniforms(KEY + np.uint64(1), (1000, 400), dtype)
    assert abs(np.corrcoef(u.ravel(), other.ravel())[0, 1]) < 0.01
    np.testing.assert_array_equal(u, random_bits.uniforms(KEY, (1000, 400), dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_bernoulli_frequencies_follow_the_logits(dtype):
    logits = np.linspace(-6.0, 6.0, 13, dtype=dtype)
    n = 20_000
    x = np.repeat(logits[None, :], n, axis=0)
    draws = bernoulli_logits_(x, np.random.default_rng(0))
    p = 1.0 / (1.0 + np.exp(-logits.astype(np.float64)))
    assert draws.dtype == dtype and set(np.unique(draws)) <= {0.0, 1.0}
    np.testing.assert_array_less(np.abs(draws.mean(axis=0) - p), 4.0 * np.sqrt(p * (1 - p) / n) + 1e-9)


def test_a_draw_takes_one_key_from_the_generator():
    """Seeding and resume go through the Generator: the same seed gives the same sample, and a
    draw advances the Generator by exactly one raw value whatever its size."""
    g1, g2 = np.random.default_rng(5), np.random.default_rng(5)
    x = np.zeros((30, 17), dtype=np.float32)
    s1 = bernoulli_logits_(x.copy(), g1)
    np.testing.assert_array_equal(s1, bernoulli_logits_(x.copy(), g2))
    g3 = np.random.default_rng(5)
    g3.bit_generator.random_raw()
    assert g1.bit_generator.random_raw() == g3.bit_generator.random_raw()
    np.testing.assert_array_equal(
        uniform(np.random.default_rng(5), (4, 3), np.float64),
        random_bits.uniforms(random_bits.draw_key(np.random.default_rng(5)), (4, 3), np.float64),
    )


def test_non_contiguous_input_takes_the_fallback():
    e = np.exp(-np.random.default_rng(1).standard_normal((40, 30)).astype(np.float32))
    expected = random_bits.accept_numpy_(e[:, ::2].copy(), KEY)
    out = random_bits.accept_(e[:, ::2], KEY)
    np.testing.assert_array_equal(out, expected)
