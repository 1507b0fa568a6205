"""Annealed importance sampling (AIS) estimates of the RBM partition function.

Neal (2001) AIS with the base-rate RBM of Salakhutdinov & Murray (2008) as the tractable start:
A has W_A = 0, b_v,A = ``base_bias``, b_h,A = 0. The intermediate unnormalised marginals are

    log f_β(v) = (1−β) b_Aᵀv + β b_vᵀv + Σ_j softplus(β (vW + b_h)_j),

so f_0 = f_A and f_1 = f_B (the target, hidden units summed out). Forward AIS starts from exact
samples of A and E[w] = Z_B / Z_A; reverse AIS (Burda et al. 2015) starts from samples of B,
runs the schedule backwards and E[w] = Z_A / Z_B. The reported interval is mean(w) ± 3 standard
errors mapped to log space (Salakhutdinov & Murray 2008).

The visible units are Bernoulli {0, 1} or Potts (q one-hot columns per unit, rbmlab.units.potts):
b_Aᵀv is linear in the columns either way, and the visible unit type supplies log Z_A's per-unit
log-partition, the base model's draws and the visible draws of each Gibbs sweep; the hidden units
are Bernoulli (the softplus increments). Bernoulli visible units keep their fused draws.

Matmuls and the per-unit weight increments run in the model dtype; log-weights are summed and
accumulated in float64.

The fractional RBM (frank_wolfe Eq. 11, model=fractional_rbm) is supported forward only: its path
weights each softplus by c_i and its transition is Sec. 3.3's Metropolis–Hastings step
(rbmlab.evaluators.ais_fractional); ``reverse=true`` on it is refused in one line.

A deep Boltzmann machine is annealed as the RBM between its even and its odd layers
(rbmlab.models.dbm.DBM.as_rbm: the odd layers summed out, as Salakhutdinov & Hinton 2009, §4,
do), from the base rates on layer 0 and the uniform distribution on layer 2; its test rows are
scored by the mean-field lower bound on log p̃(x) (``mean_field_iterations`` sweeps), so its
log-likelihood is an estimated lower bound, as theirs is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass as config_dataclass

import numpy as np

from rbmlab.backend import namespace, to_numpy
from rbmlab.backend.ops import bernoulli, bernoulli_logits_, sigmoid
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.ais_fractional import fractional_ais_log_partition
from rbmlab.evaluators.ais_result import AISResult, _check_betas, _stats
from rbmlab.evaluators.base import (
    Evaluator,
    EvaluatorConfig,
    mean_log_unnormalized,
    mean_of_rows,
    require_units,
)
from rbmlab.evaluators.exact import MAX_EXACT_UNITS, enumeration_problem, log_partition
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.inference.block_gibbs import gibbs_chain
from rbmlab.limits import CHAINS, EVALUATION_STEPS, EXACT_SAMPLING_UNITS
from rbmlab.models.base import Enumerable, FractionalUnits, MeanFieldPositive, ParityLayers, supports
from rbmlab.models.rbm import RBM, base_rate_bias, sample_exact
from rbmlab.units import Bernoulli
from rbmlab.units.requirements import BERNOULLI, CATEGORICAL
from rbmlab.validation import option

MAX_CHAIN_BYTES = 16 * 2**30  # the most working memory the chains may ask for


def chain_bytes(n_chains: int, n_visible: int, n_hidden: int) -> int:
    """About the bytes AIS's per-chain arrays take (states, pre-activations, float64 buffers)."""
    return 8 * n_chains * (3 * n_visible + 5 * n_hidden)


def temperature_schedule(kind: str = "salakhutdinov", n: int | None = None) -> np.ndarray:
    """Inverse temperatures β_0 = 0 < … < β_K = 1 (numpy float64).

    'salakhutdinov': steps 1e-3 on [0, 0.5], 1e-4 on [0.5, 0.9], 1e-5 on [0.9, 1]
    (Salakhutdinov & Murray 2008; 14,500 intervals, 14,501 points). 'linear': ``n`` equal intervals.
    """
    if kind == "salakhutdinov":
        if n is not None:
            raise ValueError("temperature_schedule('salakhutdinov') has a fixed length; n must be None")
        segments = [
            np.linspace(0.0, 0.5, 501),
            np.linspace(0.5, 0.9, 4001)[1:],
            np.linspace(0.9, 1.0, 10001)[1:],
        ]
        return np.concatenate(segments)
    if kind == "linear":
        if n is None or int(n) < 1:
            raise ValueError(f"temperature_schedule('linear') needs n >= 1 intervals, got {n!r}")
        return np.linspace(0.0, 1.0, int(n) + 1)
    raise ValueError(f"unknown temperature schedule {kind!r}; choose 'salakhutdinov' or 'linear'")


def _log_z_base(base_bias, n_hidden: int, units=Bernoulli) -> float:
    """log Z_A = Σ_units A_v(b_A) + n_hidden·log 2 (W_A = 0, b_h,A = 0): A_v the visible unit
    type's log-partition, softplus per Bernoulli unit, logsumexp of its q fields per Potts unit."""
    xp = namespace(base_bias)
    return float(xp.sum(units.log_partition(base_bias.astype(xp.float64)))) + n_hidden * math.log(2.0)


def _base_samples(rbm: RBM, rng, base_bias, n_chains: int):
    """``n_chains`` exact draws of the base model's visible units (independent, fields b_A)."""
    a = base_bias[None, :] + rbm.xp.zeros((n_chains, 1), dtype=rbm.W.dtype)
    if rbm.visible_units is Bernoulli:
        return bernoulli(sigmoid(a), rng)
    return rbm.visible_units.sample_(a, rng)


def _visible_draw_(rbm: RBM, a_v, rng, base_bias, beta: float):
    """In place: a_v = hWᵀ becomes v ~ p_β(v | h), fields β(hWᵀ + b_v) + (1 − β) b_A."""
    if rbm.visible_units is Bernoulli:
        return bernoulli_logits_(a_v, rng, bias=rbm.b_v, scale=beta, offset=(1.0 - beta) * base_bias)
    a_v += rbm.b_v
    a_v *= beta
    a_v += (1.0 - beta) * base_bias
    return rbm.visible_units.sample_(a_v, rng)


def _softplus_increment(xp, x, beta_0: float, beta_1: float, bufs, bias=None):
    """Σ_j softplus(β_1 x_j) − softplus(β_0 x_j) per row, summed in float64, for β_0, β_1 ≥ 0;
    with ``bias``, x ← x + bias first, in place (on a GPU in the same kernel).

    softplus(βx) = β max(x, 0) + log(1 + e^{−β|x|}): the linear part enters exactly through
    (β_1 − β_0); the rest, with e_0 = e^{−β_0|x|}, is log1p(e_0 · expm1(−(β_1 − β_0)|x|) / (1 + e_0)),
    accurate relative to the increment itself (no difference of two nearly equal logs), so it
    runs in the model's precision (float32) without the float64 casts.
    """
    if xp.__name__ == "cupy":
        from rbmlab.backend import cupy_kernels  # noqa: PLC0415

        return cupy_kernels.softplus_increment(x, beta_0, beta_1, bufs[0], bias)  # one kernel + a sum
    if bias is not None:
        x += bias
    t, u = bufs
    xp.abs(x, out=u)
    xp.multiply(u, beta_0 - beta_1, out=t)
    xp.expm1(t, out=t)  # expm1(−Δβ|x|)
    u *= -beta_0
    xp.exp(u, out=u)  # e_0
    t *= u
    u += 1.0
    t /= u
    xp.log1p(t, out=t)
    xp.maximum(x, 0.0, out=u)
    u *= beta_1 - beta_0
    t += u
    return xp.sum(t, axis=1, dtype=xp.float64)


def _anneal(rbm: RBM, rng, base_bias, betas: np.ndarray, v, progress: bool, desc: str):
    """Run AIS along ``betas`` (any direction) from the chains ``v``; float64 log-weights.

    Step k: log_w += log f_{β_k}(v) − log f_{β_{k−1}}(v); then one Gibbs sweep leaving p_{β_k}
    invariant (Neal 2001). One v@W per step serves both the weight and the h draw.
    """
    xp = rbm.xp
    f64 = xp.float64
    W, Wt = rbm.W, rbm.W.T
    b_h, b_v = rbm.b_h, rbm.b_v
    d_bias = b_v - base_bias.astype(W.dtype)  # ∂/∂β of the linear term
    n_chains = v.shape[0]
    log_w = xp.zeros(n_chains, dtype=f64)
    a_h = xp.empty((n_chains, rbm.n_hidden), dtype=W.dtype)
    a_v = xp.empty((n_chains, rbm.n_visible), dtype=W.dtype)
    bufs = tuple(xp.empty_like(a_h) for _ in range(2))
    K = betas.size - 1
    from tqdm.auto import tqdm  # noqa: PLC0415 - not at import: rbmlab run --help lists this module's options

    for k in tqdm(range(1, K + 1), desc=desc, disable=not progress, leave=False):
        b_prev, b_next = float(betas[k - 1]), float(betas[k])
        xp.matmul(v, W, out=a_h)
        if b_next != b_prev:
            # log f_{β_k}(v) − log f_{β_{k−1}}(v)   (Neal 2001; Salakhutdinov & Murray 2008)
            log_w += (b_next - b_prev) * (v @ d_bias).astype(f64)  # v ∈ {0,1}: exact enough
            log_w += _softplus_increment(xp, a_h, b_prev, b_next, bufs, bias=b_h)  # a_h += b_h
        else:
            a_h += b_h
        if k == K:
            break  # the last transition does not change any weight
        # h ~ p_β(h | v), v ~ p_β(v | h) with β = β_k: logits β(vW + b_h), β(hWᵀ + b_v) + (1 − β) b_A
        h = bernoulli_logits_(a_h, rng, scale=b_next)
        xp.matmul(h, Wt, out=a_v)
        v = _visible_draw_(rbm, a_v, rng, base_bias, b_next)  # a_v is overwritten only after
        # v's last use next step
    return log_w


def _prepare(rbm: RBM, base_bias, betas):
    if rbm.W.ndim != 2:
        raise ValueError(f"AIS expects a single RBM with 2-D W, got W of shape {tuple(rbm.W.shape)}")
    base_bias = rbm.xp.asarray(base_bias, dtype=rbm.W.dtype)
    if base_bias.shape != (rbm.n_visible,):
        raise ValueError(f"base_bias must have shape ({rbm.n_visible},), got {tuple(base_bias.shape)}")
    return base_bias, _check_betas(betas), _log_z_base(base_bias, rbm.n_hidden, rbm.visible_units)


def ais_log_partition(
    rbm: RBM, rng, *, base_bias, betas, n_chains: int = 100, progress: bool = False
) -> AISResult:
    """Forward AIS estimate of log Z (Neal 2001; Salakhutdinov & Murray 2008)."""
    base_bias, betas, log_z_a = _prepare(rbm, base_bias, betas)
    if n_chains < 1:
        raise ValueError(f"n_chains must be positive, got {n_chains}")
    v = _base_samples(rbm, rng, base_bias, n_chains)  # exact samples of the base model
    log_w = _anneal(rbm, rng, base_bias, betas, v, progress, "AIS")
    log_r, log_hi, log_lo = _stats(log_w)
    return AISResult(
        log_z=log_z_a + log_r,
        log_z_lower=log_z_a + log_lo,
        log_z_upper=log_z_a + log_hi,
        log_z_base=log_z_a,
        log_w=to_numpy(log_w).astype(np.float64),
        n_chains=n_chains,
        n_temperatures=int(betas.size),
        direction="forward",
    )


def reverse_ais_log_partition(
    rbm: RBM, rng, *, base_bias, betas, init_v, progress: bool = False
) -> AISResult:
    """Reverse AIS (Burda et al. 2015): chains start at samples ``init_v`` of the target and
    anneal β from 1 to 0; mean(w) estimates Z_A / Z_B, so log Ẑ = log Z_A − log mean(w).

    With exact target samples E[w] = Z_A / Z_B holds exactly, making log Ẑ a stochastic upper
    bound in expectation, complementing the forward lower bound.
    """
    base_bias, betas, log_z_a = _prepare(rbm, base_bias, betas)
    v = rbm.xp.asarray(init_v, dtype=rbm.W.dtype)
    if v.ndim != 2 or v.shape[1] != rbm.n_visible or v.shape[0] < 1:
        raise ValueError(f"init_v must have shape (n_chains, {rbm.n_visible}), got {tuple(v.shape)}")
    # the reversed path is forward AIS from B to A on the schedule β_K, …, β_0
    log_w = _anneal(rbm, rng, base_bias, betas[::-1].copy(), v, progress, "reverse AIS")
    log_r, log_hi, log_lo = _stats(log_w)
    return AISResult(
        log_z=log_z_a - log_r,
        log_z_lower=log_z_a - log_hi,
        log_z_upper=log_z_a - log_lo,
        log_z_base=log_z_a,
        log_w=to_numpy(log_w).astype(np.float64),
        n_chains=int(v.shape[0]),
        n_temperatures=int(betas.size),
        direction="reverse",
    )


def target_samples(
    rbm: RBM, rng, n: int, data=None, burn_in: int = 1000, max_exact_units: int = EXACT_SAMPLING_UNITS
):
    """``n`` samples of the target p(v) to start reverse AIS.

    Exact (exact.sample_exact) when the smaller layer has at most 2^``max_exact_units`` states;
    otherwise ``burn_in`` block-Gibbs sweeps from ``n`` rows of ``data`` chosen at random
    (without replacement when there are enough rows). Gibbs samples are only approximately
    from p(v), so the reverse estimate is then no longer an upper bound in expectation.
    """
    bits = min(rbm.visible_units.state_bits(rbm.n_visible), rbm.hidden_units.state_bits(rbm.n_hidden))
    if bits <= max_exact_units:
        return sample_exact(rbm, rng, n, max_units=max_exact_units)
    if data is None:
        raise ValueError(
            "target_samples: the model is too large for exact sampling; pass data to start Gibbs chains from"
        )
    xp = rbm.xp
    data = xp.asarray(data, dtype=rbm.W.dtype)
    n_data = data.shape[0]
    if n <= n_data:
        rows = xp.argsort(rng.random((n_data,), dtype=xp.float64))[:n]
    else:
        u = rng.random((n,), dtype=xp.float64)
        rows = xp.minimum((u * n_data).astype(xp.int64), n_data - 1)
    return gibbs_chain(rbm, data[rows], rng, burn_in)


def schedule(kind: str, n_temperatures: int, curve_n_temperatures: int, final: bool) -> np.ndarray:
    """The final schedule, or the cheaper linear one at intermediate evaluation points."""
    if not final and curve_n_temperatures:
        return temperature_schedule("linear", curve_n_temperatures)
    if kind == "linear":
        return temperature_schedule("linear", n_temperatures)
    return temperature_schedule("salakhutdinov")


@config_dataclass
class AISConfig(EvaluatorConfig):
    name: str = option("ais", "evaluator")
    n_chains: int = option(100, "AIS chains", lo=2, hi=CHAINS)
    schedule: str = option(
        "salakhutdinov", "salakhutdinov (14,500 temperatures) | linear", choices=("salakhutdinov", "linear")
    )
    n_temperatures: int = option(14500, "intervals of the linear schedule", lo=1, hi=EVALUATION_STEPS)
    curve_n_temperatures: int = option(
        1000, "linear schedule at intermediate points (0: the final one)", lo=0, hi=EVALUATION_STEPS
    )
    curve_n_chains: int = option(
        20, "chains at intermediate points (0: n_chains)", lo=0, hi=CHAINS, neutral=0
    )
    reverse: bool = option(False, "also run reverse AIS (Burda et al. 2015) at the end")
    exact_check: bool = option(
        False,
        "also the exact log Z (evaluator=exact's enumeration) and the "
        "AIS error against it; the smaller layer must enumerate",
        neutral=False,
    )
    mean_field_iterations: int = option(
        30,
        "a DBM's test rows: mean-field sweeps of the lower bound on log p̃(x) (an RBM's −F(x) is "
        "exact and reads none)",
        lo=0,
        hi=EVALUATION_STEPS,
        neutral=30,
    )

    def unread(self) -> dict[str, str]:
        if self.schedule == "salakhutdinov":
            return {"n_temperatures": "sets schedule=linear's length; salakhutdinov's has 14,500"}
        return {}


_nats = dict(unit="nats", higher_is_better=True)

# exact_check=true: AIS against the exact log Z of a model whose smaller layer enumerates
EXACT_CHECK_METRICS = (
    MetricSpec(
        "log_z_exact",
        per_split=False,
        **_nats,
        label="exact log Z",
        description="log Z by enumeration (evaluator=exact), beside the AIS estimate",
    ),
    MetricSpec(
        "log_z_error",
        "nats",
        higher_is_better=False,
        per_split=False,
        best_at=0.0,
        description="AIS log Ẑ − exact log Z",
        label="AIS log Z error",
    ),
    MetricSpec(
        "log_z_within",
        "fraction",
        higher_is_better=True,
        per_split=False,
        description="1 if the exact log Z lies in AIS's ±3σ interval [log_z_lower, "
        "log_z_upper], else 0 (averaged over runs: the interval's coverage)",
        label="exact log Z inside the AIS interval",
    ),
)


def exact_check_metrics(fwd: AISResult, log_z_exact: float) -> dict[str, float]:
    """The AIS estimate against the exact log Z (EXACT_CHECK_METRICS)."""
    return {
        "log_z_exact": log_z_exact,
        "log_z_error": fwd.log_z - log_z_exact,
        "log_z_within": float(fwd.log_z_lower <= log_z_exact <= fwd.log_z_upper),
    }


class AIS(Evaluator):
    """Annealed importance sampling estimate of an RBM's log Z and log-likelihood (Neal 2001; the
    base-rate RBM start of Salakhutdinov & Murray 2008; reverse AIS of Burda et al. 2015), with
    mean(w) ± 3 standard errors as its interval; a DBM's as the RBM between its parities, its rows
    by the mean-field lower bound (Salakhutdinov & Hinton 2009, §4).

    Registered as ``ais``; options (``n_chains``, ``n_temperatures``, ``schedule``, ``reverse``, ...)
    in :class:`AISConfig`.
    """

    config_class = AISConfig
    units = {
        "visible": (*BERNOULLI, *CATEGORICAL),
        "hidden": BERNOULLI,
    }  # the base-rate path (Salakhutdinov & Murray 2008)
    requires = (ParityLayers,)  # an RBM, or a DBM as the RBM between its parities
    without_data = "log Z only, AIS from the uniform base model (no data for its base rates)"
    epoch_cost = ("curve_n_temperatures", "curve_n_chains")
    metrics = (
        MetricSpec(
            "log_likelihood",
            summary_name="mean_log_likelihood",
            **_nats,
            description="mean −F(x) − log Ẑ over the split (a DBM: the mean-field lower bound on "
            "log p̃(x) in place of −F(x))",
            label="log-likelihood",
        ),
        MetricSpec(
            "log_likelihood_lower",
            summary_name="mean_log_likelihood_lower",
            **_nats,
            label="log-likelihood, lower bound",
        ),
        MetricSpec(
            "log_likelihood_upper",
            summary_name="mean_log_likelihood_upper",
            **_nats,
            label="log-likelihood, upper bound",
        ),
        *(
            MetricSpec(f"{prefix}log_z{end}", per_split=False, **_nats, label=f"{method}log Z{bound}")
            for prefix, method in (("", ""), ("reverse_", "reverse-AIS "))
            for end, bound in (("", ""), ("_lower", ", lower bound"), ("_upper", ", upper bound"))
        ),
        MetricSpec(
            "mean_field_sweeps",
            "sweeps",
            True,
            per_split=False,
            description="written for a DBM only: its log-likelihoods bound log p̃(x) from below by "
            "this many mean-field sweeps (absent: −F(x), exact)",
            label="mean-field sweeps of the bound on log p̃(x)",
        ),
        *EXACT_CHECK_METRICS,
    )

    def settings_problem(self, settings, model_class) -> str | None:
        """A DBM is annealed as the RBM between its parities (DBM.as_rbm): one unit type and q on
        its even layers, one on its odd layers (``settings["hidden"]`` one type per layer)."""
        if not supports(model_class, MeanFieldPositive):
            return None
        from rbmlab.models.dbm import settings_parity_problem  # noqa: PLC0415

        problem = settings_parity_problem(settings)
        return problem and (
            f"ais anneals a DBM as the RBM between its even and odd layers, one unit type and q on "
            f"each ({problem})"
        )

    def check(self, model_class, sizes):
        if supports(model_class, FractionalUnits):  # Eq. 11's model: rbmlab.evaluators.ais_fractional
            if self.config.reverse:
                raise RbmlabError(
                    f"evaluator.reverse: reverse AIS is not written for model "
                    f"{model_class.family} (forward AIS is); set evaluator.reverse=false"
                )
        else:
            super().check(model_class, sizes)
        deep = supports(model_class, MeanFieldPositive)
        if not deep and self.config.mean_field_iterations != AISConfig.mean_field_iterations:
            raise RbmlabError(
                f"evaluator.mean_field_iterations: applies to a DBM's bound on log p̃(x); model "
                f"{model_class.family}'s is exact; remove it"
            )
        n_v, n_h = sizes.get("n_visible", 0), sizes.get("n_hidden", 0)
        if deep:  # the RBM between the parities (DBM.as_rbm): its even and its odd layers
            n = [sizes[k] for k in sizes if k.startswith("n_")]  # n_visible, n_hidden1 … (layers in order)
            n_v, n_h = sum(n[0::2]), sum(n[1::2])
        n_chains = self.config.n_chains
        need = chain_bytes(n_chains, n_v, n_h)
        if need > MAX_CHAIN_BYTES:
            raise RbmlabError(
                f"evaluator.n_chains: {n_chains} chains of a {n_v}x{n_h} model need "
                f"about {need / 2**30:.0f} GiB (limit {MAX_CHAIN_BYTES // 2**30} GiB); "
                "use fewer chains"
            )
        if self.config.exact_check:
            problem = (
                enumeration_problem(model_class, sizes)
                if supports(model_class, Enumerable)
                else f"model {model_class.family} has no exact log Z"
            )
            if problem:
                raise RbmlabError(
                    f"evaluator.exact_check: {problem} ({MAX_EXACT_UNITS.why}); "
                    "set evaluator.exact_check=false"
                )

    def evaluate(self, model, splits, context):
        require_units(model, "ais", self.units)
        cfg = self.config
        deep = supports(type(model), MeanFieldPositive)
        target = model.as_rbm() if deep else model  # a DBM: the RBM between its parities
        xp = model.xp
        base_bias = (
            xp.zeros(model.n_visible, dtype=model.dtype)
            if context.data_mean is None
            else xp.asarray(base_rate_bias(context.data_mean, units=model.visible_units))
        )  # no data: uniform
        if deep:  # layer 2 (and any even layer above) starts uniform
            base_bias = xp.concatenate(
                [base_bias, xp.zeros(target.n_visible - model.n_visible, base_bias.dtype)]
            )
        betas = schedule(cfg.schedule, cfg.n_temperatures, cfg.curve_n_temperatures, context.final)
        n_chains = cfg.curve_n_chains if cfg.curve_n_chains and not context.final else cfg.n_chains
        estimate = (
            fractional_ais_log_partition if supports(type(model), FractionalUnits) else ais_log_partition
        )
        fwd = estimate(
            target,
            context.rng,
            base_bias=base_bias,
            betas=betas,
            n_chains=n_chains,
            progress=context.progress,
        )
        metrics = {"log_z": fwd.log_z, "log_z_lower": fwd.log_z_lower, "log_z_upper": fwd.log_z_upper}
        if deep:  # the rows' log p̃(x) is a bound: the record says so, with its sweeps
            metrics["mean_field_sweeps"] = float(cfg.mean_field_iterations)
        if cfg.exact_check:
            metrics.update(exact_check_metrics(fwd, log_partition(model)))
        for name, batch in splits.items():
            if deep:
                mf = mean_of_rows(
                    lambda x: model.log_unnormalized_bound(x, cfg.mean_field_iterations), batch.inputs
                )
            else:
                mf = mean_log_unnormalized(model, batch.inputs)
            metrics[f"{name}_log_likelihood"] = mf - fwd.log_z
            metrics[f"{name}_log_likelihood_lower"] = mf - fwd.log_z_upper
            metrics[f"{name}_log_likelihood_upper"] = mf - fwd.log_z_lower
        if cfg.reverse and context.final:
            data = context.train if context.train is not None else next(iter(splits.values()))
            init = target_samples(
                target, context.rng, cfg.n_chains, data=model.chain_start(data.inputs, context.rng)
            )
            rev = reverse_ais_log_partition(
                target, context.rng, base_bias=base_bias, betas=betas, init_v=init, progress=context.progress
            )
            metrics.update(
                reverse_log_z=rev.log_z,
                reverse_log_z_lower=rev.log_z_lower,
                reverse_log_z_upper=rev.log_z_upper,
            )
        return metrics

    def curve_estimate(self):
        cfg = self.config
        final = (schedule(cfg.schedule, cfg.n_temperatures, 0, True).size - 1, cfg.n_chains)
        curve = (
            schedule(cfg.schedule, cfg.n_temperatures, cfg.curve_n_temperatures, False).size - 1,
            cfg.curve_n_chains or cfg.n_chains,
        )
        return None if curve == final else f"AIS, {curve[0]} temperatures, {curve[1]} chains"

    def headline(self, metrics, split):
        ll = metrics[f"{split}_log_likelihood"]
        lo, hi = metrics[f"{split}_log_likelihood_lower"], metrics[f"{split}_log_likelihood_upper"]
        cfg = self.config
        n_t = schedule(cfg.schedule, cfg.n_temperatures, 0, True).size - 1
        bound = ", mean-field lower bound on log p̃(x)" if "mean_field_sweeps" in metrics else ""
        return (
            f"{split} log-likelihood (AIS, {n_t} temperatures, {cfg.n_chains} chains{bound}): "
            f"{ll:.2f} nats, ±3σ interval [{lo:.2f}, {hi:.2f}]"
        )
