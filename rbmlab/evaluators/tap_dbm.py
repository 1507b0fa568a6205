"""The TAP log-likelihood of a deep Boltzmann machine (tap paper App. E, Fig. 11).

Free TAP solutions are iterated to convergence (each chain until its mean-square change is below
``tol``) from ``n_init`` training examples (a_0 = x, c_0 = 0, the hidden layers from a bottom-up
pass); −F of the unique ones (all layers' magnetisations within ``unique_tol`` in
root-mean-square), averaged or log-sum-exp'd (``combine``, as for an RBM), estimates ln Z. Unlike an
RBM's (evaluators/tap.py), the data term is a TAP
estimate too: each example's clamped solution (layer 0 held at x, iterated to ``tol`` as well)
gives −F_clamped(x) ≈ ln Σ_h P̃(x, h), and

    ln P(x) ≈ −F_clamped(x) − ln Z_TAP          (the authors' Julia score_samples_TAP for DBMs)

Fig. 11 plots it per unit: divided by the units of all layers, Σ_l n_l.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.backend import to_numpy
from rbmlab.evaluators.base import Evaluator
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.evaluators.tap import (
    LIKELIHOOD_SE,
    SOLUTION_METRICS,
    TapEstimate,
    TapEvalConfig,
    distinct,
    initialisations,
    likelihood_metrics,
    solution_metrics,
)
from rbmlab.inference import tap
from rbmlab.models.base import TapStack
from rbmlab.validation import option


@dataclass
class TapDBMEvalConfig(TapEvalConfig):
    name: str = option("tap_dbm", "evaluator")


def _options(config: TapDBMEvalConfig) -> dict:
    return {"damping": config.damping, "tol": config.tol, "max_iter": config.max_iter}


def estimate(model, x, config: TapDBMEvalConfig) -> TapEstimate:
    """Solve free TAP from the rows of ``x`` (chunks of ``config.chunk``), keep the distinct fixed
    points (rbmlab.evaluators.tap.distinct)."""
    layers, couplings = model.tap_stack()

    def chunks():
        for i in range(0, x.shape[0], config.chunk):
            s = tap.solve_layers(couplings, layers, x[i : i + config.chunk], **_options(config))
            yield (
                tap.magnetisations(s),
                to_numpy(tap.stack_free_energy(couplings, layers, s)),
                to_numpy(s.converged),
                s.iterations,
            )

    return distinct(chunks(), x.shape[0], config.unique_tol, config.combine, config.count)


def clamped_log_density(model, x, config: TapDBMEvalConfig) -> tuple[np.ndarray, float]:
    """(−F_clamped per row of ``x``, the fraction of rows whose clamped solution met tol)."""
    layers, couplings = model.tap_stack()
    parts, converged = [], 0
    for i in range(0, x.shape[0], config.chunk):
        s = tap.clamped_layers(couplings, layers, x[i : i + config.chunk], **_options(config))
        parts.append(-to_numpy(tap.stack_free_energy(couplings, layers, s)))
        converged += int(s.converged.sum())
    return np.concatenate(parts), converged / x.shape[0]


class TapDBMEvaluator(Evaluator):
    config_class = TapDBMEvalConfig
    requires = (TapStack,)
    without_data = "log Z only, TAP started from n_init uniform random binary states"
    metrics = (
        MetricSpec(
            "log_likelihood",
            "nats",
            True,
            summary_name="mean_log_likelihood",
            description="mean TAP log-likelihood estimate over the split, clamped "
            "minus free TAP free energies (tap App. E)",
            label="log-likelihood",
        ),
        MetricSpec(
            "log_likelihood_per_unit",
            "nats",
            True,
            description="the TAP log-likelihood divided by the units of all layers (tap Figs. 3, 11)",
            label="log-likelihood per unit",
        ),
        LIKELIHOOD_SE,
        MetricSpec(
            "clamped_converged",
            "fraction",
            True,
            description="examples whose clamped TAP solution met tol within max_iter",
            label="converged clamped TAP solutions",
        ),
        *SOLUTION_METRICS,
    )

    def evaluate(self, model, splits, context):
        est = estimate(model, initialisations(model, context, self.config), self.config)
        units = sum(model.model_sizes().values())
        metrics = solution_metrics(est)
        for name, batch in splits.items():
            log_density, converged = clamped_log_density(
                model, model.xp.asarray(batch.inputs, dtype=model.dtype), self.config
            )
            metrics.update(likelihood_metrics(name, log_density - est.log_z, units))
            metrics[f"{name}_clamped_converged"] = converged
        return metrics

    def headline(self, metrics, split):
        return (
            f"{split} log-likelihood (DBM TAP, {metrics['tap_solutions']:.0f} unique solutions): "
            f"{metrics[f'{split}_log_likelihood']:.4f} nats"
        )
