"""Adam (Kingma & Ba 2015), as gradient ascent on the log-likelihood.

m ← β₁m + (1 − β₁)g,  v ← β₂v + (1 − β₂)g²,  θ ← θ + lr · m̂ / (√v̂ + ε)  with m̂ = m / (1 − β₁ᵗ),
v̂ = v / (1 − β₂ᵗ); the interaction parameters (W, J) may step at a multiple of lr
(``interaction_lr_scale``: Adam moves each parameter by about its own lr, so Adam on the paper's
W = J/2 at lr moves J by 2 lr and the fields by lr; pmp App. B.1 runs Adam on W). The moments and
the step count t live in the learner state (``adam_m_<name>``,
``adam_v_<name>``, ``adam_t``), so a resumed run continues exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.optimizers.base import Optimizer, penalized, rate_for
from rbmlab.validation import Config, option


@dataclass
class AdamConfig(Config):
    name: str = option("adam", "optimizer")
    beta1: float = option(0.9, "first-moment decay", lo=0, hi=1, open_hi=True, label="Adam β1")
    beta2: float = option(0.999, "second-moment decay", lo=0, hi=1, open_hi=True, label="Adam β2")
    eps: float = option(1e-8, "denominator guard", lo=0, open_lo=True, label="Adam ε")
    weight_decay: float = option(
        0.0, "L2 penalty on the interaction parameters (W, J)", lo=0, label="weight decay"
    )
    l1: float = option(
        0.0,
        "L1 penalty on the interaction parameters (W, J): l1 * sign(theta) "
        "taken off the gradient before the moments",
        lo=0,
        neutral=0.0,
        label="L1 penalty",
    )
    interaction_lr_scale: float = option(
        1.0,
        "the interaction parameters (W, J) step at lr x this, "
        "the others at lr (pmp: Adam at lr on the paper's W = J/2 "
        "is lr x 2 on J)",
        lo=0,
        open_lo=True,
        neutral=1.0,
        label="interaction learning-rate scale",
    )


class Adam(Optimizer):
    """Adam (Kingma & Ba 2015) as gradient ascent on the log-likelihood, the interaction parameters
    optionally at a multiple of lr (pmp App. B.1 runs Adam on W); the moments and step count live in
    the learner state.

    Registered as ``adam``; options (``eps``, ``weight_decay``, ``interaction_lr_scale``) in
    :class:`AdamConfig`.
    """

    config_class = AdamConfig

    def update_cost(self, model) -> float:
        return 0.0  # elementwise

    def buffers(self, model) -> dict[str, tuple[int, ...]]:
        shapes = {name: tuple(a.shape) for name, a in model.arrays().items()}
        return {
            "adam_t": (),
            **{f"adam_{moment}_{name}": shape for name, shape in shapes.items() for moment in "mv"},
        }

    def update(self, model, grad: dict, state: dict, lr: float):
        cfg, xp = self.config, model.xp
        state = dict(state)
        t = state.get("adam_t", 0) + 1  # a host counter (Backend.learner_state)
        state["adam_t"] = t
        scale = lr * (1.0 - cfg.beta2**t) ** 0.5 / (1.0 - cfg.beta1**t)
        new = {}
        for name, g in grad.items():
            theta = getattr(model, name)
            g = penalized(model, name, g, cfg.weight_decay, cfg.l1)
            m = state.get(f"adam_m_{name}", 0.0) * cfg.beta1 + (1.0 - cfg.beta1) * g
            v = state.get(f"adam_v_{name}", 0.0) * cfg.beta2 + (1.0 - cfg.beta2) * (g * g)
            state[f"adam_m_{name}"], state[f"adam_v_{name}"] = m, v
            eps = cfg.eps * (1.0 - cfg.beta2**t) ** 0.5  # ε on v̂, moved into the scaled form
            step = scale * cfg.interaction_lr_scale if name in model.INTERACTIONS else scale
            new[name] = theta + rate_for(step, theta) * m / (xp.sqrt(v) + eps)
        return model.replace(**new), state
