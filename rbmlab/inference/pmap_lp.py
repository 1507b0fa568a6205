"""Perturb-and-MAP with the LP baseline as the MAP solver, the paper's "PmapLP" (pmp App. B.3, D):
``inference=pmap_lp``.

Every call draws fresh samples: Logistic(0, 1) noise on the unary log-odds of the model's factor
graph (as PMP, rbmlab.inference.pmp), then each perturbed MAP problem solved by the local-polytope
LP (rbmlab.inference.lp_map, one HiGHS solve per sample) and rounded. It has no sweeps: ``steps``
is accepted for the sampler shape and ignored. The states ``x`` fix only how many samples to draw
(and the trial axis); ``learner=reset`` with it is the paper's PmapLP learning. One solve takes
minutes at the paper's 784 × 250 (pmp/speed), so it is for small models.
"""
from __future__ import annotations

from dataclasses import dataclass

from rbmlab.backend import to_numpy
from rbmlab.inference.base import InferenceConfig, InferenceMethod
from rbmlab.inference.lp_map import lp_map
from rbmlab.inference.max_product import logistic_noise
from rbmlab.models.base import FactorGraphForm
from rbmlab.validation import option


@dataclass
class PmapLPConfig(InferenceConfig):
    name: str = option("pmap_lp", "inference method: perturb-and-MAP by the LP relaxation (fresh "
                                  "samples every call; steps ignored)")


class PmapLP(InferenceMethod):
    """``run(model, x, rng, steps)``: as many perturb-and-LP samples as ``x`` has rows."""

    config_class = PmapLPConfig
    requires = (FactorGraphForm,)

    def run(self, model, x, rng, steps: int):
        xp = model.xp
        if model.n_trials:
            rows = x.shape[-2]
            return xp.stack([self.run(model.trial(t), x[t] if x.ndim == 3 else x, rng, steps)
                             for t in range(model.n_trials)]).reshape((model.n_trials, rows, x.shape[-1]))
        graph = model.factor_graph()
        noise = logistic_noise(rng, (x.shape[-2], graph.n), graph.unary.dtype)
        samples, _ = lp_map(graph, to_numpy(graph.unary[None, :] + noise))
        return model.from_binary(xp.asarray(samples)).astype(x.dtype, copy=False)
