"""The TAP estimate of log Z and of the log-likelihood, one evaluator for every depth (tap paper
Eq. 39, Fig. 3; a DBM's: App. E, Fig. 11): ``tap`` (:class:`TapEvaluator`, an RBM or GRBM: the
two-layer stack) and ``tap_dbm`` (:class:`TapDBMEvaluator`, a DBM), which differ only in the data
term.

Free TAP solutions are iterated to convergence (Alg. 1, each chain until its mean-square change is
below ``tol``) from ``n_init`` training examples (a_0 = x, c_0 = 0, Eqs. 37–38; the layers above
from a bottom-up pass), in chunks of ``chunk`` (:func:`estimate`, the same over any stack); the
unique solutions' −F (all layers' magnetisations within ``unique_tol`` in root-mean-square),
averaged (``combine=uniform``, the paper's rule, Sec. V.2) or log-sum-exp'd (``combine=logsumexp``:
each solution a mode of its own), estimates log Z, and each example's log-likelihood is its
clamped term minus that. An RBM's clamped term is exact,

    ln P(x) ≈ Σ_i ln P̃_i^v(x_i) + Σ_j ln Z̃_j^h(U_j + (xW)_j, 0) − ln Z_TAP;

a DBM's is a TAP estimate too: each example's clamped solution (layer 0 held at x, iterated to
``tol`` as well; App. E.1) gives −F_clamped(x) ≈ ln Σ_h P̃(x, h), and

    ln P(x) ≈ −F_clamped(x) − ln Z_TAP          (the authors' Julia score_samples_TAP for DBMs).

Figs. 3 and 11 plot it per unit, divided by the units of all layers (an RBM's n_visible +
n_hidden), with its standard error over the examples. Only chains that converged count as
solutions (tap.fixed_points; ``count=all`` keeps every chain's end state, a check of that rule):
with few hidden units most chains of a trained model end in a period-2 cycle of the damped
iteration instead (binary MNIST, N_h = 25 after 30 epochs: 663 of 1,000), which is no stationary
point of the free energy. The paper's criterion is a mean-square change below 1e-8; applied per
chain, with each chain stopping there, it stops chains that still drift slowly along flat
directions and counts them as distinct solutions (binary MNIST, N_h = 50, epoch 8, 1,000 chains:
56 unique at 1e-8, 45 at 1e-9, 42 at 1e-10 and 1e-11), so the default is 1e-10. Both combinations
of the same solutions are reported (``log_z_uniform``, ``log_z_logsumexp``); ``combine`` picks the
one behind ``log_z`` and the log-likelihoods. Any model with TAP's form (TapForm: a plain RBM or a
GRBM) can be scored by ``tap``, any TapStack (a DBM) by ``tap_dbm``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.backend import to_numpy
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.base import Evaluator, EvaluatorConfig
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.inference import tap
from rbmlab.limits import CHAINS, EVALUATION_STEPS, EXAMPLES
from rbmlab.models.base import TapForm, TapStack
from rbmlab.units.requirements import PRIORS
from rbmlab.validation import option


@dataclass
class TapEvalConfig(EvaluatorConfig):
    name: str = option("tap", "evaluator")
    n_init: int = option(
        1000,
        "training examples the TAP solutions start from (0: all)",
        lo=0,
        hi=EXAMPLES,
        label="TAP initialisations",
    )
    damping: float = option(0.5, "new ← d·f + (1 − d)·old", lo=0, hi=1, open_lo=True)
    tol: float = option(
        1e-10,
        "convergence of each chain: mean-square change of its magnetisations (a chain stops once below)",
        lo=0,
        open_lo=True,
    )
    max_iter: int = option(1000, "iteration cap", lo=1, hi=EVALUATION_STEPS)
    unique_tol: float = option(
        1e-2, "solutions closer than this in root-mean-square difference are one", lo=0, open_lo=True
    )
    count: str = option(
        "converged",
        "which chains' end states are solutions: converged (those that met "
        "tol; every chain when none did) or all (a check that this rule hides none)",
        choices=tap.COUNT_RULES,
        neutral="converged",
    )
    chunk: int = option(2000, "initialisations solved at once (memory)", lo=1, hi=CHAINS)
    combine: str = option(
        "uniform",
        "how the unique solutions' -F make log Z: uniform (their mean, "
        "the paper's) or logsumexp (each a mode)",
        choices=tap.COMBINE_RULES,
    )


@dataclass
class TapDBMEvalConfig(TapEvalConfig):
    name: str = option("tap_dbm", "evaluator")


@dataclass(frozen=True)
class TapEstimate:
    """What one TAP evaluation finds: log Z, each unique solution's free energy and magnetisations
    (Figs. 5–7 read these), and how the iteration went."""

    log_z: float
    free_energies: np.ndarray  # F of each unique solution
    unique: np.ndarray  # (n_unique, n_v + n_h) magnetisations [a^v, a^h]
    # (n_init: the chains started; converged: the fraction that met tol)
    n_init: int
    iterations: int
    converged: float  # fraction of initialisations that met tol


def distinct(
    chunks, n_init: int, unique_tol: float, combine: str = "uniform", count: str = "converged"
) -> TapEstimate:
    """The estimate from solved chunks of initialisations, each (magnetisations (k, n), F (k,),
    converged (k,), iterations) on the host: the distinct fixed points of them all
    (tap.fixed_points: the chains ``count`` names) and their −F combined by ``combine``
    (tap.combine_log_z)."""
    a, f, done, iterations = zip(*chunks)
    a, f, done = np.concatenate(a), np.concatenate(f), np.concatenate(done)
    keep = tap.fixed_points(a, done, unique_tol, count)
    return TapEstimate(
        tap.combine_log_z(f[keep], combine), f[keep], a[keep], n_init, max(iterations), float(done.mean())
    )


def stack(model) -> tuple[list, list]:
    """(layers 0 … L, couplings W_1 … W_L) of a model's TAP stack: a DBM's (TapStack) or an RBM's
    two layers (TapForm: visible, hidden; [W])."""
    if isinstance(model, TapStack):
        return model.tap_stack()
    return list(model.tap_layers()), [model.W]


def _options(config: TapEvalConfig) -> dict:
    return {"damping": config.damping, "tol": config.tol, "max_iter": config.max_iter}


def solved_chunks(model, x, config: TapEvalConfig):
    """Free TAP solved from the rows of ``x`` in chunks of ``config.chunk``: per chunk, on the host,
    the magnetisations [a_0, …, a_L] (an RBM's [a^v, a^h]) (k, Σ n_l), F (k,), converged (k,) and
    the iterations run."""
    layers, couplings = stack(model)
    for i in range(0, x.shape[0], config.chunk):
        rows = model.xp.asarray(x[i : i + config.chunk], dtype=model.dtype)
        s = tap.solve_layers(couplings, layers, rows, **_options(config))
        yield (
            tap.magnetisations(s),
            to_numpy(tap.stack_free_energy(couplings, layers, s)),
            to_numpy(s.converged),
            s.iterations,
        )


def estimate(model, x, config: TapEvalConfig) -> TapEstimate:
    """Solve free TAP from the rows of ``x``, keep the distinct fixed points (:func:`distinct`)."""
    return distinct(
        solved_chunks(model, x, config), x.shape[0], config.unique_tol, config.combine, config.count
    )


def clamped_log_density(model, x, config: TapEvalConfig) -> tuple[np.ndarray, float]:
    """A DBM's data term (App. E.1): (−F_clamped per row of ``x``, the fraction of rows whose
    clamped solution met tol), in chunks of ``config.chunk``."""
    layers, couplings = model.tap_stack()
    parts, converged = [], 0
    for i in range(0, x.shape[0], config.chunk):
        s = tap.clamped_layers(couplings, layers, x[i : i + config.chunk], **_options(config))
        parts.append(-to_numpy(tap.stack_free_energy(couplings, layers, s)))
        converged += int(s.converged.sum())
    return np.concatenate(parts), converged / x.shape[0]


def initialisations(model, context, config: TapEvalConfig):
    """The training rows the TAP solutions start from (the first ``n_init``; 0: all), on the
    model's device and in its dtype; with no data (``rbmlab evaluate`` without a dataset),
    ``n_init`` uniform random binary states."""
    if context.train is None:
        if not config.n_init:
            raise RbmlabError(
                "evaluator.n_init: 0 starts TAP from every training example; with no "
                "dataset name a number of random starts"
            )
        return (context.rng.random((config.n_init, model.data_dimension)) < 0.5).astype(model.dtype)
    train = context.train.inputs
    return model.xp.asarray(train[: config.n_init] if config.n_init else train, dtype=model.dtype)


def solution_metrics(est: TapEstimate) -> dict[str, float]:
    """The model-level metrics of an estimate (SOLUTION_METRICS)."""
    return {
        "log_z": est.log_z,
        **{f"log_z_{rule}": tap.combine_log_z(est.free_energies, rule) for rule in tap.COMBINE_RULES},
        "tap_solutions": len(est.free_energies),
        "tap_solution_fraction": len(est.free_energies) / est.n_init,
        "tap_iterations": est.iterations,
        "tap_converged": est.converged,
    }


def likelihood_metrics(split: str, ll, units: int) -> dict[str, float]:
    """Mean, per-unit mean and standard error of per-example log-likelihoods ``ll`` (host)."""
    se = float(ll.std(ddof=1) / np.sqrt(len(ll))) if len(ll) > 1 else 0.0
    return {
        f"{split}_log_likelihood": float(ll.mean()),
        f"{split}_log_likelihood_per_unit": float(ll.mean()) / units,
        f"{split}_log_likelihood_se": se,
    }


COMBINE_WORDS = {"uniform": "mean", "logsumexp": "log-sum-exp"}  # tap.COMBINE_RULES in words
LIKELIHOOD_SE = MetricSpec(
    "log_likelihood_se",
    "nats",
    False,
    description="standard error of the per-example TAP log-likelihood",
    label="standard error of the log-likelihood",
)
SOLUTION_METRICS = (
    MetricSpec(
        "log_z",
        "nats",
        True,
        per_split=False,
        description="TAP log partition function (the unique solutions combined by `combine`)",
        label="log Z",
    ),
    *(
        MetricSpec(
            f"log_z_{rule}",
            "nats",
            True,
            per_split=False,
            description=f"TAP log partition function, the unique solutions combined by {rule}",
            label=f"log Z, {COMBINE_WORDS[rule]} over the solutions",
        )
        for rule in tap.COMBINE_RULES
    ),
    MetricSpec(
        "tap_solutions",
        "solutions",
        False,
        per_split=False,
        description="unique TAP solutions from the initialisations (tap Fig. 5)",
        label="unique TAP solutions",
    ),
    MetricSpec(
        "tap_solution_fraction",
        "fraction",
        False,
        per_split=False,
        description="unique TAP solutions / initialisations",
        label="unique TAP solutions per initialisation",
    ),
    MetricSpec(
        "tap_converged",
        "fraction",
        True,
        per_split=False,
        description="initialisations that met tol within max_iter",
        label="converged TAP initialisations",
    ),
    MetricSpec(
        "tap_iterations",
        "iterations",
        False,
        per_split=False,
        description="TAP iterations until every initialisation converged (or the cap)",
        label="TAP iterations",
    ),
)


class TapEvaluator(Evaluator):
    """TAP estimate of log Z and of the log-likelihood of an RBM or GRBM (tap paper Eq. 39, Fig. 3): the
    unique converged TAP solutions' −F, combined, minus from each example's exact clamped term.

    Registered as ``tap``; options (``n_init``, ``tol``, ``unique_tol``, ``combine``, ...) in
    :class:`TapEvalConfig`.
    """

    config_class = TapEvalConfig
    requires = (TapForm,)
    units = {"visible": PRIORS, "hidden": PRIORS}  # tap Eq. 9: priors with their cumulants (no Potts)
    without_data = "log Z only, TAP started from n_init uniform random binary states"
    metrics = (
        MetricSpec(
            "log_likelihood",
            "nats",
            True,
            summary_name="mean_log_likelihood",
            description="mean TAP log-likelihood estimate over the split (Eq. 39)",
            label="log-likelihood",
        ),
        MetricSpec(
            "log_likelihood_per_unit",
            "nats",
            True,
            description="the TAP log-likelihood divided by n_visible + n_hidden (tap Fig. 3)",
            label="log-likelihood per unit",
        ),
        LIKELIHOOD_SE,
        *SOLUTION_METRICS,
    )

    headline_name = "TAP"

    def data_term(self, model, x) -> tuple[np.ndarray, dict[str, float]]:
        """ln P̃(x) per row (host) and further metrics of the split: an RBM's exact clamped term."""
        return to_numpy(tap.clamped_log_density(model.W, *model.tap_layers(), x)), {}

    def evaluate(self, model, splits, context):
        est = estimate(model, initialisations(model, context, self.config), self.config)
        couplings = stack(model)[1]
        units = couplings[0].shape[-2] + sum(W.shape[-1] for W in couplings)  # Σ_l n_l
        metrics = solution_metrics(est)
        for name, batch in splits.items():
            log_density, more = self.data_term(model, batch.inputs)
            metrics.update(likelihood_metrics(name, log_density - est.log_z, units))
            metrics.update((f"{name}_{key}", value) for key, value in more.items())
        return metrics

    def headline(self, metrics, split):
        return (
            f"{split} log-likelihood ({self.headline_name}, {metrics['tap_solutions']:.0f} unique "
            f"solutions): {metrics[f'{split}_log_likelihood']:.4f} nats"
        )


class TapDBMEvaluator(TapEvaluator):
    """TAP estimate of log Z and of the log-likelihood of a deep Boltzmann machine (tap paper App. E,
    Fig. 11): as ``tap``, the data term from clamped TAP solutions.

    Registered as ``tap_dbm``; options in :class:`TapDBMEvalConfig`.
    """

    config_class = TapDBMEvalConfig
    requires = (TapStack,)
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
    headline_name = "DBM TAP"

    def data_term(self, model, x) -> tuple[np.ndarray, dict[str, float]]:
        """−F_clamped(x) per row, a TAP estimate of ln Σ_h P̃(x, h) (App. E.1), and the fraction
        of clamped solutions that converged."""
        log_density, converged = clamped_log_density(
            model, model.xp.asarray(x, dtype=model.dtype), self.config
        )
        return log_density, {"clamped_converged": converged}
