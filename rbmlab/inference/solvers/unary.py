"""The unary fields alone: every unit at σ(its own bias), the couplings ignored (no iteration).
On the binary-RBM view the visible prediction 1[b¹ > 0] is the logistic-regression baseline of
crbm_bp's tables; it is exact where the coupling is zero."""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.backend import namespace
from rbmlab.backend.ops import sigmoid
from rbmlab.inference.solvers.base import Beliefs, BinaryBipartiteSolver, SolverConfig, binary_bipartite
from rbmlab.limits import EVALUATION_STEPS
from rbmlab.validation import option


@dataclass
class UnaryConfig(SolverConfig):
    name: str = option("unary", "solver")
    max_iter: int = option(1, "unused: the fields need no iteration", lo=1, hi=EVALUATION_STEPS)


class Unary(BinaryBipartiteSolver):
    """The unary fields alone, couplings ignored: every unit at σ(its own bias); on the binary-RBM view
    1[b¹ > 0] is the logistic-regression baseline of crbm_bp's tables.

    Registered as ``unary``; no iteration (:class:`UnaryConfig`).
    """

    config_class = UnaryConfig

    def solve(self, model, evidence=None, budget=None, *, init=None, rng=None) -> Beliefs:
        W, b_v, b_h = binary_bipartite(model, evidence)
        xp = namespace(W)
        n = max(b_v.shape[0], b_h.shape[0])
        b_h = xp.broadcast_to(b_h, (n, b_h.shape[1]))
        softplus = lambda b: xp.logaddexp(0.0, b).sum(axis=1)  # noqa: E731
        return Beliefs(
            (sigmoid(b_v), sigmoid(b_h)),
            xp.ones(n, dtype=bool),
            0,
            state=(b_v > 0).astype(b_v.dtype),
            log_z=softplus(b_v) + softplus(b_h),
        )
