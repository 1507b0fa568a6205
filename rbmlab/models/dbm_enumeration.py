"""Exact sums over the states of a small deep Boltzmann machine: log Z and log p̃(x).

With the DBM's log-weight (tap App. E, Eq. 119; layers 0 … L, W_l between layers l − 1 and l)

    log P̃(h_0, …, h_L) = Σ_l h_{l−1}ᵀ W_l h_l + Σ_l b_lᵀ h_l,

a layer is coupled only to its two neighbours, so given the layers of one parity (odd: 1, 3;
even: 0, 2) those of the other are independent and each of their units sums out to its unit
type's log-partition A (softplus for {0, 1} units, log 2cosh for ±1) of its field:

    Σ_{h_S} P̃ = exp(Σ_{l∈E} b_lᵀ h_l + Σ_{l∈S} Σ_j A_l(b_l + h_{l−1} W_l + h_{l+1} W_{l+1}ᵀ)_j)

for the enumerated layers E and the summed layers S. log Z enumerates the parity with fewer units
(min(n_0 + n_2 + …, n_1 + n_3 + …) of them); log p̃(x) clamps layer 0 to x and enumerates the
fewer of the even layers above it and the odd ones. Accumulated in float64, by chunks of states.
"""

from __future__ import annotations

from rbmlab.backend import namespace
from rbmlab.backend.ops import logsumexp
from rbmlab.units import Bernoulli

CHUNK_ELEMENTS = 1 << 22  # (rows × states × units) of the float64 fields formed at once


def partition_units(n: list[int]) -> int:
    """Units enumerated for log Z of a machine with layer sizes ``n`` (n_0 … n_L)."""
    return min(sum(n[0::2]), sum(n[1::2]))


def marginal_units(n: list[int]) -> int:
    """Units enumerated per row for log p̃(x) (layer 0 clamped)."""
    return min(sum(n[2::2]), sum(n[1::2]))


def log_sum(
    weights: dict[int, object], biases: list, clamped: dict[int, object], chunk: int = 4096, units=None
):
    """log Σ P̃ over every layer not in ``clamped`` (layer → rows (B, n_l) of its units' values),
    one value per row (B,), or (1,) with nothing clamped. ``weights``: l → W_l (n_{l−1}, n_l),
    for l = 1 … L; ``biases``: b_0 … b_L; all float64 arrays of one namespace, no trial axis;
    ``units``: each layer's binary unit type (rbmlab.units; None: Bernoulli on every layer)."""
    units = units or [Bernoulli] * len(biases)
    depth = len(biases) - 1
    xp = namespace(biases[0])
    n = [b.shape[-1] for b in biases]
    fixed = {l: v[:, None, :] for l, v in clamped.items()}  # (B, 1, n_l)
    rows = next(iter(clamped.values())).shape[0] if clamped else 1
    free = [l for l in range(depth + 1) if l not in clamped]
    odd, even = [l for l in free if l % 2], [l for l in free if l % 2 == 0]
    enumerated, summed = (odd, even) if sum(n[l] for l in odd) <= sum(n[l] for l in even) else (even, odd)
    k = sum(n[l] for l in enumerated)
    if k > 62:
        raise ValueError(f"enumeration of {k} units does not fit in int64")
    per_chunk = max(1, min(chunk, CHUNK_ELEMENTS // (rows * max(max(n), 1))))
    parts = []
    for start in range(0, 1 << k, per_chunk):
        states = Bernoulli.states(xp, k, start, min(start + per_chunk, 1 << k), xp.float64)[None]
        h, offset = dict(fixed), 0
        for l in enumerated:  # (1, C, n_l): bits j ↦ the unit's values (lo, hi)
            lo, hi = units[l].values
            h[l], offset = lo + (hi - lo) * states[..., offset : offset + n[l]], offset + n[l]
        term = xp.zeros((1, states.shape[1]))
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
