"""Iterated conditional modes on the binary-RBM view (the solver of docs/guide/extending/solver.md).

In rbmlab this file would be ``rbmlab/inference/solvers/icm.py``. ICM (Besag 1986) maximises the
joint score s(v, h) = vᵀWh + b¹ᵀv + b²ᵀh (the negative energy of crbm_bp Eq. 1, given the
evidence's biases) one block at a time. On a bipartite model the units of a layer are independent
given the other, so each block is maximised exactly:

    h ← 1[b² + Wᵀv > 0],   v ← 1[b¹ + W h > 0],

starting from the unary decode v = 1[b¹ > 0]. Neither half-step lowers s, so the iteration
reaches a fixed point (a local joint MAP: no single block can improve it) in finitely many sweeps;
an instance has converged once a sweep leaves its v unchanged. It decodes a state, no marginals
and no log Z; at zero coupling its state is the unary fields' exact MAP.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.backend import namespace
from rbmlab.inference.solvers.base import Beliefs, BinaryBipartiteSolver, SolverConfig, binary_bipartite
from rbmlab.limits import EVALUATION_STEPS
from rbmlab.validation import option


@dataclass
class ICMConfig(SolverConfig):
    name: str = option("icm", "solver")
    max_iter: int = option(50, "sweeps at most (each: h, then v)", lo=1, hi=EVALUATION_STEPS)


class ICM(BinaryBipartiteSolver):
    config_class = ICMConfig

    def solve(self, model, evidence=None, budget=None, *, init=None, rng=None) -> Beliefs:
        W, b_v, b_h = binary_bipartite(model, evidence)
        xp = namespace(W)
        v = (b_v > 0).astype(b_v.dtype)  # the unary decode
        converged, sweeps = xp.zeros(v.shape[0], dtype=bool), 0
        while sweeps < self.budget(budget) and not xp.all(converged):
            h = (b_h + v @ W > 0).astype(v.dtype)  # argmax over h given v
            after = (b_v + h @ W.T > 0).astype(v.dtype)  # argmax over v given h
            converged, v, sweeps = xp.all(after == v, axis=1), after, sweeps + 1
        return Beliefs(None, converged, sweeps, state=v)
