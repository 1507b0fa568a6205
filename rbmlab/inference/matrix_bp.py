"""Matrix-form loopy belief propagation on a batch of binary RBMs (crbm_bp §5.2, Alg. 1).

Each instance n is an RBM p(v, h) ∝ exp(vᵀ W h + vᵀ b¹_n + hᵀ b²_n): one shared weight matrix W
(|v| × |h|) and per-instance biases, which is what a conditional RBM is for fixed inputs x_n
(b¹ = b^v + W^{vx} x, b² = b^h + W^{hx} x). Every message of every instance is updated at once
with elementwise operations and row/column sums: no loop over units or instances.

Messages are kept as log-odds (derived here, not in the paper; equal to Alg. 1's probability form):
``L[n, i, j]`` = logit m_{j→i}(v_i = 1) (the paper's M^{vh}) and ``K[n, i, j]`` = logit
m_{i→j}(h_j = 1) (M^{hv}, stored transposed). Node log-odds η^v = b¹ + Σ_j L_ij (Eq. 16) and
η^h = b² + Σ_i K_ij (Eq. 17). With the cavity log-odds c of the sending node (its η minus the
message it received on the edge), a message is g(W_ij, c):

    sum-product (Eqs. 13, 14)   g(w, c) = log(σ(−c) + σ(c) e^w) = log1p(σ(c) (e^w − 1))
    max-product                  g(w, c) = max(0, w + c) − max(0, c)
    mixed-product (Eq. 15)       h → v as sum-product; v → h: W_ij ṽ_i, ṽ = 1[η^v > 0]

One iteration sends all h → v messages, then all v → h ones (the bipartite alternating schedule
of Alg. 1). ``tol``: an instance has converged when no message probability moved by more than tol
in an iteration (our choice: Sec. 6 does not say what ε measures); it stops there (the rest of the
batch iterates without it, so no work is spent on it and its result is the one it would have
alone), and each has its flag. ``damping`` α mixes
the old log-odds in: L ← (1 − α) L_new + α L_old (the paper uses none). Packed runs (a leading run
axis on W and the biases) are one batch of every run's instances, each with its run's W.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rbmlab.backend import namespace, reads_are_free
from rbmlab.backend.ops import ignore_overflow, sigmoid

MODES = ("sum", "max", "mixed")


@dataclass(frozen=True)
class BPResult:
    """Beliefs and messages after loopy BP on a batch of B instances (packed runs: R batches, every
    array but ``iterations`` with the run axis in front)."""

    eta_v: Any  # (B, |v|) log-odds of the visible beliefs τ^v = σ(eta_v)
    eta_h: Any  # (B, |h|) log-odds of the hidden beliefs τ^h
    L: Any  # (B, |v|, |h|) logit m_{j→i}(v_i = 1)
    K: Any  # (B, |v|, |h|) logit m_{i→j}(h_j = 1)
    converged: Any  # (B,) bool: the last iteration moved no message probability by > tol
    iterations: Any  # iterations run (by the instance that ran longest); on a device a 0-d array

    @property
    def tau_v(self):
        return sigmoid(self.eta_v)

    @property
    def tau_h(self):
        return sigmoid(self.eta_h)


def _sum_message(expm1_w, c):
    """g_sum(w, c) = log1p(σ(c)(e^w − 1)) = log1p((e^w − 1) / (1 + e^{−c})), with e^w − 1 given
    (clipped to ≥ −1 + eps by :func:`_expm1`, so the argument stays above −1); in place in the
    cavities ``c``."""
    xp = namespace(c)
    arg = xp.negative(c, out=c)
    with ignore_overflow(xp):  # e^{−c} = inf for c ≪ 0: the message is log1p(0) = 0
        xp.exp(arg, out=arg)
    arg += 1.0
    xp.divide(expm1_w, arg, out=arg)
    return xp.log1p(arg, out=arg)


def _expm1(W):
    """e^W − 1, kept above −1 (it rounds to −1 where W < log eps: such a message is below the
    log of the dtype's resolution, and is returned as that log): the floor is the float next to
    −1, so the product with σ(c) ≤ 1 never reaches −1 and no other value moves."""
    xp = namespace(W)
    floor = xp.nextafter(xp.asarray(-1.0, dtype=W.dtype), xp.asarray(0.0, dtype=W.dtype))
    return xp.maximum(xp.expm1(W), floor)


def _max_message(W, c, scratch):
    """g_max(w, c) = max(0, w + c) − max(0, c), in place in the cavities ``c`` (``scratch``: an
    array of c's shape for max(0, c))."""
    xp = namespace(c)
    positive = xp.maximum(c, 0.0, out=scratch)
    c += W
    xp.maximum(c, 0.0, out=c)
    c -= positive
    return c


def loopy_bp(
    W,
    b_v,
    b_h,
    *,
    mode: str = "sum",
    max_iter: int = 50,
    tol: float | None = 1e-3,
    damping: float = 0.0,
    init: BPResult | None = None,
) -> BPResult:
    """Loopy BP (Alg. 1 in log-odds form) on the RBMs (W, b_v[n], b_h[n]) for every row n.

    ``W``: (|v|, |h|); ``b_v``: (B, |v|); ``b_h``: (B, |h|) (a single instance: pass 1-row
    arrays). ``mode``: sum, max or mixed. Starts from all messages 1/2 and τ^h = σ(b²) (Alg. 1),
    or from ``init``'s messages (warm start). Each instance stops at the iteration that converges
    it, or after ``max_iter`` (``tol=None``: exactly ``max_iter``, no test, every flag False); the
    batch goes on with the rest only, so an instance's result does not depend on the others.

    Packed runs (rbmlab.run.packed): ``W`` (R, |v|, |h|), ``b_v`` (R, B, |v|), ``b_h`` (R, B, |h|);
    see :func:`_packed`."""
    if mode not in MODES:
        raise ValueError(f"loopy_bp: mode must be one of {', '.join(MODES)}, got {mode!r}")
    if W.ndim > 2:
        return _packed(W, b_v, b_h, mode=mode, max_iter=max_iter, tol=tol, damping=damping, init=init)
    return _instances(W, b_v, b_h, mode, max_iter, tol, damping, init)


def _packed(W, b_v, b_h, *, init: BPResult | None = None, **options) -> BPResult:
    """:func:`loopy_bp` of packed runs: the R × B instances as one batch of RBMs, each with its
    run's W (repeated per instance: an instance's messages are elementwise in its own W, so it
    iterates, stops and is set aside exactly as in its run alone); the result's arrays with the
    run axis back in front. ``iterations``: the pack's longest, as of one batch. On the host each
    run is its own call instead (its messages, W's e^W − 1 and set-asides at the cost it has alone:
    a repeated W costs a message-sized array and B times the exponentials)."""
    xp = namespace(W)
    runs, rows = W.shape[0], max(b_v.shape[-2], b_h.shape[-2])
    if reads_are_free(W):
        parts = [
            _instances(W[r], b_v[r], b_h[r], init=None if init is None else _run_of(init, r), **options)
            for r in range(runs)
        ]
        stacked = (
            xp.stack([getattr(p, k) for p in parts]) for k in ("eta_v", "eta_h", "L", "K", "converged")
        )
        return BPResult(*stacked, max(p.iterations for p in parts))
    b_v = xp.broadcast_to(b_v, (runs, rows, W.shape[-2])).reshape(runs * rows, -1)
    b_h = xp.broadcast_to(b_h, (runs, rows, W.shape[-1])).reshape(runs * rows, -1)
    init = None if init is None else _instance_axes(init, (runs * rows,), 2)
    result = _instances(xp.repeat(W, rows, axis=0), b_v, b_h, init=init, **options)
    return _instance_axes(result, (runs, rows), 1)


def _run_of(result: BPResult, r: int) -> BPResult:
    """Run ``r``'s part of a packed result (a warm start)."""
    arrays = (result.eta_v, result.eta_h, result.L, result.K, result.converged)
    return BPResult(*(a[r] for a in arrays), result.iterations)


def _instance_axes(result: BPResult, lead: tuple[int, ...], axes: int) -> BPResult:
    """``result`` with the ``axes`` leading (instance) axes of its arrays reshaped to ``lead``."""
    arrays = (result.eta_v, result.eta_h, result.L, result.K, result.converged)
    return BPResult(*(a.reshape(lead + a.shape[axes:]) for a in arrays), result.iterations)


def _instances(
    W, b_v, b_h, mode: str, max_iter: int, tol: float | None, damping: float, init: BPResult | None
) -> BPResult:
    """:func:`loopy_bp` on a batch of RBMs sharing ``W`` (|v|, |h|), or each with its own
    (``W`` (B, |v|, |h|): packed runs' instances, :func:`_packed`)."""
    xp = namespace(W)
    rows = max(b_v.shape[0], b_h.shape[0])  # a 1-row bias is shared by every instance
    b_v = xp.broadcast_to(b_v, (rows, W.shape[-2]))[:, :, None]  # (B, |v|, 1)
    b_h = xp.broadcast_to(b_h, (rows, W.shape[-1]))[:, None, :]  # (B, 1, |h|)
    shape = (rows,) + W.shape[-2:]
    if init is None:
        L, K = xp.zeros(shape, dtype=W.dtype), xp.zeros(shape, dtype=W.dtype)
    else:  # copies: the buffers below are written in place, the caller's warm start is not
        L, K = init.L.copy(), init.K.copy()
    expm1_w = _expm1(W) if mode != "max" else None
    if not reads_are_free(W):
        return _masked(mode, W, expm1_w, b_v, b_h, L, K, max_iter, tol, damping)
    # Every message-sized array is allocated once: each iteration writes the new messages into
    # the buffers of the iteration before last (the old ones are still needed for damping and the
    # convergence test), and ``spare`` holds the temporaries.
    buffers = _Buffers(L, K, xp)
    eta_h = b_h + K.sum(axis=1, keepdims=True)
    done = _Finished(shape[0], xp)
    t = 0
    for t in range(1, max_iter + 1):  # noqa: B007 - t is read after the loop
        L_new, K_new, eta_v, eta_h = _iteration(mode, W, expm1_w, b_v, b_h, eta_h, L, K, damping, buffers)
        converged = None
        if tol is not None:
            converged = _moved_at_most(L_new, L, tol, buffers.spare)
            if bool(converged.any()):  # K matters only where L has converged
                converged &= _moved_at_most(K_new, K, tol, buffers.spare)
        L, K = buffers.advance(L_new, K_new)
        if converged is not None and bool(converged.any()):
            L, K, eta_v, eta_h, b_v, b_h = done.set_aside(converged, L, K, eta_v, eta_h, b_v, b_h)
            W, expm1_w = (_own_rows(a, ~converged) for a in (W, expm1_w))
            buffers = _Buffers(L, K, xp)
            if done.all():
                break
    return done.result(L, K, eta_v, eta_h, t)


def _own_rows(weights, rows):
    """``weights`` of the instances ``rows`` where each instance has its own (packed runs), the
    shared ones as they are (None stays None)."""
    return weights if weights is None or weights.ndim < 3 else weights[rows]


def _iteration(mode: str, W, expm1_w, b_v, b_h, eta_h, L, K, damping: float, buffers):
    """One iteration of Alg. 1, every h → v message and then every v → h one, written into the
    buffers: (L, K, η^v, η^h) after it."""
    xp = namespace(W)
    # h → v (Eq. 13): from the cavity of h_j without v_i's message
    L_new = _messages(mode, W, expm1_w, eta_h, K, L, damping, buffers.next_L, buffers.spare)
    eta_v = b_v + L_new.sum(axis=2, keepdims=True)  # Eq. 16
    # v → h (Eq. 14, or Eq. 15 for mixed-product)
    if mode == "mixed":
        K_new = xp.multiply(W, eta_v > 0, out=buffers.next_K)
        K_new = _damped(K_new, K, damping, buffers.spare)
    else:
        K_new = _messages(mode, W, expm1_w, eta_v, L_new, K, damping, buffers.next_K, buffers.spare)
    return L_new, K_new, eta_v, b_h + K_new.sum(axis=1, keepdims=True)  # Eq. 17


def _masked(mode: str, W, expm1_w, b_v, b_h, L, K, max_iter: int, tol: float | None, damping: float):
    """:func:`loopy_bp`'s iterations with no host read (on a device): an instance that has
    converged keeps the messages and beliefs of the iteration that converged it (copied back over
    what later iterations compute for it), the result setting it aside gives; ``iterations`` is a
    0-d device array."""
    xp = namespace(W)
    buffers = _Buffers(L, K, xp)
    eta_h = b_h + K.sum(axis=1, keepdims=True)
    done = xp.zeros(L.shape[0], dtype=bool)
    iterations = xp.zeros((), dtype=xp.int64)
    for _ in range(max_iter):
        L_new, K_new, _, eta_h = _iteration(mode, W, expm1_w, b_v, b_h, eta_h, L, K, damping, buffers)
        if tol is not None:
            iterations += ~done.all()
            converged = _moved_at_most(L_new, L, tol) & _moved_at_most(K_new, K, tol)
            for a, old in ((L_new, L), (K_new, K)):
                xp.copyto(a, old, where=done.reshape(-1, 1, 1))
            done |= converged
        L, K = buffers.advance(L_new, K_new)
    if tol is None or not L.shape[0]:  # a fixed count, or no instance to converge (as the host path)
        iterations += max_iter
    # the beliefs of the kept messages: the sums the converging iteration formed (Eqs. 16, 17)
    eta_v, eta_h = b_v + L.sum(axis=2, keepdims=True), b_h + K.sum(axis=1, keepdims=True)
    return BPResult(eta_v[:, :, 0], eta_h[:, 0, :], L, K, done, iterations)


class _Buffers:
    """The message buffers of :func:`loopy_bp` beside the current (L, K): where the next
    iteration writes its messages (``next_L``, ``next_K``) and ``spare`` for its temporaries."""

    def __init__(self, L, K, xp):
        self.next_L, self.next_K, self.spare = xp.empty_like(L), xp.empty_like(K), xp.empty_like(L)
        self.L, self.K = L, K

    def advance(self, L_new, K_new):
        """(L_new, K_new) become the current messages; the buffers they replace take the next."""
        self.next_L, self.next_K = self.L, self.K
        self.L, self.K = L_new, K_new
        return L_new, K_new


class _Finished:
    """The instances of a batch that have converged, kept aside with their beliefs and messages
    while the others iterate (the arrays in the loop hold the unfinished rows only)."""

    def __init__(self, n: int, xp):
        self.xp, self.n = xp, n
        self.rows = xp.arange(n)  # the batch rows of the unfinished instances, in order
        self.kept: list[tuple] = []  # (rows, L, K, eta_v, eta_h) of each set aside

    def set_aside(self, converged, L, K, eta_v, eta_h, b_v, b_h):
        """Keep the converged rows; the unfinished rows of (L, K, eta_v, eta_h, b_v, b_h)."""
        self.kept.append(
            (self.rows[converged], L[converged], K[converged], eta_v[converged], eta_h[converged])
        )
        going = ~converged
        self.rows = self.rows[going]
        return L[going], K[going], eta_v[going], eta_h[going], b_v[going], b_h[going]

    def all(self) -> bool:
        return self.rows.size == 0

    def result(self, L, K, eta_v, eta_h, iterations: int) -> BPResult:
        """The batch's result, every instance in its row (the unfinished ones as they are now)."""
        xp = self.xp
        if not self.kept:  # no instance stopped early: the arrays are the batch's
            return BPResult(eta_v[:, :, 0], eta_h[:, 0, :], L, K, xp.zeros(self.n, dtype=bool), iterations)
        parts = [*self.kept, (self.rows, L, K, eta_v, eta_h)]
        full = [xp.empty((self.n,) + a.shape[1:], dtype=a.dtype) for a in parts[-1][1:]]
        for rows, *arrays in parts:
            for out, a in zip(full, arrays):
                out[rows] = a
        L, K, eta_v, eta_h = full
        converged = xp.ones(self.n, dtype=bool)
        converged[self.rows] = False
        return BPResult(eta_v[:, :, 0], eta_h[:, 0, :], L, K, converged, iterations)


def _messages(mode: str, W, expm1_w, eta, received, old, damping: float, out, spare):
    """One direction's damped messages g(W, η − received) on every edge (Eqs. 13–14): the
    senders' log-odds ``eta`` less the message each received on the edge is its cavity. Written
    into ``out`` (``spare``: a buffer for the temporaries; both of the messages' shape). On cupy
    one fused kernel (rbmlab.backend.cupy_kernels.bp_messages) instead of six passes, where the
    arrays share one dtype (the kernel's T; mixed dtypes take the promoting array path)."""
    xp = namespace(received)
    weights = W if mode == "max" else expm1_w
    if xp.__name__ == "cupy" and weights.dtype == eta.dtype == received.dtype == old.dtype:
        from rbmlab.backend import cupy_kernels  # noqa: PLC0415

        return cupy_kernels.bp_messages(mode, weights, eta, received, old, damping)
    cavity = xp.subtract(eta, received, out=out)
    new = _max_message(W, cavity, spare) if mode == "max" else _sum_message(expm1_w, cavity)
    return _damped(new, old, damping, spare)


def _damped(new, old, damping: float, spare):
    """(1 − α) new + α old, in place in ``new`` (``spare``: a buffer of their shape)."""
    if not damping:
        return new
    new *= 1.0 - damping
    new += namespace(new).multiply(old, damping, out=spare)
    return new


def _moved_at_most(new, old, tol: float, spare=None):
    """Per instance: did no message probability move by more than ``tol``? The same answer as
    comparing every computed σ, and cheap in the common cases: |σ(a) − σ(b)| ≤ |a − b| / 4
    settles it for an instance whose largest log-odds change is ≤ 4 tol (less a margin of 8 ulps
    of 1 for the rounding of σ in the dtype), and the edge with that largest change settles it the
    other way when its probability moved by more than tol; only an instance that neither settles
    (its largest changes on saturated edges, or within the margin) has every probability compared."""
    xp = namespace(new)
    n = new.shape[0]
    if n == 0:
        return xp.ones(0, dtype=bool)
    if not reads_are_free(new):  # on a device, the answer in full: fewer passes than the shortcut
        return xp.abs(sigmoid(new) - sigmoid(old)).reshape(n, -1).max(axis=1) <= tol
    change = xp.subtract(new, old, out=spare).reshape(n, -1)  # (spare: a buffer of their shape)
    xp.abs(change, out=change)
    edge = change.argmax(axis=1)[:, None]
    small = xp.take_along_axis(change, edge, axis=1)[:, 0] <= 4.0 * (tol - 8 * xp.finfo(new.dtype).eps)
    a = xp.take_along_axis(new.reshape(n, -1), edge, axis=1)[:, 0]
    b = xp.take_along_axis(old.reshape(n, -1), edge, axis=1)[:, 0]
    result = small.copy()
    unsettled = xp.flatnonzero(~small & (xp.abs(sigmoid(a) - sigmoid(b)) <= tol))
    if unsettled.size:  # rare: every probability of these instances compared
        moved = xp.abs(sigmoid(new[unsettled]) - sigmoid(old[unsettled]))
        result[unsettled] = moved.reshape(unsettled.size, -1).max(axis=1) <= tol
    return result


def cavities(result: BPResult):
    """(C^v, C^h), each (B, |v|, |h|) (packed runs: (R, B, |v|, |h|)): the log-odds of v_i without
    h_j's message, and of h_j without v_i's."""
    return result.eta_v[..., :, None] - result.L, result.eta_h[..., None, :] - result.K


def pairwise_log_potentials(W, result: BPResult):
    """The unnormalised log pairwise beliefs of every edge (Eq. 18) in the order (1,1), (1,0),
    (0,1), (0,0) of (v_i, h_j): W + C^v + C^h, C^v, C^h, 0."""
    cv, ch = cavities(result)
    return W + cv + ch, cv, ch


def pairwise_beliefs(W, result: BPResult):
    """Γ_ij = τ(v_i = 1, h_j = 1) of every edge (Eq. 18, normalised over the four states): with
    s₁₁ = W + C^v + C^h the log potential of (1, 1), dividing through by e^{s₁₁} gives

        Γ = 1 / (1 + e^{−s₁₁} + e^{−(W + C^h)} + e^{−(W + C^v)}),

    in place on three arrays (an e^{…} = inf is the limit Γ = 0). Packed runs: W (R, |v|, |h|),
    each run's W on its instances."""
    xp = namespace(W)
    W = W[..., None, :, :]  # (..., 1, |v|, |h|): one W per batch of instances
    cv, ch = cavities(result)
    cv += W  # W + C^v
    ch += W  # W + C^h
    gamma = cv + ch
    gamma -= W  # s₁₁
    with ignore_overflow(xp):
        for a in (cv, ch, gamma):
            xp.exp(xp.negative(a, out=a), out=a)
    gamma += cv
    gamma += ch
    gamma += 1.0
    return xp.reciprocal(gamma, out=gamma)


def bethe_log_z(W, b_v, b_h, result: BPResult):
    """(B,) the Bethe approximation of log Z at BP's beliefs (derived here; the paper gives no
    formula):

        b¹·τ^v + b²·τ^h + Σ_ij W_ij Γ_ij + Σ_ij H(τ_ij) − (|h| − 1) Σ_i H(τ^v_i) − (|v| − 1) Σ_j H(τ^h_j)

    At a sum-product fixed point its gradient in (W, b¹, b²) is (Σ_n Γ, τ^v, τ^h) per instance."""
    xp = namespace(W)
    s11, s10, s01 = pairwise_log_potentials(W, result)
    logs = xp.stack([s11, s10, s01, xp.zeros_like(s11)])
    m = logs.max(axis=0)
    log_norm = m + xp.log(xp.exp(logs - m).sum(axis=0))
    p = xp.exp(logs - log_norm)  # (4, B, |v|, |h|)
    edge_entropy = -(p * (logs - log_norm)).sum(axis=(0, 2, 3))
    tv, th = sigmoid(result.eta_v), sigmoid(result.eta_h)
    n_v, n_h = W.shape
    energy = (b_v * tv).sum(axis=1) + (b_h * th).sum(axis=1) + (W * p[0]).sum(axis=(1, 2))
    return (
        energy
        + edge_entropy
        - (n_h - 1) * _bernoulli_entropy(result.eta_v)
        - (n_v - 1) * _bernoulli_entropy(result.eta_h)
    )


def _bernoulli_entropy(eta):
    """Σ over the last axis of H(σ(η)), from the log-odds: softplus(η) − σ(η) η."""
    xp = namespace(eta)
    return (xp.logaddexp(0.0, eta) - sigmoid(eta) * eta).sum(axis=-1)


def decode(result: BPResult):
    """The visible states BP predicts: 1[η^v > 0] (marginal mode for sum-product, joint MAP for
    max-product, marginal MAP for mixed-product)."""
    return (result.eta_v > 0).astype(result.eta_v.dtype)
