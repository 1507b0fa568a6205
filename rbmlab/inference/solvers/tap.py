"""TAP fixed points (tap paper Alg. 1, rbmlab.inference.tap), adaTAP's by VAMP (Alg. 3,
rbmlab.inference.adatap) and naive mean field's (Alg. 1 without the Onsager term: Plefka's
expansion to first order, the tap paper's Sec. IV) on a TapForm model: two layers of units with
priors coupled by W.

The evidence is the visible magnetisations a^v each solution starts from (K, n_v), e.g. the
mini-batch in TAP learning (Eqs. 37–38); ``init``, an earlier result, continues its solutions
instead (persistent chains). The beliefs are the magnetisations (a^v, a^h) of each solution; the
TAP solutions themselves (with their variances c) are ``raw``, which tap.gradient and
tap.free_energy read. No log Z per instance: TAP's log Z combines the distinct solutions
(tap.log_partition). ``runs=True`` (TAP learning of packed runs, rbmlab.run.packed): the model's
leading axis is runs', each solved as that run alone, not a trial axis iterated until every
trial's chains have converged."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

from rbmlab.errors import RbmlabError
from rbmlab.inference import adatap, tap
from rbmlab.inference.solvers.base import Beliefs, Solver, SolverConfig
from rbmlab.limits import EVALUATION_STEPS
from rbmlab.models.base import TapForm
from rbmlab.validation import option


@dataclass
class TapConfig(SolverConfig):
    name: str = option("tap", "solver")
    max_iter: int = option(1000, "iterations at most", lo=1, hi=EVALUATION_STEPS)
    tol: float = option(1e-8, "stop once every solution's mean-square change is below this", lo=0)
    damping: float = option(0.5, "new ← d·f + (1 − d)·old", lo=0, hi=1, open_lo=True)


class Tap(Solver):
    """TAP fixed points (tap paper Alg. 1) of a two-layer model with priors, each started at the
    evidence's visible magnetisations (e.g. a mini-batch, Eqs. 37–38) or continuing an earlier result.

    Registered as ``tap``; options (``max_iter``, ``tol``, ``damping``) in :class:`TapConfig`.
    """

    config_class = TapConfig
    requires = (TapForm,)
    method = staticmethod(tap.solve)
    cost = staticmethod(tap.solve_cost)  # MACs (n_v, n_h, rows, iterations, from_states)

    def solve(self, model, evidence=None, budget=None, *, init=None, rng=None, runs: bool = False) -> Beliefs:
        c = self.config
        if evidence is None and init is None:
            raise RbmlabError(
                f"solver={c.name}: needs the visible states to start from (evidence) or an "
                "earlier result (init)"
            )
        visible, hidden = model.tap_layers()
        s = self.method(
            model.W,
            visible,
            hidden,
            evidence,
            start=None if init is None else init.raw,
            damping=c.damping,
            tol=c.tol,
            max_iter=self.budget(budget),
            runs=runs,
        )
        return Beliefs((s.a_v, s.a_h), s.converged, s.iterations, raw=s)


@dataclass
class AdaTapConfig(TapConfig):
    name: str = option("adatap", "solver")
    max_iter: int = option(100, "VAMP iterations at most", lo=1, hi=EVALUATION_STEPS)


class AdaTap(Tap):
    """adaTAP fixed points found by VAMP (tap paper App. D, Alg. 3), in place of TAP's iteration.

    Registered as ``adatap``; options in :class:`AdaTapConfig`.
    """

    config_class = AdaTapConfig
    method = staticmethod(adatap.solve)
    cost = staticmethod(adatap.solve_cost)

    def check(self, model, key: str) -> None:
        if {model.visible, model.hidden} != {"bernoulli"}:
            raise RbmlabError(
                f"{key}: adatap is written for Bernoulli units on both layers; this model "
                f"has visible={model.visible}, hidden={model.hidden}"
            )


@dataclass
class NaiveMeanFieldConfig(TapConfig):
    name: str = option("nmf", "solver")


class NaiveMeanField(Tap):
    """``solver=nmf``: the TAP iteration at first order (A = 0), whose solutions carry order 1 so
    that tap.free_energy and tap.gradient use the first-order free energy (learner.inference=nmf:
    the deterministic learning the tap paper improves on)."""

    config_class = NaiveMeanFieldConfig
    method = staticmethod(partial(tap.solve, order=1))
    cost = staticmethod(partial(tap.solve_cost, order=1))
