"""The layered Boltzmann machine family (tap App. E, Eq. 119): L + 1 unit layers, L ≥ 1, each
coupled only to its neighbours, any unit type per layer. L = 1 is an RBM (its two layers), L ≥ 2 a
deep Boltzmann machine; {0, 1} units by default (the paper's).

    P(h_0 = x, h_1, …, h_L) ∝ exp(Σ_l h_{l−1}ᵀ W_l h_l + Σ_l b_lᵀ h_l),    W_l: (n_{l−1}, n_l)

Given the layers of one parity those of the other are independent (rbmlab.models.layer_stack):
block Gibbs sampling by parity (chain states: the even layers side by side), statistics with the
odd layers summed out, and the mean-field positive phase of Salakhutdinov & Hinton (2009).

A model names its layers: W1 … WL, b0 … bL, the arrays of the layers it has (nothing held for a
layer it lacks), and its sizes n_visible, n_hidden1 … n_hiddenL. Each depth is a dataclass of its
own (:meth:`DBM.of_depth`, made once per depth), so its ``PARAMS`` and declaration are exact and
every array operation of the Model base (trial axis, casts, finiteness, checkpoints, optimizers)
works unchanged; :meth:`DBM.of` builds one from lists of arrays. Unit types: ``visible`` (layer 0)
and ``hidden``, one type for every hidden layer or one per layer ("spin,bernoulli"); Potts
(categorical) layers take ``visible_states`` and ``hidden_states`` (q, one for every Potts hidden
layer), a unit being q one-hot columns (rbmlab.units.potts), so a layer's size counts its columns
and every product of Eq. 119 holds unchanged. Files written before depth was free (a third layer
of width 0, W3 (n_2, 0) and b3 (0,), for L = 2) or before the states settings still load.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from rbmlab.errors import RbmlabError
from rbmlab.limits import UNITS
from rbmlab.models import layer_stack as stacks
from rbmlab.models.base import PARAMETER_LIMIT, Model, ModelConfig, states_option
from rbmlab.models.dbm_enumeration import log_sum, marginal_units, partition_units
from rbmlab.models.declaration import Declaration
from rbmlab.models.rbm import RBM, VisibleUnitColumns, check_columns, check_states, unit_declarations
from rbmlab.units import DISCRETE_NAMES, unit_type
from rbmlab.units.layer import Layer
from rbmlab.validation import invalid, option

FEATURE_SWEEPS = 10  # mean-field sweeps behind a DBM's features (hidden_probs): our choice
LAYER_ARRAY = re.compile(r"^[Wb]\d+$")  # the arrays that name a layer: W1 … WL, b0 … bL
UNIT_NAMES = DISCRETE_NAMES  # a layer's unit type: binary (rbmlab.units.UNIT_TYPES) or categorical


def size_keys(depth: int) -> tuple[str, ...]:
    """The sizes of layers 0 … ``depth``: n_visible, n_hidden1, …"""
    return ("n_visible", *(f"n_hidden{l}" for l in range(1, depth + 1)))


def layer_sizes(sizes: dict[str, int]) -> list[int]:
    """n_0 … n_L from a model's sizes (:func:`size_keys`)."""
    depth = sum(1 for k in sizes if k.startswith("n_hidden"))
    return [sizes[k] for k in size_keys(depth)]


def hidden_types(hidden: str, depth: int) -> tuple[str, ...] | None:
    """The unit types of layers 1 … ``depth`` that a ``hidden`` setting names (one type for
    every layer, or one per layer separated by commas); None if it names a wrong count."""
    names = tuple(hidden.split(","))
    if len(names) == 1:
        return names * depth
    return names if len(names) == depth else None


def layer_types(visible: str, hidden: str, depth: int, visible_states, hidden_states) -> list:
    """The unit type of each layer 0 … ``depth`` (rbmlab.units), Potts ones with their q."""
    names = (visible, *hidden_types(hidden, depth))
    return [unit_type(n, int(q)) for n, q in zip(names, (visible_states, *[hidden_states] * depth))]


def parity_problem(
    visible: str, hidden: str, depth: int, visible_states="2", hidden_states="2"
) -> str | None:
    """Why the machine is no RBM between its parities (:meth:`DBM.as_rbm`: one unit type, with
    one q, to the even layers and one to the odd), or None."""
    units = layer_types(visible, hidden, depth, visible_states, hidden_states)
    for p, name in ((0, "even"), (1, "odd")):
        kinds = dict.fromkeys(u.name + (f" (q={u.width()})" if u.width() > 1 else "") for u in units[p::2])
        if len(kinds) > 1:
            return f"its {name} layers are {' and '.join(kinds)}"
    return None


def settings_parity_problem(settings) -> str | None:
    """:func:`parity_problem` of a machine's settings as Model.settings names them (``hidden``
    written out once per layer: rbmlab.units.requirements.written_per_layer), the check a
    component that treats a DBM as the RBM between its parities asks before any work."""
    hidden = str(settings.get("hidden", "bernoulli"))
    states = [settings.get(f"{layer}_states", "2") for layer in ("visible", "hidden")]
    return parity_problem(str(settings.get("visible", "bernoulli")), hidden, len(hidden.split(",")), *states)


@dataclass
class DBMConfig(ModelConfig):
    name: str = option("dbm", "model family")
    n_hidden: list[int] = option(
        [500, 500],
        "units of hidden layers 1 … L (L ≥ 1 entries: one is an RBM, two or more a DBM; the "
        "paper does not give Fig. 11's)",
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
        "visible unit type (potts: q states per unit, model.visible_states)",
        choices=UNIT_NAMES,
        neutral="bernoulli",
        label="visible unit type",
    )
    hidden_units: str = option(
        "bernoulli",
        "unit type of the hidden layers (each one of "
        f"{', '.join(UNIT_NAMES)}): one for all, or one per layer separated by commas, quoted on "
        "the command line (model.hidden_units='spin,bernoulli')",
        neutral="bernoulli",
        label="hidden unit type",
    )
    visible_states: int = states_option("visible", "states per visible unit (potts: q; binary units have 2)")
    hidden_states: int = states_option(
        "hidden", "states per unit of every potts hidden layer (q; binary units have 2)"
    )

    def check(self) -> None:
        if not self.n_hidden:
            raise invalid("n_hidden", "at least one hidden layer, e.g. [500,500]; got []")
        names = self.hidden_units.split(",")
        unknown = [n for n in names if n not in UNIT_NAMES]
        if unknown:
            raise invalid("hidden_units", f"unknown unit type {unknown[0]!r}; known: {', '.join(UNIT_NAMES)}")
        if hidden_types(self.hidden_units, len(self.n_hidden)) is None:
            raise invalid(
                "hidden_units",
                f"{len(names)} unit types for {len(self.n_hidden)} hidden layers (n_hidden); "
                "give one for all or one per layer",
            )
        check_states("visible", [self.visible_units], self.visible_states, self.visible_units)
        check_states("hidden", names, self.hidden_states, self.hidden_units)

    def widths(self) -> list[int]:
        """Columns per unit of each layer 0 … L."""
        units = layer_types(
            self.visible_units, self.hidden_units, len(self.n_hidden), self.visible_states, self.hidden_states
        )
        return [u.width() for u in units]


def layers_declaration(depth: int) -> Declaration:
    """The arrays, sizes and settings of a machine with ``depth`` hidden layers."""
    keys = size_keys(depth)
    return Declaration(
        arrays={
            **{f"W{l}": (keys[l - 1], keys[l]) for l in range(1, depth + 1)},
            **{f"b{l}": (keys[l],) for l in range(depth + 1)},
        },
        **unit_declarations(per_layer=True),
    )


@dataclass(frozen=True, kw_only=True)
class DBM(VisibleUnitColumns, Model):
    """The family; its models are of the dataclass of their depth (:meth:`of_depth`)."""

    visible: str = "bernoulli"  # layer 0's unit type (files made before it: bernoulli)
    hidden: str = "bernoulli"  # layers 1 … L's: one for all, or one per layer ("spin,bernoulli")
    visible_states: str = "2"  # q of Potts units (a setting: saved as a string; files before it: 2)
    hidden_states: str = "2"  # q of every Potts hidden layer

    # the class-level face (what is common to every depth: settings, visible units, config
    # keys) declares the default depth's arrays; each depth's dataclass declares its own
    DECLARATION: ClassVar[Declaration] = layers_declaration(2)
    INTERACTIONS: ClassVar[tuple[str, ...]] = ("W1", "W2")
    family: ClassVar[str] = "dbm"
    config_class: ClassVar[type] = DBMConfig
    default_sampler: ClassVar[str] = "block_gibbs"  # by parity (rbmlab.models.layer_stack)
    _DEPTHS: ClassVar[dict[int, type]] = {}

    @classmethod
    def of_depth(cls, depth: int) -> type[DBM]:
        """The dataclass of machines with ``depth`` ≥ 1 hidden layers (fields W1 … WL, b0 … bL),
        made once and kept in this module, so that pickling finds it by name."""
        if depth < 1:
            raise ValueError(f"a layered Boltzmann machine has at least one hidden layer; got {depth}")
        if depth not in DBM._DEPTHS:
            fields = [(f"W{l}", Any) for l in range(1, depth + 1)] + [
                (f"b{l}", Any) for l in range(depth + 1)
            ]
            made = dataclasses.make_dataclass(
                f"DBM{depth}",
                fields,
                bases=(DBM,),
                frozen=True,
                kw_only=True,
                namespace={
                    "DECLARATION": layers_declaration(depth),
                    "INTERACTIONS": tuple(f"W{l}" for l in range(1, depth + 1)),
                    "__module__": __name__,
                    "__doc__": f"A layered Boltzmann machine of {depth} hidden layer(s) (rbmlab.models.dbm).",
                },
            )
            globals()[made.__name__] = made
            DBM._DEPTHS[depth] = made
        return DBM._DEPTHS[depth]

    @classmethod
    def of(
        cls,
        couplings,
        biases,
        visible: str = "bernoulli",
        hidden: str = "bernoulli",
        visible_states=2,
        hidden_states=2,
    ) -> DBM:
        """The machine with couplings W_1 … W_L and fields b_0 … b_L (one more than couplings);
        Potts layers of q = ``visible_states`` / ``hidden_states`` (sizes count columns)."""
        if len(biases) != len(couplings) + 1:
            raise ValueError(
                f"{len(couplings)} couplings need {len(couplings) + 1} fields; got {len(biases)}"
            )
        arrays = {f"W{l}": W for l, W in enumerate(couplings, 1)} | {f"b{l}": b for l, b in enumerate(biases)}
        settings = {"visible": visible, "hidden": hidden}
        settings |= {"visible_states": str(visible_states), "hidden_states": str(hidden_states)}
        return cls.of_depth(len(couplings)).build(arrays, settings)

    @classmethod
    def from_rbm(cls, rbm: RBM) -> DBM:
        """The RBM as the layered machine of one hidden layer (W1 = W, b0 = b_v, b1 = b_h): the same
        distribution, the inverse of :meth:`as_rbm` at L = 1."""
        if rbm.visible not in UNIT_NAMES or rbm.hidden not in UNIT_NAMES:
            raise RbmlabError(
                f"model: an RBM of {rbm.visible} visible and {rbm.hidden} hidden units has no "
                f"layered form here (layer unit types: {', '.join(UNIT_NAMES)})"
            )
        return cls.of(
            [rbm.W],
            [rbm.b_v, rbm.b_h],
            visible=rbm.visible,
            hidden=rbm.hidden,
            visible_states=rbm.visible_states,
            hidden_states=rbm.hidden_states,
        )

    @classmethod
    def file_arrays(cls, names) -> list[str]:
        """The arrays of a file that are this family's: every layer's (W1 … WL, b0 … bL)."""
        return [k for k in names if LAYER_ARRAY.match(k)]

    @classmethod
    def from_arrays(cls, arrays: dict[str, Any], settings: dict[str, Any]) -> DBM:
        """A model of the depth the arrays show (W1 … WL), checked against that depth's
        declaration; a file written with a third layer of width 0 (the fixed-depth format: W3
        (n_2, 0), b3 (0,)) loses it first."""
        arrays = dict(arrays)
        depth = max((int(k[1:]) for k in arrays), default=1)  # the deepest layer named
        W, b = arrays.get(f"W{depth}"), arrays.get(f"b{depth}")
        if depth == 3 and W is not None and b is not None and W.shape[-1:] == b.shape[-1:] == (0,):
            del arrays["W3"], arrays["b3"]  # the fixed-depth format's absent third layer
            depth = 2
        return super(DBM, cls.of_depth(max(depth, 1))).from_arrays(arrays, settings)

    @classmethod
    def build(cls, arrays: dict[str, Any], settings: dict[str, str]) -> DBM:
        depth = len(cls.DECLARATION.arrays) // 2
        if hidden_types(settings.get("hidden", "bernoulli"), depth) is None:
            raise RbmlabError(
                f"checkpoint: model dbm: setting hidden={settings['hidden']!r} names "
                f"{len(settings['hidden'].split(','))} unit types for {depth} hidden layers"
            )
        model = cls(**arrays, **settings)
        names = ["visible", *(f"hidden{l}" for l in range(1, model.depth + 1))]
        check_columns(
            "dbm", [(n, b.shape[-1], u) for n, b, u in zip(names, model.biases(), model.layer_units)]
        )
        return model

    @property
    def depth(self) -> int:
        """L, the number of hidden layers."""
        return len(self.PARAMS) // 2

    @property
    def n_visible(self) -> int:
        return self.b0.shape[-1]

    @property
    def visible_units(self):
        return unit_type(self.visible, int(self.visible_states))

    @property
    def layer_units(self) -> tuple:
        """The unit type of each layer 0 … L (rbmlab.units), Potts ones with their q."""
        return tuple(
            layer_types(self.visible, self.hidden, self.depth, self.visible_states, self.hidden_states)
        )

    def couplings(self) -> list:
        return [getattr(self, f"W{l}") for l in range(1, self.depth + 1)]

    def biases(self) -> list:
        return [getattr(self, f"b{l}") for l in range(self.depth + 1)]

    def tap_stack(self):
        """(layers 0 … L: the unit types as priors with the biases as fields, couplings
        [W_1, …, W_L])."""
        stack = self.layer_stack()
        return [Layer(u, b) for u, b in zip(stack.units, stack.biases)], list(stack.couplings)

    def layer_stack(self) -> stacks.LayerStack:
        """The layers (LayerStack: unit types, fields b_0 … b_L, couplings W_1 … W_L)."""
        return stacks.LayerStack(self.layer_units, tuple(self.biases()), tuple(self.couplings()))

    # ------------------------------------------------------------ chains and statistics
    @staticmethod
    def _named(weights: list, biases: list) -> dict[str, Any]:
        """Statistics per parameter name (W1 … WL, b0 … bL)."""
        return {f"W{l}": s for l, s in enumerate(weights, 1)} | {f"b{l}": s for l, s in enumerate(biases)}

    @property
    def chain_width(self) -> int:
        """Columns of a chain state: the even layers side by side (n_0 + n_2 + …)."""
        return self.layer_stack().width(stacks.EVEN)

    def chain_start(self, x, rng):
        """Chain states whose visible layer is ``x`` (data rows): the even layers above drawn by
        one upward pass (rbmlab.models.layer_stack.start_chains)."""
        return stacks.start_chains(self.layer_stack(), x, rng)

    def visible_part(self, states):
        """The visible units (layer 0) of chain states."""
        return states[..., : self.n_visible]

    def statistics(self, states) -> dict[str, Any]:
        """Batch averages of −∂E/∂θ at chain states (the even layers side by side), the odd
        layers in expectation given them (GradientStatistics)."""
        if states.shape[-1] != self.chain_width:
            raise ValueError(
                f"DBM.statistics takes chain states of {self.chain_width} columns (the even layers); "
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
        sweeps), side by side: layer 1's, layer 2's, … (LatentFeatures; Salakhutdinov & Hinton
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
        unit type and q on each parity (:func:`parity_problem`)."""
        problem = parity_problem(
            self.visible, self.hidden, self.depth, self.visible_states, self.hidden_states
        )
        if problem:
            raise RbmlabError(
                f"model: a DBM with {self.visible} visible and {self.hidden} hidden units is no RBM "
                f"between its parities (one unit type and q on each): {problem}"
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
        even, odd = self.layer_units[0], self.layer_units[1]
        return RBM(
            W,
            *biases,
            visible=even.name,
            hidden=odd.name,
            visible_states=str(getattr(even, "q", 2)),
            hidden_states=str(getattr(odd, "q", 2)),
        )

    # ------------------------------------------------------------ construction
    @classmethod
    def sizes(cls, config: DBMConfig, n_visible: int) -> dict[str, int]:
        """Columns of each layer for data rows of ``n_visible`` units (a Potts unit is q)."""
        units = [n_visible, *config.n_hidden]
        return dict(zip(size_keys(len(config.n_hidden)), [n * w for n, w in zip(units, config.widths())]))

    @classmethod
    def parameter_count(cls, sizes: dict[str, int]) -> int:
        n = layer_sizes(sizes)
        return sum(n) + sum(p * q for p, q in zip(n, n[1:]))

    @classmethod
    def initialize(cls, config: DBMConfig, *, xp, rng, data_mean, dtype, trials: int = 0, data=None) -> DBM:
        """W_l ~ N(0, weight_std²); visible fields at the base rate (the logit of the clipped
        training mean, as rbm.base_rate_bias; Potts: the centred log of each unit's column means),
        hidden fields 0; ``trials`` > 0: that many along a leading axis. ``data_mean``: of the
        visible layer's columns (Potts data one-hot encoded)."""
        widths = config.widths()
        n = [data_mean.shape[-1], *(m * w for m, w in zip(config.n_hidden, widths[1:]))]
        lead = (trials,) if trials else ()
        W = [
            config.weight_std * rng.standard_normal(lead + (p, q), dtype=xp.dtype(dtype))
            for p, q in zip(n, n[1:])
        ]
        visible = unit_type(config.visible_units, config.visible_states)
        b0 = visible.field_for_mean(xp.asarray(data_mean, dtype=dtype), 1e-3)
        b = [xp.array(xp.broadcast_to(b0, lead + b0.shape))]
        b += [xp.zeros(lead + (m,), dtype=dtype) for m in n[1:]]
        return cls.of(
            W,
            b,
            visible=config.visible_units,
            hidden=config.hidden_units,
            visible_states=config.visible_states,
            hidden_states=config.hidden_states,
        )

    # ------------------------------------------------------------ exact sums (small DBMs)
    @classmethod
    def enumeration_size(cls, sizes: dict[str, int]) -> int:
        """Columns enumerated for log Z (Enumerable): the fewer of the even and the odd layers'.
        Sizes count columns, so a Potts unit counts q ≥ log₂ q: a bound from above on the bits
        (log₂ of the states) that log_sum enumerates, as the RBM's count of its smaller layer."""
        return partition_units(layer_sizes(sizes))

    @classmethod
    def marginal_enumeration_size(cls, sizes: dict[str, int]) -> int:
        """Columns enumerated per row for log p̃(x): the fewer of the even layers above 0 and
        the odd layers (a bound from above on the bits, as :meth:`enumeration_size`)."""
        return marginal_units(layer_sizes(sizes))

    def _exact_terms(self):
        if self.b0.ndim != 1:
            raise ValueError(f"expected a single DBM, got b0 of shape {tuple(self.b0.shape)}")
        model = self.astype(self.xp.float64)
        return dict(enumerate(model.couplings(), 1)), model.biases()

    def exact_log_partition(self, chunk_size: int = 4096) -> float:
        """log Z of a single model by enumeration (rbmlab.models.dbm_enumeration), float64."""
        weights, biases = self._exact_terms()
        return float(log_sum(weights, biases, {}, chunk_size, self.layer_stack().units)[0])

    def log_unnormalized(self, x):
        """log p̃(x) per row, the hidden layers summed out (LogProbability), float64."""
        weights, biases = self._exact_terms()
        x = self.xp.asarray(x, dtype=self.xp.float64)
        return log_sum(weights, biases, {0: x}, units=self.layer_stack().units)
