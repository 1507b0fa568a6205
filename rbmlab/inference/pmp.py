"""Perturb-and-max-product as a sampler (pmp Secs 2.2 and 3, Alg. 1): ``inference=pmp``.

Every call draws fresh samples: Logistic(0, 1) noise on the unary log-odds of the model's factor
graph, ``steps`` sweeps of parallel max-product from zero messages (damping ½), decoding. It is
non-persistent by design, so the states ``x`` it is given fix only how many samples to draw (and
the trial axis); learners that restart their chains every update (``learner=reset``) are PMP
learning by moment matching (pmp Alg. 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.inference.base import InferenceConfig, InferenceMethod
from rbmlab.inference.max_product import perturb_and_max_product
from rbmlab.models.base import FactorGraphForm
from rbmlab.validation import option


@dataclass
class PMPConfig(InferenceConfig):
    name: str = option("pmp", "inference method: perturb-and-max-product (fresh samples every call)")
    damping: float = option(
        0.5,
        "max-product damping α: m ← m + α (m_new − m); 1 = undamped",
        lo=0.0,
        hi=1.0,
        open_lo=True,
        label="max-product damping",
    )


class PMP(InferenceMethod):
    """``run(model, x, rng, steps)``: as many PMP samples as ``x`` has rows, ``steps`` sweeps each."""

    config_class = PMPConfig
    requires = (FactorGraphForm,)

    def run(self, model, x, rng, steps: int):
        xp = model.xp
        if model.n_trials:
            rows = x.shape[-2]
            return xp.stack(
                [
                    self.run(model.trial(t), x[t] if x.ndim == 3 else x, rng, steps)
                    for t in range(model.n_trials)
                ]
            ).reshape((model.n_trials, rows, x.shape[-1]))
        samples = self.perturbed_maps(model.factor_graph(), rng, x.shape[-2], steps)
        return model.from_binary(xp.asarray(samples)).astype(x.dtype, copy=False)

    def step_cost(self, model, rows: int, steps: int) -> float | None:
        """Max-product on the RBM's bipartite graph: every sweep sends a message each way along
        each of the n_v·n_h edges of each of the ``rows`` problems, max(0, w + c) − max(0, c), a
        multiply-add of the max-plus semiring: 2·rows·n_v·n_h per sweep, as a block-Gibbs sweep's
        two products. Then the perturbed objective at the decoded states: x·u, rows·(n_v + n_h),
        and the pairwise term vᵀWh by einsum, 2·rows·n_v·n_h (its three operands: two multiplies
        per term). None for other factor graphs."""
        if not hasattr(model, "n_hidden"):
            return None
        edges = rows * model.n_visible * model.n_hidden
        return float(2 * edges * steps + rows * (model.n_visible + model.n_hidden) + 2 * edges)

    def perturbed_maps(self, graph, rng, n: int, steps: int):
        """(n, graph.n) {0, 1}: the MAP states of ``n`` fresh perturbations of ``graph``, found by
        ``steps`` damped max-product sweeps (a subclass may solve them otherwise)."""
        return perturb_and_max_product(graph, rng, n, steps, damping=self.config.damping)[0]
