"""Exact sums over the states of a small deep Boltzmann machine: log Z and log p̃(x).

With the DBM's log-weight (tap App. E, Eq. 119; layers 0 … L, W_l between layers l − 1 and l)

    log P̃(h_0, …, h_L) = Σ_l h_{l−1}ᵀ W_l h_l + Σ_l b_lᵀ h_l,

a layer is coupled only to its two neighbours, so given the layers of one parity (odd: 1, 3;
even: 0, 2) those of the other are independent and each of their units sums out to its unit
type's log-partition A (softplus for {0, 1} units, log 2cosh for ±1, logsumexp of a Potts unit's
q columns) of its field:

    Σ_{h_S} P̃ = exp(Σ_{l∈E} b_lᵀ h_l + Σ_{l∈S} Σ_j A_l(b_l + h_{l−1} W_l + h_{l+1} W_{l+1}ᵀ)_j)

for the enumerated layers E and the summed layers S. log Z enumerates the parity with fewer states
(bits: Σ_l log₂ of layer l's state count, n_l for binary layers, (n_l / q)·log₂ q for Potts
ones); log p̃(x) clamps layer 0 to x and enumerates the fewer of the even layers above it and the
odd ones. A state of the enumerated layers is numbered in mixed radix, layer by layer (the first
enumerated layer's state the lowest digit), each layer's by its unit type's order (``states_of``:
binary digits, base q for Potts). Accumulated in float64, by chunks of states.
"""

from __future__ import annotations

import math

from rbmlab.backend import namespace
from rbmlab.backend.ops import logsumexp
from rbmlab.units import Bernoulli

CHUNK_ELEMENTS = 1 << 22  # (rows × states × units) of the float64 fields formed at once


def partition_units(n: list[int]) -> int:
    """Columns enumerated for log Z of a machine with layer sizes ``n`` (n_0 … n_L, columns)."""
    return min(sum(n[0::2]), sum(n[1::2]))


def marginal_units(n: list[int]) -> int:
    """Columns enumerated per row for log p̃(x) (layer 0 clamped)."""
    return min(sum(n[2::2]), sum(n[1::2]))


def log_sum(
    weights: dict[int, object], biases: list, clamped: dict[int, object], chunk: int = 4096, units=None
):
    """log Σ P̃ over every layer not in ``clamped`` (layer → rows (B, n_l) of its units' values),
    one value per row (B,), or (1,) with nothing clamped. ``weights``: l → W_l (n_{l−1}, n_l),
    for l = 1 … L; ``biases``: b_0 … b_L; all float64 arrays of one namespace, no trial axis;
    ``units``: each layer's unit type (rbmlab.units, binary or Potts; None: Bernoulli on every
    layer)."""
    units = units or [Bernoulli] * len(biases)
    depth = len(biases) - 1
    xp = namespace(biases[0])
    n = [b.shape[-1] for b in biases]
    fixed = {l: v[:, None, :] for l, v in clamped.items()}  # (B, 1, n_l)
    rows = next(iter(clamped.values())).shape[0] if clamped else 1
    free = [l for l in range(depth + 1) if l not in clamped]
    odd, even = [l for l in free if l % 2], [l for l in free if l % 2 == 0]
    bits = {l: units[l].state_bits(n[l]) for l in free}  # log₂ of each layer's states
    enumerated, summed = (
        (odd, even) if sum(bits[l] for l in odd) <= sum(bits[l] for l in even) else (even, odd)
    )
    k = sum(bits[l] for l in enumerated)
    if k > 62:
        raise ValueError(f"enumeration of 2^{k:g} states does not fit in int64")
    counts = [units[l].state_count(n[l]) for l in enumerated]
    total_states = math.prod(counts)
    strides = [math.prod(counts[:i]) for i in range(len(counts))]  # mixed radix, layer by layer
    per_chunk = max(1, min(chunk, CHUNK_ELEMENTS // (rows * max(max(n), 1))))
    parts = []
    for start in range(0, total_states, per_chunk):
        index = xp.arange(start, min(start + per_chunk, total_states), dtype=xp.int64)
        h = dict(fixed)
        for l, count, stride in zip(enumerated, counts, strides):  # (1, C, n_l): layer l's digit
            h[l] = units[l].states_of(xp, (index // stride) % count, n[l], xp.float64)[None]
        term = xp.zeros((1, index.shape[0]))
        for l in enumerated:
            term = term + h[l] @ biases[l]
        for l in range(1, depth + 1):  # couplings between enumerated and clamped layers
            if l - 1 in h and l in h and not (l - 1 in fixed and l in fixed):
                term = term + ((h[l - 1] @ weights[l]) * h[l]).sum(axis=-1)
        for l in summed:
            field = biases[l]
            if l > 0:
                field = field + h[l - 1] @ weights[l]
            if l < depth:
                field = field + h[l + 1] @ weights[l + 1].T
            term = term + units[l].log_partition(field).sum(axis=-1)
        parts.append(logsumexp(xp.broadcast_to(term, (rows, term.shape[-1])), axis=-1))
    total = logsumexp(xp.stack(parts, axis=-1), axis=-1)
    for l, v in clamped.items():  # the terms among clamped layers alone
        total = total + v @ biases[l]
        if l - 1 in clamped:
            total = total + ((clamped[l - 1] @ weights[l]) * v).sum(axis=-1)
    return total
