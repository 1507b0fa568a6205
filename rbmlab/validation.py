"""One validation system for every configuration: declarative fields checked at the edge.

A configuration is a dataclass whose fields are declared with :func:`option` (default, one-line
doc, and optionally choices, a range, a nested component parser, or an identity-neutral value, at
which runs from before the option keep their hash). :func:`parse_options` builds one from user
input: unknown keys, wrong types, non-finite numbers and out-of-range values become a one-line
``RbmlabError("<prefix>.<key>: <problem>")``. Cross-field rules go in ``check()`` and raise
:func:`invalid` with the key relative to the configuration; the parser prefixes it. Dataset
options, model, learner, optimizer, evaluator, train and backend configurations all use this
module.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import sys
import types
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from rbmlab.errors import RbmlabError
from rbmlab.limits import EXAMPLES, Limit

T = TypeVar("T")

BINARIZE_MODES = ("threshold", "stochastic", "none")


class InvalidOption(RbmlabError):
    """A bad value found by a configuration's own checks; ``key`` is relative to the configuration."""

    def __init__(self, key: str, message: str):
        super().__init__(f"{key}: {message}")
        self.key, self.message = key, message


def invalid(key: str, message: str) -> InvalidOption:
    """The error for ``check()`` rules: ``raise invalid("k", "must be >= 1")``."""
    return InvalidOption(key, message)


NO_NEUTRAL: Any = object()  # option()'s "no identity-neutral value", distinct from neutral=None


PROGRESS = ("auto",)  # a progress setting's word beside true and false: bars where stderr is a terminal


def progress_bars(setting: bool | str) -> bool:
    """Whether a progress setting (true, false or auto) draws bars: auto only where stderr is a
    terminal, so output piped or written to a log carries no bar frames."""
    return sys.stderr.isatty() if setting == "auto" else bool(setting)


def option(
    default: Any,
    doc: str,
    *,
    choices: tuple[str, ...] | None = None,
    lo: float | None = None,
    hi: float | None = None,
    open_lo: bool = False,
    open_hi: bool = False,
    parse: Callable[[Any, str], Any] | None = None,
    neutral: Any = NO_NEUTRAL,
    label: str | None = None,
) -> Any:
    """A dataclass field with a one-line doc and optional choices (for strings), a range [lo, hi]
    (for numbers), or ``parse(value, key)`` building a nested component configuration. A count
    or size takes its ``hi`` from rbmlab.limits (a Limit: the error quotes its reason).

    ``neutral``, for an option added after runs existed: the value (None included) at which it
    does what those runs did. At that value it is left out of a run's identity, whatever the
    default, so their hashes and resume still hold (:func:`without_neutral`).

    ``label``: the option in words where a report shows it ("hidden units", "learning rate";
    rbmlab.report.names)."""
    meta = {
        "doc": doc,
        "choices": choices,
        "lo": lo,
        "hi": hi,
        "open_lo": open_lo,
        "open_hi": open_hi,
        "parse": parse,
        "label": label,
    }
    if neutral is not NO_NEUTRAL:
        meta["neutral"] = neutral
    if isinstance(default, (list, dict)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def n_train_option() -> Any:
    """The usual ``n_train`` field: first n training examples, None = all."""
    return option(
        None, "first n training examples (null = all)", lo=1, hi=EXAMPLES, label="training examples"
    )


def pixel_threshold_option() -> Any:
    """The usual ``threshold`` field of 8-bit images: binarize=threshold's cut."""
    return option(
        127, "binarize=threshold: pixel > threshold -> 1", lo=0, hi=255, label="binarisation threshold"
    )


def binarize_seed_option() -> Any:
    """The usual ``binarize_seed`` field: binarize=stochastic's one fixed draw."""
    return option(
        0, "binarize=stochastic: seed of the one fixed draw per pixel", lo=0, label="binarisation seed"
    )


def n_test_option() -> Any:
    """The usual ``n_test`` field: first n test examples, None = all."""
    return option(None, "first n test examples (null = all)", lo=1, hi=EXAMPLES)


def option_error(key: str, message: str, prefix: str = "dataset") -> RbmlabError:
    """``RbmlabError("<prefix>.<key>: <message>")``, for checks made outside a parse (at load time)."""
    return RbmlabError(f"{prefix}.{key}: {message}")


def _show(value: Any) -> str:
    text = " ".join(repr(value).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _range_text(meta: Mapping[str, Any]) -> str:
    lo, hi = meta["lo"], meta["hi"]
    if lo is not None and hi is not None:
        left, right = ("(" if meta["open_lo"] else "["), (")" if meta["open_hi"] else "]")
        return f"in {left}{lo}, {hi}{right}"
    if lo is not None:
        return f"{'>' if meta['open_lo'] else '>='} {lo}"
    return f"{'<' if meta['open_hi'] else '<='} {hi}"


def _below(x: float, meta: Mapping[str, Any]) -> bool:
    lo = meta["lo"]
    return lo is not None and (x <= lo if meta["open_lo"] else x < lo)


def _above(x: float, meta: Mapping[str, Any]) -> bool:
    hi = meta["hi"]
    return hi is not None and (x >= hi if meta["open_hi"] else x > hi)


def _range_problem(x: float, meta: Mapping[str, Any]) -> str | None:
    """What is wrong with ``x`` against the declared range, or None. A bound from rbmlab.limits
    (a Limit) is quoted with its reason, and only the side that ``x`` misses is named."""
    hi = meta["hi"]
    if isinstance(hi, Limit):
        if _above(x, meta):
            return f"must be {'<' if meta['open_hi'] else '<='} {hi} ({hi.why}), got {_show(x)}"
        if _below(x, meta):
            return f"must be {_range_text({**meta, 'hi': None})}, got {_show(x)}"
        return None
    if _below(x, meta) or _above(x, meta):
        return f"must be {_range_text(meta)}, got {_show(x)}"
    return None


def _alternatives(hint: Any) -> tuple[list[Any], bool]:
    """(base types, accepts None) of ``X``, ``X | None`` or ``X | Y``."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = typing.get_args(hint)
        return [a for a in args if a is not type(None)], type(None) in args
    return [hint], False


_KIND = {bool: "true or false", int: "an integer", float: "a finite number", str: "a string"}


def _matches(value: Any, base: Any) -> bool:
    if base is bool:
        return isinstance(value, bool) or type(value).__name__ == "bool_"
    if base is int:
        return isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if base is float:
        return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    return isinstance(value, str)


def _kinds(bases: list[Any], meta: Mapping[str, Any]) -> str:
    """'true or false or auto': what values of ``bases`` are, a string's by its choices if any."""
    return " or ".join(
        " or ".join(meta["choices"]) if b is str and meta["choices"] else _KIND[b] for b in bases
    )


def _coerce_scalar(key: str, value: Any, bases: list[Any], optional: bool, meta: Mapping[str, Any]):
    base = next((b for b in bases if _matches(value, b)), None)
    if base is None:
        raise InvalidOption(
            key, f"expected {_kinds(bases, meta)}{' or null' if optional else ''}, got {_show(value)}"
        )
    value = base(value)
    if base is str and meta["choices"] is not None and value not in meta["choices"]:
        if len(bases) > 1:  # a word beside numbers or booleans (batch_size's full, progress's auto)
            raise InvalidOption(key, f"expected {_kinds(bases, meta)}, got {_show(value)}")
        raise InvalidOption(key, f"expected one of {', '.join(meta['choices'])}; got {_show(value)}")
    if base in (int, float) and (problem := _range_problem(value, meta)) is not None:
        raise InvalidOption(key, problem)
    return value


def _coerce(key: str, value: Any, hint: Any, meta: Mapping[str, Any]) -> Any:
    bases, optional = _alternatives(hint)
    if value is None:
        if optional:
            return None
        raise InvalidOption(key, "must not be null")
    if typing.get_origin(bases[0]) is list:
        (item,) = typing.get_args(bases[0])
        if not isinstance(value, (list, tuple)):
            raise InvalidOption(key, f"expected a list, e.g. {key}=[a,b], got {_show(value)}")
        return [_coerce_scalar(key, v, [item], False, meta) for v in value]
    if bases[0] is Any:
        return value
    return _coerce_scalar(key, value, bases, optional, meta)


def merged(base: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    """``given`` laid over ``base``: mappings merged key by key at every depth, anything else
    replaced (experiment files over their base, the estimator's options over a composed group)."""
    out = dict(base)
    for key, value in given.items():
        both = isinstance(value, Mapping) and isinstance(out.get(key), Mapping)
        out[key] = merged(out[key], value) if both else value
    return out


def key_values(items: list[str]) -> dict[str, Any]:
    """``key=value`` command-line items (a script's options) as a dict of YAML-parsed values;
    an item without ``=`` is a one-line RbmlabError."""
    import yaml  # noqa: PLC0415

    given = {}
    for item in items:
        key, eq, value = item.partition("=")
        if not eq:
            raise RbmlabError(f"{item}: expected key=value")
        given[key] = yaml.safe_load(value)
    return given


def typed_key_values(
    items: list[str], defaults: Mapping[str, Any], lists: Mapping[str, type], *, keep_empty: bool = False
) -> dict[str, Any]:
    """A script's ``key=value`` items over ``defaults`` (the keys it knows): each value converted
    to its default's type, or for a key of ``lists`` to a list of that type from a
    comma-separated value (empty items dropped unless ``keep_empty``). A bad item is a one-line
    RbmlabError naming its key."""
    opts = dict(defaults)
    for item in items:
        key, eq, value = item.partition("=")
        if not eq:
            raise RbmlabError(f"{item}: expected key=value")
        if key not in defaults:
            raise RbmlabError(f"{key}: unknown key, expected one of {', '.join(defaults)}")
        opts[key] = value
    for key, default in defaults.items():
        kind = lists.get(key, type(default))
        if kind is bool and key not in lists and isinstance(opts[key], str):  # bool("false") is True
            if opts[key].lower() not in ("true", "false"):
                raise RbmlabError(f"{key}: expected true or false, got {opts[key]!r}")
            opts[key] = opts[key].lower() == "true"
            continue
        try:
            opts[key] = (
                [kind(p) for p in str(opts[key]).split(",") if keep_empty or p]
                if key in lists
                else kind(opts[key])
            )
        except ValueError:
            raise RbmlabError(
                f"{key}: expected {'comma-separated ' if key in lists else ''}"
                f"{kind.__name__}{'s' if key in lists else ''}, got {opts[key]!r}"
            ) from None
    return opts


def parse_options(cls: type[T], given: Mapping[str, Any], prefix: str, what: str | None = None) -> T:
    """Build ``cls`` from ``given``, rejecting unknown keys and ill-typed or out-of-range values;
    every error names ``<prefix>.<key>``. ``what`` names the thing configured in the unknown-key
    message (e.g. 'dataset mnist')."""
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    hints = typing.get_type_hints(cls)
    if not isinstance(given, Mapping):
        raise RbmlabError(f"{prefix}: expected a group of options, got {_show(given)}")
    try:
        for key in given:
            if key not in fields:
                valid = ", ".join(fields) or "(none)"
                raise InvalidOption(
                    str(key), f"unknown option{' for ' + what if what else ''}; valid options: {valid}"
                )
        if isinstance(cls, type) and issubclass(cls, Config):
            return cls(**given)  # fields are checked on construction
        values = {key: _coerce(key, val, hints[key], fields[key].metadata) for key, val in given.items()}
        return cls(**values)
    except InvalidOption as e:
        raise RbmlabError(f"{prefix}.{e.key}: {e.message}") from None


class Config:
    """Base of configuration dataclasses: every field is checked against its declaration when an
    instance is made (also when made directly in code), then :meth:`check` runs cross-field rules.
    Errors name the key relative to the configuration; :func:`parse_options` prefixes the group."""

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if f.metadata.get("parse") is not None:
                if dataclasses.is_dataclass(value):  # already parsed
                    continue
                try:
                    value = f.metadata["parse"](value, f.name)
                except InvalidOption:
                    raise
                except RbmlabError as e:
                    key, _, message = str(e).partition(": ")
                    raise InvalidOption(key, message) from None
            elif "doc" in f.metadata:
                value = _coerce(f.name, value, hints[f.name], f.metadata)
            object.__setattr__(self, f.name, value)
        for key, why in self.unread().items():  # a setting that does not apply is refused, not ignored
            if not is_default(self, key):
                raise invalid(key, f"{why}; remove it")
        self.check()

    def check(self) -> None:
        """Cross-field rules: ``raise invalid(key, message)``."""

    def unread(self) -> dict[str, str]:
        """The options that this configuration's other choices leave unread, ``{key: why}``
        (``why`` names the choice that reads it, e.g. "applies to bias_fit=fixed only"): set
        away from its default, such an option is refused. Components declare theirs here; a
        conformance test (tests/test_settings_read.py) checks that every other option is read."""
        return {}


def is_default(config: Any, key: str) -> bool:
    """Whether option ``key`` of ``config`` holds its declared default (a nested component: the
    component its default parses to)."""
    f = config.__dataclass_fields__[key]
    default = f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[misc]
    if f.metadata.get("parse") is not None and default is not None:
        default = f.metadata["parse"](default, key)
    return getattr(config, key) == default


def option_docs(cls: type) -> dict[str, tuple[Any, str]]:
    """``{key: (default, doc)}`` for each option of ``cls``, in declaration order."""
    out = {}
    for f in dataclasses.fields(cls):
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[misc]
        out[f.name] = (default, f.metadata.get("doc", ""))
    return out


def identity_neutral(config: Any) -> dict[str, Any]:
    """``{key: neutral value}`` of the options of ``config`` (a class or an instance) declared
    with ``option(..., neutral=...)``."""
    return {f.name: f.metadata["neutral"] for f in dataclasses.fields(config) if "neutral" in f.metadata}


def without_neutral(plain: Mapping[str, Any], config: Any) -> dict[str, Any]:
    """``plain`` (``config`` as :func:`to_plain` makes it) less each option at its identity-neutral
    value, in nested component configurations too: what identifies a run. ``config`` may be the
    class where it nests none (a dataset's options, kept as a dict)."""
    neutral, out = identity_neutral(config), {}
    for key, value in plain.items():
        nested = getattr(config, key, None)
        if isinstance(value, Mapping) and dataclasses.is_dataclass(nested) and not isinstance(nested, type):
            out[key] = without_neutral(value, nested)
        elif key not in neutral or value != neutral[key]:
            out[key] = value
    return out


def to_plain(obj: Any) -> Any:
    """Configuration dataclasses → nested dicts of plain Python values (for YAML, JSON, hashes)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_plain(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, Mapping):
        return {k: to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_plain(v) for v in obj]
    if getattr(obj, "shape", None) == () and hasattr(obj, "item"):  # a numpy scalar (np.int64(10))
        return obj.item()
    return obj


def script_arguments(argv: list[str], cls: type[T], prefix: str, example: str):
    """A results script's ``OUT.md [key=value ...]``: the markdown file to write (its directory
    must exist) and ``cls`` built from the options; a bad one raises a one-line RbmlabError that
    names ``OUT`` or ``<prefix>.<key>``. ``example`` is an OUT to show in the message."""
    if not argv or "=" in argv[0]:
        raise RbmlabError(f"OUT: the first argument is the markdown file to write (e.g. {example})")
    out = Path(argv[0])
    if not out.parent.is_dir():
        raise RbmlabError(f"OUT: directory not found: {out.parent}")
    return out, parse_options(cls, key_values(argv[1:]), prefix)
