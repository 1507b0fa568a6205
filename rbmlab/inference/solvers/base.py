"""The calling shape every deterministic inference method shares: a solver.

A solver is a class with ``config_class`` (a dataclass with at least ``name`` and ``max_iter``),
``requires`` (the model capabilities it needs, rbmlab.models.base) and

    solve(model, evidence, budget=None, *, init=None, rng=None) -> Beliefs

``evidence`` is what each instance of the batch is given, in the view the solver's capability
defines: a conditional model's inputs x (each conditions the model to one binary RBM), extra
unary log-odds per instance for a model that is itself a binary pairwise MRF (perturbations, a
channel's field), or the visible states each TAP solution starts from. ``budget`` is the
iterations (sweeps) to run at most, ``config.max_iter`` when None (a learner's matched budget
T = base + epoch, say). ``init`` is an earlier result of the same solver to warm-start from
(messages, persistent TAP solutions). ``rng`` is for the few methods that draw an update order.
Samplers (rbmlab.inference.base) have their own shape, ``run(model, x, rng, steps)``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rbmlab.errors import RbmlabError
from rbmlab.limits import EVALUATION_STEPS
from rbmlab.models.base import Bipartite, Conditional, supports
from rbmlab.validation import Config, option


@dataclass(frozen=True)
class Beliefs:
    """What a solver returns for a batch of B instances. Fields a method does not give are None."""

    marginals: tuple | None  # per layer, visible first, (B, n_l): the expectation of each unit
    converged: Any  # (B,) bool: the instance met the solver's stopping rule
    iterations: Any  # iterations (sweeps) run, by the instance that ran longest; on a device a 0-d array
    state: Any = None  # (B, n_v) decoded visible states (a mode, MAP or marginal MAP)
    log_z: Any = None  # (B,) an estimate of each instance's log partition function
    raw: Any = None  # the method's own result (messages, TAP solutions): for init and gradients


@dataclass
class SolverConfig(Config):
    name: str = option("", "solver (rbmlab.inference.solvers.SOLVERS)")
    max_iter: int = option(
        50, "iterations (sweeps) at most when the caller gives no budget", lo=1, hi=EVALUATION_STEPS
    )


class Solver:
    """Base class: holds the config (the class's default config when none is given)."""

    config_class: type = SolverConfig
    requires: tuple[type, ...] = ()  # model capabilities (rbmlab.models.base) it needs
    on_host: str = ""  # why it runs on the host whatever the model's device ("": it runs there)

    def __init__(self, config=None):
        self.config = config if config is not None else self.config_class()

    @classmethod
    def supports(cls, model_class: type) -> bool:
        """Can it run on models of ``model_class``? Every capability of ``requires``, unless the
        solver says otherwise (the binary-RBM view takes either of two)."""
        return all(supports(model_class, capability) for capability in cls.requires)

    def budget(self, budget: int | None) -> int:
        return self.config.max_iter if budget is None else int(budget)

    def check(self, model, key: str) -> None:
        """Raise the one-line RbmlabError (under ``key``) if this model is outside what the
        solver is written for beyond its capabilities (unit types, say)."""

    def solve(self, model, evidence=None, budget: int | None = None, *, init=None, rng=None) -> Beliefs:
        raise NotImplementedError


def binary_bipartite(model, evidence):
    """(W, b¹ (B, |v|), b² (B or 1, |h|)): the batch of binary RBMs p_n(v, h) ∝ exp(vᵀWh + vᵀb¹_n
    + hᵀb²_n) that ``model`` is given ``evidence``. A Conditional model's evidence is its inputs
    x (crbm_bp Eq. 3's biases); a Bipartite model with {0, 1} units on both layers takes extra
    visible log-odds per instance (B, |v|), or None for the model alone (one instance)."""
    if isinstance(model, Conditional):
        if evidence is None:
            raise RbmlabError("solver: a conditional model needs its inputs x as the evidence")
        return (model.W, *model.conditional_biases(evidence))
    check_binary_bipartite(model, "solver")
    b_v, b_h = model.b_v[None, :], model.b_h[None, :]
    if evidence is not None:
        b_v = b_v + evidence
    return model.W, b_v, b_h


def check_binary_bipartite(model, key: str) -> None:
    """The binary-RBM view needs {0, 1} units on both layers and no trial axis."""
    units = (getattr(model, "visible", "bernoulli"), getattr(model, "hidden", "bernoulli"))
    if units != ("bernoulli", "bernoulli"):
        raise RbmlabError(
            f"{key}: written for {{0, 1}} units on both layers; this model has "
            f"visible={units[0]}, hidden={units[1]}"
        )
    if getattr(model, "n_trials", 0):
        raise RbmlabError(f"{key}: one model at a time (this one has {model.n_trials} trials)")


class BinaryBipartiteSolver(Solver):
    """Base of the solvers on the binary-RBM view (:func:`binary_bipartite`): a Conditional model
    or a Bipartite one with {0, 1} units."""

    requires = (Conditional,)  # or Bipartite: see supports

    @classmethod
    def supports(cls, model_class: type) -> bool:
        return supports(model_class, Conditional) or supports(model_class, Bipartite)

    def check(self, model, key: str) -> None:
        check_binary_bipartite(model, key)
