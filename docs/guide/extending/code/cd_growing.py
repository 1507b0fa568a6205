"""CD-k with a growing k (the learner of docs/guide/extending/learner.md).

In rbmlab this file would be ``rbmlab/learners/cd_growing.py``. The gradient is CD-k's (Hinton
2002; dcp Alg. 1 in mini-batch form): the data statistics minus those of the samples k Gibbs
sweeps from the data (dcp Eq. 6). Only k changes: the t-th update (t = 0, 1, ...) runs

    k_t = min(k_max, k + floor(t / every))

sweeps. CD's bias shrinks as k grows (Carreira-Perpinan & Hinton 2005), so a run can start with
cheap updates and take longer chains once the model has moved away from its start; the schedule
is this example's choice, not a paper's.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.learners.base import Learner, MeanFieldConfig, total
from rbmlab.limits import UPDATE_STEPS
from rbmlab.units.requirements import DISCRETE
from rbmlab.validation import invalid, option


@dataclass
class GrowingCDConfig(MeanFieldConfig):
    name: str = option("cd_growing", "learner", label="learner")
    k: int = option(
        1, "sampler steps from the data at the first update", lo=1, hi=UPDATE_STEPS, label="first k"
    )
    k_max: int = option(5, "sampler steps per update at most", lo=1, hi=UPDATE_STEPS, label="largest k")
    every: int = option(100, "updates between two increments of k", lo=1, label="updates per step of k")

    def check(self) -> None:
        if self.k_max < self.k:
            raise invalid("k_max", f"must be >= k ({self.k}), got {self.k_max}")


class GrowingCD(Learner):
    config_class = GrowingCDConfig
    units = {"visible": DISCRETE, "hidden": DISCRETE}  # dcp Eq. 6: statistics of any discrete layer
    mean_field_positive = True  # a DBM's data statistics by mean field (MeanFieldConfig), as cd's

    def k_at(self, update: int) -> int:
        """Sampler steps of update number ``update`` (from 0): the schedule above."""
        config = self.config
        return min(config.k_max, config.k + max(update, 0) // config.every)

    def init_state(self, model, train, rng):
        return {"updates": 0}  # a Python int, on the host: choosing k reads nothing from the device

    def step(self, model, state, batch, rng):
        update = int(state["updates"])  # an int, or the 0-d array a resumed checkpoint holds
        grad, _ = self.contrastive_gradient(model, batch.inputs, batch.inputs, rng, self.k_at(update))
        return self.update(model, grad, {**state, "updates": update + 1})

    def diagnostics(self, state):
        """The k of the next update, in every metrics row."""
        return {"k": float(self.k_at(int(state.get("updates", 0))))}

    def step_cost(self, model, rows, state):
        """CD-k's multiply-adds at the k of the update just made (the state is the one after it)."""
        k = self.k_at(int(state["updates"]) - 1)
        return total(self.contrastive_cost(model, rows, None, k), self.update_cost(model))
