"""Naive mean field on the binary-RBM view (rbmlab.inference.mean_field): marginals, their mode
1[τ^v > ½] and the mean-field lower bound on log Z."""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.inference.mean_field import mean_field, mean_field_log_z
from rbmlab.inference.solvers.base import Beliefs, BinaryBipartiteSolver, SolverConfig, binary_bipartite
from rbmlab.limits import EVALUATION_STEPS
from rbmlab.validation import option


@dataclass
class MeanFieldConfig(SolverConfig):
    name: str = option("mean_field", "solver")
    max_iter: int = option(
        50, "mean-field iterations at most (each: τ^h, then τ^v)", lo=1, hi=EVALUATION_STEPS
    )
    tol: float = option(1e-3, "an instance has converged once no τ^v moves by more", lo=0)


class MeanField(BinaryBipartiteSolver):
    """Naive mean field on the binary-RBM view: marginals, their mode 1[τ^v > ½] and the mean-field lower
    bound on log Z.

    Registered as ``mean_field``; options (``max_iter``, ``tol``) in :class:`MeanFieldConfig`.
    """

    config_class = MeanFieldConfig

    def solve(self, model, evidence=None, budget=None, *, init=None, rng=None) -> Beliefs:
        W, b_v, b_h = binary_bipartite(model, evidence)
        result = mean_field(W, b_v, b_h, max_iter=self.budget(budget), tol=self.config.tol)
        state = (result.tau_v > 0.5).astype(b_v.dtype)
        return Beliefs(
            (result.tau_v, result.tau_h),
            result.converged,
            result.iterations,
            state=state,
            log_z=mean_field_log_z(W, b_v, b_h, result),
            raw=result,
        )
