"""CD-k and CD-PercLoss for the conditional RBM (crbm_bp §2; Mnih et al. 2011), with x fixed:
block Gibbs on the x-conditioned RBM, h ~ p(h | v, x) then v ~ p(v | h, x), every instance at
once (Eq. 4, Sec. 4.1; the CD-PercLoss search details follow Mnih et al. 2011, not this paper):

    conditional_cd   k sweeps from the clean target vⁿ; model term at the chain's end v_k with
                     E[h | v_k, x] (CD-1, CD-10 in the paper)
    cd_percloss      the perceptron loss F(vⁿ, x) − min_v F(v, x): a chain of k sweeps (10 in the
                     paper) from v ~ σ(b¹) (the CRBM's logistic-regression part), keeping per
                     instance the visited v with the lowest free energy; model term at that v

Neither infers to a tolerance, so they record no convergence share. Predict with mean field
(evaluator.inference=mf), as the paper does.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.backend import namespace
from rbmlab.backend.ops import bernoulli, sigmoid
from rbmlab.learners.base import LearnerConfig
from rbmlab.learners.conditional import ConditionalLearner
from rbmlab.limits import UPDATE_STEPS
from rbmlab.models.crbm import free_energy, gibbs_sweep
from rbmlab.validation import option


@dataclass
class ConditionalCDConfig(LearnerConfig):
    name: str = option("conditional_cd", "learner", label="learner")
    k: int = option(
        1,
        "Gibbs sweeps from the clean target (the paper: 1 and 10)",
        lo=1,
        hi=UPDATE_STEPS,
        label="sampler steps per update (k)",
    )


class ConditionalCD(ConditionalLearner):
    """CD-k for the conditional RBM (crbm_bp Sec. 2, Eq. 4): ``k`` block-Gibbs sweeps of the
    x-conditioned RBM from the clean target, the model term at the chain's end (CD-1, CD-10 in the
    paper).

    Registered as ``conditional_cd``; options in :class:`ConditionalCDConfig`.
    """

    config_class = ConditionalCDConfig
    reports_convergence = False
    packs = True  # its draws: gibbs_sweep's, each with the run axis in front

    def step(self, model, state, batch, rng):
        x, v = batch.inputs, batch.targets
        b1, b2 = model.conditional_biases(x)
        for _ in range(self.config.k):
            v = gibbs_sweep(v, model.W, b1, b2, rng)
        gradient = self.gradient(model, batch, b2, v, sigmoid(v @ model.W + b2))
        model, state = self.update(model, gradient, state)
        return model, self.advance(state)


@dataclass
class CDPercLossConfig(LearnerConfig):
    name: str = option("cd_percloss", "learner", label="learner")
    k: int = option(
        10,
        "Gibbs sweeps of the search (the paper: 10)",
        lo=1,
        hi=UPDATE_STEPS,
        label="sampler steps per update (k)",
    )


def lowest_free_energy_search(W, b1, b2, rng, k: int):
    """Per instance, the state of lowest F(v | x) among the start v ~ σ(b¹) and the k sweeps of
    block Gibbs after it (ties: the later state). Packed runs: every array with a leading run
    axis, ``rng`` their RunStreams."""
    xp = namespace(W)
    v = bernoulli(sigmoid(b1), rng)  # the logistic-regression component
    best, best_f = v, free_energy(v, W, b1, b2)
    for _ in range(k):
        v = gibbs_sweep(v, W, b1, b2, rng)
        f = free_energy(v, W, b1, b2)
        lower = f <= best_f
        best, best_f = xp.where(lower[..., None], v, best), xp.where(lower, f, best_f)
    return best


class CDPercLoss(ConditionalLearner):
    """CD-PercLoss for the conditional RBM (crbm_bp Sec. 2; Mnih et al. 2011): the perceptron loss
    F(vⁿ, x) − min_v F(v, x), its minimiser the lowest-free-energy state a ``k``-sweep chain from
    v ~ σ(b¹) visits.

    Registered as ``cd_percloss``; options in :class:`CDPercLossConfig`.
    """

    config_class = CDPercLossConfig
    reports_convergence = False
    packs = True  # its draws: the start's and gibbs_sweep's, each with the run axis in front

    def step(self, model, state, batch, rng):
        x = batch.inputs
        b1, b2 = model.conditional_biases(x)
        best = lowest_free_energy_search(model.W, b1, b2, rng, self.config.k)
        gradient = self.gradient(model, batch, b2, best, sigmoid(best @ model.W + b2))
        model, state = self.update(model, gradient, state)
        return model, self.advance(state)
