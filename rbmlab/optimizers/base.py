"""What every optimizer shares (see rbmlab.optimizers for the calling shape)."""
from __future__ import annotations


class Optimizer:
    """Base class: holds the config; subclasses write ``update(model, grad, state, lr)``."""

    config_class: type

    def __init__(self, config=None):
        self.config = config if config is not None else self.config_class()

    def update(self, model, grad: dict, state: dict, lr: float):
        raise NotImplementedError
