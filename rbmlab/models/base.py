"""What every model family shares, and the optional capabilities that other components ask for.

A model is a frozen dataclass of named parameter arrays plus non-array settings (unit types,
spin convention) that :meth:`Model.settings` names for checkpoints. Its ``DECLARATION``
(rbmlab.models.declaration) gives each array's axes by size name (any extra leading axis is the
trial axis of ``train.trials`` batched models) and the settings' values; from it :class:`Model`
derives ``PARAMS`` (name → number of core axes), ``model_sizes``, the data dimension and the
checked ``from_arrays``, and gives every family ``arrays``/``map``/``astype``/``trial``/finiteness.

A family class also carries, as class attributes and classmethods:
    family          the registry name (saved in checkpoints)
    config_class    its model config (``conf/model/<family>.yaml``), a :class:`ModelConfig`
    initialize      a model for a config, the training data (its mean ``data_mean``; the rows
                    ``data``, for families that fit more) and a random stream
    sizes           the model's sizes for a config and data dimension, known before any work
    parameter_count the number of parameters for those sizes (memory checked before allocating)
    build           a model from arrays and settings already checked against DECLARATION
                    (families with conditions beyond shapes, the Ising model's symmetric J,
                    check them there)
    default_sampler the inference method its learners use unless told otherwise

Capabilities are typing Protocols. Evaluators, samplers and learners declare which they need
(``requires``) and :func:`supports` checks a family class before any work starts.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Protocol, runtime_checkable

from rbmlab.backend import namespace
from rbmlab.limits import STATES
from rbmlab.models.declaration import Declaration
from rbmlab.validation import Config, option

PARAMETER_LIMIT = 1e6  # |θ| beyond it counts as divergence (see Model.finite_trials)
# Overflow and non-finite values while training are the divergence check's to report (one line or
# warning with the epoch), not numpy's to warn about operation by operation: np.errstate(**this)
DIVERGENCE_REPORTED = {"over": "ignore", "invalid": "ignore", "divide": "ignore"}


def states_option(layer: str, doc: str) -> Any:
    """The option of a layer's states per unit (q of Potts units; binary units have 2), as the
    two-layer and the layered families declare it (``model.visible_states``, ...)."""
    return option(2, doc, lo=2, hi=STATES, neutral=2, label=f"{layer} states (q)")


@dataclasses.dataclass
class ModelConfig(Config):
    """Fields every family's model config has (``conf/model/<family>.yaml``)."""

    name: str = option("", "model family")
    init: str | None = option(
        None,
        "a checkpoint (.npz) whose model training starts from (its "
        "sizes replace the config's), or <sweep dir>?key=value&... (the one "
        "run there with those config values; rbmlab.run.pretrained), or "
        "truth (the model the dataset is sampled from)",
        label="initial model",
    )


@dataclasses.dataclass(frozen=True)
class Model:
    """Base of model families: parameter arrays declared by ``DECLARATION``, named by ``PARAMS``
    (name → core ndim, derived from it)."""

    DECLARATION: ClassVar[Declaration] = Declaration(arrays={})
    PARAMS: ClassVar[dict[str, int]] = {}
    CONFIG_SETTINGS: ClassVar[dict[str, str]] = {}  # model config key → setting (DECLARATION's)
    INTERACTIONS: ClassVar[tuple[str, ...]] = ()  # parameters that weight decay shrinks
    family: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        cls.PARAMS = cls.DECLARATION.core_ndims
        cls.CONFIG_SETTINGS = dict(cls.DECLARATION.config_settings)

    @classmethod
    def file_arrays(cls, names) -> list[str]:
        """Which of a file's entries ``names`` are this family's parameter arrays (the rest may
        be settings): ``PARAMS``'; a family whose arrays depend on the model (a layered machine's
        depth) says so here."""
        return [k for k in names if k in cls.PARAMS]

    @classmethod
    def from_arrays(cls, arrays: dict[str, Any], settings: dict[str, Any]) -> Any:
        """A model from arrays and settings as a file holds them (numpy), checked against the
        family's DECLARATION first (rbmlab.models.declaration: one-line
        ``RbmlabError('checkpoint: ...')``), then by the family's :meth:`build`."""
        arrays, settings = cls.DECLARATION.check(arrays, settings, cls.family)
        return cls.build(arrays, settings)

    @classmethod
    def build(cls, arrays: dict[str, Any], settings: dict[str, str]) -> Any:
        """The model of arrays and settings that agree with DECLARATION (its shapes, its
        settings' values); a family with conditions beyond those checks them here."""
        return cls(**arrays, **settings)

    def arrays(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.PARAMS}

    def settings(self) -> dict[str, str]:
        """Non-array fields (unit types, conventions): saved in checkpoints as 0-d strings."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in self.PARAMS}

    def scalar_parameters(self) -> dict[str, float]:
        """Named scalar parameters of a single model that every evaluation records (a tied
        Ising model's θ); none by default."""
        return {}

    def model_sizes(self) -> dict[str, int]:
        """The sizes of this model (DECLARATION's size names, read off its arrays), as the family's
        ``sizes`` classmethod gives them for a config."""
        return self.DECLARATION.sizes_of({k: a.shape for k, a in self.arrays().items()})

    @property
    def data_dimension(self) -> int:
        """The length of a data row this model describes (an RBM's n_visible, an Ising model's n)."""
        return self.model_sizes()[self.DECLARATION.data_sizes[0]]

    def data_mismatch(self, dimension: int) -> str | None:
        """None if this model takes data rows of ``dimension`` values; else its sizes that differ
        (e.g. "n_visible=8"), for a one-line error."""
        sizes = self.model_sizes()
        differ = [f"{s}={sizes[s]}" for s in self.DECLARATION.data_sizes if sizes[s] != dimension]
        return ", ".join(differ) or None

    def chain_start(self, x, rng):
        """The state of a sampler chain started at data rows ``x``: the rows themselves, for a
        family whose latent units every sweep draws afresh (a DBM also holds its layer 2)."""
        return x

    def visible_part(self, states):
        """The data-row part of chain states (the inverse of :meth:`chain_start`'s widening)."""
        return states

    def replace(self, **changes) -> Any:
        return dataclasses.replace(self, **changes)

    def map(self, fn) -> Any:
        """The model with ``fn`` applied to each parameter array (casts, host/device moves)."""
        return dataclasses.replace(self, **{k: fn(v) for k, v in self.arrays().items()})

    def astype(self, dtype) -> Any:
        return self.map(lambda a: a.astype(dtype))

    @property
    def _first(self):
        return getattr(self, next(iter(self.PARAMS)))

    @property
    def xp(self):
        return namespace(self._first)

    @property
    def dtype(self):
        return self._first.dtype

    @property
    def n_trials(self) -> int:
        """Models along the leading axis; 0 for a single model without one."""
        name, core = next(iter(self.PARAMS.items()))
        array = getattr(self, name)
        return array.shape[0] if array.ndim > core else 0

    def trial(self, t: int) -> Any:
        return self.map(lambda a: a[t])

    def finite_trials(self) -> list[bool]:
        """Per trial: are all its parameters finite and within ±PARAMETER_LIMIT? (One entry for a
        single model.) Beyond the limit float32 energies have no digits left below one nat, so
        a trial there has diverged even before it overflows."""
        xp = self.xp
        ok = None
        for name, core in self.PARAMS.items():
            a = getattr(self, name)
            finite = (xp.abs(a) <= PARAMETER_LIMIT).all(axis=tuple(range(a.ndim - core, a.ndim)))
            ok = finite if ok is None else ok & finite
        return [bool(x) for x in xp.reshape(ok, (-1,)).tolist()]

    def is_finite(self) -> bool:
        return all(self.finite_trials())


# ----------------------------------------------------------------- capabilities
@runtime_checkable
class LogProbability(Protocol):
    """Unnormalised log-probability of observed configurations (latent units summed out)."""

    def log_unnormalized(self, x):
        """log p̃(x) per row of ``x`` (leading trial axes broadcast); p(x) = p̃(x) / Z."""


@runtime_checkable
class Enumerable(Protocol):
    """Exact log Z (and hence exact log-likelihood) by enumerating a small set of units."""

    @classmethod
    def enumeration_size(cls, sizes: dict[str, int]) -> int:
        """Units enumerated (2^size states) for a model of these sizes."""

    def exact_log_partition(self, chunk_size: int = 4096) -> float:
        """log Z of a single model (no trial axis), accumulated in float64."""


@runtime_checkable
class GradientStatistics(Protocol):
    """Batch averages of −∂E/∂θ: their difference between data and model is the gradient of the
    mean log-likelihood (the moments of exponential-family models)."""

    def statistics(self, x) -> dict[str, Any]:
        """Per parameter name: the batch average of −∂E(x)/∂θ (latent units in expectation)."""


@runtime_checkable
class Bipartite(Protocol):
    """Two layers of units with interactions only between them (W, b_v, b_h): the shape that
    block Gibbs sampling, AIS's base-rate path, pseudo-likelihood by flips and mean-field
    reconstruction are written for."""

    W: Any
    b_v: Any
    b_h: Any

    def hidden_logits(self, v): ...

    def visible_logits(self, h): ...


@runtime_checkable
class ParityLayers(Protocol):
    """Layers 0 … L of discrete units, each coupled only to its neighbours (an RBM is L = 1, a DBM
    L ≥ 2; rbmlab.models.layer_stack): given the layers of one parity those of the other are
    independent, so block Gibbs sampling alternates parities. A chain's state is the even layers
    side by side (``chain_start`` widens data rows to it, ``visible_part`` narrows it back)."""

    def layer_stack(self):
        """rbmlab.models.layer_stack.LayerStack: unit types, fields b_0 … b_L, couplings W_1 … W_L."""


@runtime_checkable
class MeanFieldPositive(Protocol):
    """Hidden layers that data rows do not sum out in closed form (a DBM's neighbouring hidden
    layers): the data's statistics come from a mean-field posterior over them, the model's from
    chains (tap App. E, after Salakhutdinov & Hinton 2009), so a sampling learner must say it
    forms them so (rbmlab.learners.base.Learner.mean_field_positive)."""

    def positive_statistics(self, x, iterations: int):
        """The statistics of data rows ``x``, the hidden layers at their mean-field means after
        ``iterations`` sweeps."""


@runtime_checkable
class FractionalUnits(Protocol):
    """Hidden units as weight vectors (W_{•i}, b_h,i) over a visible layer with fields b_v, each
    softplus weighted by a real coefficient c_i (the fractional RBM, frank_wolfe Eq. 11): what
    its Metropolis–Hastings sampler (Sec. 3.3), its AIS and Frank-Wolfe with a learned α are
    written for. Not Bipartite: no joint p(v, h) factorises for c_i ≠ 1."""

    W: Any
    b_v: Any
    b_h: Any
    c: Any

    def hidden_inputs(self, v): ...

    def standard(self): ...


@runtime_checkable
class TapForm(Protocol):
    """Two layers coupled only by W, each unit with a prior (rbmlab.units.prior): what TAP
    inference, its free energy and TAP learning are written for (rbmlab.inference.tap)."""

    W: Any

    def tap_layers(self):
        """(visible, hidden) rbmlab.units.layer.Layer: prior, fields and prior parameters."""


@runtime_checkable
class TapStack(Protocol):
    """Layers 0 … L of units with priors, each coupled only to its neighbours (W_l between layers
    l − 1 and l: a deep Boltzmann machine), parameters named W1 … WL and b0 … bL: what layered
    TAP inference, its free energies and TAP learning of DBMs are written for
    (rbmlab.inference.tap's stack functions)."""

    def tap_stack(self):
        """(layers 0 … L as rbmlab.units.layer.Layer, couplings [W_1, …, W_L])."""


@runtime_checkable
class Conditional(Protocol):
    """A model of outputs given inputs that, for fixed inputs, is a binary RBM with the weights W
    shared and input-dependent biases (the conditional RBM): what structured prediction by BP,
    mean field or the biases alone runs on."""

    W: Any

    def conditional_biases(self, x):
        """(b¹, b²) of the RBM each input row conditions to."""


@runtime_checkable
class LatentFeatures(Protocol):
    """A representation of each input by its latent units: the features a classifier reads."""

    def hidden_probs(self, x):
        """E[h | x] per row, (..., B, n_hidden)."""


@runtime_checkable
class LocalFields(Protocol):
    """Pairwise models whose variables can be resampled a group at a time from local fields
    (single-site and chromatic Gibbs sampling)."""

    def local_fields(self, x, sites):
        """Pre-activations of the variables ``sites`` given all others, (..., B, len(sites))."""

    def color_classes(self) -> list:
        """Groups of sites with no coupling inside a group (updated together)."""


@runtime_checkable
class PairwiseCouplings(Protocol):
    """A pairwise model log p̃(x) = ½ xᵀJx + hᵀx with J symmetric and zero on the diagonal, in its
    unit type's values: the field of every site moves by J[i] Δx_i when site i changes (the
    incremental updates of locally informed samplers such as Gibbs-with-gradients)."""

    J: Any
    h: Any
    units: Any


@runtime_checkable
class FactorGraphForm(Protocol):
    """A single model (no trial axis) as a binary factor graph over {0, 1} variables
    (rbmlab.models.factor_graph), for max-product, PMP, MPLP and the LP baseline; ``from_binary``
    maps {0, 1} states of the graph's variables (B, n) to the model's observed units."""

    def factor_graph(self): ...

    def from_binary(self, x): ...


class TwoLayerModel(Model):
    """Base of the two-layer families whose couplings are W (..., n_visible, n_hidden) and whose
    config gives ``n_hidden``: their sizes."""

    @property
    def n_visible(self) -> int:
        return self.W.shape[-2]

    @property
    def n_hidden(self) -> int:
        return self.W.shape[-1]

    @classmethod
    def sizes(cls, config, n_visible: int) -> dict[str, int]:
        return {"n_visible": n_visible, "n_hidden": config.n_hidden}


def supports(model_class: type, capability: type) -> bool:
    """Does ``model_class`` provide every member of ``capability`` (a Protocol)? Checked on the
    class, so it can be asked before a model exists."""
    members = [m for m in vars(capability) if not m.startswith("_")]
    members += list(vars(capability).get("__annotations__", {}))
    fields = (
        {f.name for f in dataclasses.fields(model_class)} if dataclasses.is_dataclass(model_class) else set()
    )
    return all(hasattr(model_class, m) or m in fields for m in members)
