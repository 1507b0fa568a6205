"""MPLP (sequential max-sum diffusion on the dual; rbmlab.inference.mplp) on a model whose factor
graph is one dense pairwise group (an Ising model): every problem until no message moves by more
than ``tol`` or ``max_iter`` sweeps, float64, on the host. The pair order of each sweep is drawn
from ``rng`` (shared by the problems solved together). Evidence as for max_product."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.backend import to_numpy
from rbmlab.errors import RbmlabError
from rbmlab.inference.mplp import mplp
from rbmlab.inference.solvers.base import Beliefs, Solver, SolverConfig
from rbmlab.limits import EVALUATION_STEPS
from rbmlab.models.base import FactorGraphForm, PairwiseCouplings
from rbmlab.models.factor_graph import DensePairwise
from rbmlab.validation import option


@dataclass
class MPLPConfig(SolverConfig):
    name: str = option("mplp", "solver")
    max_iter: int = option(50_000, "sweeps at most", lo=1, hi=EVALUATION_STEPS)
    tol: float = option(1e-6, "a problem stops when a sweep moves no message by more", lo=0.0, open_lo=True)


class MPLP(Solver):
    """MPLP, sequential max-sum diffusion on the dual, for a dense pairwise (Ising) model: each problem
    until no message moves by more than ``tol`` or ``max_iter`` sweeps.

    Registered as ``mplp``; options in :class:`MPLPConfig`.
    """

    config_class = MPLPConfig
    requires = (FactorGraphForm, PairwiseCouplings)  # a dense pairwise model (an Ising model)
    on_host = "MPLP is sequential, one pair at a time (pmp Sec. 5.2)"

    def solve(self, model, evidence=None, budget=None, *, init=None, rng=None) -> Beliefs:
        graph = model.factor_graph()
        groups = graph.groups
        if len(groups) != 1 or not isinstance(groups[0], DensePairwise):
            raise RbmlabError("solver=mplp: written for one dense pairwise factor group (an Ising model)")
        if rng is None:
            raise RbmlabError("solver=mplp: needs rng (each sweep's pair order is drawn)")
        W = to_numpy(groups[0].W).astype(np.float64)
        unary = to_numpy(graph.unary).astype(np.float64)[None, :]
        if evidence is not None:
            unary = unary + to_numpy(evidence)
        host = getattr(rng, "host_keys", rng)  # pair orders on the host (a device run's numpy stream)
        result = mplp(W, unary, host, tol=self.config.tol, max_sweeps=self.budget(budget))
        state = (result.beliefs > 0).astype(np.float64)
        return Beliefs(None, result.converged, int(result.sweeps.max()), state=state, raw=result)
