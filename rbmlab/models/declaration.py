"""What a model family declares about its parameter arrays and settings, and the one check of
arrays read from a file against that declaration.

Each family class sets ``DECLARATION = Declaration(arrays={name: axes, ...}, ...)``: the axes of
every parameter array by size name (an RBM's W is ("n_visible", "n_hidden"), b_v ("n_visible",)),
optionally after one leading trial axis that all its arrays share (``train.trials``). From it the
family gets ``PARAMS`` (name → number of core axes), ``model_sizes`` and its data dimension
(rbmlab.models.base.Model), and every model read from a file — ``rbmlab evaluate``,
``model.init=``, ``resume=true``, all through rbmlab.run.checkpoint.load_checkpoint — is checked
by :meth:`Declaration.check` before any array is used: each array present and numeric, its number
of axes, one value for each size across all arrays (and one trial count), no empty size but those
the settings fix, every setting known. A failure is one line naming the array, the shape found and the
shape expected.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from rbmlab.errors import RbmlabError

TRIALS = "trials"  # the name of the optional leading axis in messages


def _bad(message: str) -> RbmlabError:
    return RbmlabError(f"checkpoint: {message}")


def _tuple(items) -> str:
    """``items`` written as a Python tuple: (9, 4), (9,), ()."""
    items = [str(i) for i in items]
    return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"


def _shape(shape) -> str:
    return _tuple(int(n) for n in shape)


@dataclass(frozen=True)
class Setting:
    """A non-array setting of a family (a unit type, a spin convention), saved as a 0-d string."""

    known: tuple[str, ...]  # the values it may take
    default: str | None = None  # what a file without it means; None: a file must name it
    summary: str | None = None  # the known values in words, for messages (a long range of numbers)
    per_layer: bool = False  # one value, or one per layer separated by commas ("spin,bernoulli")

    def accepts(self, value: str) -> bool:
        return all(v in self.known for v in (value.split(",") if self.per_layer else [value]))

    def described(self, separator: str = ", ") -> str:
        return self.summary or separator.join(self.known)


@dataclass(frozen=True)
class VisibleUnits:
    """How a model family chooses its visible units: the model config ``key`` (None: fixed; a
    saved model holds the choice in the setting the declaration's ``config_settings`` maps it
    to) and the unit type or prior (rbmlab.units.prior) each config value names; ``states_key``:
    the key that gives a categorical unit type its number of states (rbmlab.units.potts).
    rbmlab.data.domain checks data against it before any work."""

    key: str | None
    names: Mapping[str, str]
    states_key: str | None = None

    def prior_name(self, value: str | None) -> str:
        return self.names[value if self.key is not None else ""]


FIXED_BERNOULLI = VisibleUnits(None, {"": "bernoulli"})  # a family whose visible units are {0, 1}


@dataclass(frozen=True)
class Declaration:
    """A family's parameter arrays, how their shapes relate, its non-array settings, the config
    keys that fix them and how a config chooses its visible units: every reader of these
    (checkpoints, the domain check, the unit requirements, the estimators) reads them here."""

    arrays: Mapping[str, tuple[str, ...]]  # parameter → its core axes, by size name
    data_sizes: tuple[str, ...] = (
        "n_visible",
    )  # sizes equal to a data row's length (the first: the data dimension)
    settings: Mapping[str, Setting] = field(default_factory=dict)
    # sizes that the settings fix (a GRBM prior's parameter count), not counted among model_sizes
    set_by_settings: Mapping[str, Callable[[Mapping[str, str]], int]] = field(default_factory=dict)
    # model config key → the setting it fixes (a unit type, a spin convention), so that a run's
    # config and a saved model are compared setting by setting
    config_settings: Mapping[str, str] = field(default_factory=dict)
    visible: VisibleUnits | None = None  # None: undeclared (the domain check refuses the family)

    def __post_init__(self) -> None:
        for key in (self.visible.key, self.visible.states_key) if self.visible else ():
            if key is not None and key not in self.config_settings:
                raise ValueError(f"the visible units' key {key} fixes no setting (config_settings)")
        unknown = set(self.config_settings.values()) - set(self.settings)
        if unknown:
            raise ValueError(f"config_settings name undeclared settings {sorted(unknown)}")

    @property
    def core_ndims(self) -> dict[str, int]:
        """``PARAMS``: parameter → number of core axes."""
        return {name: len(axes) for name, axes in self.arrays.items()}

    @property
    def sizes(self) -> tuple[str, ...]:
        """The sizes of a model (``model_sizes``' keys), in the order the arrays first name them."""
        names = dict.fromkeys(s for axes in self.arrays.values() for s in axes)
        return tuple(s for s in names if s not in self.set_by_settings)

    def sizes_of(self, shapes: Mapping[str, tuple[int, ...]]) -> dict[str, int]:
        """The sizes read off arrays of these shapes (already consistent), each where first named."""
        found: dict[str, int] = {}
        for name, axes in self.arrays.items():
            for size, n in zip(axes, tuple(shapes[name])[-len(axes) :]):
                found.setdefault(size, int(n))
        return {s: found[s] for s in self.sizes}

    # ------------------------------------------------------------ the check
    def check(
        self, arrays: Mapping[str, Any], settings: Mapping[str, Any], family: str
    ) -> tuple[dict[str, np.ndarray], dict[str, str]]:
        """``arrays`` and ``settings`` (as read from a file) checked against this declaration and
        returned as the family's constructor takes them: the arrays in one native float dtype
        (the first array's float type; float64 for integers), the declared settings as strings.
        Any problem is one ``RbmlabError('checkpoint: ...')`` line naming the array or setting."""
        arrays = {k: np.asarray(arrays[k]) for k in self.arrays if k in arrays}
        missing = [k for k in self.arrays if k not in arrays]
        if missing:
            raise _bad(f"model {family} needs arrays {', '.join(self.arrays)}; missing {', '.join(missing)}")
        for name, a in arrays.items():
            if a.dtype.kind not in "fiu":
                raise _bad(f"{name} must be numeric (float or int), got dtype {a.dtype}")
        chosen = self._settings(settings, family)
        for name, a in arrays.items():
            core = len(self.arrays[name])
            if a.ndim not in (core, core + 1):
                raise _bad(
                    f"{name} has shape {_shape(a.shape)}, expected {core} axes "
                    f"{_tuple(self.arrays[name])} or {core + 1} with a leading trial axis"
                )
        self._check_sizes({k: a.shape for k, a in arrays.items()}, chosen, family)
        first = next(iter(arrays.values())).dtype
        dtype = first.newbyteorder("=") if first.kind == "f" else np.dtype(np.float64)  # '>f8': float64
        return {k: a.astype(dtype) for k, a in arrays.items()}, chosen

    def _settings(self, settings: Mapping[str, Any], family: str) -> dict[str, str]:
        chosen = {}
        for name, setting in self.settings.items():
            if name not in settings and setting.default is None:
                raise _bad(f"model {family} needs setting {name} ({setting.described(' or ')})")
            given = np.asarray(settings[name]) if name in settings else None
            if given is not None and (given.ndim or given.dtype.kind != "U"):
                raise _bad(
                    f"model {family}: setting {name} must be a string (one of "
                    f"{setting.described()}), got a {given.dtype} array of shape "
                    f"{_shape(given.shape)}"
                )
            value = str(given) if given is not None else setting.default
            if not setting.accepts(value):
                raise _bad(
                    f"model {family}: setting {name}={value!r} is unknown; known: {setting.described()}"
                )
            chosen[name] = value
        return chosen

    def _expected(self, name: str, values: Mapping[str, int | None]) -> tuple[int, ...]:
        lead = () if values[TRIALS] is None else (values[TRIALS],)
        return lead + tuple(values[s] for s in self.arrays[name])

    def _check_sizes(
        self, shapes: dict[str, tuple[int, ...]], settings: Mapping[str, str], family: str
    ) -> None:
        """One value per size (and one trial count) for all arrays, no empty trial axis and no
        empty size but those the settings fix; the first array that disagrees is named beside
        those it disagrees with."""
        fixed = {s: rule(settings) for s, rule in self.set_by_settings.items()}
        values = self._fit(shapes, fixed)
        bad = self._inconsistent(shapes, values)
        if bad:
            raise _bad(self._mismatch(bad[0], shapes, values, bad, fixed, settings))
        if values[TRIALS] == 0:
            name = next(k for k in shapes if len(shapes[k]) > len(self.arrays[k]))
            raise _bad(
                f"{name} has shape {_shape(shapes[name])}: an empty trial axis (a file of "
                "batched trials holds at least one)"
            )
        for size, n in values.items():
            if n == 0 and size != TRIALS and size not in fixed:
                name = next(k for k in shapes if size in self.arrays[k])
                raise _bad(
                    f"{name} has shape {_shape(shapes[name])}: {size} is 0; model {family} needs at least one"
                )

    def _inconsistent(self, shapes, values) -> list[str]:
        return [k for k in shapes if tuple(shapes[k]) != self._expected(k, values)]

    def _fit(self, shapes: dict[str, tuple[int, ...]], fixed: dict[str, int]) -> dict[str, int | None]:
        """The value of each size (and of the trial count, None for none) that leaves fewest
        arrays inconsistent, among the values the arrays show; on a tie the earlier declared
        arrays are trusted. So a transposed W is blamed, not the two biases that disagree with it."""
        candidates: dict[str, list] = {TRIALS: [None]}
        for name, shape in shapes.items():
            axes = self.arrays[name]
            if len(shape) > len(axes):
                candidates[TRIALS].append(shape[0])
            for size, n in zip(axes, shape[len(shape) - len(axes) :]):
                candidates.setdefault(size, []).append(n)
        candidates.update({s: [n] for s, n in fixed.items()})
        order = list(shapes)

        def rank(values):
            bad = self._inconsistent(shapes, values)
            return len(bad), [-order.index(k) for k in bad]

        names = list(candidates)
        options = itertools.product(*(list(dict.fromkeys(candidates[s])) for s in names))
        return min((dict(zip(names, combo)) for combo in options), key=rank)

    def _mismatch(self, name: str, shapes, values, bad: list[str], fixed, settings) -> str:
        """``name`` has shape ..., expected ... = (axes) to match <the consistent arrays that show
        the sizes it disagrees on>."""
        expected, found = self._expected(name, values), tuple(shapes[name])
        axes = ((TRIALS,) if values[TRIALS] is not None else ()) + self.arrays[name]
        differ = (
            [a for a, f, e in zip(axes, found, expected) if f != e]
            if len(found) == len(expected)
            else [TRIALS]
        )
        good = [k for k in shapes if k not in bad]
        witnesses = [k for k in dict.fromkeys(self._witness(size, good) for size in differ) if k]
        also = (" to match " + ", ".join(f"{k} {_shape(shapes[k])}" for k in witnesses)) if witnesses else ""
        note = "".join(
            f" ({s} = {n} for {', '.join(f'{k}={v}' for k, v in settings.items())})"
            for s, n in fixed.items()
            if s in axes
        )
        return f"{name} has shape {_shape(found)}, expected {_shape(expected)} = {_tuple(axes)}{also}{note}"

    def _witness(self, size: str, good: list[str]) -> str | None:
        """The consistent array that shows ``size`` most plainly: of those with that axis, one
        with the fewest (a bias shows a layer's size); the first for the trial axis."""
        if size == TRIALS:
            return good[0] if good else None
        having = [k for k in good if size in self.arrays[k]]
        return min(having, key=lambda k: len(self.arrays[k])) if having else None
