"""The binary 2D OR-convolution model of Bayesian blind deconvolution (pmp Sec 5.6, App. C.3).

Binary features W (K, fh, fw) shared by all images, locations S (N, K, h, w) and images
X (N, H, W'), H = h + fh − 1, W' = w + fw − 1:

    X[n, u+p, v+q] = OR over (k, u, v, p, q) of ( S[n, k, u, v] AND W[k, p, q] )           (1)

(feature k pasted with its top-left corner at (u, v); overlaps combine by OR). As a factor graph
(pmp App. C.3, Figure 9; the wiring follows the authors' code): one AND per (n, k, u, v, p, q),
inputs S[n, k, u, v] and W[k, p, q], output an auxiliary variable; one OR per pixel X[n, r, c] over
the K·fh·fw auxiliaries that land there.

:class:`ConvolutionOR` is the whole of (1) as one factor group of rbmlab.models.factor_graph. Its
variables are W, S, X (flattened in C order, in that order); the auxiliaries have no unary and
only two factors each, so they are internal: one group sweep is the authors' code's schedule
(the paper gives none), messages as log-ratios (rbmlab.models.logical_factors):

    s = b_S − m_{AND→S},  w = b_W − m_{AND→W}            cavities of every AND's two inputs
    a = min(s + w, s, w)                                  AND → aux (there, aux → OR)
    o = OR → aux, from all a of the pixel and X's cavity  (aux → AND)
    m_{AND→S} = max(o + w, 0) − max(w, 0),  m_{AND→W} = max(o + s, 0) − max(s, 0)
    m_{OR→X} = Σ max(0, a) + min(0, max a)

Only messages into W, S and X are kept (the aux messages are recomputed each sweep, undamped, as
in the authors' code); the generic loop (rbmlab.inference.max_product) damps all three kinds, and
damping m_{OR→X} changes nothing else, since X's cavity b_X − m_{OR→X} is its unary.

Layout: the ANDs are stored location-major, (n, k, u, v, p, q): every (location, offset) pair is
a valid AND (its pixel u+p, v+q is always inside the image), so there is no padding: N·K·h·w·fh·fw
entries (1.458 M at the paper's 100 × 5 × 9 × 9 × 6 × 6). Messages (B, 2A + P): m_{AND→S} (A),
m_{AND→W} (A), m_{OR→X} (P = N·H·W'). The OR's per-pixel sums and top 2 are gathered by a loop
over the K features, then one over the fh·fw filter taps, each step on whole arrays, as a
convolution is written; the OR's per-pixel terms come back to every AND as a strided window view
of the pixel arrays (no copy). One sweep at the paper's size, B = 5, float32, one thread: ~0.2 s.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rbmlab.backend import namespace
from rbmlab.errors import RbmlabError
from rbmlab.models.factor_graph import FactorGraph
from rbmlab.models.logical_factors import (
    OFF,
    and_to_input,
    and_to_output,
    merge_top2,
    or_input_terms,
    or_to_inputs,
    or_to_output,
)


def or_convolve(S, W):
    """(1): the images of locations S (..., N, K, h, w) and features W (..., K, fh, fw), {0, 1}
    arrays whose leading axes broadcast; (..., N, h + fh − 1, w + fw − 1) in S's dtype."""
    xp = namespace(S)
    *lead_s, n, k, h, w = S.shape
    *lead_w, _, fh, fw = W.shape
    lead = tuple(np.broadcast_shapes(tuple(lead_s), tuple(lead_w)))
    count = xp.zeros(lead + (n, h + fh - 1, w + fw - 1), dtype=S.dtype)
    for p in range(fh):  # one step per filter tap (p, q): all images, features, locations
        for q in range(fw):
            count[..., p : p + h, q : q + w] += xp.einsum("...nkuv,...k->...nuv", S, W[..., p, q])
    return (count > 0).astype(S.dtype)


def _windows(P, fh: int, fw: int):
    """The view V[..., u, v, p, q] = P[..., u + p, v + q] of pixel arrays P (..., H, W'): what each
    AND (location (u, v), offset (p, q)) reads of its pixel; no copy."""
    xp = namespace(P)
    *lead, H, Wd = P.shape
    shape = tuple(lead) + (H - fh + 1, Wd - fw + 1, fh, fw)
    strides = P.strides + P.strides[-2:]
    return xp.lib.stride_tricks.as_strided(P, shape=shape, strides=strides)


@dataclass(frozen=True)
class ConvolutionOR:
    """(1) as one factor group over ``variables`` = W (K·fh·fw), then S (N·K·h·w), then X
    (N·H·W'), each flattened in C order. No parameters (every factor is a hard constraint)."""

    variables: Any  # global indices of W, S, X
    n_images: int
    n_features: int
    feature_shape: tuple[int, int]  # (fh, fw)
    location_shape: tuple[int, int]  # (h, w)

    # ---- sizes and views
    @property
    def image_shape(self) -> tuple[int, int]:
        (fh, fw), (h, w) = self.feature_shape, self.location_shape
        return h + fh - 1, w + fw - 1

    @property
    def sizes(self) -> tuple[int, int, int]:
        """Variables of W, S and X."""
        n, k = self.n_images, self.n_features
        return (
            k * math.prod(self.feature_shape),
            n * k * math.prod(self.location_shape),
            n * math.prod(self.image_shape),
        )

    @property
    def n_ands(self) -> int:
        return self.sizes[1] * math.prod(self.feature_shape)

    def split(self, x):
        """W (B, K, fh, fw), S (B, N, K, h, w), X (B, N, H, W') of rows ``x`` (B, len(variables))."""
        n_w, n_s, _ = self.sizes
        B, n, k = x.shape[0], self.n_images, self.n_features
        return (
            x[:, :n_w].reshape((B, k) + self.feature_shape),
            x[:, n_w : n_w + n_s].reshape((B, n, k) + self.location_shape),
            x[:, n_w + n_s :].reshape((B, n) + self.image_shape),
        )

    def _and_shape(self, batch: int) -> tuple[int, ...]:
        return (batch, self.n_images, self.n_features) + self.location_shape + self.feature_shape

    def _unpack(self, messages):
        """m_{AND→S}, m_{AND→W} (B, N, K, h, w, fh, fw) and m_{OR→X} (B, N, H, W'), views."""
        A, B = self.n_ands, messages.shape[0]
        return (
            messages[:, :A].reshape(self._and_shape(B)),
            messages[:, A : 2 * A].reshape(self._and_shape(B)),
            messages[:, 2 * A :].reshape((B, self.n_images) + self.image_shape),
        )

    # ---- the group protocol (rbmlab.models.factor_graph)
    def init_messages(self, xp, batch: int, dtype):
        return xp.zeros((batch, 2 * self.n_ands + self.sizes[2]), dtype=dtype)

    def incoming(self, messages):
        xp = namespace(messages)
        to_s, to_w, to_x = self._unpack(messages)
        B = messages.shape[0]
        return xp.concatenate(
            [
                to_w.sum(axis=(1, 3, 4)).reshape(B, -1),
                to_s.sum(axis=(5, 6)).reshape(B, -1),
                to_x.reshape(B, -1),
            ],
            axis=1,
        )

    def max_product(self, beliefs, messages):
        xp = namespace(beliefs)
        to_s, to_w, to_x = self._unpack(messages)
        b_w, b_s, b_x = self.split(beliefs)
        s = b_s[..., None, None] - to_s  # S → AND cavities
        w = b_w[:, None, :, None, None] - to_w  # W → AND cavities
        a = and_to_output(s, w)  # AND → aux → OR
        total, first, second = self._or_statistics(a)
        fh, fw = self.feature_shape
        at_and = lambda P: _windows(P, fh, fw)[:, :, None]  # noqa: E731  (B, N, 1, h, w, fh, fw)
        terms = or_input_terms(b_x - to_x, total, first, second)  # per pixel, then read per AND
        o = or_to_inputs(a, at_and(first), *(at_and(t) for t in terms))  # OR → aux → AND
        del a
        out = xp.empty_like(messages)
        new_s, new_w, new_x = self._unpack(out)
        new_s[...] = and_to_input(o, w)
        new_w[...] = and_to_input(o, s)
        new_x[...] = or_to_output(total, first)
        return out

    def _or_statistics(self, a):
        """Per pixel, (Σ max(0, a), largest a, second largest a) over the K·fh·fw ANDs landing
        there, from the AND → aux messages a (B, N, K, h, w, fh, fw); each (B, N, H, W'). Top 2s
        are merged one feature, then one tap, at a time (merge_top2), each step whole arrays."""
        xp = namespace(a)
        relu_sum = xp.maximum(a, 0.0).sum(axis=2)  # over features: (B, N, h, w, fh, fw)
        tap_first, tap_second = a[:, :, 0], xp.full_like(a[:, :, 0], -xp.inf)
        for k in range(1, self.n_features):
            tap_first, tap_second = merge_top2(tap_first, tap_second, a[:, :, k], -xp.inf)
        shape = a.shape[:2] + self.image_shape
        total = xp.zeros(shape, dtype=a.dtype)
        first = xp.full(shape, -xp.inf, dtype=a.dtype)
        second = xp.full(shape, -xp.inf, dtype=a.dtype)
        (fh, fw), (h, w) = self.feature_shape, self.location_shape
        for p in range(fh):  # each tap's top 2 into its pixels' (the union's top 2)
            for q in range(fw):
                at = (slice(None), slice(None), slice(p, p + h), slice(q, q + w))
                total[at] += relu_sum[..., p, q]
                first[at], second[at] = merge_top2(
                    first[at], second[at], tap_first[..., p, q], tap_second[..., p, q]
                )
        return total, first, second

    def log_potential(self, x):
        """(B,): 0 where X is the OR-convolution (1) of S and W, else OFF per wrong pixel."""
        W, S, X = self.split(x)
        wrong = (or_convolve(S, W) != X).reshape(x.shape[0], -1).sum(axis=1)
        return OFF * wrong.astype(x.dtype)

    def map(self, fn):
        return self


def logit(p: float) -> float:
    """log p − log(1 − p), accurate for tiny p."""
    return math.log(p) - math.log1p(-p)


def deconvolution_graph(
    X,
    n_features: int,
    feature_shape: tuple[int, int],
    *,
    p_s: float = 0.01,
    p_w: float = 0.25,
    p_e: float = 1e-100,
    dtype=np.float32,
) -> FactorGraph:
    """The posterior p(W, S | X) of (1) given images X (N, H, W') as a factor graph (pmp Sec 5.6;
    the prior values are the authors' code's): Bernoulli priors logit(p_w) on W and logit(p_s) on S,
    the observed X as hard evidence ±(−logit(p_e)) (±230.26 at the code's 1e−100), locations
    h = H − fh + 1, w = W' − fw + 1."""
    xp = namespace(X)
    n, H, Wd = X.shape
    fh, fw = feature_shape
    if not (1 <= fh <= H and 1 <= fw <= Wd):
        raise RbmlabError(f"feature_shape: {fh}x{fw} features do not fit {H}x{Wd} images")
    group = ConvolutionOR(np.arange(0), n, n_features, (fh, fw), (H - fh + 1, Wd - fw + 1))
    n_w, n_s, n_x = group.sizes
    group = replace(group, variables=np.arange(n_w + n_s + n_x))
    unary = xp.concatenate(
        [
            xp.full(n_w, logit(p_w), dtype=dtype),
            xp.full(n_s, logit(p_s), dtype=dtype),
            ((2.0 * X.reshape(-1) - 1.0) * -logit(p_e)).astype(dtype),
        ]
    )
    return FactorGraph(unary, (group,))
