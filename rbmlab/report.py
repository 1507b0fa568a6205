"""Reports over run directories: a markdown table, tidy CSVs and a plot of one metric.

A run directory is any directory holding ``summary.json`` (see ``rbmlab.runner``). Runs that
share every *varying* config key except ``seed`` form one group; a group's curve is the mean and
standard deviation (ddof=1, pandas' default) of the metric over its runs at each x value, with
``n`` the number of runs evaluated at that x. Rows where the metric is NaN or infinite are dropped
per metric, so runs on different evaluation schedules and diverged runs (whose curves stop early)
aggregate without special cases.
"""
from __future__ import annotations

import json
import math
import re
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from rbmlab.errors import RbmlabError

DEFAULT_METRICS = ("test_log_likelihood", "test_pseudo_log_likelihood", "test_reconstruction_error")
SCHEDULE_COLUMNS = ("epoch", "updates", "wall_time")
RUN_INFO_COLUMNS = ("run_dir", "status", "epochs_done", "wall_time", "overrides", "source")
# Last components of config keys that describe how a run was executed, not what it computed.
_MECHANICS_TOKENS = frozenset({"time", "wall", "date", "timestamp", "dir", "path", "host",
                               "hostname", "pid", "uuid", "cwd", "progress", "resume"})
_LOWER_IS_BETTER = re.compile(r"(error|loss)")
MISSING = "—"


# ----------------------------------------------------------------------------- loading

def _flatten(node: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mapping -> {'a.b.c': leaf}; lists become JSON strings so values stay hashable."""
    flat: dict[str, Any] = {}
    for key, value in node.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, name + "."))
        elif isinstance(value, (list, tuple)):
            flat[name] = json.dumps(list(value), default=str)
        else:
            flat[name] = value
    return flat


def _read_yaml(path: Path, default: Any) -> Any:
    """Parsed YAML file, or ``default`` when the file is absent."""
    if not path.exists():
        return default
    try:
        return yaml.safe_load(path.read_text())
    except (yaml.YAMLError, OSError) as exc:
        raise RbmlabError(f"report: cannot read {path}: {_one_line(exc)}") from None


def _read_summary(path: Path) -> dict[str, Any]:
    """summary.json as a dict."""
    try:
        data = json.loads(path.read_text())
    except (json.JSONDecodeError, OSError) as exc:
        raise RbmlabError(f"report: cannot read {path}: {_one_line(exc)}") from None
    if not isinstance(data, dict):
        raise RbmlabError(f"report: {path} is not a JSON object")
    return data


def _read_metrics(path: Path) -> pd.DataFrame:
    """metrics.csv with numeric columns; non-finite values become NaN. Empty when absent."""
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame(columns=list(SCHEDULE_COLUMNS))
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, OSError) as exc:
        raise RbmlabError(f"report: cannot read {path}: {_one_line(exc)}") from None
    frame = frame.apply(pd.to_numeric, errors="coerce")
    return frame.replace([np.inf, -np.inf], np.nan)


def _to_float(value: Any) -> float:
    """float(value), NaN when it is not a number."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def find_run_dirs(root: Path) -> list[Path]:
    """Every directory under ``root`` (itself included) that holds a summary.json, sorted."""
    return sorted({p.parent for p in Path(root).rglob("summary.json") if p.is_file()})


def _split_trials(row: dict[str, Any], curve: pd.DataFrame, summary: Mapping[str, Any]
                  ) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """A run of T batched trials (train.trials) as T replicates ``<run_dir>#<t>``, like seeds."""
    finals = summary.get("final_trials") or []
    out = []
    for t in sorted(int(t) for t in curve["trial"].dropna().unique()):
        trial_row = {k: v for k, v in row.items() if not k.startswith("final.")}
        trial_row["run_dir"] = f"{row['run_dir']}#{t}"
        final = finals[t] if t < len(finals) and isinstance(finals[t], Mapping) else {}
        if final.get("status") == "diverged":
            trial_row["status"] = "diverged"
            final = {}
        trial_row.update({f"final.{k}": _to_float(v) for k, v in final.items() if k != "trial"})
        part = curve[curve["trial"] == t].drop(columns="trial").copy()
        part["run_dir"] = trial_row["run_dir"]
        out.append((trial_row, part))
    return out


def _load_run(run_dir: Path, root: Path) -> list[tuple[dict[str, Any], pd.DataFrame]]:
    """One run's rows of the runs table and its metrics rows (one pair per trial)."""
    rel = run_dir.relative_to(root).as_posix()
    summary = _read_summary(run_dir / "summary.json")
    config = _read_yaml(run_dir / "config.yaml", {}) or {}
    if not isinstance(config, Mapping):
        raise RbmlabError(f"report: {run_dir / 'config.yaml'} is not a mapping")
    overrides = _read_yaml(run_dir / "overrides.yaml", []) or []
    row: dict[str, Any] = {"run_dir": rel, "status": str(summary.get("status", "unknown"))}
    row.update({k: v for k, v in _flatten(config).items() if k not in RUN_INFO_COLUMNS})
    for key in ("scale", "seed"):
        if key not in row and key in summary:
            row[key] = summary[key]
    row["epochs_done"] = summary.get("epochs_done")
    row["wall_time"] = _to_float(summary.get("wall_time"))
    row["source"] = summary.get("source")   # the commit that produced the run (rbmlab.provenance)
    row["overrides"] = " ".join(str(o) for o in overrides) if isinstance(overrides, list) else str(overrides)
    final = summary.get("final") or {}
    if isinstance(final, Mapping):
        row.update({f"final.{k}": _to_float(v) for k, v in final.items()})
    curve = _read_metrics(run_dir / "metrics.csv")
    curve.insert(0, "run_dir", rel)
    if "trial" in curve.columns:
        return _split_trials(row, curve, summary)
    return [(row, curve)]


def _order_run_columns(columns: Iterable[str]) -> list[str]:
    """run_dir, status, config keys (first-seen order), run info, then sorted final.* columns."""
    cols = list(dict.fromkeys(columns))
    finals = sorted(c for c in cols if c.startswith("final."))
    info = [c for c in RUN_INFO_COLUMNS[2:] if c in cols]
    config = [c for c in cols if c not in RUN_INFO_COLUMNS and c not in finals]
    return ["run_dir", "status", *config, *info, *finals]


def config_columns(runs: pd.DataFrame) -> list[str]:
    """The flattened config keys among the columns of a runs table."""
    return [c for c in runs.columns if c not in RUN_INFO_COLUMNS and not c.startswith("final.")]


def load_runs(root: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(runs, curves) for every run directory under ``root``.

    runs: one row per run (per trial for batched trials, run_dir ``<dir>#<t>``): run_dir (relative
    to root), status, flattened config keys,
    epochs_done, wall_time, overrides, final.<metric>. curves: every metrics.csv row with
    run_dir, status and the run's config keys joined in.
    """
    root = Path(root)
    if not root.is_dir():
        raise RbmlabError(f"report: no such directory {root}")
    dirs = find_run_dirs(root)
    if not dirs:
        raise RbmlabError(f"report: no runs (summary.json) under {root}")
    loaded = [pair for d in dirs for pair in _load_run(d, root)]
    rows = [r for r, _ in loaded]
    columns = _order_run_columns(c for r in rows for c in r)
    runs = pd.DataFrame(rows).reindex(columns=columns)
    metrics = pd.concat([c for _, c in loaded], ignore_index=True)
    joined = [c for c in ["status", *config_columns(runs)] if c not in metrics.columns]
    curves = metrics.merge(runs[["run_dir", *joined]], on="run_dir", how="left")
    return runs, curves


# ----------------------------------------------------------------------------- keys and values

def _is_mechanics_key(key: str) -> bool:
    """True for keys about execution (wall clock, paths, progress bars), not about the model."""
    if key.startswith("hydra."):
        return True
    return any(tok in _MECHANICS_TOKENS for tok in key.rsplit(".", 1)[-1].lower().split("_"))


def _norm(value: Any) -> str:
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


def _shown(frame: pd.DataFrame) -> pd.DataFrame:
    """Every cell of ``frame`` as its _norm display string."""
    return frame.apply(lambda col: col.map(_norm)).astype(str)


def varying_keys(runs: pd.DataFrame, ignore: Sequence[str] = ("seed",)) -> list[str]:
    """Sorted config keys whose values differ across runs (minus ``ignore`` and execution keys)."""
    keys = [k for k in config_columns(runs) if k not in ignore and not _is_mechanics_key(k)]
    return sorted(k for k in keys if runs[k].map(_norm).nunique() > 1)


def _is_determined(runs: pd.DataFrame, key: str, by: Sequence[str]) -> bool:
    """True when ``key`` takes one value within every group of runs sharing ``by``."""
    values = runs[key].map(_norm)
    if not by:
        return values.nunique() <= 1
    groups = _shown(runs[list(by)]).agg("\x1f".join, axis=1)
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


def choose_layout(runs: pd.DataFrame, lines: str | Sequence[str] | None = None,
                  panels: str | Sequence[str] | None = None) -> Layout:
    """Lines default to the first varying key (learner.name preferred), panels to the rest.

    Varying keys that are fixed by the chosen lines and panels (e.g. a learner-specific option)
    split nothing and are left out; any other varying key joins the line labels.
    """
    vary = varying_keys(runs)
    line_keys, panel_keys = _as_keys(lines), _as_keys(panels)
    _check_keys(runs, [*(line_keys or []), *(panel_keys or [])], "lines/panels")
    if line_keys is None:
        free = [k for k in vary if k not in (panel_keys or [])]
        line_keys = ["learner.name"] if "learner.name" in free else free[:1]
    if panel_keys is None:
        panel_keys = []
        for key in vary:
            if key not in line_keys and not _is_determined(runs, key, [*line_keys, *panel_keys]):
                panel_keys.append(key)
    chosen = [*line_keys, *panel_keys]
    extra = [k for k in vary if k not in chosen and not _is_determined(runs, k, chosen)]
    return Layout(line_keys, panel_keys, extra)


# ----------------------------------------------------------------------------- groups

def _sort_key(value: str) -> tuple[int, float, str]:
    """Numbers first in numeric order, then strings."""
    number = _to_float(value)
    return (0, number, "") if not math.isnan(number) else (1, 0.0, value)


def assign_groups(runs: pd.DataFrame, layout: Layout) -> tuple[pd.DataFrame, pd.Series]:
    """(groups, gid per run_dir): one row per distinct group-key tuple, with display labels."""
    keys = layout.group_keys
    tuples = [tuple(r) for r in _shown(runs[keys]).itertuples(index=False)] if keys else [()] * len(runs)
    unique = sorted(set(tuples), key=lambda t: [_sort_key(v) for v in t])
    gid_of = {t: i for i, t in enumerate(unique)}
    rows = []
    for t in unique:
        values = dict(zip(keys, t))
        line_parts = [values[k] for k in layout.lines] + [f"{k}={values[k]}" for k in layout.extra]
        rows.append({**values,
                     "panel": ", ".join(f"{k}={values[k]}" for k in layout.panels),
                     "line": ", ".join(line_parts) or "all runs",
                     "label": ", ".join(f"{k}={values[k]}" for k in keys) or "all runs"})
    groups = pd.DataFrame(rows, columns=[*keys, "panel", "line", "label"])
    gids = pd.Series([gid_of[t] for t in tuples], index=runs["run_dir"].to_numpy(), name="gid")
    return groups, gids


def available_metrics(runs: pd.DataFrame, curves: pd.DataFrame) -> list[str]:
    """Metric names found in metrics.csv columns or summary.json finals, sorted."""
    from_curves = [c for c in curves.columns if c not in SCHEDULE_COLUMNS
                   and c not in runs.columns and pd.api.types.is_numeric_dtype(curves[c])]
    from_finals = [c[len("final."):] for c in runs.columns if c.startswith("final.")]
    return sorted(set(from_curves) | set(from_finals))


def resolve_metric(metric: str | None, available: Sequence[str]) -> str:
    """The requested metric, or the first default present; unknown -> RbmlabError."""
    listing = ", ".join(available) or "none"
    if metric is None:
        for name in DEFAULT_METRICS:
            if name in available:
                return name
        if not available:
            raise RbmlabError("report: the runs have no metrics (metrics.csv or summary.json final)")
        return available[0]
    if metric not in available:
        raise RbmlabError(f"report: unknown metric {metric!r}; available: {listing}")
    return metric


def higher_is_better(metric: str) -> bool:
    """Errors and losses improve downwards; everything else (likelihoods) upwards."""
    return _LOWER_IS_BETTER.search(metric) is None


def aggregate_curves(curves: pd.DataFrame, gids: pd.Series, metric: str, x: str) -> pd.DataFrame:
    """Per (gid, x): mean, std (ddof=1) and n of the metric over runs; NaN rows dropped."""
    if metric not in curves.columns:
        return pd.DataFrame(columns=["gid", x, "mean", "std", "n"])
    rows = curves[["run_dir", x, metric]].dropna()
    rows = rows.assign(gid=rows["run_dir"].map(gids))
    agg = rows.groupby(["gid", x], sort=True)[metric].agg(["mean", "std", "count"])
    return agg.rename(columns={"count": "n"}).reset_index()


def final_values(runs: pd.DataFrame, curves: pd.DataFrame, metric: str) -> pd.Series:
    """Per run_dir: summary.json final.<metric>, else the last non-NaN metrics row."""
    col = f"final.{metric}"
    final = (runs.set_index("run_dir")[col] if col in runs.columns
             else pd.Series(np.nan, index=runs["run_dir"].to_numpy())).astype(float)
    if metric in curves.columns:
        last = curves[["run_dir", metric]].dropna().groupby("run_dir")[metric].last()
        final = final.fillna(last.reindex(final.index))
    return final.rename(metric)


def epoch_to_fraction_of_max(x: Sequence[float], y: Sequence[float], fraction: float) -> float | None:
    """First x where y reaches y[0] + fraction·(max(y) − y[0]); None if never (or no data).

    NaN points are ignored; y[0] is the first non-NaN value.
    """
    xs, ys = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = ~(np.isnan(xs) | np.isnan(ys))
    xs, ys = xs[keep], ys[keep]
    if ys.size == 0:
        return None
    target = ys[0] + fraction * (ys.max() - ys[0])
    tol = 1e-12 * max(1.0, abs(target))
    hits = np.nonzero(ys >= target - tol)[0]
    return float(xs[hits[0]]) if hits.size else None


def _best(x: np.ndarray, y: np.ndarray, higher: bool) -> tuple[float, float]:
    """(best value, x at best) of a curve; NaNs when empty."""
    if y.size == 0:
        return math.nan, math.nan
    i = int(np.argmax(y) if higher else np.argmin(y))
    return float(y[i]), float(x[i])


# ----------------------------------------------------------------------------- paper values

def _values_match(shown: str, wanted: Any) -> bool:
    """A group's display value equals a paper key's value (numbers compared numerically)."""
    if shown == _norm(wanted):
        return True
    a, b = _to_float(shown), _to_float(wanted)
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
    """Normalise ``paper`` into (matcher, value, description); a matcher is a str or a mapping.

    Accepted: {label: value}, {(('key', v), ...): value}, or a list of
    {'match': {key: v} | 'label': str, 'value': v}.
    """
    if isinstance(paper, Mapping):
        return [(_matcher(k), v, str(k)) for k, v in paper.items()]
    entries = []
    for item in paper:
        if not isinstance(item, Mapping) or "value" not in item or not ({"match", "label"} & set(item)):
            raise RbmlabError("report: paper entries must be {'match': {key: value} or 'label': text, "
                              f"'value': ...}}, got {item!r}")
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
    if isinstance(matcher, str):
        if matcher == group["label"]:
            return 1000
        return 1 if matcher in (group["line"], group["panel"]) else 0
    if not isinstance(matcher, Mapping) or not matcher:
        return 0
    for key, wanted in matcher.items():
        full = _resolve_key(str(key), values)
        if full is None or not _values_match(values[full], wanted):
            return 0
    return len(matcher)


def match_paper(paper: Any, groups: pd.DataFrame,
                values: list[dict[str, str]]) -> tuple[list[Any], list[str]]:
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


def _constant_values(runs: pd.DataFrame, gids: pd.Series, n_groups: int) -> list[dict[str, str]]:
    """Per group: every config key that has one value across the group's runs."""
    shown = _shown(runs[config_columns(runs)])
    shown.index = runs["run_dir"].to_numpy()
    result = []
    for g in range(n_groups):
        part = shown[gids.reindex(shown.index).to_numpy() == g]
        result.append({k: part[k].iloc[0] for k in part.columns if part[k].nunique() == 1})
    return result


# ----------------------------------------------------------------------------- summary table

def summarize_groups(runs: pd.DataFrame, groups: pd.DataFrame, gids: pd.Series, curve: pd.DataFrame,
                     finals: pd.Series, metric: str, x: str,
                     fraction: float | None = None) -> pd.DataFrame:
    """One row per group: n, diverged, final mean/std, best of the mean curve, marker x."""
    higher = higher_is_better(metric)
    status = runs.set_index("run_dir")["status"]
    rows = []
    for g in range(len(groups)):
        members = gids.index[gids.to_numpy() == g]
        part = curve[curve["gid"] == g]
        xs, ys = part[x].to_numpy(float), part["mean"].to_numpy(float)
        best, at = _best(xs, ys, higher)
        vals = finals.reindex(members).dropna()
        row = {"n": len(members), "diverged": int((status.reindex(members) == "diverged").sum()),
               "final_mean": float(vals.mean()) if len(vals) else math.nan,
               "final_std": float(vals.std()) if len(vals) > 1 else math.nan,
               "final_n": len(vals), "best": best, f"{x}_at_best": at}
        if fraction is not None:
            sign = 1.0 if higher else -1.0
            hit = epoch_to_fraction_of_max(xs, sign * ys, fraction)
            row[f"{x}_to_fraction"] = math.nan if hit is None else hit
        rows.append(row)
    return pd.concat([groups.reset_index(drop=True), pd.DataFrame(rows)], axis=1)


def fmt_number(value: Any, digits: int = 4) -> str:
    """4 decimals in [1e-3, 1e5), 4 significant digits outside, integers as integers, NaN as —."""
    v = _to_float(value)
    if math.isnan(v):
        return MISSING if value is None or isinstance(value, (int, float, np.number)) else str(value)
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    if v.is_integer() and abs(v) < 1e15:
        return str(int(v))
    if 1e-3 <= abs(v) < 1e5:
        return f"{v:.{digits}f}"
    return f"{v:.{digits}g}"


def _fmt_mean_std(mean: float, std: float) -> str:
    """'m ± s', 'm ± —' for a single run, '—' without values."""
    if math.isnan(mean):
        return MISSING
    return f"{fmt_number(mean)} ± {fmt_number(std)}"


def _md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown_table(summary: pd.DataFrame, layout: Layout, metric: str, x: str,
                   fraction: float | None, with_paper: bool) -> str:
    """The group table as GitHub markdown."""
    direction = "max" if higher_is_better(metric) else "min"
    header = [*layout.group_keys, "n", "diverged", f"final {metric} (mean ± std)"]
    header += ["paper"] if with_paper else []
    header += [f"best ({direction}) of mean curve", f"{x} at best"]
    header += [f"{x} to {fraction:.0%} of {direction}"] if fraction is not None else []
    lines = ["| " + " | ".join(_md_cell(h) for h in header) + " |",
             "|" + "|".join("---" for _ in header) + "|"]
    for row in summary.to_dict("records"):
        final = _fmt_mean_std(row["final_mean"], row["final_std"])
        if row["final_n"] != row["n"] and not math.isnan(row["final_mean"]):
            final += f" (n={row['final_n']})"
        cells = [row[k] for k in layout.group_keys] + [row["n"], row["diverged"], final]
        cells += [_norm(row["paper"])] if with_paper else []
        cells += [fmt_number(row["best"]), fmt_number(row[f"{x}_at_best"])]
        cells += [fmt_number(row[f"{x}_to_fraction"])] if fraction is not None else []
        lines.append("| " + " | ".join(_md_cell(c) for c in cells) + " |")
    return "\n".join(lines)


def _status_counts(runs: pd.DataFrame) -> str:
    """'12 completed, 1 diverged'."""
    counts = runs["status"].value_counts()
    return ", ".join(f"{n} {s}" for s, n in counts.items())


def markdown_report(title: str, runs: pd.DataFrame, table: str, metric: str, x: str,
                    unmatched: Sequence[str]) -> str:
    """Title, scale and run-count line, method note, table, and notes."""
    scales = sorted({_norm(s) for s in runs["scale"]}) if "scale" in runs.columns else []
    scale = ", ".join(scales) if scales else "unknown"
    n_dirs = runs["run_dir"].str.split("#").str[0].nunique()
    count = f"{len(runs)} run{'s' if len(runs) != 1 else ''}"
    if n_dirs != len(runs):   # batched trials: replicates = runs × trials
        count = f"{n_dirs} runs × trials = {len(runs)} replicates"
    parts = [f"# {title}", "",
             f"Scale: {scale} · {count} ({_status_counts(runs)})", "",
             f"Mean ± std (ddof=1) over the runs of each group (seeds, and trials of batched runs); curves by {x}. "
             f"Final {metric}: summary.json final value, else the run's last evaluated row.", "",
             table, ""]
    if unmatched:
        parts += [f"Paper entries matching no group: {'; '.join(unmatched)}", ""]
    return "\n".join(parts)


# ----------------------------------------------------------------------------- plot

def _check_hlines(hlines: Any) -> list[dict[str, Any]]:
    """Validate [{'y': float, 'label': str}, ...]."""
    out = []
    for item in hlines or []:
        if not isinstance(item, Mapping) or math.isnan(_to_float(item.get("y"))):
            raise RbmlabError(f"report: hlines entries must be {{'y': number, 'label': text}}, got {item!r}")
        out.append({"y": _to_float(item["y"]), "label": str(item.get("label", ""))})
    return out


def _check_markers(markers: Any) -> float | None:
    """The fraction of a {'kind': 'fraction_of_max', 'fraction': f} marker spec, or None."""
    if not markers:
        return None
    if not isinstance(markers, Mapping) or markers.get("kind") != "fraction_of_max":
        raise RbmlabError("report: markers must be {'kind': 'fraction_of_max', 'fraction': f}, "
                          f"got {markers!r}")
    fraction = _to_float(markers.get("fraction", 0.9))
    if not 0.0 < fraction <= 1.0:
        raise RbmlabError(f"report: markers.fraction must be in (0, 1], got {markers.get('fraction')!r}")
    return fraction


def plot_curves(path: Path, summary: pd.DataFrame, curve: pd.DataFrame, layout: Layout, metric: str,
                x: str, *, title: str | None, hlines: list[dict[str, Any]], fraction: float | None,
                logx: bool = False) -> None:
    """One subplot per panel: mean ± std band per line, reference lines and markers."""
    from matplotlib.figure import Figure  # no pyplot: no global backend or display needed
    from matplotlib.lines import Line2D
    import matplotlib as mpl

    panels = list(dict.fromkeys(summary["panel"]))
    line_names = list(dict.fromkeys(summary["line"]))
    palette = mpl.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
    color = {name: palette[i % len(palette)] for i, name in enumerate(line_names)}
    ncols = min(len(panels), 3)
    nrows = math.ceil(len(panels) / ncols)
    shared_legend = len(panels) > 1    # one legend beside the panels: colours are per line name
    fig = Figure(figsize=(5.0 * ncols + (1.8 if shared_legend else 0), 3.8 * nrows),
                 layout="constrained")
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    counts = summary.groupby("line")["n"].unique()
    for ax, panel in zip(axes, panels):
        for g, row in summary[summary["panel"] == panel].iterrows():
            part = curve[curve["gid"] == g]
            xs, mean = part[x].to_numpy(float), part["mean"].to_numpy(float)
            std = part["std"].fillna(0.0).to_numpy(float)
            c = color[row["line"]]
            n = counts[row["line"]]
            label = f"{row['line']} (n={n[0]})" if not shared_legend or len(n) == 1 else row["line"]
            ax.plot(xs, mean, color=c, marker="o" if len(xs) <= 30 else None, markersize=3,
                    label=label)
            ax.fill_between(xs, mean - std, mean + std, color=c, alpha=0.2, linewidth=0)
            if fraction is not None and not math.isnan(row[f"{x}_to_fraction"]):
                ax.axvline(row[f"{x}_to_fraction"], color=c, linestyle=":", linewidth=1.2)
        for i, h in enumerate(hlines):
            ax.axhline(h["y"], color=f"{0.15 + 0.2 * (i % 4):.2f}", linestyle="--", linewidth=1,
                       label=h["label"] or None)
        ax.set_xlabel(x)
        ax.set_ylabel(metric)
        ax.set_title(panel or (title if len(panels) == 1 and title else metric), fontsize="medium")
        if logx:
            ax.set_xscale("log")
        ax.grid(True, alpha=0.3)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    by_label: dict[str, Any] = {}    # the first handle of each label over the panels
    for ax in axes[:len(panels)]:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            by_label.setdefault(label, handle)
    if fraction is not None:
        by_label[f"{fraction:.0%} of {'max' if higher_is_better(metric) else 'min'}"] = Line2D(
            [], [], color="gray", linestyle=":")
    style = {"fontsize": "small", "title": ", ".join(layout.lines) or None, "title_fontsize": "small"}
    if shared_legend:
        fig.legend(list(by_label.values()), list(by_label), loc="outside right upper", **style)
    else:
        axes[0].legend(list(by_label.values()), list(by_label), **style)
    if title and any(panels):
        # wrapped to the figure's width (about 9 characters per inch at the default size)
        fig.suptitle(textwrap.fill(title, width=int(9 * 5.0 * ncols)))
    fig.savefig(path, dpi=120)


# ----------------------------------------------------------------------------- entry points

def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


def make_report(root: str | Path, out_dir: str | Path, *, metric: str | None = None, x: str = "epoch",
                lines: str | Sequence[str] | None = None, panels: str | Sequence[str] | None = None,
                title: str | None = None, paper: Any = None,
                hlines: Sequence[Mapping[str, Any]] | None = None,
                markers: Mapping[str, Any] | None = None, filename_stem: str | None = None,
                logx: bool = False) -> dict[str, Any]:
    """Write <stem>.md, <stem>_curves.csv, <stem>_runs.csv and <stem>.png into ``out_dir``.

    Returns {'table', 'plot', 'curves', 'runs': Path, 'summary': DataFrame of the groups}.
    """
    runs, curves = load_runs(Path(root))
    metric = resolve_metric(metric, available_metrics(runs, curves))
    if x not in curves.columns or x in runs.columns and x not in SCHEDULE_COLUMNS:
        have = ", ".join(c for c in SCHEDULE_COLUMNS if c in curves.columns) or "none"
        raise RbmlabError(f"report: unknown x {x!r}; available: {have}")
    ref_lines, fraction = _check_hlines(hlines), _check_markers(markers)
    layout = choose_layout(runs, lines, panels)
    groups, gids = assign_groups(runs, layout)
    curve = aggregate_curves(curves, gids, metric, x)
    finals = final_values(runs, curves, metric)
    summary = summarize_groups(runs, groups, gids, curve, finals, metric, x, fraction)
    unmatched: list[str] = []
    if paper is not None:
        values = _constant_values(runs, gids, len(groups))
        summary["paper"], unmatched = match_paper(paper, groups, values)

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stem = filename_stem or metric
    paths = {"table": out / f"{stem}.md", "plot": out / f"{stem}.png",
             "curves": out / f"{stem}_curves.csv", "runs": out / f"{stem}_runs.csv"}
    title = title or f"{metric} vs {x}"

    keyed = curve.merge(groups[layout.group_keys], left_on="gid", right_index=True)
    keyed[[*layout.group_keys, x, "mean", "std", "n"]].to_csv(paths["curves"], index=False)
    runs_out = runs.assign(**{f"final.{metric}": runs["run_dir"].map(finals)})
    run_cols = ["run_dir", *varying_keys(runs), *(["seed"] if "seed" in runs.columns else []),
                "status", *(["epochs_done"] if "epochs_done" in runs.columns else []),
                *(["source"] if "source" in runs and runs["source"].notna().any() else []),
                *sorted(c for c in runs_out.columns if c.startswith("final."))]
    runs_out[list(dict.fromkeys(run_cols))].to_csv(paths["runs"], index=False)
    table = markdown_table(summary, layout, metric, x, fraction, paper is not None)
    paths["table"].write_text(markdown_report(title, runs, table, metric, x, unmatched))
    plot_curves(paths["plot"], summary, curve, layout, metric, x, title=title, hlines=ref_lines,
                fraction=fraction, logx=logx)
    return {**paths, "summary": summary}


def report_main(root: str, out: str | None = None, metric: str | None = None,
                lines: str | Sequence[str] | None = None,
                panels: str | Sequence[str] | None = None) -> dict[str, Any]:
    """CLI helper: report into ``out`` (default <root>/report) and print each path written."""
    out_dir = Path(out) if out else Path(root) / "report"
    result = make_report(root, out_dir, metric=metric, lines=lines, panels=panels)
    for key in ("table", "plot", "curves", "runs"):
        print(result[key])
    return result
