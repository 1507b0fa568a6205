"""Single-site Gibbs sampling of the blind-deconvolution posterior p(W, S | X) (pmp Sec 5.6), the
baseline the paper reports as failing to mix ("GWG and Gibbs ... no meaningful posterior samples in
a reasonable time"; it shows none).

The model is rbmlab.models.convolution_or's (Eq. 1): features W (K, fh, fw), locations S (N, K, h,
w), images X̂ = OR-convolution of S and W, each observed pixel X equal to X̂ but for a flip of
probability p_e. The sampler keeps the count C[n, r, c] of (location, tap) pairs that light pixel
(r, c) of image n, so X̂ = 1[C > 0]. A site z (one entry of W or S) lights the pixels it reaches
(for S[n, k, u, v]: (u + p, v + q) where W[k, p, q] = 1; for W[k, p, q]: (u + p, v + q) of image n
where S[n, k, u, v] = 1) exactly once each, so with c₀ = C − z on them its conditional log-odds is

    logit p(z = 1 | rest) = logit(prior) + ln((1 − p_e)/p_e) Σ_{reached pixels with c₀ = 0} (2X − 1)

(a pixel another pair already lights is unchanged by z). A sweep visits every W entry, then every
S entry, in C order; z ← 1[logit(u) < that log-odds] with one uniform u per site (exact for any
log-odds, the ±230 of the paper's hard evidence included), and C is updated in place. The kernel is
compiled by numba when it is installed (the ``fast`` extra) and runs as plain Python otherwise
(small problems only: tests).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

try:
    import numba

    _jit = numba.njit(cache=True, nogil=True, boundscheck=False, error_model="numpy")
except ImportError:  # the optional ``fast`` extra: the same code, interpreted

    def _jit(f):
        return f


@_jit
def _sweep(W, S, C, X, t, prior_w, prior_s, evidence):
    """One sweep in place over W (K, fh, fw) then S (N, K, h, w), int8 {0, 1}; C (N, H, W') int32
    counts; X (N, H, W') int8; t: one logistic draw logit(u) per site (K·fh·fw + N·K·h·w)."""
    K, fh, fw = W.shape
    N, _, h, w = S.shape
    i = 0
    for k in range(K):
        for p in range(fh):
            for q in range(fw):
                z = W[k, p, q]
                field = 0
                for n in range(N):
                    for u in range(h):
                        for v in range(w):
                            if S[n, k, u, v] == 1 and C[n, u + p, v + q] - z == 0:
                                field += 2 * X[n, u + p, v + q] - 1
                new = 1 if t[i] < prior_w + evidence * field else 0
                i += 1
                if new != z:
                    W[k, p, q] = new
                    for n in range(N):
                        for u in range(h):
                            for v in range(w):
                                if S[n, k, u, v] == 1:
                                    C[n, u + p, v + q] += new - z
    for n in range(N):
        for k in range(K):
            for u in range(h):
                for v in range(w):
                    z = S[n, k, u, v]
                    field = 0
                    for p in range(fh):
                        for q in range(fw):
                            if W[k, p, q] == 1 and C[n, u + p, v + q] - z == 0:
                                field += 2 * X[n, u + p, v + q] - 1
                    new = 1 if t[i] < prior_s + evidence * field else 0
                    i += 1
                    if new != z:
                        S[n, k, u, v] = new
                        for p in range(fh):
                            for q in range(fw):
                                if W[k, p, q] == 1:
                                    C[n, u + p, v + q] += new - z


def logit(p: float) -> float:
    return math.log(p) - math.log1p(-p)


def counts(W, S) -> np.ndarray:
    """C[n, r, c]: the (location, tap) pairs lighting each pixel, int32."""
    K, fh, fw = W.shape
    N, _, h, w = S.shape
    C = np.zeros((N, h + fh - 1, w + fw - 1), dtype=np.int32)
    for p in range(fh):
        for q in range(fw):
            C[:, p : p + h, q : q + w] += np.einsum(
                "nkuv,k->nuv", S.astype(np.int32), W[:, p, q].astype(np.int32)
            )
    return C


def log_joint(W, S, X, p_w: float, p_s: float, p_e: float) -> float:
    """ln p(W, S, X): the Bernoulli priors and the flip likelihood of X given OR(S ∗ W)."""
    lit = counts(W, S) > 0
    mismatches = int(np.sum(lit != (np.asarray(X) > 0)))
    return float(
        W.sum() * math.log(p_w)
        + (W.size - W.sum()) * math.log1p(-p_w)
        + S.sum() * math.log(p_s)
        + (S.size - S.sum()) * math.log1p(-p_s)
        + mismatches * math.log(p_e)
        + (X.size - mismatches) * math.log1p(-p_e)
    )


@dataclass
class GibbsChain:
    """One chain's state: W (K, fh, fw), S (N, K, h, w) int8, their counts C, and the sweeps run."""

    W: Any
    S: Any
    C: Any
    sweeps: int = 0


def start(
    rng: np.random.Generator, X, n_features: int, feature_side: int, p_w: float, p_s: float
) -> GibbsChain:
    """A chain started at a draw from the priors."""
    N, H, Wd = X.shape
    W = (rng.random((n_features, feature_side, feature_side)) < p_w).astype(np.int8)
    S = (rng.random((N, n_features, H - feature_side + 1, Wd - feature_side + 1)) < p_s).astype(np.int8)
    return GibbsChain(W, S, counts(W, S))


def run_chain(
    chain: GibbsChain,
    X,
    rng: np.random.Generator,
    *,
    p_w: float,
    p_s: float,
    p_e: float,
    sweeps: int = 0,
    seconds: float = 0.0,
) -> GibbsChain:
    """``sweeps`` sweeps of the chain, or as many as fit in ``seconds`` of wall clock (whichever is
    set; a sweep is never cut), in place; returns it."""
    X8 = np.asarray(X, dtype=np.int8)
    n_sites = chain.W.size + chain.S.size
    evidence = -logit(p_e)
    begin = time.perf_counter()
    while (sweeps and chain.sweeps < sweeps) or (seconds and time.perf_counter() - begin < seconds):
        u = rng.random(n_sites)
        _sweep(chain.W, chain.S, chain.C, X8, np.log(u) - np.log1p(-u), logit(p_w), logit(p_s), evidence)
        chain.sweeps += 1
    return chain
