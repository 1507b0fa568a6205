"""Chromatic single-site Gibbs sampling for pairwise models (Ising): systematic scan by colour.

A sweep visits the model's colour classes in order. Sites in one class share no coupling, so
given the rest they are conditionally independent, each with p(x_i | x_−i) ∝ exp(a_i x_i) for
its local field a_i = h_i + Σ_j J_ji x_j (ising eq. 2): the whole class is redrawn in one
vectorised step over all chains (and trials) by the model's unit type. Each class update is an
exact Gibbs update, so a sweep leaves p(x) invariant and visits every site once (a dense model
has one site per class: the classic single-site systematic scan, as in the pmp authors' code).

With ``step=site`` one step is one single-site update instead, in site order 0, 1, …, n − 1,
going on from ``position`` (the scan index that persists across calls in the persistent-chain
samplers of Grathwohl et al.'s code, which the pmp paper's persistent panels use: k single-site
updates per learning iteration, pmp Sec 5.4); a learner keeping persistent chains carries the
position (rbmlab.learners.pcd).
"""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.inference.base import InferenceConfig, InferenceMethod, chain_rows
from rbmlab.models.base import LocalFields
from rbmlab.validation import option


@dataclass
class SiteGibbsConfig(InferenceConfig):
    name: str = option("gibbs", "inference method: systematic-scan Gibbs by colour classes")
    step: str = option(
        "sweep",
        "one step: sweep (every site once, by colour class) | site (one "
        "single-site update, the scan going on from the last position)",
        choices=("sweep", "site"),
        neutral="sweep",
        label="sampler step",
    )


class SiteGibbs(InferenceMethod):
    """``run(model, x, rng, steps, position=0)``: ``steps`` sweeps over the colour classes, or
    (``step=site``) ``steps`` single-site updates of sites position, position + 1, … (mod n)."""

    config_class = SiteGibbsConfig
    requires = (LocalFields,)

    @property
    def continues_scan(self) -> bool:
        """Whether run takes a scan ``position`` (the next is (position + steps) mod n)."""
        return self.config.step == "site"

    def run(self, model, x, rng, steps: int, position: int = 0):
        """``steps`` steps from the states ``x`` (..., B, n) in the model's unit values; a new
        array (a batch without the model's trial axis gets its own chains per trial). ``x`` is
        never modified; steps = 0 returns a copy."""
        xp = model.xp
        out = xp.empty(chain_rows(model, x) + x.shape[-1:], dtype=x.dtype)
        out[...] = x
        if steps < 1:
            return out
        units = model.units
        if self.continues_scan:
            n = out.shape[-1]
            for i in range(position, position + steps):
                site = slice(i % n, i % n + 1)
                out[..., site] = units.sample_(
                    model.local_fields(out, site).astype(out.dtype, copy=False), rng
                )
            return out
        classes = [xp.asarray(c) for c in model.color_classes()]
        for _ in range(steps):
            for sites in classes:
                a = model.local_fields(out, sites).astype(out.dtype, copy=False)
                out[..., sites] = units.sample_(a, rng)
        return out
