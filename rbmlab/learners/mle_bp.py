"""MLE-BP (crbm_bp §4.1, Eq. 5): ascent on the conditional log-likelihood with the model's
expectations from sum-product loopy BP on each instance's x-conditioned RBM,

    ∇ = statistics(x, v, E[h | v, x]) − statistics(x, τ^v, τ^h, Γ),

which is the gradient of the Bethe approximation of log p(v | x) at BP's fixed point (derived
here, not in the paper). BP runs T = ``base_iterations`` + epoch iterations (the paper's 7 + epoch),
from fresh messages at every step, to ``tol``; non-converged instances count with their last beliefs
(our choice: Sec. 6 does not say whether they are skipped), and the share that converged is recorded
per epoch (Figure 4).
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.inference.matrix_bp import loopy_bp, pairwise_beliefs
from rbmlab.learners.conditional import ConditionalLearner, ScheduledInferenceConfig
from rbmlab.validation import option


@dataclass
class MLEBPConfig(ScheduledInferenceConfig):
    name: str = option("mle_bp", "learner", label="learner")
    damping: float = option(
        0.0, "L ← (1 − α) L_new + α L_old (the paper: none)", lo=0, hi=1, open_hi=True, label="damping"
    )


class MLEBP(ConditionalLearner):
    """MLE-BP (crbm_bp Sec. 4.1, Eq. 5): conditional log-likelihood ascent with the model's expectations
    from sum-product loopy BP on each instance's x-conditioned RBM, run for ``base_iterations`` +
    ``per_epoch`` × epoch iterations (the paper's 7 + epoch) to ``tol``;
    the share of instances that converged is recorded per epoch (Figure 4).

    Registered as ``mle_bp``; options in :class:`MLEBPConfig`.
    """

    config_class = MLEBPConfig
    packs = True  # no draws; its inference stops each run's instances where they stop alone

    def step(self, model, state, batch, rng):
        cfg = self.config
        b1, b2 = model.conditional_biases(batch.inputs)
        beliefs = loopy_bp(
            model.W, b1, b2, mode="sum", max_iter=self.iterations(state), tol=cfg.tol, damping=cfg.damping
        )
        gamma = pairwise_beliefs(model.W, beliefs)
        model, state = self.update(
            model, self.gradient(model, batch, b2, beliefs.tau_v, beliefs.tau_h, gamma), state
        )
        return model, self.advance(state, beliefs.converged)
