"""Informed single-flip proposals (the Gibbs-with-gradients scheme, Grathwohl et al. 2021) on the
blind-deconvolution posterior p(W, S | X) (pmp Sec 5.6), the paper's other failing baseline ("GWG
... much slower per full sweep", no meaningful samples).

GWG proposes flipping one site i with probability q(i | x) = softmax(δ(x)/2)_i, δ_i(x) = ln p̃(x with
x_i flipped) − ln p̃(x), and accepts by Metropolis–Hastings, min(1, exp(δ_i(x) + ln q(i | x') −
ln q(i | x))), as rbmlab.inference.gwg does for pairwise models. GWG estimates δ by a gradient of a
continuous extension; this OR model has no single natural one, so δ is computed exactly here (the
proposal GWG approximates; on pairwise models the two coincide), from the counts of lit pixels
(rbmlab.inference.deconvolution_gibbs): a site z with c₀ = C − z on the pixels it reaches has

    δ = (1 − 2z) (logit(prior) + ln((1 − p_e)/p_e) Σ_{reached pixels with c₀ = 0} (2X − 1)),

for all 40,680 sites at once by the fh·fw filter taps (whole arrays, both values of z, the right one
kept per site). One step is one proposal; the budget is in steps or in wall-clock seconds.
"""

from __future__ import annotations

import time

import numpy as np

from rbmlab.inference.deconvolution_gibbs import GibbsChain, logit


def flip_deltas(W, S, C, X, prior_w: float, prior_s: float, evidence: float):
    """(δ of every W entry (K, fh, fw), δ of every S entry (N, K, h, w)), float64."""
    K, fh, fw = W.shape
    N, _, h, w = S.shape
    sign = 2.0 * X - 1.0
    reach = {0: sign * (C == 0), 1: sign * (C == 1)}  # Σ terms for a site now at z = 0 / 1
    field_s = {z: np.zeros((N, K, h, w)) for z in (0, 1)}
    field_w = {z: np.zeros((K, fh, fw)) for z in (0, 1)}
    Sf = S.astype(np.float64)
    for p in range(fh):
        for q in range(fw):
            for z in (0, 1):
                window = reach[z][:, p : p + h, q : q + w]  # (N, h, w)
                field_s[z] += W[None, :, p, q, None, None] * window[:, None]
                field_w[z][:, p, q] = np.einsum("nkuv,nuv->k", Sf, window)
    delta_w = (1 - 2 * W) * (prior_w + evidence * np.where(W == 1, field_w[1], field_w[0]))
    delta_s = (1 - 2 * S) * (prior_s + evidence * np.where(S == 1, field_s[1], field_s[0]))
    return delta_w, delta_s


def _log_proposal(delta, free=None):
    """ln softmax(δ / 2) over the sites ``free`` marks (all when None); −inf at the others."""
    a = delta / 2.0 if free is None else np.where(free, delta / 2.0, -np.inf)
    top = a.max()
    return a - (top + np.log(np.exp(a - top).sum()))


def run_chain(
    chain: GibbsChain,
    X,
    rng: np.random.Generator,
    *,
    p_w: float,
    p_s: float,
    p_e: float,
    steps: int = 0,
    seconds: float = 0.0,
    clamp: str = "none",
) -> tuple[GibbsChain, int]:
    """``steps`` proposals, or as many as fit in ``seconds``, in place; (chain, accepted moves).
    ``chain.sweeps`` counts proposals here. ``clamp`` "W" or "S" holds that block where it is
    (pmp Sec. 5.6's check, "GWG did work when S or W were clamped to the true values"): proposals
    and their reverse distributions range over the other block's sites only, which makes the chain
    GWG on the conditional posterior of the other block."""
    X = np.asarray(X, dtype=np.float64)
    args = (logit(p_w), logit(p_s), -logit(p_e))
    n_w = chain.W.size
    free = None if clamp == "none" else (np.arange(n_w + chain.S.size) < n_w) == (clamp == "S")
    delta = np.concatenate([d.ravel() for d in flip_deltas(chain.W, chain.S, chain.C, X, *args)])
    log_q = _log_proposal(delta, free)
    accepted, begin, done = 0, time.perf_counter(), 0
    while (steps and done < steps) or (seconds and time.perf_counter() - begin < seconds):
        i = int(rng.choice(delta.size, p=np.exp(log_q)))
        W, S, C = chain.W.copy(), chain.S.copy(), chain.C.copy()
        _flip(W, S, C, i, n_w)
        new_delta = np.concatenate([d.ravel() for d in flip_deltas(W, S, C, X, *args)])
        new_log_q = _log_proposal(new_delta, free)
        if np.log(rng.random()) < delta[i] + new_log_q[i] - log_q[i]:
            chain.W, chain.S, chain.C = W, S, C
            delta, log_q = new_delta, new_log_q
            accepted += 1
        done += 1
    chain.sweeps += done
    return chain, accepted


def _flip(W, S, C, i: int, n_w: int) -> None:
    """Flip site ``i`` (W entries first, then S, C order) and update the counts, in place."""
    K, fh, fw = W.shape
    N, _, h, w = S.shape
    if i < n_w:
        k, p, q = np.unravel_index(i, W.shape)
        step = 1 - 2 * int(W[k, p, q])
        W[k, p, q] += step
        C[:, p : p + h, q : q + w] += step * S[:, k].astype(C.dtype)
    else:
        n, k, u, v = np.unravel_index(i - n_w, S.shape)
        step = 1 - 2 * int(S[n, k, u, v])
        S[n, k, u, v] += step
        C[n, u : u + fh, v : v + fw] += step * W[k].astype(C.dtype)
