"""Second-order TAP (Plefka) inference for bipartite models with a prior on each unit (tap paper).

A layer is its prior (rbmlab.units.prior), its fields U and its prior parameters θ. With W of
shape (n_v, n_h), magnetisations a and variances c of both layers, the TAP fixed point
(Eqs. 33–35; Alg. 1, one layer at a time) is

    A^h = −c^v W²,    B^h = A^h ⊙ a^h + a^v W,    (a^h, c^h) = f_{a,c}^h(U^h + B^h, A^h)
    A^v = −c^h W²ᵀ,   B^v = A^v ⊙ a^v + a^h Wᵀ,   (a^v, c^v) = f_{a,c}^v(U^v + B^v, A^v)

iterated from data, a^v⁽⁰⁾ = x and c^v⁽⁰⁾ = 0 (Eqs. 37–38), hidden moments first clamped to x
(our choice; Alg. 1 does not say), with damping (new ← d·f + (1 − d)·old on a and c; the paper
states only Fig. 10's damping of 0.5) until every chain's magnetisations move by less than
``tol`` in mean square (Fig. 3). At a fixed point the TAP free energy of a solution is (Eq. 36,
β = 1, Z̃ with the sign of Eq. 32 corrected)

    −F = Σ_i [ln Z̃_i(U_i + B_i, A_i) − B_i a_i + ½ A_i (a_i² + c_i)]  (both layers)
         + a^vᵀ W a^h + ½ c^vᵀ W² c^h,

−F averaged over the unique solutions estimates ln Z (Fig. 2; :func:`combine_log_z` also offers
their log-sum-exp), and the log-likelihood is the exact clamped term minus it (Eq. 39). Gradients
are the data term minus the derivative of −F at the
solutions (envelope theorem; Eqs. 40–42). Arrays may carry the model's leading trial axis, or the
leading run axis of packed runs (rbmlab.run.packed; ``runs=True``: each run solved as alone);
solutions are rows (..., K, n).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np
from scipy.special import logsumexp

from rbmlab.backend import namespace, reads_are_free, to_numpy
from rbmlab.units import Bernoulli
from rbmlab.units.layer import Layer, clamped_log_density  # noqa: F401 - the TAP maths' layer, read here by its callers

ORDERS = (1, 2)  # Plefka's expansion kept to first order (naive mean field) or second (TAP)


@dataclass(frozen=True)
class Solution:
    """TAP fixed points (..., K, n) per layer, with the iterations run and per-chain convergence."""

    a_v: Any
    c_v: Any
    a_h: Any
    c_h: Any
    iterations: int  # packed runs': one per run (R,)
    converged: Any  # (..., K) bool
    chain_iterations: int | None = None  # Σ over iterations of the chains iterated (per model)
    order: int = 2  # 2: TAP (Plefka to second order); 1: naive mean field, no Onsager term

    def run(self, r: int) -> Solution:
        """Run ``r``'s solutions of packed runs (rbmlab.run.packed): its rows of every array, its
        counts when they are one per run."""
        at = lambda t: t[r] if getattr(t, "ndim", 0) else t  # noqa: E731
        names = ("a_v", "c_v", "a_h", "c_h", "iterations", "converged", "chain_iterations")
        return replace(self, **{name: at(getattr(self, name)) for name in names})


def clamped_hidden(W, hidden: Layer, x):
    """(f_a, f_c) of the hidden units given x (A = 0: Eq. 15), and their pre-activations xW."""
    product = x @ W
    return hidden.moments(product, 0.0 * product), product


def solve(
    W,
    visible: Layer,
    hidden: Layer,
    a_v0,
    c_v0=None,
    *,
    damping: float = 0.5,
    tol: float = 1e-8,
    max_iter: int = 1000,
    start: Solution | None = None,
    order: int = 2,
    runs: bool = False,
) -> Solution:
    """TAP fixed points from the visible initialisations ``a_v0`` (..., K, n_v) (variances
    ``c_v0``, default 0), or from ``start`` (persistent chains): Alg. 1 with damping, at most
    ``max_iter`` iterations, stopping when every chain's mean-square change is below ``tol``
    (:func:`solve_stack` on the two layers). ``order=1``: the naive mean-field fixed points
    instead (Plefka's expansion to first order: A = 0, B = a W; the tap paper's Sec. IV
    baseline), the same iteration without the Onsager term. ``runs=True``: the leading axis is
    packed runs', each solved as that run alone (the counts one per run)."""
    xp = namespace(W)
    if start is not None:  # copies: the iteration works in place
        a_v, c_v, a_h, c_h = (t.copy() for t in (start.a_v, start.c_v, start.a_h, start.c_h))
    else:
        shape = np.broadcast_shapes(W.shape[:-2] + (1, 1), a_v0.shape)  # with the trial axis
        a_v = xp.array(xp.broadcast_to(a_v0, shape), dtype=W.dtype)
        c_v = xp.zeros_like(a_v) if c_v0 is None else xp.array(xp.broadcast_to(c_v0, shape), dtype=W.dtype)
        (a_h, c_h), _ = clamped_hidden(W, hidden, a_v)
    (a_v, a_h), (c_v, c_h), it, converged, chain_iterations = solve_stack(
        [W],
        [visible, hidden],
        [a_v, a_h],
        [c_v, c_h],
        damping=damping,
        tol=tol,
        max_iter=max_iter,
        order=order,
        runs=runs,
    )
    return Solution(a_v, c_v, a_h, c_h, it, converged, chain_iterations, order)


def solve_cost(
    n_v: int, n_h: int, rows: int, chain_iterations: int, from_states: bool, order: int = 2
) -> float:
    """Multiply-adds of :func:`solve` for ``rows`` chains that ran ``chain_iterations`` chain
    iterations in all (Solution.chain_iterations): a_v W, c_v W², a_h Wᵀ, c_h W²ᵀ per chain
    iteration (order 1: a_v W and a_h Wᵀ only), and the start's xW when started from visible
    states (``from_states``)."""
    return float(n_v * n_h * (2 * order * chain_iterations + (rows if from_states else 0)))


def solve_stack(
    couplings,
    layers: list[Layer],
    a: list,
    c: list,
    *,
    damping: float,
    tol: float,
    max_iter: int,
    order: int = 2,
    runs: bool = False,
):
    """Damped Alg. 1 on a stack of layers 0 … L, layer l coupled to layer l − 1 by W_l (n_{l−1},
    n_l) = ``couplings[l − 1]`` only (an RBM: two layers; a DBM: Eq. 125's block-tridiagonal
    coupling), from the moments ``a``, ``c`` (lists of (..., K, n_l), updated in place):

        A_l = −(c_{l−1} W_l² + c_{l+1} W_{l+1}²ᵀ),   B_l = A_l ⊙ a_l + a_{l−1} W_l + a_{l+1} W_{l+1}ᵀ

    and (a_l, c_l) ← damped f_{a,c}^l(U_l + B_l, A_l) (Eqs. 33–35). A layer sees only the other
    parity: the odd layers move together, then the even ones (an RBM: hidden, then visible).
    Each chain stops once its mean-square change is below ``tol``; a single model's converged
    chains are set aside (once a quarter of those still iterated have converged) and the others
    go on in a smaller batch. Returns (a, c, iterations, converged (..., K), chain iterations:
    Σ over iterations of the chains iterated, per model). ``order=1``: A_l = 0 (naive mean
    field: no W² products, no Onsager term).

    ``runs=True``: the leading axis is packed runs' (rbmlab.run.packed), each with the trajectory
    it has alone (Alg. 1 runs independently from each initialisation, Sec. VI; a run's iteration
    ends when its own chains have converged): on the host each run's chains are set aside by its
    own count, in a batch of its own size as alone; the counts are one per run (R,)."""
    if order not in ORDERS:
        raise ValueError(f"tap: order must be one of {ORDERS}, got {order!r}")
    xp = namespace(a[0])
    free = all(reads_are_free(t) for t in [*couplings, *a])
    if runs and free:
        return _runs_alone(couplings, layers, a, c, damping=damping, tol=tol, max_iter=max_iter, order=order)
    squares, n = ([W * W for W in couplings] if order == 2 else None), len(layers)
    units = sum(t.shape[-1] for t in a)
    if not free:
        return _masked_stack(couplings, layers, [*a, *c], squares, damping, tol, max_iter, units, runs)
    full = part = [*a, *c]
    converged = xp.zeros(a[0].shape[:-1], dtype=bool)
    rows = xp.arange(a[0].shape[-2]) if a[0].ndim == 2 else None  # compacted: a single model's
    it, done, chain_iterations = 0, converged, 0
    for it in range(1, max_iter + 1):  # noqa: B007 - it is read after the loop
        chain_iterations += part[0].shape[-2]
        change = 0.0
        for first in (1, 0):
            for l in range(first, n, 2):
                change = change + damped_update_(
                    layers[l], couplings, squares, part[:n], part[n:], l, damping
                )
        done = change * (damping * damping / units) < tol  # the damped move's
        if bool(done.all()):
            break
        if rows is not None and 4 * int(done.sum()) >= len(rows):
            for whole, p in zip(full, part):
                whole[rows] = p
            converged[rows[done]] = True
            keep = ~done
            rows, part, done = rows[keep], [p[keep] for p in part], done[keep]
            layers = [layer.rows(keep) for layer in layers]
    if rows is None:
        return full[:n], full[n:], it, done, chain_iterations
    for whole, p in zip(full, part):
        whole[rows] = p
    converged[rows] = done
    return full[:n], full[n:], it, converged, chain_iterations


def _runs_alone(couplings, layers: list[Layer], a: list, c: list, **options):
    """:func:`solve_stack` of packed runs on the host: run r's chains solved as alone, in place in
    its rows of ``a`` and ``c`` (its compacted batches have its own sizes, so a run is its own
    product); the counts one per run."""
    xp, counts = namespace(a[0]), []
    for r in range(a[0].shape[0]):
        *_, it, converged, chain_iterations = solve_stack(
            [W[r] for W in couplings],
            [layer.run(r) for layer in layers],
            [t[r] for t in a],
            [t[r] for t in c],
            **options,
        )
        counts.append((it, converged, chain_iterations))
    its, converged, chains = zip(*counts)
    return a, c, xp.asarray(its), xp.stack(converged), xp.asarray(chains)


def _masked_stack(
    couplings,
    layers: list[Layer],
    moments: list,
    squares,
    damping: float,
    tol: float,
    max_iter: int,
    units: int,
    runs: bool = False,
):
    """:func:`solve_stack` with no host read (on a device): the chains the host path sets aside
    (a single model's, once a quarter of those iterated have converged) keep their moments by
    mask instead, and every chain once all iterated have converged; the iteration counts are 0-d
    device arrays. ``runs``: each of packed runs' models as a single one, the counts one per run."""
    xp, n = namespace(moments[0]), len(layers)
    single, shape = moments[0].ndim == 2, moments[0].shape[:-1]
    per_run = {"axis": -1, "keepdims": True}  # packed runs: each run's chains counted on their own
    lead = shape[:-1] + (1,) if runs else ()
    aside, done, finished = xp.zeros(shape, dtype=bool), xp.zeros(shape, dtype=bool), xp.zeros(lead, bool)
    iterations, chain_iterations = xp.zeros(lead, dtype=xp.int64), xp.zeros(lead, dtype=xp.int64)
    for _ in range(max_iter):
        iterated = ~(aside | finished)
        iterations += ~finished
        chain_iterations += xp.where(
            finished, 0, (~aside).sum(**per_run) if runs else (~aside).sum(axis=-1).max()
        )
        before = [m.copy() for m in moments]
        change = 0.0
        for first in (1, 0):
            for l in range(first, n, 2):
                change = change + damped_update_(
                    layers[l], couplings, squares, moments[:n], moments[n:], l, damping
                )
        for m, old in zip(moments, before):
            xp.copyto(m, old, where=~iterated[..., None])
        done = xp.where(iterated, change * (damping * damping / units) < tol, done)
        if runs:
            aside |= done & (4 * (done & ~aside).sum(**per_run) >= (~aside).sum(**per_run))
            finished |= done.all(**per_run)
            continue
        if single:
            aside |= done & (4 * (done & ~aside).sum() >= (~aside).sum())
        finished |= done.all()
    if runs:
        return moments[:n], moments[n:], iterations[..., 0], done, chain_iterations[..., 0]
    return moments[:n], moments[n:], iterations, done, chain_iterations


def layer_products(couplings, squares, a, c, l: int):
    """(Σ_k a_k W, Σ_k c_k W²) over layer l's neighbours k, each product oriented towards layer l
    (None, None for a lone layer; the second a zero array when ``squares`` is None: order 1)."""
    terms = []
    if l > 0:
        terms.append((a[l - 1] @ couplings[l - 1], None if squares is None else c[l - 1] @ squares[l - 1]))
    if l + 1 < len(a):
        terms.append(
            (
                a[l + 1] @ couplings[l].swapaxes(-1, -2),
                None if squares is None else c[l + 1] @ squares[l].swapaxes(-1, -2),
            )
        )
    if not terms:
        return None, None
    P, Q = terms[0]
    for p, q in terms[1:]:
        P += p
        if q is not None:
            Q += q
    return P, (0.0 * P if Q is None else Q)


def layer_fields(couplings, squares, a, c, l: int):
    """(B_l, A_l) of layer l from its neighbours' moments (Eqs. 33–34; an absent neighbour's
    terms dropped: a lone layer has B = A = 0)."""
    B, A = layer_products(couplings, squares, a, c, l)
    if B is None:
        return 0.0 * a[l], 0.0 * a[l]
    A *= -1.0
    B += A * a[l]  # the Onsager term
    return B, A


def damped_update_(layer: Layer, couplings, squares, a, c, l: int, damping: float):
    """One damped move of layer l (Eqs. 33–35), a[l] and c[l] in place; Σ (f_a − a)² per row.
    A Bernoulli layer on cupy takes it in one fused kernel (rbmlab.backend.cupy_kernels), which the
    elementwise passes below would otherwise make a dozen trips through memory for."""
    if layer.prior is Bernoulli and layer.offset is None and namespace(a[l]).__name__ == "cupy":
        P, Q = layer_products(couplings, squares, a, c, l)
        if P is not None:
            from rbmlab.backend import cupy_kernels  # noqa: PLC0415

            field = layer.field[..., None, :].astype(P.dtype, copy=False)
            return cupy_kernels.tap_bernoulli_step_(P, Q, field, a[l], c[l], damping)
    B, A = layer_fields(couplings, squares, a, c, l)
    return _damped_(layer.moments(B, A), a[l], c[l], damping)


def _damped_(new, a, c, damping: float):
    """a ← a + d (f_a − a), c ← c + d (f_c − c) in place; Σ (f_a − a)² per row (before the move)."""
    new_a, new_c = new
    new_a -= a
    new_c -= c
    change = (new_a * new_a).sum(axis=-1)
    new_a *= damping
    new_c *= damping
    a += new_a
    c += new_c
    return change


def free_energy(W, visible: Layer, hidden: Layer, s: Solution):
    """F per solution (..., K), float64 (Eq. 36); −F estimates ln Z of the unnormalised model.
    A naive mean-field solution (order 1) has the first-order F: Eq. 36 without its W² terms."""
    xp = namespace(W)
    f64 = xp.float64
    W, a_v, c_v, a_h, c_h = (t.astype(f64) for t in (W, s.a_v, s.c_v, s.a_h, s.c_h))
    visible, hidden = (
        Layer(layer.prior, layer.field.astype(f64), None if layer.theta is None else layer.theta.astype(f64))
        for layer in (visible, hidden)
    )
    W2 = W * W if s.order == 2 else 0.0 * W
    A_h = -(c_v @ W2)
    B_h = A_h * a_h + a_v @ W
    A_v = -(c_h @ W2.swapaxes(-1, -2))
    B_v = A_v * a_v + a_h @ W.swapaxes(-1, -2)
    neg_f = xp.sum(visible.log_z(B_v, A_v) - B_v * a_v + 0.5 * A_v * (a_v * a_v + c_v), axis=-1)
    neg_f += xp.sum(hidden.log_z(B_h, A_h) - B_h * a_h + 0.5 * A_h * (a_h * a_h + c_h), axis=-1)
    neg_f += xp.sum((a_v @ W) * a_h, axis=-1) + 0.5 * xp.sum((c_v @ W2) * c_h, axis=-1)
    return -neg_f


def distinct_rows(a: np.ndarray, tol: float, chunk: int = 1024) -> np.ndarray:
    """Indices of representatives of the rows of ``a`` (K, n), in order: a row is a repeat of an
    earlier representative when their root-mean-square difference is below ``tol`` (greedy, first
    come first kept; distances by matmul, a chunk of rows at a time)."""
    a = np.asarray(a, dtype=np.float64)
    n = a.shape[1]
    sq = np.einsum("ij,ij->i", a, a)
    keep: list[int] = []
    for lo in range(0, a.shape[0], chunk):
        rows = np.arange(lo, min(lo + chunk, a.shape[0]))
        if keep:  # repeats of representatives already kept
            d = sq[rows, None] + sq[None, keep] - 2.0 * a[rows] @ a[keep].T
            rows = rows[d.min(axis=1) >= tol * tol * n]
        d = sq[rows, None] + sq[None, rows] - 2.0 * a[rows] @ a[rows].T < tol * tol * n
        alive = np.ones(len(rows), dtype=bool)
        for i in range(len(rows)):  # greedy within the chunk: a loop over new solutions only
            if alive[i]:
                alive[i + 1 :] &= ~d[i, i + 1 :]
        keep.extend(rows[alive].tolist())
    return np.asarray(keep, dtype=np.int64)


COUNT_RULES = ("converged", "all")  # fixed_points: which chains' end states are solutions


def fixed_points(a, converged, tol: float, count: str = "converged") -> np.ndarray:
    """Indices (host) of the distinct TAP fixed points among solutions ``a`` (K, n) of a single
    model: the chains that converged only (``count="converged"``) — one still moving at the
    iteration cap (in practice a period-2 cycle of the damped iteration) is no stationary point of
    the free energy; every chain when none converged — or every chain's end state (``count="all"``:
    a check that this rule hides no solutions) — and of those within ``tol`` root-mean-square of
    each other the first (the paper leaves the criterion open; a grid rounding would split
    solutions that straddle a cell edge in any of n coordinates)."""
    a, converged = np.asarray(a), np.asarray(converged)
    if a.ndim != 2:
        raise ValueError(f"fixed_points: expected one model's (K, n) solutions, got {a.shape}")
    if count not in COUNT_RULES:
        raise ValueError(f"fixed_points: count must be one of {COUNT_RULES}, got {count!r}")
    everyone = count == "all" or not converged.any()
    rows = np.arange(a.shape[0]) if everyone else np.flatnonzero(converged)
    return rows[distinct_rows(a[rows], tol)]


def unique_solutions(s: Solution, tol: float = 1e-3) -> np.ndarray:
    """:func:`fixed_points` of a solution of one model, on [a^v, a^h]."""
    a = np.concatenate([to_numpy(s.a_v), to_numpy(s.a_h)], axis=-1)
    return fixed_points(a, to_numpy(s.converged), tol)


COMBINE_RULES = ("uniform", "logsumexp")


def combine_log_z(free_energies, rule: str = "uniform") -> float:
    """ln Z from the TAP free energies F_k of K distinct solutions (host, float64).

    ``uniform``   −(1/K) Σ_k F_k: the paper's estimator, an unweighted average over the solutions
                  (Sec. V.2, Fig. 2), which it prefers to a weighted one for solutions found from
                  the data.
    ``logsumexp`` ln Σ_k e^{−F_k}: each solution read as the free energy of its own mode, the modes'
                  partition functions added (our option, not the paper's). With K equivalent modes
                  (equal F) the two differ by ln K, the entropy of choosing a mode that the average
                  leaves out; with one solution they agree."""
    if rule not in COMBINE_RULES:
        raise ValueError(f"combine_log_z: rule must be one of {', '.join(COMBINE_RULES)}, got {rule!r}")
    neg_f = -np.asarray(free_energies, dtype=np.float64)
    if neg_f.ndim != 1 or neg_f.size == 0:
        raise ValueError(
            f"combine_log_z: expected the free energies of K >= 1 solutions, got shape {neg_f.shape}"
        )
    if rule == "uniform":
        return float(neg_f.mean())
    return float(logsumexp(neg_f))


def log_partition(W, visible: Layer, hidden: Layer, s: Solution, tol: float = 1e-3, rule: str = "uniform"):
    """(ln Z_TAP, F of each unique solution): the unique solutions' free energies combined by
    ``rule`` (:func:`combine_log_z`; uniform is Fig. 2's and Fig. 3's estimate). A single model;
    float64 on the host."""
    f = to_numpy(free_energy(W, visible, hidden, s))
    f_unique = f[unique_solutions(s, tol)]
    return combine_log_z(f_unique, rule), f_unique


def gradient(W, visible: Layer, hidden: Layer, x, s: Solution) -> dict[str, Any]:
    """Eqs. 40–42: data statistics of x (M rows) minus the TAP solutions' (K rows), by name:
    ``W``, ``b_v``, ``b_h`` (the fields) and ``v_theta`` / ``h_theta`` for prior parameters; at
    naive mean-field solutions (order 1), the derivatives of the first-order free energy."""
    xp = namespace(W)
    m, k = x.shape[-2], s.a_v.shape[-2]
    (a_x, _), product = clamped_hidden(W, hidden, x)
    t = lambda y: y.swapaxes(-1, -2)  # noqa: E731
    grad = {
        "W": t(x) @ (a_x / m) - t(s.a_v) @ (s.a_h / k),
        "b_v": x.mean(axis=-2) - s.a_v.mean(axis=-2),
        "b_h": a_x.mean(axis=-2) - s.a_h.mean(axis=-2),
    }
    if s.order == 2:
        grad["W"] -= W * (t(s.c_v) @ (s.c_h / k))
    W2 = W * W if s.order == 2 else 0.0 * W
    if visible.theta is not None:
        A_v = -(s.c_h @ t(W2))
        B_v = A_v * s.a_v + s.a_h @ t(W)
        data = visible.prior.grad_log_base(x, *visible.theta_rows)
        model = visible.grad_log_z(B_v, A_v)
        grad["v_theta"] = xp.stack([d.mean(axis=-2) - g.mean(axis=-2) for d, g in zip(data, model)], axis=-2)
    if hidden.theta is not None:
        A_h = -(s.c_v @ W2)
        B_h = A_h * s.a_h + s.a_v @ W
        data = hidden.grad_log_z(product, 0.0 * product)
        model = hidden.grad_log_z(B_h, A_h)
        grad["h_theta"] = xp.stack([d.mean(axis=-2) - g.mean(axis=-2) for d, g in zip(data, model)], axis=-2)
    return grad
