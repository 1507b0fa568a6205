"""Block Gibbs sampling in a bipartite model: h ~ p(h | v), then v ~ p(v | h)."""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.inference.base import InferenceConfig, InferenceMethod, chain_rows
from rbmlab.models.base import Bipartite
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
    """Sampler for bipartite models (RBMs): ``steps`` sweeps of :func:`gibbs_chain`."""

    config_class = BlockGibbsConfig
    requires = (Bipartite,)
    units = {"visible": DISCRETE, "hidden": DISCRETE}  # each layer drawn by its unit type
    takes_first_product = True
    packs = True

    def run(self, model, x, rng, steps: int, first_product=None):
        return gibbs_chain(model, x, rng, steps, first_product)

    def step_cost(self, model, rows: int, steps: int, first_product: bool = False) -> float:
        """Two products with W per sweep, vW and hWᵀ: rows·n_v·n_h·2·steps (one fewer when the
        caller formed the first, ``first_product``)."""
        products = 2 * steps - (1 if first_product and steps > 0 else 0)
        return float(rows * model.n_visible * model.n_hidden * products)
