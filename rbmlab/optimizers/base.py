"""What every optimizer shares (see rbmlab.optimizers for the calling shape)."""

from __future__ import annotations

import numpy as np

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


class RunRates:
    """The step sizes of packed runs (rbmlab.run.packed), one per run, standing where a single run
    passes its float ``lr``: scaled like one (float64 on the host, as Python scales a float), and
    applied to a parameter with a leading run axis by :func:`rate_for`, each run at its own."""

    def __init__(self, values):
        self.values = np.asarray(values, dtype=np.float64)
        self._arrays: dict = {}

    def __mul__(self, factor: float) -> RunRates:
        return RunRates(self.values * factor)

    __rmul__ = __mul__

    def __truediv__(self, divisor: float) -> RunRates:
        return RunRates(self.values / divisor)

    def __bool__(self) -> bool:
        return bool(self.values.all())

    def shaped_like(self, theta):
        """The rates in ``theta``'s dtype and namespace, shaped (R, 1, ..., 1) to scale it (R, ...):
        each rounded to the dtype as a float ``lr`` is where it scales a float32 array."""
        xp, key = namespace(theta), (namespace(theta).__name__, theta.dtype, theta.ndim)
        if key not in self._arrays:  # moved to the device once per pack and shape
            shape = (len(self.values),) + (1,) * (theta.ndim - 1)
            self._arrays[key] = xp.asarray(self.values.astype(theta.dtype).reshape(shape))
        return self._arrays[key]


def rate_for(lr, theta):
    """The step size that scales parameter ``theta``: ``lr`` itself (a float), or packed runs'
    :class:`RunRates` shaped to its leading run axis."""
    return lr.shaped_like(theta) if isinstance(lr, RunRates) else lr


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
