"""The max-margin learners of crbm_bp (§4.2): subgradient steps on a structured hinge loss with
the Hamming loss Δ(v, vⁿ) = Σ_i 1[v_i ≠ vⁿ_i], whose loss augmentation is b¹ + (1 − 2vⁿ)
(derived from Eq. 6's decomposable loss; the paper does not write it out). Each step is data
statistics minus the statistics at the loss-augmented prediction:

    mssvm   marginal SSVM (Eqs. 6, 7): v̂ the loss-augmented marginal MAP from mixed-product BP,
            h at E[h | v̂, x] (τ^h of mixed-product BP, exact given v̂); data h at E[h | vⁿ, x]
    lssvm   latent SSVM: (v̂, ĥ) the loss-augmented joint MAP from max-product BP; data h at
            argmax_h p(h | vⁿ, x) = 1[vⁿW + b² > 0]

BP runs T = base_iterations + epoch iterations, as for MLE-BP. Predict with the same BP without
the loss term (evaluator.inference=mixed | max).
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.backend.ops import sigmoid
from rbmlab.inference.matrix_bp import decode, loopy_bp
from rbmlab.learners.base import difference
from rbmlab.learners.conditional import ConditionalLearner, ScheduledInferenceConfig
from rbmlab.models.crbm import statistics
from rbmlab.validation import option


class MaxMargin(ConditionalLearner):
    """The shared step. A subclass names ``mode``, the BP of the loss-augmented prediction, and
    its hidden states: ``data_hidden`` from the data's pre-activations vⁿW + b², and
    ``predicted_hidden`` from the prediction's beliefs."""

    mode: str
    packs = True  # no draws; BP stops each run's instances where they stop alone

    def data_hidden(self, field):
        raise NotImplementedError

    def predicted_hidden(self, beliefs):
        raise NotImplementedError

    def step(self, model, state, batch, rng):
        x, v = batch.inputs, batch.targets
        b1, b2 = model.conditional_biases(x)
        beliefs = loopy_bp(
            model.W,
            b1 + (1.0 - 2.0 * v),
            b2,
            mode=self.mode,
            max_iter=self.iterations(state),
            tol=self.config.tol,
        )
        positive = statistics(x, v, self.data_hidden(v @ model.W + b2))
        negative = statistics(x, decode(beliefs), self.predicted_hidden(beliefs))
        model, state = self.update(model, difference(positive, negative), state)
        return model, self.advance(state, beliefs.converged)


@dataclass
class MSSVMConfig(ScheduledInferenceConfig):
    name: str = option("mssvm", "learner", label="learner")


class MSSVM(MaxMargin):
    """Marginal structured SVM, MSSVM (crbm_bp Sec. 4.2, Eqs. 6–7): subgradient steps on the Hamming-loss
    structured hinge, the loss-augmented prediction a marginal MAP from mixed-product BP.

    Registered as ``mssvm``; options in :class:`MSSVMConfig`. Predict with
    ``evaluator.inference=mixed``.
    """

    config_class = MSSVMConfig
    mode = "mixed"

    def data_hidden(self, field):
        """E[h | vⁿ, x] = σ(vⁿW + b²)."""
        return sigmoid(field)

    def predicted_hidden(self, beliefs):
        """E[h | v̂, x]: τ^h of mixed-product BP."""
        return beliefs.tau_h


@dataclass
class LSSVMConfig(ScheduledInferenceConfig):
    name: str = option("lssvm", "learner", label="learner")


class LSSVM(MaxMargin):
    """Latent structured SVM, LSSVM (crbm_bp Sec. 4.2): subgradient steps on the Hamming-loss structured
    hinge, the loss-augmented prediction a joint MAP (v, h) from max-product BP.

    Registered as ``lssvm``; options in :class:`LSSVMConfig`. Predict with ``evaluator.inference=max``.
    """

    config_class = LSSVMConfig
    mode = "max"

    def data_hidden(self, field):
        """argmax_h p(h | vⁿ, x) = 1[vⁿW + b² > 0]."""
        return (field > 0).astype(field.dtype)

    def predicted_hidden(self, beliefs):
        """ĥ of the joint MAP: 1[η^h > 0] from max-product BP."""
        return (beliefs.eta_h > 0).astype(beliefs.eta_h.dtype)
