"""The first line of every table and figure: at what scale its numbers were made.

Tier, data, training length, seeds and the commit that produced the runs, read from the runs
themselves (their config keys and records), so a reader never compares a smoke check with a
paper's table unawares: a smoke header says first that it is a pipeline check.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from rbmlab.report.layout import norm
from rbmlab.report.load import HISTORY_COMMIT, to_float

# the config keys a header reads, written to every runs CSV (rbmlab.report.render.runs_csv) so a
# report re-rendered from that file alone has them too
HEADER_KEYS = ("scale", "dataset.name", "dataset.n_train", "train.epochs")
SMOKE_NOTE = "SMOKE TIER: a pipeline check, not comparable with the paper"


def _values(runs: pd.DataFrame, key: str) -> list[Any]:
    """The distinct values of a column (None for a missing or empty one), in order."""
    if key not in runs.columns:
        return []
    return list(dict.fromkeys(v for v in runs[key] if norm(v) != "—"))


def _count(value: Any) -> str:
    """12000 -> '12,000'."""
    number = to_float(value)
    return f"{int(number):,}" if not math.isnan(number) and number.is_integer() else norm(value)


def _span(values: Sequence[Any], unit: str) -> str:
    """'40 epochs', '13–40 epochs'."""
    numbers = sorted(to_float(v) for v in values if not math.isnan(to_float(v)))
    if not numbers:
        return ""
    low, high = _count(numbers[0]), _count(numbers[-1])
    return f"{low} {unit}" if low == high else f"{low}–{high} {unit}"


def _seeds(values: Sequence[Any]) -> str:
    """'seed 0', 'seeds 0–4' (consecutive), 'seeds 0, 3, 7'."""
    numbers = sorted({int(to_float(v)) for v in values if not math.isnan(to_float(v))})
    if not numbers:
        return ""
    if len(numbers) == 1:
        return f"seed {numbers[0]}"
    if numbers == list(range(numbers[0], numbers[-1] + 1)) and len(numbers) > 2:
        return f"seeds {numbers[0]}–{numbers[-1]}"
    return "seeds " + ", ".join(map(str, numbers))


def _data(runs: pd.DataFrame) -> str:
    """'mnist, 2,000 training examples' / 'bars_stripes, all training examples'."""
    names = ", ".join(map(norm, _values(runs, "dataset.name")))
    if "dataset.n_train" not in runs.columns:
        return names
    sizes = [v for v in runs["dataset.n_train"]]
    given = [v for v in sizes if not math.isnan(to_float(v))]
    if not given:
        size = "all training examples"
    else:
        size = _span(given, "training examples") + ("" if len(given) == len(sizes) else " (or all)")
    return ", ".join(p for p in (names, size) if p)


def _training(runs: pd.DataFrame) -> str:
    """How long the runs trained: epochs done, beside the epochs asked where early stopping cut;
    'no training' for runs that only evaluate (train.epochs=0: a saved model, a fixed one)."""
    epochs = [to_float(v) for v in (*_values(runs, "epochs_done"), *_values(runs, "train.epochs"))]
    if epochs and all(e == 0 for e in epochs):
        return "no training (evaluation only)"
    done = _span(_values(runs, "epochs_done"), "epochs")
    asked = _span(_values(runs, "train.epochs"), "epochs")
    if done and asked and done != asked:
        return f"{done} of {asked.split()[0]} asked"
    return done or asked


def run_dirs(runs: pd.DataFrame) -> int:
    """How many run directories: a run of batched trials is one directory of several rows
    (``<run_dir>#<t>``, rbmlab.report.load)."""
    return runs["run_dir"].astype(str).str.split("#").str[0].nunique() if "run_dir" in runs else len(runs)


def run_count(runs: pd.DataFrame) -> str:
    """'3 runs'; '10 runs × trials = 250 replicates' where runs hold batched trials."""
    n_dirs = run_dirs(runs)
    runs_word = f"{n_dirs} run{'s' if n_dirs != 1 else ''}"
    return runs_word if n_dirs == len(runs) else f"{runs_word} × trials = {len(runs)} replicates"


def _commits(runs: pd.DataFrame) -> list[str]:
    """The commits that trained the runs, each once: a resumed run's ``source`` lists every
    commit that trained it, comma-separated (rbmlab.storage.provenance.merge_sources)."""
    return list(dict.fromkeys(c for source in _values(runs, "source") for c in str(source).split(",") if c))


def _commit_part(runs: pd.DataFrame) -> str:
    """'commit 3e64572', 'commits a, b'; for runs that record none, the commit the git history
    names for them (``HISTORY_COMMIT``), said to be that; else 'commit unknown'."""
    commits = _commits(runs)
    named = [] if commits else [str(c) for c in _values(runs, HISTORY_COMMIT)]
    if not commits and not named:
        return "commit unknown"
    listed = commits or named
    return (
        ("commit " if len(listed) == 1 else "commits ")
        + ", ".join(listed)
        + (" (from the git history, not the runs)" if named else "")
    )


def report_header(runs: pd.DataFrame, scale: str | None = None) -> str:
    """One line: tier · data · epochs · seeds · n runs · commit (each part where the runs say)."""
    tiers = [norm(s) for s in _values(runs, "scale")] or ([scale] if scale else [])
    tier = ", ".join(tiers) or "unknown"
    parts = [
        f"{tier} tier",
        _data(runs),
        _training(runs),
        _seeds(_values(runs, "seed")),
        run_count(runs),
        _commit_part(runs),
    ]
    line = " · ".join(p for p in parts if p)
    return f"{SMOKE_NOTE} ({line})" if "smoke" in tiers else line
