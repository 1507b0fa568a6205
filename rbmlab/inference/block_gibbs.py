"""Block Gibbs sampling by parity: in a bipartite model h ~ p(h | v), then v ~ p(v | h); in a deep
Boltzmann machine the odd layers given the even ones, then the even given the odd
(rbmlab.models.layer_stack: a chain's state is the even layers side by side)."""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.inference.base import InferenceConfig, InferenceMethod, chain_rows
from rbmlab.models import layer_stack
from rbmlab.models.base import Bipartite, ParityLayers, supports
from rbmlab.units.requirements import DISCRETE
from rbmlab.validation import option


def gibbs_chain(model, v, rng, k: int, first_product=None):
    """Run ``k`` block-Gibbs sweeps v → h → v from the batch ``v``; returns the last v.

    Each sweep is two matmuls on the whole batch and two in-place draws from the logits (by the
    layers' unit types), written into two fresh buffers (the input ``v`` is never modified).
    ``first_product``: vW (no bias) when the caller has already formed it, e.g. in one product
    with its positive phase; it is consumed (overwritten) by the first draw.
    """
    if k < 1:
        return v
    xp = model.xp
    Wt = model.W.swapaxes(-1, -2)
    batch_shape = chain_rows(model, v)  # a batch shared by all trials gets its own chain per trial
    h = xp.empty(batch_shape + (model.n_hidden,), dtype=v.dtype)
    v_out = xp.empty(batch_shape + (model.n_visible,), dtype=v.dtype)
    b_h, b_v = model.b_h[..., None, :], model.b_v[..., None, :]
    sample_h, sample_v = model.hidden_units.sample_, model.visible_units.sample_
    for sweep in range(k):
        if sweep == 0 and first_product is not None:
            h[...] = first_product
        else:
            xp.matmul(v, model.W, out=h)
        sample_h(h, rng, bias=b_h)
        xp.matmul(h, Wt, out=v_out)  # v is no longer needed once h is drawn
        v = sample_v(v_out, rng, bias=b_v)
    return v


@dataclass
class BlockGibbsConfig(InferenceConfig):
    name: str = option("block_gibbs", "inference method")


class BlockGibbs(InferenceMethod):
    """Sampler for layered models: ``steps`` sweeps of :func:`gibbs_chain` (two layers, W, b_v,
    b_h: an RBM) or of rbmlab.models.layer_stack.sweep (a DBM: odd layers, then even)."""

    config_class = BlockGibbsConfig
    requires = (ParityLayers,)
    units = {"visible": DISCRETE, "hidden": DISCRETE}  # each layer drawn by its unit type
    takes_first_product = True  # a bipartite model's (the learners' fused positive phase)
    packs = True

    def run(self, model, x, rng, steps: int, first_product=None):
        if supports(type(model), Bipartite):
            return gibbs_chain(model, x, rng, steps, first_product)
        if first_product is not None:
            raise ValueError("first_product: a deep model's chains have no single first product")
        return layer_stack.sweep(model.layer_stack(), x, rng, steps)

    def step_cost(self, model, rows: int, steps: int, first_product: bool = False) -> float:
        """Each coupling's product twice per sweep, once towards each of its layers: an RBM's vW
        and hWᵀ, rows·n_v·n_h·2·steps (one fewer when the caller formed the first,
        ``first_product``); a DBM's rows·Σ_l n_{l−1}·n_l·2·steps."""
        if not supports(type(model), Bipartite):
            sizes = model.layer_stack().sizes
            return float(rows * sum(a * b for a, b in zip(sizes, sizes[1:])) * 2 * steps)
        products = 2 * steps - (1 if first_product and steps > 0 else 0)
        return float(rows * model.n_visible * model.n_hidden * products)
