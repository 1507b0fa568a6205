"""What every learner shares: sufficient statistics, the SGD update, and the learner protocol.

A learner is a pair of pure functions around its own state (persistent chains, momentum
buffers, centering offsets...): ``init_state`` and ``step``. The runner owns the loop.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from rbmlab.config import LearnerConfig
from rbmlab.models.rbm import RBM, hidden_probs

State = dict[str, Any]   # name → array; saved in checkpoints as-is


@dataclass(frozen=True)
class Stats:
    """Batch averages of −∇θE under p(h|v): (vᵀp/B, mean v, mean p), p = p(h=1|v) (dcp eq. 6)."""

    W: Any
    b_v: Any
    b_h: Any

    def __sub__(self, other: "Stats") -> "Stats":
        return Stats(self.W - other.W, self.b_v - other.b_v, self.b_h - other.b_h)


def sufficient_statistics(rbm: RBM, v) -> Stats:
    """Rao-Blackwellised statistics of a batch: hidden probabilities, not samples."""
    p = hidden_probs(rbm, v)
    mean_p = p.mean(axis=-2)
    p *= 1.0 / v.shape[-2]          # scale the (B, n) factor, not the (m, n) product
    return Stats(v.swapaxes(-1, -2) @ p, v.mean(axis=-2), mean_p)


def sgd_update(rbm: RBM, grad: Stats, state: State, cfg: LearnerConfig) -> tuple[RBM, State]:
    """θ ← θ + lr · u,  u ← momentum · u + (grad − weight_decay · W)  (ascent on log-likelihood).

    With momentum 0 this is θ ← θ + lr · grad; velocity buffers u live in the returned state.
    """
    gW = grad.W - cfg.weight_decay * rbm.W if cfg.weight_decay else grad.W
    steps = {"W": gW, "b_v": grad.b_v, "b_h": grad.b_h}
    if cfg.momentum:
        state = dict(state)
        for name, g in steps.items():
            key = f"velocity_{name}"
            state[key] = cfg.momentum * state[key] + g if key in state else g
            steps[name] = state[key]
    return RBM(**{name: _add_scaled(getattr(rbm, name), cfg.lr, step)
                  for name, step in steps.items()}), state


def _add_scaled(x, lr: float, step):
    """x + lr · step in a fresh array, with one temporary fewer than the plain expression."""
    out = lr * step
    if out.shape != x.shape:   # a step shared by all trials broadcasts against their parameters
        return x + out
    out += x
    return out


class Learner(Protocol):
    config: LearnerConfig

    @property
    def updates_per_step(self) -> int:
        """Parameter updates made by one call of ``step`` (S-DCP makes d per mini-batch)."""

    def init_state(self, rbm: RBM, train, rng) -> State:
        """Learner state before the first mini-batch (``train`` is the whole training set)."""

    def step(self, rbm: RBM, state: State, batch, rng) -> tuple[RBM, State]:
        """One mini-batch: new parameters and state."""
