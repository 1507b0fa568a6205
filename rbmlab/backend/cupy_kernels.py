"""Fused elementwise kernels for the cupy backend: one launch where numpy makes several passes.

On a GPU each numpy-style pass is a kernel launch and a round trip through memory, so the
sampling step and AIS's weight increment below are single ElementwiseKernels. They compute what
the numpy code in :mod:`rbmlab.backend.ops` and :mod:`rbmlab.evaluators.ais` computes, in the same
precision, and the Bernoulli kernel forms its uniforms from a host-drawn 64-bit key exactly as
:mod:`rbmlab.backend.random_bits` does (SplitMix64 of a counter, :mod:`rbmlab.backend.splitmix`): no separate
pass writes random numbers to memory and no launch draws the key. ``tests/test_cupy_kernels.py``
compares them on a GPU. Imported only when a cupy array arrives.
"""

from __future__ import annotations

import cupy
import numpy as np

from rbmlab.backend.splitmix import GAMMA, MIX_1, MIX_2

_UNIFORM = f"""
__device__ unsigned long long rbmlab_splitmix(unsigned long long key, unsigned long long j) {{
    unsigned long long z = key + (j + 1ULL) * {int(GAMMA)}ULL;
    z = (z ^ (z >> 30)) * {int(MIX_1)}ULL;
    z = (z ^ (z >> 27)) * {int(MIX_2)}ULL;
    return z ^ (z >> 31);
}}
// element i of the C-order stream: float32 takes bits 8-31, then 40-63 of z_(i/2); float64 the top 53 of z_i
template <typename T> __device__ T rbmlab_uniform(unsigned long long key, long long i);
template <> __device__ float rbmlab_uniform<float>(unsigned long long key, long long i) {{
    const unsigned long long z = rbmlab_splitmix(key, (unsigned long long)(i >> 1));
    const unsigned long long bits = (i & 1) ? (z >> 40) : ((z >> 8) & 0xFFFFFFULL);
    return (float)bits * 5.9604644775390625e-08f;
}}
template <> __device__ double rbmlab_uniform<double>(unsigned long long key, long long i) {{
    return (double)(rbmlab_splitmix(key, (unsigned long long)i) >> 11) * 1.1102230246251565e-16;
}}
"""

_uniforms = cupy.ElementwiseKernel(
    "uint64 key", "T u", "u = rbmlab_uniform<T>(key, i);", "rbmlab_uniforms", preamble=_UNIFORM
)

# x ← [u (1 + e^{−a}) < 1] with a = scale·(x + bias) + offset: P(1) = σ(a)   (rbmlab.backend.ops)
_bernoulli_logits = cupy.ElementwiseKernel(
    "uint64 key, T bias, T scale, T offset",
    "T x",
    "const T u = rbmlab_uniform<T>(key, i);"
    "const T a = scale * (x + bias) + offset;"
    "x = (u * (T(1) + exp(-a)) < T(1)) ? T(1) : T(0);",
    "rbmlab_bernoulli_logits",
    preamble=_UNIFORM,
)

# Packed runs (rbmlab.backend.run_streams): x is (R, ...) C-order, run r's elements the r-th block of
# per_run; run r's key is keys[r·width + column] (a column of the runs' key table on the device), and
# its elements take the uniforms run r alone draws for its (...) block: one launch for R runs.
_bernoulli_logits_runs = cupy.ElementwiseKernel(
    "raw uint64 keys, int64 width, int64 column, int64 per_run, T bias, T scale, T offset",
    "T x",
    "const T u = rbmlab_uniform<T>(keys[(i / per_run) * width + column], i % per_run);"
    "const T a = scale * (x + bias) + offset;"
    "x = (u * (T(1) + exp(-a)) < T(1)) ? T(1) : T(0);",
    "rbmlab_bernoulli_logits_runs",
    preamble=_UNIFORM,
)

# x ← x + bias, y ← softplus(β_1 x) − softplus(β_0 x) in the expm1 form of rbmlab.evaluators.ais;
# δ = β_1 − β_0 is formed in float64 on the host, as there. (An elementwise kernel and a row sum
# beat one ReductionKernel with this map: 46 against 69 µs on 10,000 × 500 floats, H100.)
_softplus_increment = cupy.ElementwiseKernel(
    "T bias, T beta_0, T delta",
    "T x, T y",
    """
    x = x + bias;
    const T ax = fabs(x);
    const T e0 = exp(-beta_0 * ax);
    y = log1p(expm1(-delta * ax) * e0 / (T(1) + e0)) + delta * max(x, T(0));
    """,
    "rbmlab_softplus_increment",
)


def uniforms(key: np.uint64, shape, dtype):
    """The uniforms the Bernoulli kernel uses for ``key`` (for tests: equal to random_bits')."""
    return _uniforms(key, cupy.empty(shape, dtype=dtype))


def bernoulli_logits_(x, key: np.uint64, bias=None, scale=None, offset=None):
    """In place: x becomes the {0, 1} sample [u < σ(scale·(x + bias) + offset)], u from ``key``."""
    zero = x.dtype.type(0)
    _bernoulli_logits(
        key,
        zero if bias is None else bias,
        x.dtype.type(1) if scale is None else scale,
        zero if offset is None else offset,
        x,
    )
    return x


def bernoulli_logits_runs_(x, keys, column: int, bias=None, scale=None, offset=None):
    """In place, packed runs: x (R, ...) becomes run r's {0, 1} sample in block r, each from key
    ``keys[r, column]`` (``keys``: the runs' (R, width) uint64 key table on the device), equal to
    :func:`bernoulli_logits_` on each block with its key."""
    zero = x.dtype.type(0)
    _bernoulli_logits_runs(
        keys,
        keys.shape[1],
        column,
        x.size // x.shape[0],
        zero if bias is None else bias,
        x.dtype.type(1) if scale is None else scale,
        zero if offset is None else offset,
        x,
    )
    return x


def softplus_increment(x, beta_0: float, beta_1: float, out, bias=None):
    """Per row of ``x``, float64: Σ_j softplus(β_1 x_j) − softplus(β_0 x_j), after x ← x + bias
    (in place); ``out``, shaped like x, holds the terms."""
    _softplus_increment(
        x.dtype.type(0) if bias is None else bias, x.dtype.type(beta_0), x.dtype.type(beta_1 - beta_0), x, out
    )
    return out.sum(axis=-1, dtype=cupy.float64)


# tap Alg. 1, one damped move of a Bernoulli layer (rbmlab.inference.tap.damped_update_): from the
# neighbours' products p = Σ a W and q = Σ c W², A = −q and B = U + p + A·a (the Onsager term);
# f_a = σ(B − A/2), f_c = f_a (1 − f_a); a ← a + d (f_a − a), c ← c + d (f_c − c), s = (f_a − a)².
_tap_bernoulli = cupy.ElementwiseKernel(
    "T p, T q, T field, T damping",
    "T a, T c, T s",
    """
    const T m = T(1) / (T(1) + exp(q * (a - T(0.5)) - field - p));
    const T d = m - a;
    s = d * d;
    a = a + damping * d;
    c = c + damping * (m * (T(1) - m) - c);
    """,
    "rbmlab_tap_bernoulli",
)


def tap_bernoulli_step_(p, q, field, a, c, damping: float):
    """One damped TAP move of a Bernoulli layer, ``a`` and ``c`` in place; per row Σ (f_a − a)²."""
    s = cupy.empty_like(a)
    _tap_bernoulli(p, q, field, a.dtype.type(damping), a, c, s)
    return s.sum(axis=-1)


# One direction of loopy BP's messages in log-odds form (crbm_bp Alg. 1, Eqs. 13–14; the numpy
# passes of rbmlab.inference.matrix_bp): the sender's cavity c = η − m, the message g(w, c), and
# the damped mix with the old message, new = (1 − d) g + d old. Sum-product takes e^w − 1.
_bp_sum_message = cupy.ElementwiseKernel(
    "T expm1_w, T eta, T m, T old, T damping",
    "T out",
    "const T g = log1p(expm1_w / (T(1) + exp(m - eta)));out = (T(1) - damping) * g + damping * old;",
    "rbmlab_bp_sum_message",
)
_bp_max_message = cupy.ElementwiseKernel(
    "T w, T eta, T m, T old, T damping",
    "T out",
    "const T c = eta - m;"
    "const T g = max(w + c, T(0)) - max(c, T(0));"
    "out = (T(1) - damping) * g + damping * old;",
    "rbmlab_bp_max_message",
)


def bp_messages(mode: str, weights, eta, m, old, damping: float):
    """The damped messages of one BP direction in one pass: ``weights`` is W (max-product) or
    e^W − 1 (sum-product), ``eta`` the senders' log-odds (broadcast along the edges), ``m`` the
    messages they received on each edge, ``old`` the previous messages of this direction."""
    kernel = _bp_max_message if mode == "max" else _bp_sum_message
    return kernel(weights, eta, m, old, m.dtype.type(damping))
