"""Perturb-and-descend (Ravanbakhsh et al. 2014; Tomczak et al. 2019, the method of pmp's reference
[32], which pmp App. B.4 and Figure 8 compare against): ``inference=perturb_descend``.

Built from the methods' published descriptions, not their code. Each call perturbs the unary
potentials once, with first-order Gumbel noise: every unit's log-potential difference between its
two values gets an independent Logistic(0, 1) draw (the difference of two Gumbels), times
``scale`` (the perturbation's temperature: 1 is the Gumbel-max scale). For a unit with values
(lo, hi) that is a bias shift ε = scale · L / (hi − lo). It then descends the perturbed energy from
the states it is given (the data, in learning), ``steps`` times: every hidden unit set to its best
value given v, then every visible unit given h (a block coordinate descent; each half-step can only
lower the perturbed energy, and a state that neither half-step moves is a local minimum of it):

    h ← argmax_h e^{h·(vW + b_h + ε_h)},    v ← argmax_v e^{v·(hWᵀ + b_v + ε_v)}.

One step from a fixed v is exactly a block-Gibbs sweep (a perturbed argmax of one unit given the
rest is a draw from its conditional); more steps on the same perturbation descend towards a
local minimum instead of mixing. ``learner=cd learner.sampler=perturb_descend learner.k=K`` is
their learning rule (the negative phase from the data, K descent steps; its hidden statistics
E[h | v], as every learner here, where [32] may use the descended h: not stated in pmp).
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.inference.base import InferenceConfig, InferenceMethod, chain_rows
from rbmlab.inference.max_product import logistic_noise
from rbmlab.models.base import Bipartite
from rbmlab.validation import option


def unit_noise(units, rng, shape, dtype, scale: float):
    """The bias shift of first-order Gumbel perturbation for units with values (lo, hi):
    scale · Logistic(0, 1) / (hi − lo)."""
    lo, hi = units.values
    noise = logistic_noise(rng, shape, dtype)
    noise *= scale / (hi - lo)
    return noise


def best_values(units, field):
    """Each unit's best value under the field (the argmax of e^{x·field}): hi where field > 0."""
    lo, hi = units.values
    return lo + (hi - lo) * (field > 0).astype(field.dtype)


def descend(model, v, noise_v, noise_h, steps: int):
    """(v, h) after ``steps`` block coordinate-descent steps h | v, v | h on the model with its
    biases shifted by (noise_v, noise_h) (one row per state), from ``v``; h is the last hidden
    update (steps = 0: v unchanged, h = None)."""
    h = None
    for _ in range(steps):
        h = best_values(model.hidden_units, model.hidden_logits(v) + noise_h)
        v = best_values(model.visible_units, model.visible_logits(h) + noise_v)
    return v, h


@dataclass
class PerturbDescendConfig(InferenceConfig):
    name: str = option("perturb_descend", "inference method: perturb the biases once, then descend")
    scale: float = option(
        1.0,
        "perturbation scale (temperature): Logistic(0, scale) on each unit's log-potential difference",
        lo=0.0,
        open_lo=True,
    )


class PerturbDescend(InferenceMethod):
    """``run(model, x, rng, steps)``: one fresh perturbation per call, ``steps`` descent steps from
    ``x`` (:func:`descend`)."""

    config_class = PerturbDescendConfig
    requires = (Bipartite,)

    def run(self, model, x, rng, steps: int):
        if steps < 1:
            return x
        batch = chain_rows(model, x)  # a batch shared by all trials gets its own states per trial
        noise_h = unit_noise(model.hidden_units, rng, batch + (model.n_hidden,), x.dtype, self.config.scale)
        noise_v = unit_noise(model.visible_units, rng, batch + (model.n_visible,), x.dtype, self.config.scale)
        return descend(model, x, noise_v, noise_h, steps)[0]

    def step_cost(self, model, rows: int, steps: int) -> float:
        """vW and hWᵀ per descent step, as block Gibbs: rows·n_v·n_h·2·steps."""
        return float(rows * model.n_visible * model.n_hidden * 2 * steps)
