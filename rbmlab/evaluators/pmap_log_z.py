"""``evaluator=pmap_log_z``: the perturb-and-MAP estimate of log Z and its error (pmp Sec 5.2).

For perturbations γ of the unary log-potentials (zero-mean Gumbel on both states of every
variable; for binary variables Logistic(0, 1) on the log-odds, their difference),

    log Z ≤ E_γ[ max_x ( log p̃(x) + Σ_i γ_i(x_i) ) ]                                       (1)

(Hazan & Jaakkola's bound, pmp Sec 2.2). The estimate is the mean over ``n_samples``
perturbations of the perturbed objective at the solver's decoded state, which is the bound's
term when the solver finds the exact MAP and below it otherwise; dropping Σ_i γ_i(0) (zero mean)
leaves its expectation unchanged. Solvers, on the same perturbations (one draw, so every solver of
a run with this seed sees the same problems):

    pmp    parallel max-product, ``sweeps`` flooding sweeps, damping α (rbmlab.inference.max_product)
    mplp   sequential EMPLP until no message moves by more than ``tol`` (rbmlab.inference.mplp)

The error is estimate − exact log Z, exact by enumeration (n ≤ 25) or, for a cyclic lattice, by
transfer matrices (rbmlab.models.ising.exact_log_z); both in the model's own convention (a ±1
model's {0, 1} factor graph carries the conversion's shift, added back). Metrics, not per split:
the estimate, the exact value, the mean error, its standard error (std/√n, what the paper's
notebook shades) and standard deviation (with at least two perturbations), and the share of problems
MPLP solved to ``tol`` (100 for
pmp, which has no stopping rule). Solver speed is a benchmark's business (``make bench``), not a
metric. A run with ``train.trials`` evaluates each trial as its own model, with its own draws.
Objectives are summed in float64 whatever the solver's precision.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rbmlab.backend import namespace, to_numpy
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.base import Evaluator, EvaluatorConfig
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.inference.max_product import logistic_noise
from rbmlab.inference.solvers import SOLVERS
from rbmlab.limits import CHAINS, ENUMERATION_UNITS, EVALUATION_STEPS, TRANSFER_MATRIX_SIDE
from rbmlab.models.base import FactorGraphForm, PairwiseCouplings
from rbmlab.models.ising import exact_log_z, to_spins
from rbmlab.validation import option

# the evaluator's solver names (and the options of its own they take) -> rbmlab.inference.solvers
SOLVER_OPTIONS = {
    "pmp": ("max_product", {"max_iter": "sweeps", "damping": "damping", "chunk": "chunk"}),
    "mplp": ("mplp", {"max_iter": "max_sweeps", "tol": "tol"}),
}


@dataclass
class PerturbMAPLogZConfig(EvaluatorConfig):
    reads_examples = False  # log Z and its error
    name: str = option("pmap_log_z", "evaluator")
    solver: str = option(
        "pmp",
        "MAP solver of each perturbed problem: pmp (parallel damped "
        "max-product, `sweeps` sweeps) | mplp (sequential, to `tol`)",
        choices=tuple(SOLVER_OPTIONS),
        label="MAP solver",
    )
    n_samples: int = option(100, "perturbations (each one MAP problem)", lo=1, hi=CHAINS)
    sweeps: int = option(
        200, "solver=pmp: max-product sweeps from zero messages", lo=1, hi=EVALUATION_STEPS, label="sweeps"
    )
    damping: float = option(
        0.5, "solver=pmp: damping α, m ← m + α (m_new − m); 1 = undamped", lo=0.0, hi=1.0, open_lo=True
    )
    tol: float = option(1e-6, "solver=mplp: stop when a sweep moves no message by more", lo=0.0, open_lo=True)
    max_sweeps: int = option(50_000, "solver=mplp: sweeps at most", lo=1, hi=EVALUATION_STEPS)
    chunk: int = option(
        100, "solver=pmp: problems solved at once (messages: chunk × n² floats)", lo=1, hi=CHAINS
    )

    def unread(self) -> dict[str, str]:
        other = "mplp" if self.solver == "pmp" else "pmp"
        keys = ("tol", "max_sweeps") if self.solver == "pmp" else ("sweeps", "damping", "chunk")
        return {**super().unread(), **dict.fromkeys(keys, f"applies to solver={other} only")}


class PerturbMAPLogZ(Evaluator):
    """Perturb-and-MAP estimate of log Z (pmp Sec. 5.2): the mean over perturbations of the Gumbel-
    perturbed MAP objective (the upper bound of Hazan & Jaakkola, pmp Sec. 2.2) at a solver's state,
    and its error.

    Registered as ``pmap_log_z``; options (``solver``, ``n_samples``, ``sweeps``, ``damping``, ...) in
    :class:`PerturbMAPLogZConfig`.
    """

    config_class = PerturbMAPLogZConfig
    requires = (FactorGraphForm, PairwiseCouplings)
    without_data = "perturb-and-MAP log Z and its error against the exact one"
    metrics = (
        MetricSpec(
            "pmap_log_z",
            "nats",
            False,
            per_split=False,
            description="perturb-and-MAP estimate of log Z, eq. (1): mean perturbed objective",
            label="perturb-and-MAP log Z",
        ),
        MetricSpec(
            "pmap_log_z_error",
            "nats",
            False,
            per_split=False,
            best_at=0.0,
            description="estimate − exact log Z (mean over the perturbations); signed: closest to 0 is best",
            label="log Z error",
        ),
        MetricSpec(
            "pmap_log_z_error_se",
            "nats",
            False,
            per_split=False,
            description="standard error of the mean error (std/√n)",
            label="standard error of the log Z error",
        ),
        MetricSpec(
            "pmap_log_z_error_std",
            "nats",
            False,
            per_split=False,
            description="standard deviation of the error over the perturbations",
            label="std of the log Z error over perturbations",
        ),
        MetricSpec(
            "exact_log_z",
            "nats",
            True,
            per_split=False,
            description="exact log Z (enumeration, or transfer matrices on a cyclic lattice)",
            label="exact log Z",
        ),
        MetricSpec(
            "pmap_solved",
            "%",
            True,
            per_split=False,
            description="problems the solver finished by its own rule (mplp: to tol; pmp: all)",
            label="problems solved",
        ),
    )

    def check(self, model_class, sizes):
        super().check(model_class, sizes)
        n = int(sizes["n"])
        if n > ENUMERATION_UNITS and math.isqrt(n) ** 2 != n:
            raise RbmlabError(
                f"evaluator=pmap_log_z: no exact log Z for a {n}-variable model "
                f"(enumeration needs n <= {ENUMERATION_UNITS}; a larger one must be a "
                "cyclic side x side lattice)"
            )
        if n > ENUMERATION_UNITS and math.isqrt(n) > TRANSFER_MATRIX_SIDE:
            raise RbmlabError(
                f"evaluator=pmap_log_z: the exact log Z of a {math.isqrt(n)} x "
                f"{math.isqrt(n)} lattice needs transfer matrices of side <= "
                f"{TRANSFER_MATRIX_SIDE} ({TRANSFER_MATRIX_SIDE.why})"
            )

    def solver(self):
        """The MAP solver (rbmlab.inference.solvers) named by ``solver``, with this config's options."""
        name, options = SOLVER_OPTIONS[self.config.solver]
        return SOLVERS.build(
            SOLVERS.parse({"name": name, **{key: getattr(self.config, own) for key, own in options.items()}})
        )

    def evaluate(self, model, splits, context):
        exact = exact_log_z(model)
        if exact is None:
            raise RbmlabError(
                f"evaluator=pmap_log_z: no exact log Z for this {model.n}-variable model "
                f"(enumeration needs n <= {ENUMERATION_UNITS}; larger ones must be cyclic "
                f"lattices of side <= {TRANSFER_MATRIX_SIDE})"
            )
        graph = model.factor_graph()
        _, shift = to_spins(model, "01")  # log Z of the {0, 1} graph = log Z + shift
        noise = to_numpy(logistic_noise(context.rng, (self.config.n_samples, graph.n), graph.unary.dtype))
        objective, solved = perturbed_objectives(model, self.solver(), noise, context.rng)
        error = objective - float(shift) - exact
        metrics = {
            "pmap_log_z": float(objective.mean()) - float(shift),
            "exact_log_z": exact,
            "pmap_log_z_error": float(error.mean()),
            "pmap_solved": 100.0 * solved,
        }
        n = error.shape[0]
        if n > 1:  # one perturbation (pmp's random Ising panel) has no spread
            std = float(error.std(ddof=1))
            metrics.update(pmap_log_z_error_std=std, pmap_log_z_error_se=std / math.sqrt(n))
        return metrics

    def headline(self, metrics, split):
        se = metrics.get("pmap_log_z_error_se")
        return (
            f"perturb-and-MAP log Z ({self.config.solver}): {metrics['pmap_log_z']:.4f} nats, exact "
            f"{metrics['exact_log_z']:.4f}, error {metrics['pmap_log_z_error']:+.4f}"
            + (f" ± {se:.4f} (s.e.)" if se is not None else "")
        )


def perturbed_objectives(model, solver, noise, rng=None) -> tuple[np.ndarray, float]:
    """((B,) perturbed objectives, float64, at the solver's decoded states; the share of problems
    that met its stopping rule): the problems of ``model``'s factor graph with unary log-odds +
    ``noise`` (B, n, host array; cast to the graph's dtype, which the objective then uses too)."""
    graph = model.factor_graph()
    host64 = lambda a: to_numpy(a).astype(np.float64)  # noqa: E731
    eps = namespace(graph.unary).asarray(noise, dtype=graph.unary.dtype)
    beliefs = solver.solve(model, eps, rng=rng)
    x = host64(beliefs.state)
    objective = (x * host64(eps)).sum(axis=1) + graph.map(host64).log_unnormalized(x)
    return objective, float(to_numpy(beliefs.converged).mean())
