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
from rbmlab.inference.base import InferenceConfig
from rbmlab.inference.lp_map import lp_map
from rbmlab.inference.max_product import logistic_noise
from rbmlab.inference.pmp import PMP
from rbmlab.validation import option


@dataclass
class PmapLPConfig(InferenceConfig):
    name: str = option(
        "pmap_lp",
        "inference method: perturb-and-MAP by the LP relaxation (fresh samples every call; steps ignored)",
    )


class PmapLP(PMP):
    """``run(model, x, rng, steps)``: as many perturb-and-LP samples as ``x`` has rows (PMP's
    trial handling and decoding; only the MAP solver differs)."""

    config_class = PmapLPConfig

    def perturbed_maps(self, graph, rng, n: int, steps: int):
        noise = logistic_noise(rng, (n, graph.n), graph.unary.dtype)
        return lp_map(graph, to_numpy(graph.unary[None, :] + noise))[0]
