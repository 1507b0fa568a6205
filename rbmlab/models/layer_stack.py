"""Layers 0 … L of units, each coupled only to its neighbours: the energy of a deep Boltzmann
machine (tap App. E, Eq. 119) with a unit type per layer; an RBM is the case L = 1.

    log P̃(h_0, …, h_L) = Σ_{l=1…L} h_{l−1}ᵀ W_l h_l + Σ_l b_lᵀ h_l,     W_l: (n_{l−1}, n_l)

Layer l sees only its neighbours, through its field b_l + h_{l−1} W_l + h_{l+1} W_{l+1}ᵀ, so
given the layers of one parity those of the other are independent, each unit by its unit type
(rbmlab.units): block Gibbs sampling alternates the odd layers given the even ones and the even
ones given the odd (Salakhutdinov & Hinton 2009, §3). A chain's state is the even layers' units
side by side, layer 0 (the visible units) first, so an RBM's chain state is its v; the odd layers
are drawn afresh at each sweep and summed out (in expectation) in the statistics.

Pure functions of a :class:`LayerStack`; arrays may carry a leading trial axis on the parameters
and on the rows (..., B, n_l) alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rbmlab.backend import namespace

EVEN, ODD = 0, 1


@dataclass(frozen=True)
class LayerStack:
    units: tuple  # the unit type of each layer 0 … L (rbmlab.units)
    biases: tuple  # b_0 … b_L, each (..., n_l)
    couplings: tuple  # W_1 … W_L, W_l (..., n_{l−1}, n_l)

    @property
    def depth(self) -> int:
        """L: the number of couplings (hidden layers)."""
        return len(self.couplings)

    @property
    def sizes(self) -> list[int]:
        return [b.shape[-1] for b in self.biases]

    def parity(self, p: int) -> range:
        """The layers of parity ``p`` (EVEN: 0, 2, …; ODD: 1, 3, …)."""
        return range(p, self.depth + 1, 2)

    def width(self, p: int) -> int:
        """Columns of a row holding the layers of parity ``p`` side by side."""
        return sum(self.sizes[l] for l in self.parity(p))

    def split(self, rows, p: int) -> dict[int, Any]:
        """Rows of the layers of parity ``p`` side by side → layer → its columns (views)."""
        out, start = {}, 0
        for l in self.parity(p):
            out[l], start = rows[..., start : start + self.sizes[l]], start + self.sizes[l]
        return out

    def join(self, layers: Mapping[int, Any], p: int):
        """The inverse of :meth:`split`: the layers of parity ``p`` side by side (rows shared by
        all trials, such as data, repeated along the trial axis that another layer has)."""
        xp = namespace(self.biases[0])
        parts = [layers[l] for l in self.parity(p)]
        lead = xp.broadcast_shapes(*(a.shape[:-1] for a in parts))
        return xp.concatenate([xp.broadcast_to(a, lead + a.shape[-1:]) for a in parts], axis=-1)

    def product(self, l: int, h: Mapping[int, Any], out=None):
        """h_{l−1} W_l + h_{l+1} W_{l+1}ᵀ over the neighbours of layer l that ``h`` holds (rows
        (..., B, n)); the field without its bias. ``out``: a buffer for the first product."""
        xp, total = namespace(self.biases[0]), None
        if l - 1 in h:
            total = xp.matmul(h[l - 1], self.couplings[l - 1], out=out)
        if l + 1 in h and l < self.depth:
            above = h[l + 1] @ self.couplings[l].swapaxes(-1, -2)
            total = above if total is None else _add_(total, above)
        return total

    def field(self, l: int, h: Mapping[int, Any]):
        """b_l + h_{l−1} W_l + h_{l+1} W_{l+1}ᵀ (the neighbours ``h`` holds)."""
        product = self.product(l, h)  # every layer has a neighbour (L ≥ 1); ``h`` must hold one
        product += self.biases[l][..., None, :]
        return product


def _add_(a, b):
    a += b  # a fresh product: its own buffer
    return a


# ------------------------------------------------------------------ sampling
def draw(stack: LayerStack, h: Mapping[int, Any], p: int, rng) -> dict[int, Any]:
    """The layers of parity ``p`` drawn given the other parity's (``h``: layer → rows), each
    unit by its layer's unit type, layers in increasing order (one stream)."""
    out = {}
    for l in stack.parity(p):
        logits = stack.product(l, h)
        out[l] = stack.units[l].sample_(logits, rng, bias=stack.biases[l][..., None, :])
    return out


def sweep(stack: LayerStack, even_rows, rng, sweeps: int):
    """``sweeps`` block-Gibbs sweeps (odd layers given the even, then the even given the odd) from
    chain states ``even_rows`` (the even layers side by side); the last even layers, side by
    side (``even_rows`` is not modified)."""
    for _ in range(sweeps):
        odd = draw(stack, stack.split(even_rows, EVEN), ODD, rng)
        even_rows = stack.join(draw(stack, odd, EVEN, rng), EVEN)
    return even_rows


def start_chains(stack: LayerStack, x, rng):
    """Chain states whose layer 0 is ``x``: each layer above drawn given the one below alone
    (one upward pass, the layer above not yet present), the even ones kept side by side. Our
    choice of a start; a sweep then draws every layer given both its neighbours."""
    h = {0: x}
    for l in range(1, stack.depth + 1):
        below = {l - 1: h[l - 1]}
        h[l] = stack.units[l].sample_(stack.product(l, below), rng, bias=stack.biases[l][..., None, :])
    return stack.join({l: h[l] for l in stack.parity(EVEN)}, EVEN)


# ------------------------------------------------------------------ statistics
def moments(stack: LayerStack, means: Mapping[int, Any]) -> tuple[list, list]:
    """([statistic of W_1 … W_L], [statistic of b_0 … b_L]) of a factorised distribution over
    every layer with these means per row (layer → (..., B, n_l)): ⟨h_{l−1}ᵀ h_l⟩/B and ⟨h_l⟩,
    batch averages. Exact where the rows hold states of one parity and means of the other
    (neighbouring layers are then independent given the row)."""
    rows = means[0].shape[-2]
    weights = [means[l - 1].swapaxes(-1, -2) @ means[l] / rows for l in range(1, stack.depth + 1)]
    return weights, [means[l].mean(axis=-2) for l in range(stack.depth + 1)]


def chain_statistics(stack: LayerStack, even_rows) -> tuple[list, list]:
    """The statistics (:func:`moments`) of chain states: the even layers as drawn, the odd ones
    in expectation given them (Rao-Blackwellised, as an RBM's hidden units given v)."""
    even = stack.split(even_rows, EVEN)
    odd = {l: stack.units[l].mean(stack.field(l, even)) for l in stack.parity(ODD)}
    return moments(stack, {**even, **odd})


def mean_field(stack: LayerStack, x, iterations: int) -> dict[int, Any]:
    """The means of layers 1 … L under the factorised (mean-field) approximation of p(h | x),
    layer 0 clamped to ``x`` (Salakhutdinov & Hinton 2009, §3: the variational positive phase):
    started by one upward pass (each layer given the one below alone), then ``iterations``
    sweeps of the fixed-point equations μ_l = E_{u_l}[b_l + μ_{l−1} W_l + μ_{l+1} W_{l+1}ᵀ],
    odd layers then even ones, layer 0 held at x."""
    return _mean_field(stack, x, iterations)[0]


def _mean_field(stack: LayerStack, x, iterations: int) -> tuple[dict[int, Any], dict[int, Any]]:
    """(means, the fields a_l they are the means of: μ_l = E_{u_l}[a_l]) of :func:`mean_field`."""
    mu, fields = {0: x}, {}
    for l in range(1, stack.depth + 1):
        fields[l] = stack.field(l, {l - 1: mu[l - 1]})
        mu[l] = stack.units[l].mean(fields[l])
    for _ in range(iterations):
        for p in (ODD, EVEN):
            for l in stack.parity(p):
                if l:
                    fields[l] = stack.field(l, mu)
                    mu[l] = stack.units[l].mean(fields[l])
    return mu, fields


def variational_bound(stack: LayerStack, x, iterations: int):
    """The mean-field lower bound on log p̃(x) = log Σ_h P̃(x, h), one per row (Salakhutdinov &
    Hinton 2009, §3; Jensen's inequality): E_q[log P̃(x, h)] + H(q) with q the factorised
    distribution of :func:`mean_field`. log P̃ is linear in each layer, so E_q[log P̃] is log P̃ at
    the means; a unit of field a has q(h) ∝ e^{a h}, entropy A(a) − a·E[h] (A its unit type's
    log-partition; a Potts unit: a and E[h] its q columns, one A). Equal to log p̃(x) where the
    hidden layers are independent given x."""
    mu, fields = _mean_field(stack, x, iterations)
    total = sum((mu[l] * stack.biases[l][..., None, :]).sum(axis=-1) for l in range(stack.depth + 1))
    for l in range(1, stack.depth + 1):
        total = total + ((mu[l - 1] @ stack.couplings[l - 1]) * mu[l]).sum(axis=-1)
        a = fields[l]
        # A per unit (a Potts unit's q columns give one value), a·E[h] per column
        total = total + stack.units[l].log_partition(a).sum(axis=-1) - (a * mu[l]).sum(axis=-1)
    return total
