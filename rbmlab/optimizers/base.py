"""What every optimizer shares (see rbmlab.optimizers for the calling shape)."""

from __future__ import annotations

from rbmlab.backend import namespace


def penalized(model, name: str, g, weight_decay: float, l1: float):
    """The ascent direction with the penalties on an interaction parameter θ (W, J) applied,
    g − weight_decay · θ − l1 · sign(θ); ``g`` itself for other parameters or no penalty (a new
    array whenever a penalty applies, so a caller may own the result only when ``g`` was its own).

    The penalty acts on rbmlab's own parameters: pmp's ℓ1 of 0.01 on the ±1 weights W₂ of its
    E2 convention (App. B.1; J = 2 W₂ here, gradient (C_d − C_m) on J but 2 (C_d − C_m) on W₂)
    is l1 = 0.005 on J, with Adam's lr doubled for the same steps in W₂."""
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

    def update_cost(self, model) -> float | None:
        """Multiply-adds (rbmlab.backend.macs) of one ``update`` of ``model``, per model (trial);
        None: not declared (the default). An elementwise rule costs 0."""
        return None

    def buffers(self, model) -> dict[str, tuple[int, ...]]:
        """The learner state entries ``update`` keeps, each with its shape: created at the first
        update, so a checkpoint holds them once training has stepped (resume checks them)."""
        return {}
