"""Pseudo-likelihood terms of Potts visible units: log p(v_i | v_−i) over unit i's q states.

Unit i in state c (its one-hot columns e_c) set to state s changes vW + b_h by W_{i,s} − W_{i,c}
and b_vᵀv by b_{v,i,s} − b_{v,i,c}, so with x = vW + b_h (Besag 1975, per unit)

    δ_s = −F(v^{i→s}) + F(v)
        = b_{v,i,s} − b_{v,i,c} + Σ_j [softplus(x_j + W_{i,s,j} − W_{i,c,j}) − softplus(x_j)]
    log p(v_i = c | v_−i) = δ_c − logsumexp_s δ_s = −logsumexp_s δ_s       (δ_c = 0).

One (B, k, n_hidden) tensor per alternative s: the q alternatives are the only loop.
"""

from __future__ import annotations

from rbmlab.backend.ops import logsumexp, softplus


def potts_log_cond(rbm, v, x, units=None):
    """log p(v_i | v_−i) of Potts visible units for the given units ((B, k) unit indices; all
    units when None), float64; ``v`` one-hot rows, ``x`` = vW + b_h."""
    xp = rbm.xp
    f64 = xp.float64
    q = rbm.visible_units.q
    n = rbm.n_visible // q
    W = rbm.W.reshape(n, q, rbm.n_hidden)  # (unit, state, hidden)
    b = rbm.b_v.reshape(n, q)
    codes = rbm.visible_units.decode(v)  # (B, n): each unit's state c
    if units is None:
        units = xp.arange(n)[None, :]  # (1, n)
    else:
        codes = xp.take_along_axis(codes, units, axis=1)  # (B, k)
    W_c, b_c = W[units, codes], b[units, codes]  # (B, k, n_h), (B, k)
    sp = xp.sum(softplus(x), axis=-1, dtype=f64)[:, None]  # (B, 1)
    deltas = []
    for s in range(q):
        t = W[units, s] - W_c
        t += x[:, None, :]
        xp.logaddexp(0.0, t, out=t)  # softplus, in place
        deltas.append(xp.sum(t, axis=-1, dtype=f64) - sp + (b[units, s] - b_c).astype(f64))
        del t
    return -logsumexp(xp.stack(deltas, axis=-1), axis=-1)
