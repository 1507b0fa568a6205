"""Pseudo-log-likelihood PL(v) = Σ_i log p(v_i | v_−i) (Besag 1975).

Flipping unit i gives v^(i) with vW + b_h changed by s_i W_i, s_i = 1 − 2 v_i, and
log p(v_i | v_−i) = −F(v) − logaddexp(−F(v), −F(v^(i))) = −softplus(F(v) − F(v^(i))).
All flips of a chunk of rows are evaluated at once in a (chunk, units, n_hidden) tensor.
Potts visible units (q one-hot columns each) have q alternatives per unit instead of one flip:
rbmlab.evaluators.pseudo_likelihood_potts.
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.backend.ops import softplus
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.base import Evaluator, EvaluatorConfig, mean, require_units
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.evaluators.pseudo_likelihood_potts import potts_log_cond
from rbmlab.limits import UNITS
from rbmlab.models.base import Bipartite
from rbmlab.units.requirements import BERNOULLI, CATEGORICAL
from rbmlab.validation import option


def _flip_log_cond(rbm, v, x, units=None):
    """log p(v_i | v_−i) for the given units ((B, k) indices; all units when None), float64."""
    xp = rbm.xp
    f64 = xp.float64
    s = 1.0 - 2.0 * v  # (B, n_v): sign of each flip
    if units is None:
        Wf = rbm.W[None, :, :]  # (1, n_v, n_h)
        bf = rbm.b_v[None, :]
    else:
        s = xp.take_along_axis(s, units, axis=1)  # (B, k)
        Wf = rbm.W[units]  # (B, k, n_h)
        bf = rbm.b_v[units]
    t = s[:, :, None] * Wf
    t += x[:, None, :]  # flipped pre-activations
    xp.logaddexp(0.0, t, out=t)  # softplus, in place
    sp_flip = xp.sum(t, axis=-1, dtype=f64)  # (B, k)
    del t
    sp = xp.sum(softplus(x), axis=-1, dtype=f64)  # (B,)
    # −F(v^(i)) + F(v) = s_i b_v,i + Σ_j [softplus(x_j + s_i W_ij) − softplus(x_j)]
    delta = (s * bf).astype(f64) + sp_flip - sp[:, None]
    return -softplus(delta)


def pseudo_log_likelihood(rbm, v, rng=None, n_units: int | None = None, chunk_size: int = 64):
    """Per-row pseudo-log-likelihood, float64.

    ``n_units=None``: exact sum over all visible units. ``n_units=k``: per row, k units drawn
    uniformly without replacement (argsort of uniforms from ``rng``), the sum scaled by
    n_units_total / k (an unbiased estimate). Rows are processed ``chunk_size`` at a time.
    A unit is a column of {0, 1} units, q columns of Potts units.
    """
    if rbm.W.ndim != 2:
        raise ValueError(f"expected a single RBM with 2-D W, got W of shape {tuple(rbm.W.shape)}")
    xp = rbm.xp
    v = xp.asarray(v, dtype=rbm.W.dtype)
    width = rbm.visible_units.width()
    log_cond = _flip_log_cond if width == 1 else potts_log_cond
    n_v = rbm.n_visible // width
    if n_units is not None:
        n_units = int(n_units)
        if not 1 <= n_units <= n_v:
            raise ValueError(f"n_units must be in [1, {n_v}], got {n_units}")
        if rng is None:
            raise ValueError("stochastic pseudo-likelihood (n_units set) needs rng")
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    out = []
    for start in range(0, v.shape[0], chunk_size):
        vc = v[start : start + chunk_size]
        x = vc @ rbm.W + rbm.b_h
        if n_units is None:
            out.append(xp.sum(log_cond(rbm, vc, x), axis=1))
        else:
            u = rng.random((vc.shape[0], n_v), dtype=xp.float64)
            units = xp.argsort(u, axis=1)[:, :n_units]
            out.append(xp.sum(log_cond(rbm, vc, x, units), axis=1) * (n_v / n_units))
    if not out:
        return xp.zeros(0, dtype=xp.float64)
    return xp.concatenate(out)


@dataclass
class PseudoLikelihoodConfig(EvaluatorConfig):
    name: str = option("pl", "evaluator")
    n_units: int = option(
        0, "0: exact, over all units; k: k random units per example, rescaled", lo=0, hi=UNITS
    )


class PseudoLikelihood(Evaluator):
    """Pseudo-log-likelihood PL(v) = Σ_i log p(v_i | v_−i) (Besag 1975), each term from the free
    energies of v and v with unit i flipped (q alternatives per Potts unit).

    Registered as ``pl``; options in :class:`PseudoLikelihoodConfig`.
    """

    config_class = PseudoLikelihoodConfig
    units = {"visible": (*BERNOULLI, *CATEGORICAL), "hidden": BERNOULLI}  # flips; q states per Potts unit
    requires = (Bipartite,)
    metrics = (
        MetricSpec(
            "pseudo_log_likelihood",
            "nats",
            True,
            description="mean Σ_i log p(v_i | v_−i)",
            label="pseudo-log-likelihood",
        ),
    )

    def check(self, model_class, sizes):
        super().check(model_class, sizes)
        if self.config.n_units > sizes["n_visible"]:
            raise RbmlabError(
                f"evaluator.n_units: {self.config.n_units} exceeds the {sizes['n_visible']} visible units"
            )

    def evaluate(self, model, splits, context):
        require_units(model, "pl", self.units)
        units = model.n_visible // model.visible_units.width()
        if self.config.n_units > units:
            raise RbmlabError(f"evaluator.n_units: {self.config.n_units} exceeds the {units} visible units")
        return {
            f"{name}_pseudo_log_likelihood": mean(
                pseudo_log_likelihood(
                    model, batch.inputs, rng=context.rng, n_units=self.config.n_units or None
                )
            )
            for name, batch in splits.items()
        }

    def headline(self, metrics, split):
        return f"{split} pseudo-log-likelihood: {metrics[f'{split}_pseudo_log_likelihood']:.4f} nats"
