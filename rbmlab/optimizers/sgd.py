"""Stochastic gradient ascent with momentum, and L2 and L1 penalties on the interaction parameters."""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.optimizers.base import Optimizer, penalized, rate_for
from rbmlab.validation import Config, option


@dataclass
class SGDConfig(Config):
    name: str = option("sgd", "optimizer")
    momentum: float = option(0.0, "velocity decay", lo=0, hi=1, open_hi=True, label="momentum")
    weight_decay: float = option(
        0.0, "L2 penalty on the interaction parameters (W, J)", lo=0, label="weight decay"
    )
    l1: float = option(
        0.0,
        "L1 penalty on the interaction parameters (W, J): l1 * sign(theta) taken off the gradient",
        lo=0,
        neutral=0.0,
        label="L1 penalty",
    )
    momentum_on: str = option(
        "all",
        "parameters with a velocity: all | interactions (W, J; the others take plain steps, as tap's Alg. 2)",
        choices=("all", "interactions"),
        neutral="all",
        label="momentum on",
    )

    def unread(self) -> dict[str, str]:
        return (
            {"momentum_on": "applies to momentum > 0 only (at 0 no parameter has a velocity)"}
            if not self.momentum
            else {}
        )


def add_scaled(x, lr, step, owned: bool = False):
    """x + lr · step; in ``step`` itself when it is ``owned`` (a gradient handed over), else in
    one fresh array (one temporary fewer than the plain expression). ``lr``: a float, or packed
    runs' rates (rbmlab.optimizers.base.RunRates)."""
    lr = rate_for(lr, x)
    if step.shape != x.shape or step.dtype != x.dtype:  # e.g. a step shared by all trials
        return x + lr * step
    out = step if owned else lr * step
    if owned:
        out *= lr
    out += x
    return out


class SGD(Optimizer):
    """θ ← θ + lr · u,  u ← momentum · u + (g − weight_decay · θ − l1 · sign θ)  (ascent on the
    log-likelihood; the penalties on W or J only; ``momentum_on=interactions``: u for W or J, the
    others θ ← θ + lr · g);
    with momentum 0, θ ← θ + lr · g. Velocities live in the state as ``velocity_<name>``."""

    config_class = SGDConfig

    def update_cost(self, model) -> float:
        return 0.0  # elementwise

    def buffers(self, model) -> dict[str, tuple[int, ...]]:
        return {f"velocity_{name}": tuple(a.shape) for name, a in model.arrays().items()}

    def update(self, model, grad: dict, state: dict, lr: float):
        cfg = self.config
        steps = {name: penalized(model, name, g, cfg.weight_decay, cfg.l1) for name, g in grad.items()}
        moving = [
            name
            for name in steps
            if cfg.momentum and (cfg.momentum_on == "all" or name in model.INTERACTIONS)
        ]
        if moving:
            state = dict(state)
        for name in moving:
            key = f"velocity_{name}"
            state[key] = cfg.momentum * state[key] + steps[name] if key in state else steps[name]
            steps[name] = state[key]
        # a step that is not a velocity is the handed-over gradient: it may be scaled in place
        return model.replace(
            **{
                name: add_scaled(getattr(model, name), lr, step, name not in moving)
                for name, step in steps.items()
            }
        ), state
