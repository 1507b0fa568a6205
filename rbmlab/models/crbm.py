"""The conditional RBM (crbm_bp §3.2): outputs v, hidden units h, inputs x.

    E(v, h, x) = −vᵀ W h − vᵀ W_xvᵀ x − hᵀ W_xhᵀ x − vᵀ b_v − hᵀ b_h               (Eq. 3)

stored for row batches: W (|v|, |h|), W_xv (|x|, |v|), W_xh (|x|, |h|). For fixed x it is an RBM
with W shared and input-dependent biases (§5)

    b¹ = b_v + x W_xv,    b² = b_h + x W_xh,

so inference on a batch of inputs is inference on a batch of RBMs sharing W
(rbmlab.inference.matrix_bp, rbmlab.inference.mean_field). The gradient of the conditional
log-likelihood log p(v | x) (Eq. 5) is the data statistics minus the model's expectations under
p(v, h | x), both linear in the beliefs: :func:`statistics` forms either from (E[v], E[h],
E[v hᵀ]) per instance, so the learners differ only in where the beliefs come from (clamped v
and E[h | v, x]; BP's τ^v, τ^h, Γ; mean field's outer product; a Gibbs sample).

Trained by the conditional learners (learner=mle_bp, mle_mf; rbmlab.learners.conditional) on a
corruption task (task=flip|occlude), scored by evaluator=pixel_error.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rbmlab.backend import namespace
from rbmlab.backend.ops import bernoulli_logits_, sigmoid
from rbmlab.limits import UNITS
from rbmlab.models.base import PARAMETER_LIMIT, ModelConfig, TwoLayerModel
from rbmlab.models.declaration import FIXED_BERNOULLI, Declaration
from rbmlab.models.rbm import base_rate_bias
from rbmlab.validation import option


@dataclass
class CRBMConfig(ModelConfig):
    name: str = option("crbm", "model family")
    n_hidden: int = option(
        256, "hidden units (the paper: 256, following Mnih et al. 2011)", lo=1, hi=UNITS, label="hidden units"
    )
    weight_std: float = option(
        0.01,
        "W, W_xh ~ N(0, weight_std²); W_xv = 0 (our choice, not the paper's)",
        lo=0,
        hi=PARAMETER_LIMIT,
        label="initial weight std",
    )
    visible_bias: str = option(
        "base_rate",
        "base_rate: logit of the clean targets' mean (clipped to [1e-3, 1 − 1e-3]) | zero",
        choices=("base_rate", "zero"),
        label="initial visible bias",
    )


@dataclass(frozen=True)
class CRBM(TwoLayerModel):
    W: Any  # (..., |v|, |h|)
    W_xv: Any  # (..., |x|, |v|)
    W_xh: Any  # (..., |x|, |h|)
    b_v: Any  # (..., |v|)
    b_h: Any  # (..., |h|)

    DECLARATION: ClassVar[Declaration] = Declaration(
        arrays={
            "W": ("n_visible", "n_hidden"),
            "W_xv": ("n_inputs", "n_visible"),
            "W_xh": ("n_inputs", "n_hidden"),
            "b_v": ("n_visible",),
            "b_h": ("n_hidden",),
        },
        data_sizes=("n_visible", "n_inputs"),
        visible=FIXED_BERNOULLI,  # crbm_bp §3.2: binary outputs v
    )  # the inputs are corrupted data rows (task=flip|occlude)
    INTERACTIONS: ClassVar[tuple[str, ...]] = ("W", "W_xv", "W_xh")
    family: ClassVar[str] = "crbm"
    config_class: ClassVar[type] = CRBMConfig

    @property
    def n_inputs(self) -> int:
        return self.W_xv.shape[-2]

    @classmethod
    def sizes(cls, config: CRBMConfig, n_visible: int, n_inputs: int | None = None) -> dict[str, int]:
        return {
            "n_visible": n_visible,
            "n_hidden": config.n_hidden,
            "n_inputs": n_visible if n_inputs is None else n_inputs,
        }

    @classmethod
    def parameter_count(cls, sizes: dict[str, int]) -> int:
        v, h, x = sizes["n_visible"], sizes["n_hidden"], sizes["n_inputs"]
        return v * h + x * v + x * h + v + h

    @classmethod
    def initialize(
        cls,
        config: CRBMConfig,
        *,
        xp,
        rng,
        data_mean,
        dtype,
        n_inputs: int | None = None,
        trials: int = 0,
        data=None,
    ) -> CRBM:
        """W, W_xh ~ N(0, weight_std²), W_xv = 0, b_v at the targets' base rate (or 0), b_h = 0."""
        n_v, n_h = data_mean.shape[-1], config.n_hidden
        n_x = n_v if n_inputs is None else n_inputs
        lead = (trials,) if trials else ()
        b_v = (base_rate_bias(data_mean) if config.visible_bias == "base_rate" else xp.zeros(n_v)).astype(
            dtype
        )
        return cls(
            W=(config.weight_std * rng.standard_normal(lead + (n_v, n_h))).astype(dtype),
            W_xv=xp.zeros(lead + (n_x, n_v), dtype=dtype),
            W_xh=(config.weight_std * rng.standard_normal(lead + (n_x, n_h))).astype(dtype),
            b_v=xp.broadcast_to(b_v, lead + (n_v,)).copy(),
            b_h=xp.zeros(lead + (n_h,), dtype=dtype),
        )

    # ------------------------------------------------------------ the x-conditioned RBM
    def conditional_biases(self, x):
        """(b¹, b²) of the RBM each input row conditions to: (..., B, n_visible) and (..., B,
        n_hidden) (a leading trial axis of the parameters broadcasts)."""
        return self.b_v[..., None, :] + x @ self.W_xv, self.b_h[..., None, :] + x @ self.W_xh

    def neg_free_energy(self, v, x):
        """−F(v, x) per row (h summed out)."""
        return -free_energy(v, self.W, *self.conditional_biases(x))

    def hidden_given(self, v, x):
        """E[h | v, x] = σ(v W + b²), per row."""
        return sigmoid(v @ self.W + x @ self.W_xh + self.b_h[..., None, :])


def free_energy(v, W, b1, b2):
    """F(v | x) per row of the x-conditioned RBM (W, b¹, b²): −v·b¹ − Σ_j softplus(vW + b²)_j."""
    xp = namespace(v)
    return -(v * b1).sum(axis=-1) - xp.logaddexp(0.0, v @ W + b2).sum(axis=-1)


def gibbs_sweep(v, W, b1, b2, rng):
    """One block-Gibbs sweep of the x-conditioned RBMs, h ~ p(h | v, x) then v ~ p(v | h, x), each
    draw in place in its matmul's output (bernoulli_logits_: no σ formed, no further array)."""
    h = bernoulli_logits_(v @ W, rng, bias=b2)
    return bernoulli_logits_(h @ W.swapaxes(-1, -2), rng, bias=b1)


def statistics_difference(x, positive, negative) -> dict[str, Any]:
    """statistics(x, *positive) − statistics(x, *negative): the gradient of the mean conditional
    log-likelihood (Eq. 5) from the beliefs at the data and at the model, each ``(v, h, vh)`` as
    :func:`statistics` takes them. The input terms are formed once, from the beliefs' differences
    (x.T (v⁺ − v⁻) / n, not x.T v⁺ / n − x.T v⁻ / n: two matmuls of the four). Packed runs: every
    array with a leading run axis, each run's statistics of its own batch."""
    (v_p, h_p, vh_p), (v_n, h_n, vh_n) = positive, negative
    n = x.shape[-2]
    d_v, d_h = v_p - v_n, h_p - h_n
    W = _mean_pairs(v_p, h_p, vh_p)
    W -= _mean_pairs(v_n, h_n, vh_n)
    x_t = x.swapaxes(-1, -2)
    return {
        "W": W,
        "W_xv": x_t @ d_v / n,
        "W_xh": x_t @ d_h / n,
        "b_v": d_v.mean(axis=-2),
        "b_h": d_h.mean(axis=-2),
    }


def _mean_pairs(v, h, vh):
    """E[v hᵀ] over the batch: v hᵀ averaged, or ``vh`` (..., B, |v|, |h|) averaged where given."""
    return v.swapaxes(-1, -2) @ h / v.shape[-2] if vh is None else vh.mean(axis=-3)


def statistics(x, v, h, vh=None) -> dict[str, Any]:
    """Batch averages of −∂E/∂θ at beliefs (E[v], E[h], E[v hᵀ]) per instance: ``v`` (B, |v|),
    ``h`` (B, |h|), ``vh`` (B, |v|, |h|) or None for the outer product v hᵀ (clamped or sampled v
    with E[h | v, x]; mean field). The gradient of the mean conditional log-likelihood is
    statistics at the data minus statistics at the model's beliefs (Eq. 5). Packed runs: every
    array with a leading run axis."""
    n = x.shape[-2]
    x_t = x.swapaxes(-1, -2)
    return {
        "W": _mean_pairs(v, h, vh),
        "W_xv": x_t @ v / n,
        "W_xh": x_t @ h / n,
        "b_v": v.mean(axis=-2),
        "b_h": h.mean(axis=-2),
    }
