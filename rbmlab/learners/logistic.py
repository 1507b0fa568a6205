"""The logistic-regression baseline of crbm_bp (§6, "LR"; learner=logistic): the conditional RBM
with only W_xv and b_v non-zero, i.e. |v| independent logistic regressions p(v_i = 1 | x) = σ(b¹_i) with
b¹ = b_v + x W_xv. Its conditional log-likelihood gradient is exact:

    ∇_{W_xv} = xᵀ (v − σ(b¹)) / B,    ∇_{b_v} = mean(v − σ(b¹)),

and every other parameter starts at zero and stays there. Predict with evaluator.inference=none
(1[b¹ > 0]).
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.backend.ops import sigmoid
from rbmlab.learners.base import LearnerConfig
from rbmlab.learners.conditional import ConditionalLearner
from rbmlab.validation import option


@dataclass
class LogisticConfig(LearnerConfig):
    name: str = option("logistic", "learner", label="learner")


class Logistic(ConditionalLearner):
    """The logistic-regression baseline of crbm_bp (Sec. 6, "LR"): the conditional RBM with only W_xv
    and b_v learned, by the exact conditional log-likelihood gradient (independent logistic
    regressions, one per output pixel).

    Registered as ``logistic``; no options of its own (:class:`LogisticConfig`). Predict with
    ``evaluator.inference=none``.
    """

    config_class = LogisticConfig
    reports_convergence = False
    packs = True  # no draws; every array with the run axis in front

    def initial_model(self, model, pretrained: bool, train=None, rng=None):
        """W, W_xh and b_h at zero: the CRBM reduced to the logistic regressions."""
        xp = model.xp
        return model.replace(
            W=xp.zeros_like(model.W), W_xh=xp.zeros_like(model.W_xh), b_h=xp.zeros_like(model.b_h)
        )

    def step(self, model, state, batch, rng):
        x, v = batch.inputs, batch.targets
        b1, _ = model.conditional_biases(x)
        residual = v - sigmoid(b1)
        xp = model.xp
        grad = {
            "W": xp.zeros_like(model.W),
            "W_xh": xp.zeros_like(model.W_xh),
            "b_h": xp.zeros_like(model.b_h),
            "W_xv": x.swapaxes(-1, -2) @ residual / x.shape[-2],
            "b_v": residual.mean(axis=-2),
        }
        model, state = self.update(model, grad, state)
        return model, self.advance(state)
