"""Second-order TAP (Plefka) inference on a stack of layers: an RBM's two and a DBM's L + 1 (tap
paper §V, App. E), one module for every depth.

A layer is its prior (rbmlab.units.prior), its fields U and its prior parameters θ
(units.layer.Layer). Layers 0 … L are coupled only to their neighbours: layer l meets layer l − 1
through W_l (n_{l−1}, n_l) and layer l + 1 through W_{l+1} (the block-tridiagonal coupling of
Eq. 125; an RBM is the stack of two, visible = 0 and hidden = 1, W_1 = W). With magnetisations a_l
and variances c_l, the TAP fixed point (Eqs. 33–35 on Eq. 125; Alg. 1, one layer at a time) is

    A_l = −(c_{l−1} W_l² + c_{l+1} W_{l+1}²ᵀ),    B_l = A_l ⊙ a_l + a_{l−1} W_l + a_{l+1} W_{l+1}ᵀ,
    (a_l, c_l) = f_{a,c}^l(U_l + B_l, A_l)

(an absent neighbour's terms dropped; an RBM: A^h = −c^v W², B^h = A^h ⊙ a^h + a^v W, and the
visible layer alike). A layer sees only the other parity, so the odd layers move together, then
the even ones (an RBM: hidden, then visible; the authors' Julia code does even then odd), with
damping (new ← d·f + (1 − d)·old on a and c; the paper states only Fig. 10's damping of 0.5)
until every chain's magnetisations move by less than ``tol`` in mean square (Fig. 3). Free
solutions start at the data, a_0 = x, c_0 = 0 (Eqs. 37–38), the layers above from a bottom-up pass
a_l = f_a(a_{l−1} W_l, 0) (an RBM: the hidden moments clamped to x; our choice, Alg. 1 does not
say). At a fixed point the TAP free energy (Eq. 36 on Eq. 125, β = 1, Z̃ with the sign of Eq. 32
corrected) is

    −F = Σ_l Σ_i [ln Z̃(U_l + B_l, A_l) − B_l a_l + ½ A_l (a_l² + c_l)]
         + Σ_l [a_{l−1}ᵀ W_l a_l + ½ c_{l−1}ᵀ W_l² c_l]

(:func:`stack_free_energy`, which an RBM's :func:`free_energy` reads too). −F averaged over the
unique solutions estimates ln Z (Fig. 2; :func:`combine_log_z` also offers their log-sum-exp).
``order=1``: Plefka's expansion to first order (naive mean field, the paper's Sec. IV baseline):
A_l = 0, B_l = a_{l−1} W_l + a_{l+1} W_{l+1}ᵀ, and F without its W² terms.

**Clamped** solutions ā(x), c̄(x) (App. E.1) hold layer 0 at x: the hidden layers are a stack of
their own with the extra field xW_1 on layer 1 (Layer.offset), solved alike. Written on the whole
stack (a_0 = x, c_0 = 0), their −F is the formula above with layer 0's term replaced by its exact
log-prior U_0·x (B_1 then holds xW_1, whose −xW_1·a_1 the coupling term x W_1 a_1 cancels), and
estimates ln Σ_h P̃(x, h), the last term of Eq. 121. An RBM's clamped term is exact
(units.layer.clamped_log_density) and its log-likelihood is that minus ln Z_TAP (Eq. 39); a DBM's
is ln P(x) ≈ −F_clamped(x) + ⟨F⟩ over the unique free solutions.

Gradients (envelope theorem): the data term minus the derivative of −F at the solutions. An RBM's
(Eqs. 40–42, :func:`gradient`) take the data term exactly and learn prior parameters θ too; a
DBM's (Eqs. 126–129, :func:`stack_gradient`) are, per coupling and field, the clamped solutions'
average of ∂(−F)/∂θ over the batch minus the free solutions' over K,

    ΔW_l = ⟨a_{l−1}ᵀ a_l + W_l ⊙ c_{l−1}ᵀ c_l⟩_clamped − ⟨…⟩_free,   ΔU_l = ⟨a_l⟩_clamped − ⟨a_l⟩_free

(c̄_0 = 0 leaves x ā_1 for W_1: Eq. 128). Arrays may carry the model's leading trial axis, or the
leading run axis of packed runs (rbmlab.run.packed; ``runs=True``: each run solved as alone);
solutions are rows (..., K, n_l).

The stack's functions: :func:`solve_layers`, :func:`clamped_layers`, :func:`stack_free_energy`,
:func:`magnetisations`, :func:`stack_log_partition`, :func:`stack_statistics`,
:func:`stack_gradient` on a :class:`StackSolution` (lists a, c); the iteration itself
:func:`solve_stack`. An RBM's (:func:`solve`, :func:`free_energy`, :func:`log_partition`,
:func:`unique_solutions`, :func:`gradient`) take (W, visible, hidden) and a :class:`Solution` with
a_v, c_v, a_h, c_h, the two-layer stack's view.
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
class StackSolution:
    """TAP fixed points a[l], c[l] (..., K, n_l) of every layer of a stack, the iterations run and
    per-chain convergence; ``clamped``: layer 0 is held at the data (c[0] = 0)."""

    a: list
    c: list
    iterations: int  # packed runs': one per run (R,)
    converged: Any  # (..., K) bool
    chain_iterations: int | None = None  # Σ over iterations of the chains iterated (per model)
    order: int = 2  # 2: TAP (Plefka to second order); 1: naive mean field, no Onsager term
    clamped: bool = False

    def run(self, r: int) -> StackSolution:
        """Run ``r``'s solutions of packed runs (rbmlab.run.packed): its rows of every array, its
        counts when they are one per run."""
        at = lambda t: t[r] if getattr(t, "ndim", 0) else t  # noqa: E731
        return replace(
            self,
            a=[at(t) for t in self.a],
            c=[at(t) for t in self.c],
            **{name: at(getattr(self, name)) for name in ("iterations", "converged", "chain_iterations")},
        )


@dataclass(frozen=True)
class Solution:
    """An RBM's TAP fixed points (..., K, n) per layer, with the iterations run and per-chain
    convergence: the two-layer :class:`StackSolution` (visible = layer 0, hidden = layer 1) by
    name."""

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
        return Solution.of(self.stack.run(r))

    @property
    def stack(self) -> StackSolution:
        """The same solutions as a two-layer stack (the same arrays, not copies)."""
        return StackSolution(
            [self.a_v, self.a_h],
            [self.c_v, self.c_h],
            self.iterations,
            self.converged,
            self.chain_iterations,
            self.order,
        )

    @classmethod
    def of(cls, s: StackSolution) -> Solution:
        """A two-layer stack's solutions by name."""
        (a_v, a_h), (c_v, c_h) = s.a, s.c
        return cls(a_v, c_v, a_h, c_h, s.iterations, s.converged, s.chain_iterations, s.order)


def clamped_hidden(W, hidden: Layer, x):
    """(f_a, f_c) of the hidden units given x (A = 0: Eq. 15), and their pre-activations xW."""
    product = x @ W
    return hidden.moments(product, 0.0 * product), product


def solve_layers(
    couplings,
    layers: list[Layer],
    a0=None,
    c0=None,
    *,
    damping: float = 0.5,
    tol: float = 1e-8,
    max_iter: int = 1000,
    start: StackSolution | None = None,
    order: int = 2,
    runs: bool = False,
) -> StackSolution:
    """Free TAP fixed points of the stack ``layers`` coupled by ``couplings`` (W_1 … W_L), from
    layer 0 at ``a0`` (..., K, n_0) (variances ``c0``, default 0; Eqs. 37–38) and a bottom-up pass
    above (a_l = f_a(a_{l−1} W_l, 0), A = 0: Eq. 15), or from ``start`` (persistent chains):
    damped Alg. 1, at most ``max_iter`` iterations, until every chain's mean-square change is
    below ``tol`` (:func:`solve_stack`: the odd layers, then the even ones; converged chains set
    aside). ``order=1``: the naive mean-field fixed points (no Onsager term). ``runs=True``: the
    leading axis is packed runs', each solved as that run alone (the counts one per run)."""
    if start is not None:  # copies: the iteration works in place
        a, c = [t.copy() for t in start.a], [t.copy() for t in start.c]
    else:
        ref = couplings[0] if couplings else layers[0].field  # the model's array: device, dtype, trials
        xp, lead = namespace(ref), ref.shape[: -2 if couplings else -1]
        shape = np.broadcast_shapes(lead + (1, 1), a0.shape)  # with the trial axis
        a = [xp.array(xp.broadcast_to(a0, shape), dtype=ref.dtype)]
        c = [xp.zeros_like(a[0]) if c0 is None else xp.array(xp.broadcast_to(c0, shape), dtype=ref.dtype)]
        for W, layer in zip(couplings, layers[1:]):  # bottom-up, A = 0
            (a_l, c_l), _ = clamped_hidden(W, layer, a[-1])
            a.append(a_l)
            c.append(c_l)
    a, c, it, converged, chain_iterations = solve_stack(
        couplings, layers, a, c, damping=damping, tol=tol, max_iter=max_iter, order=order, runs=runs
    )
    return StackSolution(a, c, it, converged, chain_iterations, order)


def clamped_layers(couplings, layers: list[Layer], x, **options) -> StackSolution:
    """Clamped TAP solutions (App. E.1): layer 0 held at the rows of ``x``, the hidden layers
    solved as their own stack with the field xW_1 added on layer 1 (``options``: those of
    :func:`solve_layers`). Returned on the whole stack, with a[0] = x and c[0] = 0."""
    first = replace(layers[1], offset=x @ couplings[0])
    zero = 0.0 * first.offset
    a1, c1 = first.moments(zero, zero)
    s = solve_layers(couplings[1:], [first, *layers[2:]], a1, c1, **options)
    xp = namespace(x)
    x = xp.broadcast_to(x, s.a[0].shape[:-1] + x.shape[-1:])
    return replace(s, a=[x, *s.a], c=[xp.zeros_like(x), *s.c], clamped=True)


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
    """An RBM's TAP fixed points from the visible initialisations ``a_v0`` (..., K, n_v)
    (variances ``c_v0``, default 0), or from ``start`` (persistent chains): Alg. 1 with damping,
    at most ``max_iter`` iterations, stopping when every chain's mean-square change is below
    ``tol`` (:func:`solve_layers` on the two layers). ``order=1``: the naive mean-field fixed
    points instead (Plefka's expansion to first order: A = 0, B = a W; the tap paper's Sec. IV
    baseline), the same iteration without the Onsager term. ``runs=True``: the leading axis is
    packed runs', each solved as that run alone (the counts one per run)."""
    s = solve_layers(
        [W],
        [visible, hidden],
        a_v0,
        c_v0,
        damping=damping,
        tol=tol,
        max_iter=max_iter,
        start=None if start is None else start.stack,
        order=order,
        runs=runs,
    )
    return Solution.of(s)


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


def stack_free_energy(couplings, layers: list[Layer], s: StackSolution):
    """F per solution (..., K), float64 (Eq. 36 on Eq. 125; an RBM: Eq. 36 on its two layers).
    Free solutions: −F estimates ln Z; clamped ones: layer 0 contributes its log-prior and −F
    estimates ln Σ_h P̃(x, h) (App. E.1). A naive mean-field solution (order 1) has the
    first-order F: no W² terms (A_l = 0). Summed layer by layer, then coupling by coupling (each
    coupling's a-term, then its c-term)."""
    xp = namespace(s.a[0])
    f64 = xp.float64
    couplings = [W.astype(f64) for W in couplings]
    squares = [W * W for W in couplings] if s.order == 2 else None
    a, c = [t.astype(f64) for t in s.a], [t.astype(f64) for t in s.c]
    neg_f = 0.0
    for l, layer in enumerate(layers):
        layer = replace(
            layer,
            field=layer.field.astype(f64),
            theta=None if layer.theta is None else layer.theta.astype(f64),
        )
        if l == 0 and s.clamped:
            neg_f = neg_f + layer.log_prior(a[0])
            continue
        B, A = layer_fields(couplings, squares, a, c, l)
        neg_f = neg_f + xp.sum(layer.log_z(B, A) - B * a[l] + 0.5 * A * (a[l] * a[l] + c[l]), axis=-1)
    for l, W in enumerate(couplings):
        coupling = xp.sum((a[l] @ W) * a[l + 1], axis=-1)
        if squares is not None:
            coupling = coupling + 0.5 * xp.sum((c[l] @ squares[l]) * c[l + 1], axis=-1)
        neg_f = neg_f + coupling
    return -neg_f


def free_energy(W, visible: Layer, hidden: Layer, s: Solution):
    """An RBM's F per solution (..., K), float64: :func:`stack_free_energy` on its two layers
    (Eq. 36); −F estimates ln Z of the unnormalised model."""
    return stack_free_energy([W], [visible, hidden], s.stack)


def magnetisations(s: StackSolution) -> np.ndarray:
    """[a_0, …, a_L] per solution (host), (..., K, Σ n_l)."""
    return np.concatenate([to_numpy(t) for t in s.a], axis=-1)


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


def unique_solutions(s: Solution | StackSolution, tol: float = 1e-3) -> np.ndarray:
    """:func:`fixed_points` of a solution of one model, on all its layers' magnetisations
    ([a^v, a^h] for an RBM)."""
    s = s.stack if isinstance(s, Solution) else s
    return fixed_points(magnetisations(s), to_numpy(s.converged), tol)


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


def stack_log_partition(
    couplings, layers: list[Layer], s: StackSolution, tol: float = 1e-3, rule: str = "uniform"
):
    """(ln Z_TAP, F of each unique solution) of a single model's free solutions: the distinct
    fixed points' (:func:`unique_solutions`) free energies combined by ``rule``
    (:func:`combine_log_z`; uniform is Fig. 2's and Fig. 3's estimate). Float64 on the host."""
    f = to_numpy(stack_free_energy(couplings, layers, s))
    f_unique = f[unique_solutions(s, tol)]
    return combine_log_z(f_unique, rule), f_unique


def log_partition(W, visible: Layer, hidden: Layer, s: Solution, tol: float = 1e-3, rule: str = "uniform"):
    """An RBM's (ln Z_TAP, F of each unique solution): :func:`stack_log_partition` on its two
    layers."""
    return stack_log_partition([W], [visible, hidden], s.stack, tol, rule)


def _t(x):
    return x.swapaxes(-1, -2)


def stack_statistics(couplings, s: StackSolution) -> tuple[list, list]:
    """The solutions' averages of ∂(−F)/∂W_l = a_{l−1}ᵀ a_l + W_l ⊙ c_{l−1}ᵀ c_l (l = 1 … L) and
    of ∂(−F)/∂U_l = a_l (l = 0 … L): the terms of Eqs. 126–129."""
    k = s.a[0].shape[-2]
    dW = [
        _t(s.a[l]) @ (s.a[l + 1] / k) + W * (_t(s.c[l]) @ (s.c[l + 1] / k)) for l, W in enumerate(couplings)
    ]
    return dW, [a.mean(axis=-2) for a in s.a]


def stack_gradient(
    couplings, clamped_solution: StackSolution, free_solution: StackSolution
) -> tuple[list, list]:
    """Eqs. 126–129: (ΔW_1 … ΔW_L, ΔU_0 … ΔU_L), the clamped statistics minus the free ones."""
    (pos_W, pos_U), (neg_W, neg_U) = (
        stack_statistics(couplings, s) for s in (clamped_solution, free_solution)
    )
    return [p - q for p, q in zip(pos_W, neg_W)], [p - q for p, q in zip(pos_U, neg_U)]


def gradient(W, visible: Layer, hidden: Layer, x, s: Solution) -> dict[str, Any]:
    """An RBM's Eqs. 40–42: data statistics of x (M rows; the exact clamped hidden moments) minus
    the TAP solutions' (K rows), by name: ``W``, ``b_v``, ``b_h`` (the fields) and ``v_theta`` /
    ``h_theta`` for prior parameters; at naive mean-field solutions (order 1), the derivatives of
    the first-order free energy."""
    xp = namespace(W)
    m, k = x.shape[-2], s.a_v.shape[-2]
    (a_x, _), product = clamped_hidden(W, hidden, x)
    grad = {
        "W": _t(x) @ (a_x / m) - _t(s.a_v) @ (s.a_h / k),
        "b_v": x.mean(axis=-2) - s.a_v.mean(axis=-2),
        "b_h": a_x.mean(axis=-2) - s.a_h.mean(axis=-2),
    }
    if s.order == 2:
        grad["W"] -= W * (_t(s.c_v) @ (s.c_h / k))
    squares, a, c = ([W * W] if s.order == 2 else None), [s.a_v, s.a_h], [s.c_v, s.c_h]
    if visible.theta is not None:
        B_v, A_v = layer_fields([W], squares, a, c, 0)  # Eqs. 33–34 at the solutions
        data = visible.prior.grad_log_base(x, *visible.theta_rows)
        model = visible.grad_log_z(B_v, A_v)
        grad["v_theta"] = xp.stack([d.mean(axis=-2) - g.mean(axis=-2) for d, g in zip(data, model)], axis=-2)
    if hidden.theta is not None:
        B_h, A_h = layer_fields([W], squares, a, c, 1)
        data = hidden.grad_log_z(product, 0.0 * product)
        model = hidden.grad_log_z(B_h, A_h)
        grad["h_theta"] = xp.stack([d.mean(axis=-2) - g.mean(axis=-2) for d, g in zip(data, model)], axis=-2)
    return grad
