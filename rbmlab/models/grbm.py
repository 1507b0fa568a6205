"""The general RBM of the tap paper (Eq. 9): any prior on the visible units, binary hidden units.

    P(x, h) ∝ exp(xᵀWh) · Π_i P̃_i^v(x_i; U_i^v, θ_i) · Π_j P̃_j^h(h_j; U_j^h)

with P̃(x; U, θ) = e^{Ux} base(x; θ) (rbmlab.units.prior): the fields U are the biases b_v, b_h,
and θ the visible prior's own parameters, stacked as ``v_theta`` (..., k, n_visible) in the
order of ``prior.params`` (k = 0 for binary visible units, whose GRBM is the plain RBM). The
binary hidden units can be summed out, so the clamped data term is exact (Eq. 11); log Z is
estimated by TAP (rbmlab.inference.tap). With a binary visible prior (bernoulli or spin) it is an
RBM, and the RBM's maths (rbmlab.models.rbm.BinaryLayers) let CD, PCD, S-DCP, block Gibbs, AIS
and enumeration run on it with the same numbers. Priors are initialised from the training data
(Alg. 2's θ⁽⁰⁾ ← X: each prior's ``init_params``), W ~ N(0, weight_std²) (σ ≈ 1e-3, §VII.3).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rbmlab.errors import RbmlabError
from rbmlab.limits import UNITS
from rbmlab.models.base import PARAMETER_LIMIT, ModelConfig
from rbmlab.models.declaration import Declaration, Setting, VisibleUnits
from rbmlab.models.rbm import BinaryLayers
from rbmlab.units import PRIOR_NAMES, UNIT_TYPES, prior, unit_type
from rbmlab.units.layer import Layer, clamped_log_density
from rbmlab.validation import option


@dataclass
class GRBMConfig(ModelConfig):
    name: str = option("grbm", "model family")
    n_hidden: int = option(100, "hidden units", lo=1, hi=UNITS, label="hidden units")
    weight_std: float = option(
        1e-3,
        "W ~ N(0, weight_std²) (tap §VII.3: σ ≈ 1e-3)",
        lo=0,
        hi=PARAMETER_LIMIT,
        label="initial weight std",
    )
    visible_prior: str = option(
        "bernoulli",
        "visible unit prior: bernoulli {0,1} | spin ±1 | "
        "truncated_gaussian on [0,1] | gauss_bernoulli (spike at 0 + "
        "truncated slab)",
        choices=PRIOR_NAMES,
        label="visible prior",
    )
    hidden_prior: str = option(
        "bernoulli", "hidden unit prior (binary)", choices=tuple(UNIT_TYPES), label="hidden prior"
    )


@dataclass(frozen=True)
class GRBM(BinaryLayers):
    W: Any  # (..., n_visible, n_hidden)
    b_v: Any  # (..., n_visible): visible fields U^v
    b_h: Any  # (..., n_hidden): hidden fields U^h
    v_theta: Any  # (..., k, n_visible): the visible prior's parameters
    visible: str = "bernoulli"
    hidden: str = "bernoulli"

    DECLARATION: ClassVar[Declaration] = Declaration(
        arrays={
            "W": ("n_visible", "n_hidden"),
            "b_v": ("n_visible",),
            "b_h": ("n_hidden",),
            "v_theta": ("n_prior_params", "n_visible"),
        },
        settings={
            "visible": Setting(PRIOR_NAMES, "bernoulli"),
            "hidden": Setting(tuple(UNIT_TYPES), "bernoulli"),
        },
        set_by_settings={"n_prior_params": lambda settings: len(prior(settings["visible"]).params)},
        config_settings={"visible_prior": "visible", "hidden_prior": "hidden"},
        visible=VisibleUnits("visible_prior", {n: n for n in PRIOR_NAMES}),
    )
    INTERACTIONS: ClassVar[tuple[str, ...]] = ("W",)
    family: ClassVar[str] = "grbm"
    config_class: ClassVar[type] = GRBMConfig
    default_sampler: ClassVar[str] = "block_gibbs"  # binary priors (BinaryLayers); TAP needs none

    @property
    def visible_units(self):
        """The visible unit type when the prior is a binary one: then this is an RBM, and block
        Gibbs, CD, PCD, S-DCP and enumeration run on it (BinaryLayers); otherwise one line."""
        if self.visible not in UNIT_TYPES:
            raise RbmlabError(
                f"model.visible_prior: {self.visible} units have no binary unit type: sampling, "
                "the contrastive learners and enumeration need bernoulli or spin "
                "(real-valued priors train with learner=tap)"
            )
        return unit_type(self.visible)

    def statistics_given(self, v, p):
        return {**super().statistics_given(v, p), "v_theta": self._no_prior_statistics()}

    def contrast(self, v_pos, p_pos, v_neg, p_neg):
        return {**super().contrast(v_pos, p_pos, v_neg, p_neg), "v_theta": self._no_prior_statistics()}

    def _no_prior_statistics(self):
        """A binary prior has no parameters of its own (v_theta is (..., 0, n_visible)): their
        statistics are empty. The moment statistics of a real prior's θ are TAP's (Eq. 42)."""
        if self.v_theta.shape[-2]:
            self.visible_units  # noqa: B018 - the one-line error of a real-valued prior
        return self.xp.zeros_like(self.v_theta)

    def tap_layers(self):
        theta = self.v_theta if self.v_theta.shape[-2] else None
        return (Layer(prior(self.visible), self.b_v, theta), Layer(prior(self.hidden), self.b_h))

    def log_unnormalized(self, x):
        """ln P̃(x) with the hidden units summed out (LogProbability), float64."""
        visible, hidden = self.tap_layers()
        return clamped_log_density(self.W, visible, hidden, x)

    def hidden_probs(self, x):
        """E[h | x] (LatentFeatures: receptive-field activations, classifiers)."""
        product = x @ self.W
        return self.tap_layers()[1].moments(product, 0.0 * product)[0]

    # ------------------------------------------------------------ construction
    @classmethod
    def parameter_count(cls, sizes: dict[str, int]) -> int:
        m, n = sizes["n_visible"], sizes["n_hidden"]
        return m * n + 3 * m + n

    @classmethod
    def initialize(cls, config: GRBMConfig, *, xp, rng, data_mean, dtype, trials: int = 0, data=None) -> GRBM:
        """Priors fitted to ``data`` (the training inputs; a binary prior needs only the mean),
        hidden fields 0, W ~ N(0, weight_std²); ``trials`` > 0: that many along a leading axis."""
        v_prior = prior(config.visible_prior)
        if data is None and v_prior.params:
            raise ValueError(
                f"GRBM.initialize: the {config.visible_prior} prior is fitted to the "
                "training data; pass data="
            )
        fitted = v_prior.init_params(data if data is not None else data_mean[None, :])
        n_v = data_mean.shape[-1]
        lead = (trials,) if trials else ()
        rows = [xp.asarray(p, dtype=dtype) for p in fitted]
        theta = xp.stack(rows[1:]) if rows[1:] else xp.zeros((0, n_v), dtype=dtype)
        tile = lambda a: xp.array(xp.broadcast_to(a, lead + a.shape))  # noqa: E731
        W = config.weight_std * rng.standard_normal(lead + (n_v, config.n_hidden), dtype=xp.dtype(dtype))
        return cls(
            W,
            tile(rows[0]),
            xp.zeros(lead + (config.n_hidden,), dtype=dtype),
            tile(theta),
            visible=config.visible_prior,
            hidden=config.hidden_prior,
        )

    def to_rbm(self):
        """The plain RBM of a GRBM with binary units on both layers (AIS, PL, exact)."""
        from rbmlab.models.rbm import RBM  # noqa: PLC0415

        if self.visible not in UNIT_TYPES:
            raise RbmlabError(f"grbm: visible prior {self.visible} is not a binary unit type")
        return RBM(self.W, self.b_v, self.b_h, visible=self.visible, hidden=self.hidden)
