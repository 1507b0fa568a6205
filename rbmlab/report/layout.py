"""Which runs form a line: varying config keys, lines and panels, and the groups they make.

Runs that share every *varying* config key except ``seed`` form one group. Lines default to the
first varying key (learner.name preferred), panels to the rest; varying keys fixed by the chosen
lines and panels split nothing, and any other varying key joins the line labels.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import pandas as pd

from rbmlab.errors import RbmlabError
from rbmlab.report.load import config_columns, to_float

MISSING = "—"
# Last components of config keys that describe how a run was executed, not what it computed.
_MECHANICS_TOKENS = frozenset(
    {
        "time",
        "wall",
        "date",
        "timestamp",
        "dir",
        "path",
        "host",
        "hostname",
        "pid",
        "uuid",
        "cwd",
        "progress",
        "resume",
    }
)


def _is_mechanics_key(key: str) -> bool:
    """True for keys about execution (wall clock, paths, progress bars), not about the model."""
    if key.startswith("hydra."):
        return True
    return any(tok in _MECHANICS_TOKENS for tok in key.rsplit(".", 1)[-1].lower().split("_"))


def norm(value: Any) -> str:
    """A display/grouping string for a config value: 0.1 -> '0.1', 3.0 -> '3', NaN -> '—'."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return MISSING
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else format(v, ".6g")
    return str(value)


def shown(frame: pd.DataFrame) -> pd.DataFrame:
    """Every cell of ``frame`` as its norm display string."""
    return frame.apply(lambda col: col.map(norm)).astype(str)


def sort_key(value: str) -> tuple[int, float, str]:
    """Numbers first in numeric order, then strings."""
    number = to_float(value)
    return (0, number, "") if not math.isnan(number) else (1, 0.0, value)


def varying_keys(runs: pd.DataFrame, ignore: Sequence[str] = ("seed",)) -> list[str]:
    """Sorted config keys whose values differ across runs (minus ``ignore`` and execution keys)."""
    keys = [k for k in config_columns(runs) if k not in ignore and not _is_mechanics_key(k)]
    return sorted(k for k in keys if runs[k].map(norm).nunique() > 1)


def _is_determined(runs: pd.DataFrame, key: str, by: Sequence[str]) -> bool:
    """True when ``key`` takes one value within every group of runs sharing ``by``."""
    values = runs[key].map(norm)
    if not by:
        return values.nunique() <= 1
    groups = shown(runs[list(by)]).agg("\x1f".join, axis=1)
    return bool((values.groupby(groups).nunique() <= 1).all())


def _as_keys(value: str | Sequence[str] | None) -> list[str] | None:
    """None, 'key' or ['k1', 'k2'] -> None or a list of keys."""
    if value is None:
        return None
    return [value] if isinstance(value, str) else list(value)


def _check_keys(runs: pd.DataFrame, keys: Sequence[str], what: str) -> None:
    """Raise when a lines/panels key is not a config key of the runs."""
    known = config_columns(runs)
    for key in keys:
        if key not in known:
            vary = ", ".join(varying_keys(runs)) or "none"
            raise RbmlabError(f"report: unknown {what} key {key!r}; varying keys: {vary}")


@dataclass(frozen=True)
class Layout:
    """Which config keys make lines, panels, and extra line-label parts."""

    lines: list[str]
    panels: list[str]
    extra: list[str]

    @property
    def group_keys(self) -> list[str]:
        return [*self.panels, *self.lines, *self.extra]


def choose_layout(
    runs: pd.DataFrame,
    lines: str | Sequence[str] | None = None,
    panels: str | Sequence[str] | None = None,
    x_key: str | None = None,
) -> Layout:
    """Lines default to the first varying key (learner.name preferred), panels to the rest.

    Varying keys that are fixed by the chosen lines and panels (e.g. a learner-specific option),
    with the seed (a per-seed checkpoint path), split nothing and are left out; any other varying
    key joins the line labels. ``x_key``, a
    config key on the x axis, is no line, panel or label part, and a key that it fixes (alone, or
    with the lines and panels) splits nothing either.
    """
    along = [x_key] if x_key else []
    vary = varying_keys(runs, ("seed", *along))
    line_keys, panel_keys = _as_keys(lines), _as_keys(panels)
    _check_keys(runs, [*(line_keys or []), *(panel_keys or [])], "lines/panels")
    line_keys = None if line_keys is None else [k for k in line_keys if k not in along]
    panel_keys = None if panel_keys is None else [k for k in panel_keys if k not in along]
    if line_keys is None:
        free = [
            k for k in vary if k not in (panel_keys or []) and not (along and _is_determined(runs, k, along))
        ]
        line_keys = ["learner.name"] if "learner.name" in free else free[:1]
    seed = ["seed"] if "seed" in runs.columns else []  # a key set per seed (a path) splits nothing
    if panel_keys is None:
        panel_keys = []
        for key in vary:
            if key not in line_keys and not _is_determined(
                runs, key, [*line_keys, *panel_keys, *along, *seed]
            ):
                panel_keys.append(key)
    chosen = [*line_keys, *panel_keys]
    extra = [k for k in vary if k not in chosen and not _is_determined(runs, k, [*chosen, *along, *seed])]
    return Layout(line_keys, panel_keys, extra)


class GroupNames(Protocol):
    """Keys and values in words (:class:`rbmlab.report.names.Names`)."""

    def pair(self, key: str, value: Any) -> str: ...

    def value(self, key: str, value: Any) -> str: ...


def assign_groups(
    runs: pd.DataFrame, layout: Layout, names: GroupNames | None = None
) -> tuple[pd.DataFrame, pd.Series]:
    """(groups, gid per run_dir): one row per distinct group-key tuple, with its labels.

    ``panel``, ``line`` and ``label`` are in words given ``names`` ("fraction of pixels flipped =
    0.1", "CD-1"); ``panel_key``, ``line_key`` and ``label_key`` spell the keys and values as the
    config does ("task.rate=0.1", "cd1"): what an experiment's paper entries and ratios name."""
    keys = layout.group_keys
    tuples = [tuple(r) for r in shown(runs[keys]).itertuples(index=False)] if keys else [()] * len(runs)
    unique = sorted(set(tuples), key=lambda t: [sort_key(v) for v in t])
    gid_of = {t: i for i, t in enumerate(unique)}
    rows = []
    for t in unique:
        values = dict(zip(keys, t))
        spelled = _labels(values, layout, lambda k, v: f"{k}={v}", lambda k, v: v)
        words = spelled if names is None else _labels(values, layout, names.pair, names.value)
        rows.append({**values, **words, **{f"{k}_key": v for k, v in spelled.items()}})
    groups = pd.DataFrame(
        rows, columns=[*keys, "panel", "line", "label", "panel_key", "line_key", "label_key"]
    )
    gids = pd.Series([gid_of[t] for t in tuples], index=runs["run_dir"].to_numpy(), name="gid")
    return groups, gids


def _labels(
    values: dict[str, str], layout: Layout, pair: Callable[[str, str], str], value: Callable[[str, str], str]
) -> dict[str, str]:
    """A group's panel, line and label: ``pair(key, value)`` for each panel key, extra line part
    and label part, ``value(key, value)`` for each line key."""
    line = [value(k, values[k]) for k in layout.lines] + [pair(k, values[k]) for k in layout.extra]
    return {
        "panel": ", ".join(pair(k, values[k]) for k in layout.panels),
        "line": ", ".join(line) or "all runs",
        "label": ", ".join(pair(k, values[k]) for k in layout.group_keys) or "all runs",
    }
