"""Bethe learning of a pairwise Ising model: moment matching whose negative phase is the beliefs of
loopy sum-product BP (rbmlab.inference.bethe), not samples. The step ascends

    statistics(data) − statistics(Bethe beliefs at the current parameters)

(the gradient of the Bethe approximation to the log-likelihood). A model is learnable this way
when some parameters give a BP fixed point — the one BP converges to — whose beliefs are the
data's marginals; pmp Sec. 5.1 cites the limit of that for its 4-spin model: "not learnable using
the Bethe approximation for θ > 0.316" [23]. Every update starts BP from fresh messages
N(0, ``init_std``²) (0: all zero, where a field-free model's BP never leaves its symmetric fixed
point, stable or not) and runs it to ``tol`` or ``max_iter`` iterations."""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.inference.bethe import bethe_beliefs, random_messages
from rbmlab.learners.base import Learner, LearnerConfig, difference
from rbmlab.limits import UPDATE_STEPS
from rbmlab.models.base import GradientStatistics, PairwiseCouplings
from rbmlab.units.requirements import BINARY
from rbmlab.validation import option


@dataclass
class BetheConfig(LearnerConfig):
    name: str = option("bethe", "learner", label="learner")
    max_iter: int = option(
        1000, "BP iterations per update at most", lo=1, hi=UPDATE_STEPS, label="BP iterations per update"
    )
    tol: float = option(
        1e-7,
        "BP stops once no message moves by more (about float32's resolution)",
        lo=0,
        label="BP tolerance",
    )
    damping: float = option(0.5, "u ← d·u_old + (1 − d)·u_new", lo=0, hi=1, open_hi=True, label="damping")
    init_std: float = option(
        0.1,
        "std of the random messages BP starts from every update (0: all zero)",
        lo=0,
        label="initial message std",
    )


class Bethe(Learner):
    """Bethe learning of a pairwise Ising model: moment matching whose negative phase is the beliefs of
    loopy sum-product BP from fresh messages, the gradient of the Bethe approximation to the
    log-likelihood (the learnability limit pmp Sec. 5.1 cites).

    Registered as ``bethe``; options (``max_iter``, ``tol``, ``damping``, ``init_std``) in
    :class:`BetheConfig`.
    """

    config_class = BetheConfig
    units = {"visible": BINARY}  # BP on two-state variables, either convention
    requires = (PairwiseCouplings, GradientStatistics)
    requires_hint = "pairwise couplings J and fields h: model=ising"
    samples = False  # its negative phase is BP's beliefs

    def step(self, model, state, batch, rng):
        c, xp = self.config, model.xp
        b = bethe_beliefs(
            model, random_messages(model, rng, c.init_std), max_iter=c.max_iter, tol=c.tol, damping=c.damping
        )
        grad = difference(model.statistics(batch.inputs), model.moment_statistics(b.pair, b.mean))
        model, state = self.update(model, grad, state)
        return model, {
            **state,
            "bethe_converged": xp.asarray(float(b.converged)),
            "bethe_iterations": xp.asarray(float(b.iterations)),
        }

    def diagnostics(self, state):
        return {k: float(state[k]) for k in ("bethe_converged", "bethe_iterations") if k in state}
