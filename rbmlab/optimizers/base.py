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
    passes its float ``lr``, and applied to a parameter with a leading run axis by :func:`rate_for`,
    each run at its own. Scaled like a float (Adam's bias correction, tap's decay): each scaling is
    kept and applied in float64 where the rates are used, the operations Python does on a float in
    the same order, so a run's rate rounds to the parameter's dtype exactly as its float would; the
    base rates move to the device once per shape, not at every step."""

    def __init__(self, values, scalings: tuple = (), cache: dict | None = None):
        self.base = np.asarray(values, dtype=np.float64)
        self.scalings = scalings  # ((operation, factor), ...), in the order they were applied
        self._cache = {} if cache is None else cache  # base rates per (namespace, ndim), shared

    def _scaled(self, operation: str, factor: float) -> RunRates:
        return RunRates(self.base, (*self.scalings, (operation, float(factor))), self._cache)

    def __mul__(self, factor: float) -> RunRates:
        return self._scaled("mul", factor)

    __rmul__ = __mul__  # x · y = y · x in IEEE arithmetic

    def __truediv__(self, divisor: float) -> RunRates:
        return self._scaled("div", divisor)

    @property
    def values(self):
        """The rates on the host, float64, scaled."""
        return self._apply(self.base.copy())

    def _apply(self, rates):
        for operation, factor in self.scalings:
            rates = rates * factor if operation == "mul" else rates / factor
        return rates

    def shaped_like(self, theta):
        """The rates in ``theta``'s dtype and namespace, shaped (R, 1, ..., 1) to scale it (R, ...)."""
        xp = namespace(theta)
        key = (xp.__name__, theta.ndim)
        if key not in self._cache:
            shape = (len(self.base),) + (1,) * (theta.ndim - 1)
            self._cache[key] = xp.asarray(self.base.reshape(shape))  # float64
        return self._apply(self._cache[key]).astype(theta.dtype)


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
