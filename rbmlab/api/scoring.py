"""Per-example scores and samples of a model, through the evaluators and samplers of the CLI.

log p(x) = log p̃(x) − log Z: log Z is what the evaluator of that name computes in a run (its
``evaluate`` on no split gives the model-level metrics, ``log_z`` among them), and the per-example
term is the one its mean is taken of (exact and AIS: −F(x); TAP: the clamped TAP density, tap
Eq. 39). ``pl`` is the pseudo-log-likelihood Σ_i log p(x_i | x_−i) itself, no log Z (Besag 1975).

Rows of means (the estimators take X in [0, 1] as probabilities of 1, rbmlab.api.base): the free
energy F(x) is defined for real x, so exact and AIS give −F(x) − log Z at x, the log-density of the
model's energy at a point of the cube, not the probability of a binary vector; ``pl`` gives
Σ_i log σ(F(x^(i)) − F(x)) with x^(i) = x but x_i → 1 − x_i (the flip of
rbmlab.evaluators.pseudo_likelihood, which scikit-learn's BernoulliRBM.score_samples draws one i
of), at x_i = 1/2 log 1/2 whatever the model. Both are the usual scores on {0, 1} rows.
"""

from __future__ import annotations

import numpy as np

from rbmlab.backend import to_numpy
from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.applicable import applicable, cheapest_likelihood, check_applies
from rbmlab.evaluators.base import Context
from rbmlab.units.requirements import check_unit_types

SCORERS = ("exact", "ais", "tap", "pl")


def auto_evaluator(model) -> str:
    """The scorer of ``evaluator="auto"``: exact where it is cheap (the smaller layer enumerates:
    rbmlab.evaluators.applicable.cheapest_likelihood, the run's rule for own data), else the
    pseudo-log-likelihood where the family has one (an RBM); AIS only on request (seconds per
    call, stochastic)."""
    sizes = model.model_sizes()
    if cheapest_likelihood(type(model), sizes) == "exact":
        return "exact"
    return "pl" if "pl" in applicable(type(model), sizes) else "exact"  # none: check_scorer says so


def check_scorer(evaluator, model) -> None:
    """The evaluator against the model's family, sizes and unit types, before any work."""
    name, sizes = evaluator.config.name, model.model_sizes()
    if name not in SCORERS:
        raise RbmlabError(f"evaluator: score_samples takes {', '.join(SCORERS)} (or auto); got {name!r}")
    usable = [n for n in applicable(type(model), sizes) if n in SCORERS]
    if name not in usable:
        shape = ", ".join(f"{k}={v}" for k, v in sizes.items())
        raise RbmlabError(
            f"evaluator: {name} does not score this {model.family} model ({shape}); "
            f"score_samples can use {', '.join(usable) or 'none of ' + ', '.join(SCORERS)}"
        )
    check_applies(evaluator, type(model), sizes)  # its options
    check_unit_types(model.settings(), evaluator.units, f"evaluator={name}", lambda setting: "model_options")


def log_z(evaluator, model, context: Context) -> float:
    """log Z as the evaluator estimates it in a run (its model-level ``log_z``)."""
    return float(evaluator.evaluate(model, {}, context)["log_z"])


def score_samples(evaluator, model, x, context: Context) -> np.ndarray:
    """Per-row log p(x) (pl: pseudo-log-likelihood) of the rows ``x`` (backend array), float64."""
    name = evaluator.config.name
    if name == "pl":
        from rbmlab.evaluators.pseudo_likelihood import pseudo_log_likelihood  # noqa: PLC0415

        return to_numpy(
            pseudo_log_likelihood(model, x, rng=context.rng, n_units=evaluator.config.n_units or None)
        ).astype(np.float64)
    if name == "tap":
        from rbmlab.units.layer import clamped_log_density  # noqa: PLC0415

        term = clamped_log_density(model.W, *model.tap_layers(), x)
    else:
        term = model.log_unnormalized(x)
    return to_numpy(term).astype(np.float64) - log_z(evaluator, model, context)


def context_for(rng, x, data_mean, progress: bool) -> Context:
    """An evaluation's context for rows ``x``: AIS's base rate is the training mean ``data_mean``;
    TAP's solutions start from the rows scored."""
    return Context(rng=rng, final=True, progress=progress, train=Batch(x), data_mean=data_mean)


def draw(model, method: str, n: int, steps: int, rng, chunk: int = 1000):
    """``n`` samples of the visible units: ``exact`` by enumeration of an RBM's smaller layer, else
    ``steps`` transitions of the inference method ``method`` (``gibbs``: the family's default
    sampler, block Gibbs for an RBM) from uniform states (rbmlab.evaluators.sampling)."""
    from rbmlab.evaluators.sampling import draw as draw_chains  # noqa: PLC0415
    from rbmlab.evaluators.sampling import sampler_for  # noqa: PLC0415
    from rbmlab.inference import INFERENCE  # noqa: PLC0415

    if method == "exact":
        from rbmlab.models.rbm import sample_exact  # noqa: PLC0415

        if model.family != "rbm":
            raise RbmlabError(
                f"method: exact sampling is written for the rbm family, not {model.family}; "
                "use method='gibbs'"
            )
        try:
            return sample_exact(model, rng, n)
        except ValueError as e:
            raise RbmlabError(f"method: exact: {e}; use method='gibbs'") from None
    config = None if method == "gibbs" else INFERENCE.parse(method, "method")
    return draw_chains(
        model, sampler_for(config, type(model), f"sample(method={method!r})"), n, steps, chunk, rng
    )
