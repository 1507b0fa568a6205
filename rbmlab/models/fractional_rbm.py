"""The fractional RBM (Ping, Liu & Ihler 2016, Sec. 3.3, Eq. 11).

An infinite RBM α·q(w) = Σ_i c_i δ(w_i) (frank_wolfe Eq. 5) with real coefficients c_i is

    log p̃(v) = Σ_i c_i softplus(v·W_{•i} + b_h,i) + b_vᵀv                       (Eq. 11)

with W of shape (n_visible, n_hidden), the hidden bias the weight of the paper's constant visible
unit, and α = Σ_i c_i (q normalised). With every c_i = 1 it is the RBM of those units (Prop. 3.1);
otherwise no joint p(v, h) factorises over h, so block Gibbs does not apply: its sampler is
Sec. 3.3's Metropolis–Hastings step (rbmlab.inference.fractional_mh), and log Z comes from
enumerating the visible layer (:meth:`FractionalRBM.exact_log_partition`) or from AIS with that
step as the transition (rbmlab.evaluators.ais_fractional). :meth:`FractionalRBM.standard` is
Eq. 12's standard RBM with c_i pushed inside the softplus, the proposal of the sampler and the
approximation Prop. 3.2 bounds. Visible and hidden units are Bernoulli {0, 1} (the softplus).
Parameters may carry a leading trial axis, as the RBM's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rbmlab.backend.ops import logsumexp
from rbmlab.limits import UNITS
from rbmlab.models.base import PARAMETER_LIMIT, ModelConfig, TwoLayerModel
from rbmlab.models.declaration import FIXED_BERNOULLI, Declaration
from rbmlab.models.rbm import RBM, init_rbm
from rbmlab.units import Bernoulli
from rbmlab.validation import option


@dataclass
class FractionalRBMConfig(ModelConfig):
    name: str = option("fractional_rbm", "model family")
    n_hidden: int = option(500, "hidden units", lo=1, hi=UNITS, label="hidden units")
    weight_std: float = option(
        0.01, "W ~ N(0, weight_std²)", lo=0, hi=PARAMETER_LIMIT, label="initial weight std"
    )
    visible_bias: str = option(
        "base_rate",
        "base_rate: the field whose mean is the training mean "
        "(logit, clipped to [1e-3, 1 − 1e-3]) | zero | normal: N(0, 1)",
        choices=("base_rate", "zero", "normal"),
        label="initial visible bias",
    )
    hidden_bias: str = option(
        "zero", "zero | normal: N(0, 1)", choices=("zero", "normal"), label="initial hidden bias"
    )
    coefficient: float = option(
        1.0, "c_i of every unit at the start (Eq. 11; 1: the RBM)", label="initial unit coefficient"
    )


def _row(x):
    """(..., n) as (..., 1, n): broadcasts against a batch (..., B, n)."""
    return x[..., None, :]


@dataclass(frozen=True)
class FractionalRBM(TwoLayerModel):
    W: Any  # (..., n_visible, n_hidden)
    b_v: Any  # (..., n_visible)
    b_h: Any  # (..., n_hidden)
    c: Any  # (..., n_hidden): each unit's coefficient c_i (Eq. 11)

    DECLARATION: ClassVar[Declaration] = Declaration(
        arrays={
            "W": ("n_visible", "n_hidden"),
            "b_v": ("n_visible",),
            "b_h": ("n_hidden",),
            "c": ("n_hidden",),
        },
        visible=FIXED_BERNOULLI,  # frank_wolfe Eq. 11: softplus of {0, 1} units
    )
    INTERACTIONS: ClassVar[tuple[str, ...]] = ("W",)
    family: ClassVar[str] = "fractional_rbm"
    config_class: ClassVar[type] = FractionalRBMConfig
    default_sampler: ClassVar[str] = "fractional_mh"
    visible: ClassVar[str] = "bernoulli"  # fixed unit types: the softplus of Eq. 11
    hidden: ClassVar[str] = "bernoulli"
    visible_units: ClassVar[type] = Bernoulli
    hidden_units: ClassVar[type] = Bernoulli

    # ------------------------------------------------------------ Eq. 11 and its relatives
    def hidden_inputs(self, v):
        """x = vW + b_h, (..., B, n_hidden): each unit's w_iᵀ(v, 1)."""
        return v @ self.W + _row(self.b_h)

    def log_unnormalized(self, v):
        """log p̃(v) = Σ_i c_i softplus(x_i) + b_vᵀv per row (Eq. 11; LogProbability)."""
        xp = self.xp
        return xp.sum(_row(self.c) * xp.logaddexp(0.0, self.hidden_inputs(v)), axis=-1) + xp.sum(
            v * _row(self.b_v), axis=-1
        )

    @property
    def alpha(self):
        """α = Σ_i c_i: the temperature of α·q(w) with q normalised (Eq. 5), per trial."""
        return self.c.sum(axis=-1)

    def standard(self) -> RBM:
        """Eq. 12: the standard RBM with c_i inside the softplus, softplus(c_i w_iᵀ(v, 1)) (the
        unit's weights and hidden bias scaled by c_i); the same model when every c_i is 1."""
        return RBM(self.W * _row(self.c), self.b_v, self.b_h * self.c)

    def rbm(self) -> RBM:
        """The RBM of the same units with the coefficients dropped (Eq. 3): equal to this model
        exactly when every c_i = 1 (Prop. 3.1)."""
        return RBM(self.W, self.b_v, self.b_h)

    @classmethod
    def of_rbm(cls, rbm: RBM, c) -> FractionalRBM:
        """The units of ``rbm`` with coefficients ``c``."""
        return cls(rbm.W, rbm.b_v, rbm.b_h, c)

    # ------------------------------------------------------------ exact enumeration (Enumerable)
    @classmethod
    def enumeration_size(cls, sizes: dict[str, int]) -> int:
        """The visible layer: no joint over h, so only v can be enumerated."""
        return sizes["n_visible"]

    def exact_log_partition(self, chunk_size: int = 4096) -> float:
        """log Z = log Σ_v p̃(v) over all 2^n_visible states, accumulated in float64."""
        if self.W.ndim != 2:
            raise ValueError(f"expected a single model with 2-D W, got W of shape {tuple(self.W.shape)}")
        xp, n = self.xp, self.n_visible
        if n > 62:
            raise ValueError(f"enumeration of {n} visible units does not fit in int64")
        f64 = self.astype("float64")
        total = 1 << n
        parts = [
            logsumexp(
                f64.log_unnormalized(
                    Bernoulli.states(xp, n, start, min(start + chunk_size, total), xp.float64)
                )
            )
            for start in range(0, total, chunk_size)
        ]
        return float(logsumexp(xp.stack(parts)))

    # ------------------------------------------------------------ construction
    @classmethod
    def sizes(cls, config, n_visible: int) -> dict[str, int]:
        return {"n_visible": n_visible, "n_hidden": config.n_hidden}

    @classmethod
    def parameter_count(cls, sizes: dict[str, int]) -> int:
        m, n = sizes["n_visible"], sizes["n_hidden"]
        return m * n + m + 2 * n

    @classmethod
    def initialize(
        cls, config: FractionalRBMConfig, *, xp, rng, data_mean, dtype, trials: int = 0, data=None
    ) -> FractionalRBM:
        """The RBM's initialisation (rbmlab.models.rbm.init_rbm) with every c_i = ``coefficient``."""
        rbm = init_rbm(
            xp,
            rng,
            data_mean.shape[-1],
            config.n_hidden,
            weight_std=config.weight_std,
            visible_bias=config.visible_bias,
            hidden_bias=config.hidden_bias,
            data_mean=data_mean,
            dtype=dtype,
            trials=trials,
        )
        return cls.of_rbm(rbm, xp.full(rbm.b_h.shape, config.coefficient, dtype=dtype))
