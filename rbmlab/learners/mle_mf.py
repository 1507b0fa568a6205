"""MLE-MF (crbm_bp §4.1): ascent on the conditional log-likelihood with the model's expectations
from naive mean field on each instance's x-conditioned RBM, E[v hᵀ] ≈ τ^v τ^hᵀ. Mean field runs
the same T = ``base_iterations`` + epoch iterations as BP (Sec. 6's matched-inference guideline;
the paper gives no mean-field iteration count, so this is our choice) to ``tol``; the share of
instances that converged is recorded per epoch.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.inference.mean_field import mean_field
from rbmlab.learners.conditional import ConditionalLearner, ScheduledInferenceConfig
from rbmlab.validation import option


@dataclass
class MLEMFConfig(ScheduledInferenceConfig):
    name: str = option("mle_mf", "learner", label="learner")


class MLEMF(ConditionalLearner):
    """MLE-MF (crbm_bp Sec. 4.1): conditional log-likelihood ascent with the model's expectations from
    naive mean field on each instance's x-conditioned RBM, run for ``base_iterations`` +
    ``per_epoch`` × epoch iterations (as MLE-BP's BP) to ``tol``.

    Registered as ``mle_mf``; options in :class:`MLEMFConfig`.
    """

    config_class = MLEMFConfig
    packs = True  # no draws; its inference stops each run's instances where they stop alone

    def step(self, model, state, batch, rng):
        cfg = self.config
        b1, b2 = model.conditional_biases(batch.inputs)
        result = mean_field(model.W, b1, b2, max_iter=self.iterations(state), tol=cfg.tol)
        model, state = self.update(model, self.gradient(model, batch, b2, result.tau_v, result.tau_h), state)
        return model, self.advance(state, result.converged)
