"""Parallel damped max-product on a batch of binary factor graphs, and perturb-and-max-product.

``max_product`` solves B MAP problems that share a graph's factors and differ in their unary
log-odds (B, n), all messages at once (pmp Sec 3, Alg. 1): each iteration ("full sweep") computes
every factor group's new messages from the previous beliefs (flooding), damps them,

    m ← m + α (m_new − m),      α = ½ by default (α = 1: undamped),                        (1)

and forms the beliefs b = u + Σ_groups incoming(m). Messages start at 0; there is no convergence
test (PMP runs a fixed number of sweeps). ``decode`` is x_i = 1[b_i > 0] (the authors' code;
ties have probability 0 under continuous noise).

``perturb_and_max_product`` (PMP) adds Logistic(0, 1) noise to every unary log-odds, which for
binary variables is the Gumbel perturbation of both states' log-potentials (derived from the
Gumbel noise of pmp Sec 2.2), runs ``max_product`` from zero messages, decodes, and returns the
samples with the perturbed objective at them (its mean estimates log Z, pmp Secs 2.2 and 5.2).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rbmlab.backend import namespace
from rbmlab.backend.ops import uniform


@dataclass(frozen=True)
class MaxProductResult:
    beliefs: Any  # (B, n) unary + all incoming messages, after the last sweep
    messages: tuple  # per factor group, its layout
    sweeps: int


def beliefs_of(graph, unary, messages, incoming=None):
    """b = u + Σ_groups incoming(m), (B, n) (``incoming``: those sums, already formed)."""
    beliefs = unary.copy()
    for k, (group, m) in enumerate(zip(graph.groups, messages)):
        beliefs[:, group.variables] += group.incoming(m) if incoming is None else incoming[k]
    return beliefs


def sweep(group, beliefs, messages, damping: float):
    """(messages, their incoming sums) after one damped update (1) of ``group`` from ``beliefs``
    of its variables: its fused in-place kernel where it has one, else the array path."""
    incoming = getattr(group, "sweep_", lambda *a: None)(beliefs, messages, damping)
    if incoming is not None:
        return messages, incoming
    proposed = group.max_product(beliefs, messages)
    if damping != 1.0:
        proposed -= messages
        proposed *= damping
        proposed += messages
    return proposed, group.incoming(proposed)


def max_product(graph, unary, sweeps: int, *, damping: float = 0.5, messages=None) -> MaxProductResult:
    """``sweeps`` flooding iterations of (1) on the problems ``unary`` (B, n) over ``graph``'s
    factors, from ``messages`` (default: all 0; given ones are copied, never modified)."""
    if not 0.0 < damping <= 1.0:
        raise ValueError(f"max_product: damping must be in (0, 1] (1: undamped), got {damping}")
    xp = namespace(unary)
    if messages is None:
        messages = tuple(g.init_messages(xp, unary.shape[0], unary.dtype) for g in graph.groups)
    else:
        messages = tuple(m.copy() for m in messages)
    beliefs = beliefs_of(graph, unary, messages)
    for _ in range(sweeps):
        updated = [
            sweep(group, beliefs[:, group.variables], m, damping) for group, m in zip(graph.groups, messages)
        ]
        messages = tuple(m for m, _ in updated)
        beliefs = beliefs_of(graph, unary, messages, [inc for _, inc in updated])
    return MaxProductResult(beliefs, messages, sweeps)


def decode(beliefs):
    """x_i = 1[b_i > 0], in the beliefs' dtype."""
    return (beliefs > 0).astype(beliefs.dtype)


def logistic_noise(rng, shape, dtype):
    """Logistic(0, 1) draws (the difference of two Gumbels), log u − log(1 − u), u ~ U(0, 1)
    kept off 0 and 1 by the dtype's resolution."""
    u = uniform(rng, shape, dtype)
    xp = namespace(u)
    eps = xp.finfo(u.dtype).eps
    u = xp.clip(u, eps, 1.0 - eps)
    return xp.log(u) - xp.log1p(-u)


def perturb_and_max_product(graph, rng, n_samples: int, sweeps: int, *, damping: float = 0.5, noise=None):
    """(samples (B, n) in {0, 1}, perturbed objective at them (B,)): B = ``n_samples`` PMP draws
    (fresh noise and zero messages for each; ``noise`` (B, n) given instead of drawn)."""
    if noise is None:
        noise = logistic_noise(rng, (n_samples, graph.n), graph.unary.dtype)
    unary = graph.unary[None, :] + noise
    result = max_product(graph, unary, sweeps, damping=damping)
    x = decode(result.beliefs)
    objective = (x * noise).sum(axis=1) + graph.log_unnormalized(x)
    return x, objective
