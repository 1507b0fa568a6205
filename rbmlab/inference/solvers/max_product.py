"""Parallel damped max-product on a model's binary factor graph (pmp Sec. 3, rbmlab.inference.
max_product): ``max_iter`` flooding sweeps from zero messages, no stopping rule. The evidence is
extra unary log-odds per problem (B, n), e.g. perturb-and-MAP's logistic perturbations; the
state is 1[belief > 0] of the graph's {0, 1} variables, and ``raw`` the max-marginal beliefs
(B, n) themselves (the messages of each chunk are dropped once it is decoded)."""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.backend import namespace
from rbmlab.inference.max_product import decode, max_product
from rbmlab.inference.solvers.base import Beliefs, Solver, SolverConfig
from rbmlab.limits import CHAINS, EVALUATION_STEPS
from rbmlab.models.base import FactorGraphForm
from rbmlab.validation import option


@dataclass
class MaxProductConfig(SolverConfig):
    name: str = option("max_product", "solver")
    max_iter: int = option(200, "flooding sweeps (all of them: no stopping rule)", lo=1, hi=EVALUATION_STEPS)
    damping: float = option(0.5, "m ← m + d (m_new − m); 1 = undamped", lo=0.0, hi=1.0, open_lo=True)
    chunk: int = option(
        100, "problems solved at once (messages: chunk × n² floats for a dense model)", lo=1, hi=CHAINS
    )


class MaxProduct(Solver):
    """Parallel damped max-product on a model's binary factor graph (pmp Sec. 3): ``max_iter`` flooding
    sweeps from zero messages, no stopping rule; the evidence is extra unary log-odds per problem
    (e.g. perturb-and-MAP's perturbations).

    Registered as ``max_product``; options (``max_iter``, ``damping``, ``chunk``) in
    :class:`MaxProductConfig`.
    """

    config_class = MaxProductConfig
    requires = (FactorGraphForm,)

    def solve(self, model, evidence=None, budget=None, *, init=None, rng=None) -> Beliefs:
        c, graph = self.config, model.factor_graph()
        xp = namespace(graph.unary)
        unary = (
            graph.unary[None, :]
            if evidence is None
            else graph.unary[None, :] + xp.asarray(evidence, dtype=graph.unary.dtype)
        )
        sweeps = self.budget(budget)
        beliefs = xp.concatenate(
            [
                max_product(graph, unary[i : i + c.chunk], sweeps, damping=c.damping).beliefs
                for i in range(0, unary.shape[0], c.chunk)
            ]
        )  # each chunk's messages freed
        return Beliefs(None, xp.ones(unary.shape[0], dtype=bool), sweeps, state=decode(beliefs), raw=beliefs)
