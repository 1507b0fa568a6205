"""What every optimizer shares (see rbmlab.optimizers for the calling shape)."""
from __future__ import annotations

from rbmlab.backend import namespace


def penalized(model, name: str, g, weight_decay: float, l1: float):
    """The ascent direction with the penalties on an interaction parameter θ (W, J) applied,
    g − weight_decay · θ − l1 · sign(θ); ``g`` itself for other parameters or no penalty (a new
    array whenever a penalty applies, so a caller may own the result only when ``g`` was its own)."""
    if name not in model.INTERACTIONS or not (weight_decay or l1):
        return g
    theta = getattr(model, name)
    step = g - weight_decay * theta if weight_decay else g
    return step - l1 * namespace(theta).sign(theta) if l1 else step


class Optimizer:
    """Base class: holds the config; subclasses write ``update(model, grad, state, lr)``."""

    config_class: type

    def __init__(self, config=None):
        self.config = config if config is not None else self.config_class()

    def update(self, model, grad: dict, state: dict, lr: float):
        raise NotImplementedError
