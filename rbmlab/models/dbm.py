"""The deep Boltzmann machine family (tap paper App. E, Eq. 119): binary units on every layer,
{0, 1} by default (the paper's), the visible and the hidden layers' unit type each a setting.

Layers 0 (visible) … L (L = 2 or 3 hidden layers), each coupled only to its neighbours:

    P(h_0 = x, h_1, …, h_L) ∝ exp(Σ_l h_{l−1}ᵀ W_l h_l + Σ_l b_lᵀ h_l),    W_l: (n_{l−1}, n_l)

Given the layers of one parity those of the other are independent (rbmlab.models.layer_stack):
block Gibbs sampling by parity (chain states: layers 0 and 2 side by side), statistics with the
odd layers summed out, and the mean-field positive phase of Salakhutdinov & Hinton (2009).

``PARAMS`` is one per family, so the parameters have the deepest case's names, W1 … W3 and
b0 … b3, and a 2-layer DBM holds an empty third layer: W3 of shape (n_2, 0), b3 of shape (0,).
Every array operation of the Model base (trial axis, casts, finiteness, checkpoints, optimizers)
then works unchanged; :meth:`DBM.tap_stack` gives the layers that exist, as TAP sees them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from rbmlab.errors import RbmlabError
from rbmlab.limits import UNITS
from rbmlab.models import layer_stack as stacks
from rbmlab.models.base import PARAMETER_LIMIT, Model, ModelConfig
from rbmlab.models.dbm_enumeration import log_sum, marginal_units, partition_units
from rbmlab.models.declaration import Declaration, Setting, VisibleUnits
from rbmlab.models.rbm import RBM
from rbmlab.units import UNIT_TYPES, unit_type
from rbmlab.units.layer import Layer
from rbmlab.validation import invalid, option

SIZE_KEYS = ("n_visible", "n_hidden1", "n_hidden2", "n_hidden3")  # n_0 … n_3 (n_3 = 0: L = 2)
FEATURE_SWEEPS = 10  # mean-field sweeps behind a DBM's features (hidden_probs): our choice


@dataclass
class DBMConfig(ModelConfig):
    name: str = option("dbm", "model family")
    n_hidden: list[int] = option(
        [500, 500],
        "units of hidden layers 1 … L (2 or 3 entries; the paper does not give Fig. 11's)",
        lo=1,
        hi=UNITS,
        label="hidden units",
    )
    weight_std: float = option(
        0.001,
        "W_l ~ N(0, weight_std²) (tap §VII.3: σ ≈ 1e-3)",
        lo=0,
        hi=PARAMETER_LIMIT,
        label="initial weight std",
    )

    visible_units: str = option(
        "bernoulli",
        "visible unit type",
        choices=tuple(UNIT_TYPES),
        neutral="bernoulli",
        label="visible unit type",
    )
    hidden_units: str = option(
        "bernoulli",
        "unit type of every hidden layer",
        choices=tuple(UNIT_TYPES),
        neutral="bernoulli",
        label="hidden unit type",
    )

    def check(self) -> None:
        if len(self.n_hidden) not in (2, 3):
            raise invalid("n_hidden", f"2 or 3 hidden layers, e.g. [500,500]; got {self.n_hidden}")


@dataclass(frozen=True)
class DBM(Model):
    W1: Any  # (..., n_0, n_1)
    W2: Any  # (..., n_1, n_2)
    W3: Any  # (..., n_2, n_3); n_3 = 0 for two hidden layers
    b0: Any  # (..., n_0): visible fields
    b1: Any  # (..., n_1)
    b2: Any  # (..., n_2)
    b3: Any  # (..., n_3)
    visible: str = "bernoulli"  # layer 0's unit type (files made before it: bernoulli)
    hidden: str = "bernoulli"  # layers 1 … L's

    DECLARATION: ClassVar[Declaration] = Declaration(
        arrays={
            **{f"W{l}": (SIZE_KEYS[l - 1], SIZE_KEYS[l]) for l in (1, 2, 3)},
            **{f"b{l}": (SIZE_KEYS[l],) for l in range(4)},
        },
        may_be_empty=("n_hidden3",),
        settings={
            "visible": Setting(tuple(UNIT_TYPES), "bernoulli"),
            "hidden": Setting(tuple(UNIT_TYPES), "bernoulli"),
        },
        config_settings={"visible_units": "visible", "hidden_units": "hidden"},
        visible=VisibleUnits("visible_units", {n: n for n in UNIT_TYPES}),
    )  # two hidden layers: W3 (n_2, 0), b3 (0,)
    INTERACTIONS: ClassVar[tuple[str, ...]] = ("W1", "W2", "W3")
    family: ClassVar[str] = "dbm"
    config_class: ClassVar[type] = DBMConfig
    default_sampler: ClassVar[str] = "block_gibbs"  # by parity (rbmlab.models.layer_stack)

    @property
    def n_visible(self) -> int:
        return self.b0.shape[-1]

    @property
    def visible_units(self):
        return unit_type(self.visible)

    @property
    def hidden_units(self):
        return unit_type(self.hidden)

    @property
    def depth(self) -> int:
        """L, the number of hidden layers."""
        return 3 if self.b3.shape[-1] else 2

    def tap_stack(self):
        """(layers 0 … L: the unit types as priors with the biases as fields, couplings
        [W_1, …, W_L])."""
        stack = self.layer_stack()
        return [Layer(u, b) for u, b in zip(stack.units, stack.biases)], list(stack.couplings)

    def layer_stack(self) -> stacks.LayerStack:
        """The layers that exist (LayerStack: unit types, fields b_0 … b_L, couplings W_1 … W_L)."""
        units = (self.visible_units, *[self.hidden_units] * self.depth)
        return stacks.LayerStack(
            units,
            tuple(getattr(self, f"b{l}") for l in range(self.depth + 1)),
            tuple(getattr(self, f"W{l}") for l in range(1, self.depth + 1)),
        )

    # ------------------------------------------------------------ chains and statistics
    def _named(self, weights: list, biases: list) -> dict[str, Any]:
        """Statistics per parameter name; an absent third layer's are empty, of its shapes."""
        xp, lead = self.xp, self.b0.shape[:-1]
        out = {f"W{l}": s for l, s in enumerate(weights, 1)}
        out |= {f"b{l}": s for l, s in enumerate(biases)}
        for name in self.PARAMS:
            if name not in out:
                shape = getattr(self, name).shape
                out[name] = xp.zeros(lead + shape[len(lead) :], dtype=self.b0.dtype)
        return out

    @property
    def chain_width(self) -> int:
        """Columns of a chain state: the even layers side by side (n_0 + n_2)."""
        return self.layer_stack().width(stacks.EVEN)

    def chain_start(self, x, rng):
        """Chain states whose visible layer is ``x`` (data rows): layer 2 drawn by one upward
        pass (rbmlab.models.layer_stack.start_chains)."""
        return stacks.start_chains(self.layer_stack(), x, rng)

    def visible_part(self, states):
        """The visible units (layer 0) of chain states."""
        return states[..., : self.n_visible]

    def statistics(self, states) -> dict[str, Any]:
        """Batch averages of −∂E/∂θ at chain states (the even layers side by side), the odd
        layers in expectation given them (GradientStatistics)."""
        if states.shape[-1] != self.chain_width:
            raise ValueError(
                f"DBM.statistics takes chain states of {self.chain_width} columns (layers 0 and 2); "
                f"got {states.shape[-1]}: data rows' hidden layers come from positive_statistics"
            )
        return self._named(*stacks.chain_statistics(self.layer_stack(), states))

    def positive_statistics(self, x, iterations: int) -> dict[str, Any]:
        """The statistics of data rows ``x`` under the mean-field posterior over the hidden
        layers after ``iterations`` sweeps (Salakhutdinov & Hinton 2009, §3)."""
        stack = self.layer_stack()
        return self._named(*stacks.moments(stack, stacks.mean_field(stack, x, iterations)))

    def hidden_probs(self, x):
        """The hidden layers' means under the mean-field posterior given ``x`` (FEATURE_SWEEPS
        sweeps), side by side: layer 1's, then layer 2's (LatentFeatures; Salakhutdinov & Hinton
        2009 feed these to a classifier)."""
        mu = stacks.mean_field(self.layer_stack(), x, FEATURE_SWEEPS)
        return self.xp.concatenate([mu[l] for l in range(1, self.depth + 1)], axis=-1)

    def log_unnormalized_bound(self, x, iterations: int):
        """The mean-field lower bound on log p̃(x) per row (rbmlab.models.layer_stack
        .variational_bound), float64: what a DBM's test log-likelihood is scored by beside an
        AIS estimate of log Z (Salakhutdinov & Hinton 2009, §4)."""
        model = self.astype(self.xp.float64)
        x = self.xp.asarray(x, dtype=self.xp.float64)
        return stacks.variational_bound(model.layer_stack(), x, iterations)

    def as_rbm(self) -> RBM:
        """The same distribution as an RBM between the even layers (its visible units, layer 0
        first) and the odd ones (its hidden units): a DBM is bipartite between its parities, W
        holding each W_l as a block (transposed where layer l is even). Summing its hidden units
        sums out the odd layers, so its log Z is the DBM's: AIS for a DBM anneals this RBM
        (Salakhutdinov & Hinton 2009, §4: the odd layers summed out). Both parities must share a
        unit type."""
        if self.visible != self.hidden:
            raise RbmlabError(
                f"model: a DBM with {self.visible} visible and {self.hidden} hidden units is no RBM "
                "between its parities (each RBM layer has one unit type)"
            )
        stack, even_odd = self.layer_stack(), (stacks.EVEN, stacks.ODD)
        lead = self.b0.shape[:-1]
        W = self.xp.zeros(lead + tuple(stack.width(p) for p in even_odd), dtype=self.b0.dtype)
        rows = stack.split(W.swapaxes(-1, -2), stacks.EVEN)  # an even layer's rows of W (views)
        for l, coupling in enumerate(stack.couplings, 1):
            even, odd = (l - 1, l) if l % 2 else (l, l - 1)
            block = stack.split(rows[even].swapaxes(-1, -2), stacks.ODD)[odd]  # a view into W
            block[...] = coupling if l % 2 else coupling.swapaxes(-1, -2)
        biases = [stack.join({l: stack.biases[l] for l in stack.parity(p)}, p) for p in even_odd]
        return RBM(W, *biases, visible=self.visible, hidden=self.hidden)

    # ------------------------------------------------------------ construction
    @classmethod
    def sizes(cls, config: DBMConfig, n_visible: int) -> dict[str, int]:
        n = [n_visible, *config.n_hidden]
        return dict(zip(SIZE_KEYS, n + [0] * (len(SIZE_KEYS) - len(n))))

    @classmethod
    def parameter_count(cls, sizes: dict[str, int]) -> int:
        n = [sizes[k] for k in SIZE_KEYS]
        return sum(n) + sum(p * q for p, q in zip(n, n[1:]))

    @classmethod
    def initialize(cls, config: DBMConfig, *, xp, rng, data_mean, dtype, trials: int = 0, data=None) -> DBM:
        """W_l ~ N(0, weight_std²); visible fields at the base rate (the logit of the clipped
        training mean, as rbm.base_rate_bias), hidden fields 0; ``trials`` > 0: that many along a
        leading axis."""
        n = [cls.sizes(config, data_mean.shape[-1])[k] for k in SIZE_KEYS]
        lead = (trials,) if trials else ()
        W = [
            config.weight_std * rng.standard_normal(lead + (p, q), dtype=xp.dtype(dtype))
            for p, q in zip(n, n[1:])
        ]
        b0 = unit_type(config.visible_units).field_for_mean(xp.asarray(data_mean, dtype=dtype), 1e-3)
        b = [xp.array(xp.broadcast_to(b0, lead + b0.shape))]
        b += [xp.zeros(lead + (m,), dtype=dtype) for m in n[1:]]
        return cls(*W, *b, visible=config.visible_units, hidden=config.hidden_units)

    # ------------------------------------------------------------ exact sums (small DBMs)
    @classmethod
    def enumeration_size(cls, sizes: dict[str, int]) -> int:
        """Units enumerated for log Z (Enumerable): the fewer of layers {0, 2} and {1, 3}."""
        return partition_units([sizes[k] for k in SIZE_KEYS])

    @classmethod
    def marginal_enumeration_size(cls, sizes: dict[str, int]) -> int:
        """Units enumerated per row for log p̃(x): the fewer of layers {2} and {1, 3}."""
        return marginal_units([sizes[k] for k in SIZE_KEYS])

    def _exact_terms(self):
        if self.b0.ndim != 1:
            raise ValueError(f"expected a single DBM, got b0 of shape {tuple(self.b0.shape)}")
        model = self.astype(self.xp.float64)
        return (
            {l: getattr(model, f"W{l}") for l in range(1, self.depth + 1)},
            [getattr(model, f"b{l}") for l in range(self.depth + 1)],
        )

    def exact_log_partition(self, chunk_size: int = 4096) -> float:
        """log Z of a single model by enumeration (rbmlab.models.dbm_enumeration), float64."""
        weights, biases = self._exact_terms()
        return float(log_sum(weights, biases, {}, chunk_size, self.layer_stack().units)[0])

    def log_unnormalized(self, x):
        """log p̃(x) per row, the hidden layers summed out (LogProbability), float64."""
        weights, biases = self._exact_terms()
        x = self.xp.asarray(x, dtype=self.xp.float64)
        return log_sum(weights, biases, {0: x}, units=self.layer_stack().units)
