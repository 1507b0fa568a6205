"""The paper's own numbers: which group each entry of an experiment's ``report.paper`` belongs to.

Accepted forms: {label: value}, {(('key', v), ...): value}, or a list of
{'match': {key: v} | 'label': str, 'value': v}. A label is a group's line or panel label (as the
config spells it, or in words), or 'key=v, key=v'; a key may be a unique dotted suffix of a config
key ('lr' -> 'learner.lr').
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from rbmlab.errors import RbmlabError
from rbmlab.report.layout import norm, shown
from rbmlab.report.load import config_columns, to_float


def _values_match(value: str, wanted: Any) -> bool:
    """A group's display value equals a paper key's value (numbers compared numerically)."""
    if value == norm(wanted):
        return True
    a, b = to_float(value), to_float(wanted)
    return not (math.isnan(a) or math.isnan(b)) and math.isclose(a, b, rel_tol=1e-9)


def _parse_label(label: str) -> dict[str, str] | None:
    """'learner.name=cd, learner.lr=0.1' -> mapping; None for a plain label such as 'cd'."""
    if "=" not in label:
        return None
    pairs = [p.split("=", 1) for p in label.split(",") if p.strip()]
    if any(len(p) != 2 for p in pairs):
        return None
    return {k.strip(): v.strip() for k, v in pairs}


def _paper_entries(paper: Mapping[Any, Any] | Sequence[Mapping[str, Any]]) -> list[tuple[Any, Any, str]]:
    """Normalise ``paper`` into (matcher, value, description); a matcher is a str or a mapping."""
    if isinstance(paper, Mapping):
        return [(_matcher(k), v, str(k)) for k, v in paper.items()]
    entries = []
    for item in paper:
        if not isinstance(item, Mapping) or "value" not in item or not ({"match", "label"} & set(item)):
            raise RbmlabError(
                "report: paper entries must be {'match': {key: value} or 'label': text, "
                f"'value': ...}}, got {item!r}"
            )
        key = item.get("match", item.get("label"))
        entries.append((_matcher(key), item["value"], str(key)))
    return entries


def _matcher(key: Any) -> str | dict[str, Any]:
    """A paper key as a plain label (str) or a {config key: value} mapping."""
    if isinstance(key, str):
        return _parse_label(key) or key
    if isinstance(key, Mapping):
        return dict(key)
    if isinstance(key, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in key):
        return dict(key)
    raise RbmlabError(f"report: cannot use {key!r} as a paper key; use a label or a mapping")


def _resolve_key(key: str, values: Mapping[str, str]) -> str | None:
    """A paper key as a full config key: exact, or a unique dotted suffix ('lr' -> 'learner.lr')."""
    if key in values:
        return key
    hits = [k for k in values if k.endswith("." + key)]
    return hits[0] if len(hits) == 1 else None


def _match_score(matcher: Any, values: Mapping[str, str], group: Mapping[str, Any]) -> int:
    """0 when the matcher does not apply to the group, else how specific the match is."""
    if isinstance(matcher, str):  # the config's spelling of a group's labels, or their words
        if matcher in (group["label_key"], group["label"]):
            return 1000
        return 1 if matcher in (group["line_key"], group["panel_key"], group["line"], group["panel"]) else 0
    if not isinstance(matcher, Mapping) or not matcher:
        return 0
    for key, wanted in matcher.items():
        full = _resolve_key(str(key), values)
        if full is None or not _values_match(values[full], wanted):
            return 0
    return len(matcher)


def match_paper(
    paper: Any, groups: pd.DataFrame, values: list[dict[str, str]]
) -> tuple[list[Any], list[str]]:
    """Paper value per group (None if none applies) and the paper entries that matched no group."""
    entries = _paper_entries(paper)
    out: list[Any] = []
    used: set[int] = set()
    for g, group in enumerate(groups.to_dict("records")):
        scores = [(_match_score(m, values[g], group), i) for i, (m, _, _) in enumerate(entries)]
        best = max(scores, default=(0, -1))
        out.append(entries[best[1]][1] if best[0] > 0 else None)
        used.update(i for s, i in scores if s > 0)
    unmatched = [desc for i, (_, _, desc) in enumerate(entries) if i not in used]
    return out, unmatched


def constant_values(runs: pd.DataFrame, gids: pd.Series, n_groups: int) -> list[dict[str, str]]:
    """Per group: every config key that has one value across the group's runs."""
    table = shown(runs[config_columns(runs)])
    table.index = runs["run_dir"].to_numpy()
    result = []
    for g in range(n_groups):
        part = table[gids.reindex(table.index).to_numpy() == g]
        result.append({k: part[k].iloc[0] for k in part.columns if part[k].nunique() == 1})
    return result
