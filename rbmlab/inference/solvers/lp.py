"""The local-polytope LP relaxation of MAP (rbmlab.inference.lp_map, HiGHS through scipy) on a
model's pairwise factor graph, one LP per problem: the state is the relaxed solution rounded
(½ → 0), which is ``raw`` (no marginals: an LP optimum is not one). Evidence as for max_product.
Exact where the relaxation is tight (trees, zero coupling)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.backend import to_numpy
from rbmlab.inference.lp_map import lp_map
from rbmlab.inference.solvers.base import Beliefs, Solver, SolverConfig
from rbmlab.limits import EVALUATION_STEPS
from rbmlab.models.base import FactorGraphForm
from rbmlab.validation import option


@dataclass
class LPConfig(SolverConfig):
    name: str = option("lp", "solver")
    max_iter: int = option(1, "unused: HiGHS solves each LP to optimality", lo=1, hi=EVALUATION_STEPS)


class LP(Solver):
    """The local-polytope LP relaxation of MAP (HiGHS through scipy), one LP per problem, its solution
    rounded; exact where the relaxation is tight.

    Registered as ``lp``; options in :class:`LPConfig`.
    """

    config_class = LPConfig
    requires = (FactorGraphForm,)
    on_host = "its LP relaxation is solved by HiGHS (scipy)"

    def solve(self, model, evidence=None, budget=None, *, init=None, rng=None) -> Beliefs:
        graph = model.factor_graph()
        unary = to_numpy(graph.unary)[None, :]
        if evidence is not None:
            unary = unary + to_numpy(evidence)
        state, relaxed = lp_map(graph, unary)
        return Beliefs(None, np.ones(state.shape[0], dtype=bool), 1, state=state, raw=relaxed)
