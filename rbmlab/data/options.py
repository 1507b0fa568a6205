"""Dataset options: frozen dataclasses whose fields are type- and range-checked at the edge.

Declare a field with :func:`option`; build an instance from user input with :func:`parse_options`.
Every error is a one-line ``RbmlabError("dataset.<key>: ...")``.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar

from rbmlab.errors import RbmlabError

T = TypeVar("T")

BINARIZE_MODES = ("threshold", "stochastic", "none")


def option(
    default: Any,
    doc: str,
    *,
    choices: tuple[str, ...] | None = None,
    lo: float | None = None,
    hi: float | None = None,
    open_lo: bool = False,
    open_hi: bool = False,
) -> Any:
    """A dataclass field with a one-line doc and optional choices or range [lo, hi]."""
    meta = {"doc": doc, "choices": choices, "lo": lo, "hi": hi, "open_lo": open_lo, "open_hi": open_hi}
    return dataclasses.field(default=default, metadata=meta)


def n_train_option() -> Any:
    """The usual ``n_train`` field: first n training examples, None = all."""
    return option(None, "first n training examples (null = all)", lo=1)


def n_test_option() -> Any:
    """The usual ``n_test`` field: first n test examples, None = all."""
    return option(None, "first n test examples (null = all)", lo=1)


def option_error(key: str, message: str) -> RbmlabError:
    """``RbmlabError("dataset.<key>: <message>")``."""
    return RbmlabError(f"dataset.{key}: {message}")


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


def _in_range(x: float, meta: Mapping[str, Any]) -> bool:
    lo, hi = meta["lo"], meta["hi"]
    if lo is not None and (x <= lo if meta["open_lo"] else x < lo):
        return False
    return not (hi is not None and (x >= hi if meta["open_hi"] else x > hi))


def _split_optional(hint: Any) -> tuple[Any, bool]:
    """(base type, accepts None) for ``X`` or ``X | None``."""
    if isinstance(hint, types.UnionType) or typing.get_origin(hint) is typing.Union:
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        return args[0], len(args) < len(typing.get_args(hint))
    return hint, False


def _coerce(key: str, value: Any, hint: Any, meta: Mapping[str, Any]) -> Any:
    base, optional = _split_optional(hint)
    if value is None:
        if optional:
            return None
        raise option_error(key, "must not be null")
    kind = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}[base]
    if base is bool:
        ok = isinstance(value, bool) or type(value).__name__ == "bool_"
    elif base is int:
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    elif base is float:
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
    else:
        ok = isinstance(value, str)
    if not ok:
        raise option_error(key, f"expected {kind}{' or null' if optional else ''}, got {_show(value)}")
    value = base(value)
    if meta["choices"] is not None and value not in meta["choices"]:
        raise option_error(key, f"expected one of {', '.join(meta['choices'])}; got {_show(value)}")
    if (meta["lo"] is not None or meta["hi"] is not None) and not _in_range(value, meta):
        raise option_error(key, f"must be {_range_text(meta)}, got {_show(value)}")
    return value


def parse_options(cls: type[T], dataset: str, given: Mapping[str, Any]) -> T:
    """Build ``cls`` from ``given``, rejecting unknown keys and ill-typed or out-of-range values."""
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    hints = typing.get_type_hints(cls)
    for key in given:
        if key not in fields:
            valid = ", ".join(fields) or "(none)"
            raise option_error(key, f"unknown option for dataset {dataset}; valid options: {valid}")
    values = {key: _coerce(key, val, hints[key], fields[key].metadata) for key, val in given.items()}
    return cls(**values)


def option_docs(cls: type) -> dict[str, tuple[Any, str]]:
    """``{key: (default, doc)}`` for each option of ``cls``, in declaration order."""
    return {f.name: (f.default, f.metadata.get("doc", "")) for f in dataclasses.fields(cls)}
