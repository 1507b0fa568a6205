"""Greedy layer-wise pretraining of a deep Boltzmann machine, before joint training (tap App. E.2,
Alg. 4, after Salakhutdinov & Hinton 2009): RBM 1 = (layer 0, W_1, layer 1) is trained on the
data, then RBM l on H^(l−1), the conditional means of layer l − 1 given the data through the
trained layers below (H^(0) = X, H^(l) = E[h_l | H^(l−1)], the layer above absent). RBM l ≥ 2
learns W_l and b_l only: its visible fields are b_{l−1} as RBM l − 1 left them. No weights are
doubled or halved (Alg. 4 does not; Salakhutdinov & Hinton do).

One loop for every learner that pretrains (tap_dbm by TAP, cd and pcd by CD-k): each epoch of
RBM l visits the rows in an order fixed per (layer, epoch) by ``stream``, in mini-batches.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rbmlab.backend import host_rng

# ascend(model, optimizer state, rows of H^(l−1), l) -> (model, optimizer state)
Ascend = Callable[[Any, dict, Any, int], tuple[Any, dict]]
# means(model, H^(l−1), l) -> H^(l)
Means = Callable[[Any, Any, int], Any]


def pretrain(
    model, inputs, *, depth: int, epochs: int, batch_size, stream: int, ascend: Ascend, means: Means
):
    """``model`` after ``epochs`` epochs of ``ascend`` on each RBM l = 1 … ``depth`` in turn, RBM l
    on the rows H^(l−1) (``inputs`` for l = 1, then ``means`` of the rows below); a fresh optimizer
    state per RBM."""
    h = inputs
    n = h.shape[-2]
    size = n if batch_size == "full" else batch_size
    for l in range(1, depth + 1):
        state: dict = {}
        for epoch in range(epochs):
            order = model.xp.asarray(host_rng(stream, l, epoch).permutation(n))
            for start in range(0, n, size):
                model, state = ascend(model, state, h[..., order[start : start + size], :], l)
        h = means(model, h, l)
    return model


def contrastive_ascend(optimizer, lr: float, steps: int, rng) -> Ascend:
    """The ``ascend`` of CD-``steps`` (cd and pcd's pretraining): one step on RBM l =
    (layer l − 1, W_l, layer l) of the stack, statistics(rows) − statistics(after ``steps``
    block-Gibbs sweeps from them), on W_l and b_l (and b_0 for l = 1), draws from ``rng``."""
    from rbmlab.inference.block_gibbs import gibbs_chain  # noqa: PLC0415 - a learner of other families loads no RBM code
    from rbmlab.models.rbm import RBM  # noqa: PLC0415

    def ascend(model, state, rows, l):
        stack = model.layer_stack()
        rbm = RBM(
            stack.couplings[l - 1],
            stack.biases[l - 1],
            stack.biases[l],
            visible=stack.units[l - 1].name,
            hidden=stack.units[l].name,
        )
        end = gibbs_chain(rbm, rows, rng, steps)
        positive, negative = rbm.statistics(rows), rbm.statistics(end)
        grad = {f"W{l}": positive["W"] - negative["W"], f"b{l}": positive["b_h"] - negative["b_h"]}
        if l == 1:
            grad["b0"] = positive["b_v"] - negative["b_v"]
        return optimizer.update(model, grad, state, lr)

    return ascend


def conditional_means(model, h, l: int):
    """H^(l) = E[h_l | h_{l−1} = h], the layer above absent."""
    stack = model.layer_stack()
    return stack.units[l].mean(stack.field(l, {l - 1: h}))
