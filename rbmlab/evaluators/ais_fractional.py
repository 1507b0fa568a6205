"""AIS for the fractional RBM (frank_wolfe Eq. 11): forward only.

The path of rbmlab.evaluators.ais (Salakhutdinov & Murray 2008's base-rate start, W_A = 0,
b_h,A = 0, visible fields b_A) with each softplus weighted by its coefficient c_i:

    log f_β(v) = (1 − β) b_Aᵀv + β b_vᵀv + Σ_i c_i softplus(β x_i),   x = vW + b_h,

so f_1 is Eq. 11's p̃ and f_0 the base model, whose log Z_A = Σ_j softplus(b_A,j) + log 2 · Σ_i c_i
(each unit contributes c_i softplus(0)). Each f_β is a fractional RBM (weights βW, hidden biases
βb_h, visible fields (1 − β) b_A + β b_v, the same c), so its transition is Sec. 3.3's
Metropolis–Hastings step at β (rbmlab.inference.fractional_mh.mh_step), which leaves p_β
invariant as AIS needs (Neal 2001). A step's x serves the weight increment, and the proposal's
x' the next one. Reverse AIS is not written for this model (the evaluator refuses
``reverse=true`` on it). Products in the model's dtype, log-weights accumulated in float64.
"""

from __future__ import annotations

import math

import numpy as np

from rbmlab.backend import namespace, to_numpy
from rbmlab.backend.ops import bernoulli, sigmoid, softplus
from rbmlab.evaluators.ais_result import AISResult, _check_betas, _stats
from rbmlab.inference.fractional_mh import mh_step


def softplus_increments(x, beta_0: float, beta_1: float):
    """softplus(β_1 x) − softplus(β_0 x) per element (β ≥ 0), without the difference of two
    nearly equal logs: (β_1 − β_0) max(x, 0) + log1p(e_0 expm1(−(β_1 − β_0)|x|) / (1 + e_0)),
    e_0 = e^{−β_0|x|} (as rbmlab.evaluators.ais._softplus_increment, before its sum)."""
    xp = namespace(x)
    a = xp.abs(x)
    e0 = xp.exp(-beta_0 * a)
    return (beta_1 - beta_0) * xp.maximum(x, 0.0) + xp.log1p(
        e0 * xp.expm1(-(beta_1 - beta_0) * a) / (1.0 + e0)
    )


def fractional_ais_log_partition(
    model, rng, *, base_bias, betas, n_chains: int = 100, progress: bool = False
):
    """Forward AIS estimate of log Z of a single fractional RBM."""
    if model.W.ndim != 2:
        raise ValueError(f"AIS expects a single model with 2-D W, got W of shape {tuple(model.W.shape)}")
    if n_chains < 1:
        raise ValueError(f"n_chains must be positive, got {n_chains}")
    xp, dtype = model.xp, model.dtype
    betas = _check_betas(betas)
    base_bias = xp.asarray(base_bias, dtype=dtype)
    log_z_a = float(softplus(base_bias.astype(xp.float64)).sum()) + math.log(2.0) * float(
        model.c.astype(xp.float64).sum()
    )
    c64 = model.c.astype(xp.float64)
    d_bias = (model.b_v - base_bias).astype(xp.float64)
    v = bernoulli(
        sigmoid(xp.broadcast_to(base_bias, (n_chains, model.n_visible)).copy()), rng
    )  # exact draws of f_0
    x = model.hidden_inputs(v)
    log_w = xp.zeros(n_chains, dtype=xp.float64)
    K = betas.size - 1
    from tqdm.auto import tqdm  # noqa: PLC0415 - not at import: rbmlab run --help lists this module's options

    for k in tqdm(range(1, K + 1), desc="AIS (fractional)", disable=not progress, leave=False):
        b_prev, b_next = float(betas[k - 1]), float(betas[k])
        if b_next != b_prev:  # log f_{β_k}(v) − log f_{β_{k−1}}(v)
            log_w += (b_next - b_prev) * (v.astype(xp.float64) @ d_bias)
            log_w += softplus_increments(x, b_prev, b_next).astype(xp.float64) @ c64
        if k == K:
            break  # the last transition changes no weight
        field = b_next * model.b_v + (1.0 - b_next) * base_bias
        v, x, _ = mh_step(model, v, x, rng, beta=b_next, field=field)
    log_r, log_hi, log_lo = _stats(log_w)
    return AISResult(
        log_z=log_z_a + log_r,
        log_z_lower=log_z_a + log_lo,
        log_z_upper=log_z_a + log_hi,
        log_z_base=log_z_a,
        log_w=np.asarray(to_numpy(log_w), dtype=np.float64),
        n_chains=n_chains,
        n_temperatures=int(betas.size),
        direction="forward",
    )
