"""The restricted Boltzmann machine family.

With W of shape (n_visible, n_hidden):

    E(v, h) = −vᵀWh − b_vᵀv − b_hᵀh                      (dcp eq. 1, W transposed)
    F(v)    = −b_vᵀv − Σ_j A_h((vW + b_h)_j)             free energy, p(v) = e^{−F(v)} / Z
    p(h_j | v) ∝ exp(h_j (vW + b_h)_j),   p(v_i | h) ∝ exp(v_i (Whᵀ + b_v)_i)

where A_h is the hidden unit type's log-partition (softplus for Bernoulli {0, 1} units, the
default; log 2cosh for spins ±1; a logsumexp per unit for Potts units, whose q states are q one-hot
columns of W): the unit types of rbmlab.units own every per-unit formula, so new unit types need no
change here. Batches are rows: v has shape (batch, n_visible), n_visible the visible layer's
columns (units × q for Potts units; data rows are encoded by the unit type, rbmlab.data.encoding).
Parameters may carry a leading axis (one RBM per trial); everything broadcasts over it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rbmlab.backend import namespace
from rbmlab.backend.ops import logsumexp
from rbmlab.errors import RbmlabError
from rbmlab.limits import EXACT_SAMPLING_UNITS, STATES, UNITS
from rbmlab.models.base import PARAMETER_LIMIT, ModelConfig, TwoLayerModel, states_option
from rbmlab.models.declaration import Declaration, Setting, VisibleUnits
from rbmlab.models.factor_graph import from_rbm
from rbmlab.models.layer_stack import LayerStack
from rbmlab.units import DISCRETE_NAMES, UNIT_TYPES, Bernoulli, unit_type
from rbmlab.units.layer import Layer
from rbmlab.validation import invalid, option

UNIT_NAMES = DISCRETE_NAMES
STATE_COUNTS = tuple(str(q) for q in range(2, STATES + 1))
_STATES_SETTING = Setting(STATE_COUNTS, "2", summary=f"2 … {STATES}")


class VisibleUnitColumns:
    """A data row of one value per visible unit, the visible layer of ``n_visible`` columns
    (``visible_units.width()`` per unit: q for Potts, one-hot): the RBM's and the layered
    family's data dimension."""

    @property
    def data_dimension(self) -> int:
        """Units of the visible layer: a data row's length (Potts units are q columns each)."""
        return self.n_visible // self.visible_units.width()

    def data_mismatch(self, dimension: int) -> str | None:
        if self.data_dimension == dimension:
            return None
        width = self.visible_units.width()
        return f"n_visible={self.data_dimension}" + (f" units of {width} states" if width > 1 else "")


def unit_declarations(per_layer: bool = False) -> dict:
    """The unit settings of a declaration (rbmlab.models.declaration), as the RBM and the layered
    family (rbmlab.models.dbm) both have them: a unit type for the visible and the hidden units
    (``per_layer``: one per hidden layer allowed) and their states, the config keys that fix them,
    and how a config chooses the visible units."""
    return {
        "settings": {
            "visible": Setting(UNIT_NAMES, "bernoulli"),
            "hidden": Setting(UNIT_NAMES, "bernoulli", per_layer=per_layer),
            "visible_states": _STATES_SETTING,
            "hidden_states": _STATES_SETTING,
        },
        "config_settings": {
            "visible_units": "visible",
            "hidden_units": "hidden",
            "visible_states": "visible_states",
            "hidden_states": "hidden_states",
        },
        "visible": VisibleUnits("visible_units", {n: n for n in UNIT_NAMES}, states_key="visible_states"),
    }


def check_states(layer: str, names, states: int, shown: str) -> None:
    """``model.<layer>_states`` other than 2 refused in one line where the layer's unit types
    (``names``) are all binary: q counts a categorical unit's states (rbmlab.units.potts)."""
    if states != 2 and not set(names) - set(UNIT_TYPES):
        raise invalid(
            f"{layer}_states",
            f"{shown} units have 2 states, got {states} (q states per unit: model.{layer}_units=potts)",
        )


def check_columns(family: str, layers) -> None:
    """Each layer's columns make whole units of its type (``layers``: (name, columns, unit type));
    a saved model whose do not is refused in one line."""
    for name, columns, units in layers:
        if columns % units.width():
            raise RbmlabError(
                f"checkpoint: model {family}: {columns} {name} columns do not make units of "
                f"{units.width()} states"
            )


@dataclass
class RBMConfig(ModelConfig):
    name: str = option("rbm", "model family")
    n_hidden: int = option(500, "hidden units", lo=1, hi=UNITS, label="hidden units")
    weight_std: float = option(
        0.01, "W ~ N(0, weight_std²)", lo=0, hi=PARAMETER_LIMIT, label="initial weight std"
    )
    visible_bias: str = option(
        "base_rate",
        "base_rate: the field whose mean is the training mean "
        "(logit, clipped to [1e-3, 1 − 1e-3]) | zero | normal: N(0, 1) "
        "(the pmp authors' init)",
        choices=("base_rate", "zero", "normal"),
        label="initial visible bias",
    )
    hidden_bias: str = option(
        "zero",
        "zero | normal: N(0, 1) (the pmp authors' init)",
        choices=("zero", "normal"),
        neutral="zero",
        label="initial hidden bias",
    )
    visible_units: str = option(
        "bernoulli", "visible unit type", choices=UNIT_NAMES, label="visible unit type"
    )
    hidden_units: str = option("bernoulli", "hidden unit type", choices=UNIT_NAMES, label="hidden unit type")
    visible_states: int = states_option("visible", "states per visible unit (potts: q; binary units have 2)")
    hidden_states: int = states_option("hidden", "states per hidden unit (potts: q; binary units have 2)")

    def check(self) -> None:
        for layer in ("visible", "hidden"):
            units = getattr(self, f"{layer}_units")
            check_states(layer, [units], getattr(self, f"{layer}_states"), units)

    def widths(self) -> tuple[int, int]:
        """Columns per visible and per hidden unit."""
        return (
            unit_type(self.visible_units, self.visible_states).width(),
            unit_type(self.hidden_units, self.hidden_states).width(),
        )


def _row(x):
    """A bias vector (..., n) as a row (..., 1, n) that broadcasts against a batch (..., B, n)."""
    return x[..., None, :]


class BinaryLayers(TwoLayerModel):
    """Two layers of binary units (unit types of rbmlab.units: {0, 1} or ±1) coupled only by W,
    with fields b_v, b_h: the conditionals, the Rao-Blackwellised gradient statistics and log Z by
    enumeration that CD, PCD, S-DCP, block Gibbs and AIS are written for (Bipartite,
    GradientStatistics, Enumerable). The RBM is this and nothing else; the general RBM (tap's
    Eq. 9) is this when both its priors are binary unit types, so the same learners train it."""

    @property
    def visible_units(self):
        return unit_type(self.visible, int(getattr(self, "visible_states", 2)))

    @property
    def hidden_units(self):
        return unit_type(self.hidden, int(getattr(self, "hidden_states", 2)))

    # ------------------------------------------------------------ conditionals
    def hidden_logits(self, v):
        return hidden_logits(self, v)

    def visible_logits(self, h):
        return visible_logits(self, h)

    def hidden_probs(self, v):
        """E[h | v] (p(h = 1 | v) for Bernoulli hidden units)."""
        return hidden_probs(self, v)

    def visible_probs(self, h):
        return visible_probs(self, h)

    def layer_stack(self) -> LayerStack:
        """The two layers as a stack (ParityLayers, L = 1): a chain's state is v."""
        return LayerStack((self.visible_units, self.hidden_units), (self.b_v, self.b_h), (self.W,))

    def statistics(self, v) -> dict[str, Any]:
        """Rao-Blackwellised batch averages (vᵀE[h|v]/B, mean v, mean E[h|v]) (dcp eq. 6)."""
        return self.statistics_given(v, hidden_probs(self, v))

    def statistics_given(self, v, p) -> dict[str, Any]:
        """:meth:`statistics` with E[h|v] = ``p`` already formed (scaled in place)."""
        mean_p = p.mean(axis=-2)
        p *= 1.0 / v.shape[-2]  # scale the (B, n) factor, not the (m, n) product
        return {"W": v.swapaxes(-1, -2) @ p, "b_v": v.mean(axis=-2), "b_h": mean_p}

    def contrast(self, v_pos, p_pos, v_neg, p_neg) -> dict[str, Any]:
        """statistics(v_pos) − statistics(v_neg) given E[h|v] of both (``p_pos``, ``p_neg``, which
        are scaled in place): the W term as one product [v_pos; v_neg]ᵀ [p_pos/B; −p_neg/B′]
        (dcp eq. 6), so that neither phase's (m, n) statistics nor their difference is formed."""
        xp = self.xp
        mean_pos, mean_neg = p_pos.mean(axis=-2), p_neg.mean(axis=-2)
        p_pos *= 1.0 / v_pos.shape[-2]
        p_neg *= -1.0 / v_neg.shape[-2]
        v = xp.concatenate([v_pos, v_neg], axis=-2)
        p = xp.concatenate([p_pos, p_neg], axis=-2)
        return {
            "W": v.swapaxes(-1, -2) @ p,
            "b_v": v_pos.mean(axis=-2) - v_neg.mean(axis=-2),
            "b_h": mean_pos - mean_neg,
        }

    @classmethod
    def enumeration_size(cls, sizes: dict[str, int]) -> int:
        return min(sizes["n_visible"], sizes["n_hidden"])

    def exact_log_partition(self, chunk_size: int = 4096) -> float:
        """log Z by enumerating the smaller layer (Enumerable)."""
        return log_partition(self, chunk_size)


@dataclass(frozen=True)
class RBM(VisibleUnitColumns, BinaryLayers):
    W: Any  # (..., n_visible, n_hidden)
    b_v: Any  # (..., n_visible)
    b_h: Any  # (..., n_hidden)
    visible: str = "bernoulli"
    hidden: str = "bernoulli"
    visible_states: str = "2"  # q of Potts units (a setting: saved as a string)
    hidden_states: str = "2"

    DECLARATION: ClassVar[Declaration] = Declaration(
        arrays={"W": ("n_visible", "n_hidden"), "b_v": ("n_visible",), "b_h": ("n_hidden",)},
        **unit_declarations(),
    )
    INTERACTIONS: ClassVar[tuple[str, ...]] = ("W",)
    family: ClassVar[str] = "rbm"
    config_class: ClassVar[type] = RBMConfig
    default_sampler: ClassVar[str] = "block_gibbs"

    @classmethod
    def build(cls, arrays, settings):
        model = cls(**arrays, **settings)
        check_columns(
            "rbm",
            [
                ("visible", model.n_visible, model.visible_units),
                ("hidden", model.n_hidden, model.hidden_units),
            ],
        )
        return model

    def factor_graph(self):
        """The bipartite factor graph of a {0, 1} RBM: variables v (first n_visible), then h."""
        if self.visible != "bernoulli" or self.hidden != "bernoulli":
            raise RbmlabError(
                f"rbm: a factor graph needs bernoulli units on both layers, got "
                f"visible={self.visible}, hidden={self.hidden}"
            )
        return from_rbm(self.W, self.b_v, self.b_h)

    def log_unnormalized(self, v):
        """−F(v) per row (LogProbability)."""
        return -free_energy(self, v)

    def reconstruct(self, v):
        """Mean-field reconstruction E[v | h = E[h | v]]."""
        return visible_probs(self, hidden_probs(self, v))

    def from_binary(self, x):
        """The visible part of {0, 1} states of (v, h)."""
        return x[..., : self.n_visible]

    def tap_layers(self):
        """(visible, hidden) as TAP sees them: each unit type's prior with the biases as fields."""
        return Layer(self.visible_units, self.b_v), Layer(self.hidden_units, self.b_h)

    # ------------------------------------------------------------ construction
    @classmethod
    def sizes(cls, config, n_visible: int) -> dict[str, int]:
        """Columns of each layer for data rows of ``n_visible`` units."""
        visible, hidden = config.widths()
        return {"n_visible": n_visible * visible, "n_hidden": config.n_hidden * hidden}

    @classmethod
    def parameter_count(cls, sizes: dict[str, int]) -> int:
        m, n = sizes["n_visible"], sizes["n_hidden"]
        return m * n + m + n

    @classmethod
    def initialize(cls, config: RBMConfig, *, xp, rng, data_mean, dtype, trials: int = 0, data=None) -> RBM:
        return init_rbm(
            xp,
            rng,
            data_mean.shape[-1],
            config.n_hidden * config.widths()[1],
            weight_std=config.weight_std,
            visible_bias=config.visible_bias,
            hidden_bias=config.hidden_bias,
            data_mean=data_mean,
            dtype=dtype,
            trials=trials,
            visible=config.visible_units,
            hidden=config.hidden_units,
            visible_states=config.visible_states,
            hidden_states=config.hidden_states,
        )


# ----------------------------------------------------------------- functions
def base_rate_bias(data_mean, clip: float = 1e-3, units=Bernoulli):
    """Visible biases of the base-rate model: the field whose mean is the clipped data mean,
    logit(clip(mean, clip, 1 − clip)) for Bernoulli units (Hinton 2010), the centred log of each
    unit's clipped column means for Potts units (``units``: the visible unit type)."""
    return units.field_for_mean(namespace(data_mean).asarray(data_mean), clip)


def init_rbm(
    xp,
    rng,
    n_visible: int,
    n_hidden: int,
    *,
    weight_std: float = 0.01,
    visible_bias: str = "base_rate",
    hidden_bias: str = "zero",
    data_mean=None,
    dtype="float32",
    clip: float = 1e-3,
    trials: int = 0,
    visible: str = "bernoulli",
    hidden: str = "bernoulli",
    visible_states: int = 2,
    hidden_states: int = 2,
) -> RBM:
    """W ~ N(0, weight_std²); b_h = 0 ("zero") or N(0, 1) ("normal"); b_v = the visible field whose
    mean is the clipped data mean ("base_rate"), 0 ("zero") or N(0, 1) ("normal", per trial).
    ``trials`` > 0: that many models along a leading axis. n_visible, n_hidden: columns."""
    lead = (trials,) if trials else ()
    W = weight_std * rng.standard_normal(lead + (n_visible, n_hidden), dtype=xp.dtype(dtype))
    if hidden_bias == "zero":
        b_h = xp.zeros(lead + (n_hidden,), dtype=dtype)
    elif hidden_bias == "normal":
        b_h = rng.standard_normal(lead + (n_hidden,), dtype=xp.dtype(dtype))
    else:
        raise ValueError(f"hidden_bias must be 'zero' or 'normal', got {hidden_bias!r}")
    if visible_bias == "normal":
        b_v = rng.standard_normal(lead + (n_visible,), dtype=xp.dtype(dtype))
    elif visible_bias == "base_rate":
        if data_mean is None:
            raise ValueError("visible_bias='base_rate' needs data_mean")
        b_v = unit_type(visible, visible_states).field_for_mean(xp.asarray(data_mean, dtype=dtype), clip)
    elif visible_bias == "zero":
        b_v = xp.zeros(n_visible, dtype=dtype)
    else:
        raise ValueError(f"visible_bias must be 'base_rate', 'zero' or 'normal', got {visible_bias!r}")
    return RBM(
        W,
        xp.array(xp.broadcast_to(b_v.astype(dtype), lead + (n_visible,))),
        b_h,
        visible=visible,
        hidden=hidden,
        visible_states=str(visible_states),
        hidden_states=str(hidden_states),
    )


def hidden_logits(rbm: RBM, v):
    """Pre-activations vW + b_h of the hidden units, (..., B, n_hidden)."""
    out, bias = v @ rbm.W, _row(rbm.b_h)
    if out.ndim < bias.ndim or out.dtype != bias.dtype:  # a single row, or mixed precision
        return out + bias
    out += bias  # in place: saves a (B, n) pass and allocation per call
    return out


def visible_logits(rbm: RBM, h):
    """Pre-activations hWᵀ + b_v of the visible units, (..., B, n_visible)."""
    return h @ rbm.W.swapaxes(-1, -2) + _row(rbm.b_v)


def hidden_probs(rbm: RBM, v):
    logits = hidden_logits(rbm, v)  # a fresh array: the mean is taken in place
    return rbm.hidden_units.mean(logits, out=logits)


def visible_probs(rbm: RBM, h):
    logits = visible_logits(rbm, h)
    return rbm.visible_units.mean(logits, out=logits)


def energy(rbm: RBM, v, h):
    """E(v, h) per row."""
    xp = rbm.xp
    return -(
        xp.sum((v @ rbm.W) * h, axis=-1)
        + xp.sum(v * _row(rbm.b_v), axis=-1)
        + xp.sum(h * _row(rbm.b_h), axis=-1)
    )


def free_energy(rbm: RBM, v):
    """F(v) = −b_vᵀv − Σ_j A_h((vW + b_h)_j) per row; p(v) ∝ exp(−F(v))."""
    xp = rbm.xp
    return -xp.sum(v * _row(rbm.b_v), axis=-1) - xp.sum(
        rbm.hidden_units.log_partition(hidden_logits(rbm, v)), axis=-1
    )


# ----------------------------------------------------------------- exact enumeration
def _check_single(rbm: RBM) -> None:
    if rbm.W.ndim != 2:
        raise ValueError(f"expected a single RBM with 2-D W, got W of shape {tuple(rbm.W.shape)}")


def _enumerated_bits(rbm: RBM) -> float:
    """log₂ of the states of the layer enumerated (the one with fewer)."""
    return min(rbm.visible_units.state_bits(rbm.n_visible), rbm.hidden_units.state_bits(rbm.n_hidden))


def _hidden_enumerated(rbm: RBM) -> bool:
    return rbm.hidden_units.state_bits(rbm.n_hidden) <= rbm.visible_units.state_bits(rbm.n_visible)


def _layers(rbm: RBM):
    """(W_ab, bias_a, bias_b, units_a, units_b) with ``a`` the layer of fewer states (enumerated)."""
    if _hidden_enumerated(rbm):
        return rbm.W.T, rbm.b_h, rbm.b_v, rbm.hidden_units, rbm.visible_units
    return rbm.W, rbm.b_v, rbm.b_h, rbm.visible_units, rbm.hidden_units


def _neg_free_energy(W_ab, bias_a, bias_b, units_b, s):
    """bias_aᵀs + Σ A_b(s W_ab + bias_b) per row, float64 (matmul in model dtype)."""
    xp = namespace(W_ab)
    x = (s @ W_ab).astype(xp.float64)
    x += bias_b.astype(xp.float64)
    return s.astype(xp.float64) @ bias_a.astype(xp.float64) + units_b.log_partition_sum_(x)


def enumerated_neg_free_energies(rbm: RBM, chunk_size: int):
    """Yield (start, −F(s)) per chunk over all states s of the smaller layer."""
    xp = rbm.xp
    W_ab, bias_a, bias_b, units_a, units_b = _layers(rbm)
    n = W_ab.shape[0]
    if units_a.state_bits(n) > 62:
        raise ValueError(f"enumeration of {n} columns does not fit in int64")
    total = units_a.state_count(n)
    for start in range(0, total, chunk_size):
        s = units_a.states(xp, n, start, min(start + chunk_size, total), rbm.W.dtype)
        yield start, _neg_free_energy(W_ab, bias_a, bias_b, units_b, s)


def log_partition(rbm: RBM, chunk_size: int = 4096, max_units: int = 25) -> float:
    """Exact log Z by enumerating the layer of fewer states (raises ValueError above 2^``max_units``
    states)."""
    _check_single(rbm)
    bits = _enumerated_bits(rbm)
    if bits > max_units:
        raise ValueError(
            f"log_partition: the smaller layer has 2^{bits:g} states > 2^{max_units}; "
            "use AIS (rbmlab.evaluators.ais) instead"
        )
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    parts = [logsumexp(neg_f) for _, neg_f in enumerated_neg_free_energies(rbm, chunk_size)]
    return float(logsumexp(rbm.xp.stack(parts)))


def log_likelihood(rbm: RBM, v, log_z: float | None = None):
    """Per-row log p(v) = −F(v) − log Z in float64 (log Z computed exactly when not given)."""
    _check_single(rbm)
    v = rbm.xp.asarray(v, dtype=rbm.W.dtype)
    if log_z is None:
        log_z = log_partition(rbm)
    return _neg_free_energy(rbm.W, rbm.b_v, rbm.b_h, rbm.hidden_units, v) - float(log_z)


def sample_exact(rbm: RBM, rng, n_samples: int, max_units: int = EXACT_SAMPLING_UNITS):
    """``n_samples`` exact samples from p(v), (n_samples, n_visible) in the model dtype.

    The layer s of fewer states is drawn from its marginal p(s) ∝ exp(−F(s)) by inverse CDF over
    all its states; if s is the hidden layer, v ~ p(v | h) follows. Needs 2^``max_units`` states
    or fewer.
    """
    _check_single(rbm)
    bits = _enumerated_bits(rbm)
    if bits > max_units:
        raise ValueError(f"sample_exact: the smaller layer has 2^{bits:g} states > 2^{max_units}")
    xp = rbm.xp
    neg_f = xp.concatenate([nf for _, nf in enumerated_neg_free_energies(rbm, 1 << 14)])
    p = xp.exp(neg_f - logsumexp(neg_f))
    cdf = xp.cumsum(p)
    cdf /= cdf[-1]
    u = rng.random((n_samples,), dtype=xp.float64)
    idx = xp.minimum(xp.searchsorted(cdf, u, side="right"), cdf.shape[0] - 1).astype(xp.int64)
    W_ab, _, _, units_a, _ = _layers(rbm)
    s = units_a.states_of(xp, idx, W_ab.shape[0], rbm.W.dtype)
    if _hidden_enumerated(rbm):  # s = h; v ~ p(v | h)
        logits = visible_logits(rbm, s)
        return rbm.visible_units.sample_(logits, rng)
    return s
