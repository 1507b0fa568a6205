"""The evaluation step: turn an evaluator config into metric values for a model and data splits.

Metric names are ``<split>_<metric>`` for per-example averages and bare names for model-level
quantities (``log_z``...). Every evaluation also records the (cheap) reconstruction error.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from rbmlab.backend import to_numpy
from rbmlab.config import EvaluatorConfig
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import ais, exact
from rbmlab.evaluators.pseudo_likelihood import pseudo_log_likelihood
from rbmlab.evaluators.reconstruction import reconstruction_error
from rbmlab.models.rbm import RBM, free_energy


def _mean(x) -> float:
    return float(np.mean(to_numpy(x), dtype=np.float64))


def mean_negative_free_energy(rbm: RBM, v, chunk: int = 4096) -> float:
    """Average of −F(v) over the rows of ``v`` (float64 accumulation), chunked."""
    total = 0.0
    for i in range(0, v.shape[0], chunk):
        total += -_mean(free_energy(rbm, v[i:i + chunk])) * min(chunk, v.shape[0] - i)
    return total / v.shape[0]


MAX_EXACT_UNITS = 25


def check_feasible(cfg: EvaluatorConfig, n_visible: int, n_hidden: int) -> None:
    """Reject, before any work, evaluations that cannot run on a model of this size."""
    if cfg.name == "exact" and min(n_visible, n_hidden) > MAX_EXACT_UNITS:
        raise RbmlabError(f"evaluator=exact: enumeration needs a layer of at most {MAX_EXACT_UNITS} "
                          f"units, this model is {n_visible}x{n_hidden}; use evaluator=ais")
    if cfg.name == "pl" and cfg.n_units > n_visible:
        raise RbmlabError(f"evaluator.n_units: {cfg.n_units} exceeds the {n_visible} visible units")


def ais_schedule(cfg: EvaluatorConfig, final: bool) -> np.ndarray:
    if not final and cfg.curve_n_temperatures:
        return ais.temperature_schedule("linear", cfg.curve_n_temperatures)
    if cfg.schedule == "linear":
        return ais.temperature_schedule("linear", cfg.n_temperatures)
    return ais.temperature_schedule("salakhutdinov")


def evaluate(rbm: RBM, splits: dict[str, Any], cfg: EvaluatorConfig, *, rng, base_bias,
             final: bool, progress: bool = False, train=None) -> dict[str, float]:
    """Metrics of ``rbm`` on ``splits`` (name → (N, n_visible) array) as a flat dict of floats.

    ``base_bias`` is the visible bias of the AIS base-rate model (logit of the training mean).
    ``final`` selects the full AIS schedule (and reverse AIS, if asked); intermediate points use
    the cheaper schedule. Reverse AIS on a model too large for exact samples starts its Gibbs
    chains from ``train`` (the first split when not given), so that a held-out split does not
    seed the log Z it is scored with.
    """
    if cfg.max_examples:
        splits = {k: v[:cfg.max_examples] for k, v in splits.items()}
    metrics: dict[str, float] = {}
    for name, v in splits.items():
        metrics[f"{name}_reconstruction_error"] = _mean(reconstruction_error(rbm, v))
    if cfg.name == "exact":
        log_z = exact.log_partition(rbm)
        metrics["log_z"] = log_z
        for name, v in splits.items():
            metrics[f"{name}_log_likelihood"] = mean_negative_free_energy(rbm, v) - log_z
    elif cfg.name == "ais":
        betas = ais_schedule(cfg, final)
        fwd = ais.ais_log_partition(rbm, rng, base_bias=base_bias, betas=betas,
                                    n_chains=cfg.n_chains, progress=progress)
        metrics.update(log_z=fwd.log_z, log_z_lower=fwd.log_z_lower, log_z_upper=fwd.log_z_upper)
        for name, v in splits.items():
            mf = mean_negative_free_energy(rbm, v)
            metrics[f"{name}_log_likelihood"] = mf - fwd.log_z
            metrics[f"{name}_log_likelihood_lower"] = mf - fwd.log_z_upper
            metrics[f"{name}_log_likelihood_upper"] = mf - fwd.log_z_lower
        if cfg.reverse and final:
            data = train if train is not None else next(iter(splits.values()))
            init = ais.target_samples(rbm, rng, cfg.n_chains, data=data)
            rev = ais.reverse_ais_log_partition(rbm, rng, base_bias=base_bias, betas=betas,
                                                init_v=init, progress=progress)
            metrics.update(reverse_log_z=rev.log_z, reverse_log_z_lower=rev.log_z_lower,
                           reverse_log_z_upper=rev.log_z_upper)
    elif cfg.name == "pl":
        for name, v in splits.items():
            pl = pseudo_log_likelihood(rbm, v, rng=rng, n_units=cfg.n_units or None)
            metrics[f"{name}_pseudo_log_likelihood"] = _mean(pl)
    return {k: float(v) for k, v in metrics.items()}
