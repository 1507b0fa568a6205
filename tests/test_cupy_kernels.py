"""The cupy backend's fused kernels compute what the numpy code computes (runs on a GPU only)."""

from __future__ import annotations

import numpy as np
import pytest

from rbmlab.backend import cupy_available
from rbmlab.evaluators.ais import _softplus_increment

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not cupy_available(), reason="needs cupy and a GPU")]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_kernels_uniforms_are_the_numpy_backends_bits(dtype):
    from rbmlab.backend import cupy_kernels, random_bits

    key = random_bits.draw_key(np.random.default_rng(3))
    for shape in ((1,), (7,), (301, 77)):
        np.testing.assert_array_equal(
            cupy_kernels.uniforms(key, shape, dtype).get(), random_bits.uniforms(key, shape, dtype)
        )


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_bernoulli_matches_the_formula_on_the_same_uniforms(dtype):
    import cupy

    from rbmlab.backend import cupy_kernels

    rng = np.random.default_rng(0)
    x = (3.0 * rng.standard_normal((300, 70))).astype(dtype)
    key = np.uint64(0x0123456789ABCDEF)
    u = cupy_kernels.uniforms(key, x.shape, dtype).get()
    bias, offset = rng.standard_normal(70).astype(dtype), rng.standard_normal(70).astype(dtype)
    for kw in ({}, {"bias": bias}, {"bias": bias, "scale": 0.37, "offset": offset}, {"scale": 2.0}):
        a = kw.get("scale", 1.0) * (x.astype(np.float64) + kw.get("bias", 0.0)) + kw.get("offset", 0.0)
        want = u < 1.0 / (1.0 + np.exp(-a))
        got = cupy_kernels.bernoulli_logits_(
            cupy.asarray(x),
            key,
            **{k: cupy.asarray(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()},
        )
        assert set(np.unique(got.get())) <= {0.0, 1.0}
        assert (got.get().astype(bool) != want).mean() < 1e-3  # only where u is within rounding of σ(a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_softplus_increment_matches_the_numpy_passes(dtype):
    import cupy

    from rbmlab.backend import cupy_kernels

    x = (4.0 * np.random.default_rng(1).standard_normal((50, 500))).astype(dtype)
    bias = np.random.default_rng(2).standard_normal(500).astype(dtype)
    for b0, b1 in ((0.0, 1e-3), (0.5, 0.5001), (0.99999, 1.0)):
        x_np, x_gpu = x.copy(), cupy.asarray(x)
        want = _softplus_increment(np, x_np, b0, b1, (np.empty_like(x), np.empty_like(x)), bias=bias)
        got = cupy_kernels.softplus_increment(x_gpu, b0, b1, cupy.empty_like(x_gpu), cupy.asarray(bias)).get()
        np.testing.assert_array_equal(x_gpu.get(), x_np)  # the bias, added in place
        assert got.dtype == np.float64
        scale = np.abs(want).max()
        np.testing.assert_allclose(got, want, atol=1e-5 * scale if dtype == np.float32 else 1e-12 * scale)


def test_a_backend_generator_draws_on_the_device_and_keys_from_the_host():
    """Backend.rng on cupy: device arrays from cupy's Generator, keys for the fused kernel from a
    host Generator keyed alike (the same key gives the same sample)."""
    import cupy

    from rbmlab.backend import get_backend
    from rbmlab.backend.ops import bernoulli_logits_

    be = get_backend("cupy", "float32")
    assert isinstance(be.rng(1).random((3,), dtype=cupy.float32), cupy.ndarray)
    x = cupy.zeros((40, 30), dtype=cupy.float32)
    a, b = bernoulli_logits_(x.copy(), be.rng(1, 2)), bernoulli_logits_(x.copy(), be.rng(1, 2))
    assert bool((a == b).all()) and 0.3 < float(a.mean()) < 0.7


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_packed_draw_is_one_launch_that_equals_each_runs_draw_alone(dtype, monkeypatch):
    """Packed runs (rbmlab.backend.run_streams) on the device: one kernel for every run's block,
    each block equal to that run's own fused draw; over draws that cross the key table's chunks."""
    import cupy

    from rbmlab.backend import get_backend, ops, run_streams

    monkeypatch.setattr(run_streams, "KEY_CHUNK", 2)
    backend = get_backend("cupy", np.dtype(dtype).name)
    rng = np.random.default_rng(0)
    x = (3.0 * rng.standard_normal((3, 40, 70))).astype(dtype)
    bias = rng.standard_normal((3, 1, 70)).astype(dtype)
    packed = run_streams.RunStreams([backend.rng(s, 2) for s in (3, 5, 7)])
    alone = [backend.rng(s, 2) for s in (3, 5, 7)]
    for _ in range(5):
        got = ops.bernoulli_logits_(cupy.asarray(x), packed, bias=cupy.asarray(bias), scale=2.0).get()
        for r, g in enumerate(alone):
            want = ops.bernoulli_logits_(cupy.asarray(x[r]), g, bias=cupy.asarray(bias[r]), scale=2.0)
            np.testing.assert_array_equal(got[r], want.get())
