"""Binary factor graphs: variables, unary log-odds, and factor groups that own their message maths.

A graph has ``n`` binary variables x ∈ {0, 1}ⁿ (one flat index space; callers name slices of it,
e.g. the visible and hidden units of an RBM), unary log-odds u (n,) and a tuple of factor groups:

    log p̃(x) = uᵀx + Σ_groups Σ_factors log φ_a(x_a).                                    (1)

A factor group is many factors of one kind, stored as flat arrays (PGMax's factor groups; pmp
App. C): its ``variables`` (the global index of each of its local variables, no
repeats) and its parameters. Messages live with the group, in the layout its maths wants, as
log-ratios n = log m(1) − log m(0) of factor → variable messages, with one leading batch axis
(B problems solved at once, e.g. B perturbations). Each group provides

    init_messages(xp, batch, dtype)  zeros, its layout
    incoming(messages)               (B, len(variables)): Σ of its messages into each local variable
    max_product(beliefs, messages)   new messages from the beliefs (B, len(variables)) of its
                                     variables (unary + every group's incoming), each edge's cavity
                                     being its variable's belief less the message on that edge
    log_potential(x)                 (B,) Σ_factors log φ_a(x_a) of states x (B, len(variables))
    map(fn)                          the group with ``fn`` applied to its parameter arrays

so ``rbmlab.inference.max_product`` is one loop over groups, never over units or factors. A group
may also offer ``sweep_(beliefs, messages, damping)``: the damped update of its messages in place
and their incoming sums in one pass (numba kernels, rbmlab.models.factor_graph_numba), or None
where no kernel applies (no numba, RBMLAB_NUMBA=0, a device array, a dtype mismatch); the loop
then takes the path above.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from rbmlab.backend import namespace, numba_kernels, reads_are_free


def _kernels():
    """rbmlab.models.factor_graph_numba, or None when numba is missing or switched off."""
    return numba_kernels.load("rbmlab.models.factor_graph_numba")


def _fusable(W, beliefs, messages) -> bool:
    """Host arrays of one float dtype, parameters and messages C-contiguous: what the kernels
    take (the beliefs, small, are made contiguous by the caller). An array that stands for a
    device's (rbmlab.backend.reads_are_free) takes the array path a device takes."""
    arrays = (W, beliefs, messages)
    return (
        _kernels() is not None
        and all(reads_are_free(a) for a in arrays)
        and W.flags.c_contiguous
        and messages.flags.c_contiguous
        and len({a.dtype for a in arrays}) == 1
        and W.dtype in (np.float32, np.float64)
    )


def max_message(w, c):
    """Log-ratio max-product message through a pairwise factor e^{w x_a x_b} from a cavity
    log-ratio c of the other end: max(0, w + c) − max(0, c) (pmp App. C.1)."""
    xp = namespace(c)
    return xp.maximum(w + c, 0.0) - xp.maximum(c, 0.0)


@dataclass(frozen=True)
class DensePairwise:
    """Factors e^{W_ij x_i x_j} for every pair i < j of ``variables`` (a fully connected Ising
    model in the {0, 1} convention, −E1 = ½ xᵀWx; pmp App. C.1, Eq. 5). W (d, d) symmetric with zero
    diagonal; a zero W_ij sends zero messages, so sparse graphs (lattices, Erdős–Rényi) run as
    dense ones. Messages (B, 2, P), the P = d(d − 1)/2 pairs i < j in row-major order (i, then
    j > i): [:, 0, p] = factor {i, j} → x_j and [:, 1, p] = factor {i, j} → x_i. Both directions
    of a pair sit at the same index, so a sweep reads and writes them at unit stride, row by row
    (the kernel); the array path unpacks them into a (B, d, d) matrix N[b, i, j] = {i, j} → x_j."""

    variables: Any  # (d,) global indices
    W: Any  # (d, d)

    def _pairs(self):
        return namespace(self.W).triu_indices(self.W.shape[0], 1)

    def init_messages(self, xp, batch: int, dtype):
        d = self.W.shape[0]
        return xp.zeros((batch, 2, d * (d - 1) // 2), dtype=dtype)

    def _unpacked(self, messages):
        """N (B, d, d), N[b, i, j] = {i, j} → x_j (zero diagonal)."""
        xp, (i, j), d = namespace(messages), self._pairs(), self.W.shape[0]
        N = xp.zeros((messages.shape[0], d, d), dtype=messages.dtype)
        N[:, i, j] = messages[:, 0]
        N[:, j, i] = messages[:, 1]
        return N

    def incoming(self, messages):
        return self._unpacked(messages).sum(axis=1)

    def max_product(self, beliefs, messages):
        # cavity of x_i towards factor {i, j}: its belief less what that factor sent it, N[b, j, i]
        cavity = beliefs[:, :, None] - self._unpacked(messages).swapaxes(1, 2)
        N = max_message(self.W, cavity)
        i, j = self._pairs()
        return namespace(N).stack([N[:, i, j], N[:, j, i]], axis=1)

    def sweep_(self, beliefs, messages, damping: float):
        if not _fusable(self.W, beliefs, messages):
            return None
        beliefs = np.ascontiguousarray(beliefs)
        incoming = np.empty_like(beliefs)
        _kernels().dense_pairwise_sweep_(self.W, beliefs, messages, beliefs.dtype.type(damping), incoming)
        return incoming

    def log_potential(self, x):
        xp = namespace(x)
        return 0.5 * xp.einsum("bi,ij,bj->b", x, self.W, x)

    def map(self, fn):
        return replace(self, W=fn(self.W))


@dataclass(frozen=True)
class Bipartite:
    """Factors e^{W_ij v_i h_j} between two disjoint sets v (|v|) and h (|h|): an RBM's weights in
    matrix form (pmp App. C.2). ``variables`` = v's indices then h's. Messages (2, B, |v|, |h|):
    [0] factor {i, j} → v_i, [1] factor {i, j} → h_j; both updated from the previous beliefs
    (the flooding schedule)."""

    visible: Any  # (|v|,) global indices
    hidden: Any  # (|h|,)
    W: Any  # (|v|, |h|)

    @property
    def variables(self):
        return np.concatenate([np.asarray(self.visible), np.asarray(self.hidden)])

    def init_messages(self, xp, batch: int, dtype):
        return xp.zeros((2, batch) + self.W.shape, dtype=dtype)

    def incoming(self, messages):
        xp = namespace(messages)
        return xp.concatenate([messages[0].sum(axis=2), messages[1].sum(axis=1)], axis=1)

    def max_product(self, beliefs, messages):
        xp = namespace(beliefs)
        n_v = self.W.shape[0]
        to_h = max_message(self.W, beliefs[:, :n_v, None] - messages[0])  # from v_i's cavity
        to_v = max_message(self.W, beliefs[:, None, n_v:] - messages[1])  # from h_j's cavity
        return xp.stack([to_v, to_h])

    def sweep_(self, beliefs, messages, damping: float):
        if not _fusable(self.W, beliefs, messages):
            return None
        beliefs = np.ascontiguousarray(beliefs)
        incoming = np.empty_like(beliefs)
        _kernels().bipartite_sweep_(
            self.W, beliefs, messages[0], messages[1], beliefs.dtype.type(damping), incoming
        )
        return incoming

    def log_potential(self, x):
        xp = namespace(x)
        n_v = self.W.shape[0]
        return xp.einsum("bi,ij,bj->b", x[:, :n_v], self.W, x[:, n_v:])

    def map(self, fn):
        return replace(self, W=fn(self.W))


@dataclass(frozen=True)
class FactorGraph:
    """Eq. (1): ``n`` binary variables, unary log-odds ``unary`` (n,), factor ``groups``."""

    unary: Any  # (n,)
    groups: tuple[Any, ...]

    @property
    def n(self) -> int:
        return int(self.unary.shape[-1])

    def log_unnormalized(self, x):
        """(B,) log p̃(x) of (1) for states x (B, n) in {0, 1}."""
        total = x @ self.unary
        for group in self.groups:
            total = total + group.log_potential(x[:, group.variables])
        return total

    def map(self, fn) -> FactorGraph:
        """The graph with ``fn`` applied to every parameter array (e.g. a float64 host copy)."""
        return FactorGraph(fn(self.unary), tuple(group.map(fn) for group in self.groups))


def from_ising(J, h) -> FactorGraph:
    """The {0, 1} Ising model log p̃(x) = ½ xᵀJx + hᵀx (rbmlab.models.ising eq. 1) as one dense
    pairwise group (convert ±1 models first with rbmlab.models.ising.to_spins)."""
    return FactorGraph(h, (DensePairwise(np.arange(h.shape[-1]), J),))


def from_rbm(W, b_v, b_h) -> FactorGraph:
    """The binary RBM log p̃(v, h) = vᵀWh + b_vᵀv + b_hᵀh, variables v (first |v|) then h."""
    xp = namespace(W)
    n_v, n_h = W.shape
    return FactorGraph(xp.concatenate([b_v, b_h]), (Bipartite(np.arange(n_v), np.arange(n_v, n_v + n_h), W),))
