"""What the conditional RBM's learners share (crbm_bp §4): the data term of the conditional
log-likelihood's gradient, an epoch counter for schedules that grow with the epoch (BP's
T = 7 + epoch), and the per-epoch share of instances on which inference converged (Figure 4).

Each learner differs only in the model term: beliefs of p(v, h | x) from an inference method
(rbmlab.models.crbm.statistics turns beliefs into statistics). Samplers do not apply; the
batch's ``inputs`` are the corrupted x and its ``targets`` the clean v.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rbmlab.backend import namespace
from rbmlab.backend.ops import sigmoid
from rbmlab.errors import RbmlabError
from rbmlab.learners.base import Learner, LearnerConfig
from rbmlab.limits import UPDATE_STEPS, exceeds
from rbmlab.models.base import Conditional
from rbmlab.models.crbm import statistics_difference
from rbmlab.units.requirements import BERNOULLI
from rbmlab.validation import option


@dataclass
class ScheduledInferenceConfig(LearnerConfig):
    """A learner whose model term comes from BP or mean field run to a tolerance on a budget of
    T = base_iterations + per_epoch × epoch iterations (crbm_bp Sec. 6's T = 7 + epoch; using it for
    mean field and every BP learner is our reading; per_epoch = 0 holds T fixed, a control)."""

    base_iterations: int = option(
        7,
        "inference runs base_iterations + per_epoch × epoch iterations (the paper: 7)",
        lo=0,
        hi=UPDATE_STEPS,
        label="base inference iterations",
    )
    per_epoch: int = option(
        1,
        "inference iterations added each epoch (the paper: 1; 0 holds T at base_iterations)",
        lo=0,
        hi=UPDATE_STEPS,
        neutral=1,
        label="inference iterations added per epoch",
    )
    tol: float = option(
        1e-3,
        "converged: no message probability (BP) or mean (mean field) moved by more",
        lo=0,
        label="inference tolerance",
    )


class ConditionalLearner(Learner):
    units = {"visible": BERNOULLI, "hidden": BERNOULLI}  # crbm_bp §3.2: binary x, v and h
    requires = (Conditional,)
    trains_trials = False
    reports_convergence = True  # its inference runs to a tolerance (BP, mean field)
    samples = False  # its inference is its own (BP, mean field, Gibbs on y | x)
    requires_hint = "learner={name} trains a conditional model: model=crbm"

    def init_state(self, model, train, rng):
        if train.targets is None or train.targets.ndim != 2 or train.targets.shape[0] != len(train):
            raise RbmlabError(
                f"learner={self.config.name}: the training set has no clean targets "
                "beside its inputs; use task=flip or task=occlude"
            )
        n, b = len(train), self.config.batch_size
        xp = model.xp
        return {  # host counters (Backend.learner_state keeps them so): no step reads the device
            "steps": 0,
            "batches_per_epoch": 1 if b == "full" else math.ceil(n / b),
            "epoch_instances": xp.zeros(()),
            "epoch_converged": xp.zeros(()),
        }

    @staticmethod
    def epoch(state) -> int:
        """The 1-indexed epoch of the next step (our reading of Sec. 6's T = 7 + epoch: T = 17 at
        epoch 10), from the host counters."""
        return int(state["steps"]) // int(state["batches_per_epoch"]) + 1

    def iterations(self, state) -> int:
        """T = base_iterations + per_epoch × epoch (a ScheduledInferenceConfig learner)."""
        return self.config.base_iterations + self.config.per_epoch * self.epoch(state)

    def check_schedule(self, epochs: int) -> None:
        cfg = self.config
        if isinstance(cfg, ScheduledInferenceConfig):
            last = cfg.base_iterations + cfg.per_epoch * epochs  # T at the last epoch
            what = (
                "base_iterations + train.epochs (T of the last epoch)"
                if cfg.per_epoch == 1
                else "base_iterations + per_epoch × train.epochs (T of the last epoch)"
            )
            if problem := exceeds(UPDATE_STEPS, last, what):
                raise RbmlabError(f"learner.base_iterations: {problem}")
            if cfg.base_iterations + cfg.per_epoch < 1:
                raise RbmlabError(
                    "learner.base_iterations: 0 with learner.per_epoch=0 leaves inference no "
                    "iterations; must be >= 1 when T is held fixed"
                )

    def inference_iterations(self, state) -> int | None:
        """The T of the last epoch trained (base_iterations before the first): the paper's
        matched inference at test time (crbm_bp Sec. 6, observation 3). None for a learner without a
        schedule."""
        if not isinstance(self.config, ScheduledInferenceConfig):
            return None
        return max(1, self.config.base_iterations + self.config.per_epoch * (self.epoch(state) - 1))

    @staticmethod
    def gradient(model, batch, b2, v, h, vh=None):
        """Eq. 5's ascent direction: the statistics at the data (the clean v with
        E[h | v, x] = σ(vW + b²), ``b2`` the batch's x-conditioned hidden biases as the step formed
        them) less those at the model's beliefs (``v``, ``h``, ``vh``: rbmlab.models.crbm.statistics)."""
        clean = batch.targets
        data = (clean, sigmoid(clean @ model.W + b2), None)
        return statistics_difference(batch.inputs, data, (v, h, vh))

    def advance(self, state, converged=None):
        """The state after a step whose inference converged on ``converged`` (bool per instance,
        on the device; None: a learner without a tolerance): the step counted on the host, this
        epoch's tallies on the device (they restart with each epoch). Packed runs: ``converged``
        (R, B) and the tallies (R,), each run's count of its own instances."""
        steps = int(state["steps"])
        tallies = [state["epoch_instances"], state["epoch_converged"]]
        if steps % int(state["batches_per_epoch"]) == 0:  # the first step of an epoch
            tallies = [namespace(t).zeros_like(t) for t in tallies]
        if converged is not None:
            tallies = [tallies[0] + converged.shape[-1], tallies[1] + converged.sum(axis=-1)]
        return {**state, "steps": steps + 1, "epoch_instances": tallies[0], "epoch_converged": tallies[1]}

    def diagnostics(self, state):
        """The share (%) of the last epoch's instances on which inference converged (NaN before
        the first step); nothing for a learner whose inference has no tolerance."""
        if not self.reports_convergence:
            return {}
        n = float(state["epoch_instances"])
        return {"inference_converged": 100.0 * float(state["epoch_converged"]) / n if n else math.nan}
