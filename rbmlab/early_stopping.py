"""Early stopping on the train − validation log-likelihood gap (Hinton 2010; frank_wolfe §4).

The gap ḡ = mean log p(train) − mean log p(valid) needs no partition function (log Z cancels),
so it is exact wherever the per-split log-likelihoods are recorded (any evaluator writing
``train_log_likelihood`` and ``valid_log_likelihood``: exact, ais). The paper stops "when the gap
… largely increases" and gives no threshold (notes §9 item 9); the rule here: with increments
d_k = g_k − g_{k−1} between evaluation points, stop at the first point k (after ``warmup``
increments) whose increment exceeds ``kappa`` times the median of the increments before it and
is positive; the selected point is the one before it. With no such jump, the last point.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

GAP_COLUMNS = ("train_log_likelihood", "valid_log_likelihood")


@dataclass(frozen=True)
class Selection:
    index: int           # row of the selected evaluation point
    gap: float           # the gap there
    stopped: bool        # False: no jump found, the last point is returned

    def describe(self, kappa: float, warmup: int) -> str:
        return (f"first increment of the train − valid gap above {kappa:g} × the median of the "
                f"earlier increments (after {warmup}); selected: the point before it" if self.stopped
                else "no such jump: the last point")


def gap_jump(gaps, *, kappa: float = 3.0, warmup: int = 3) -> Selection:
    """The rule of the module docstring over ``gaps`` in the order of the evaluation points."""
    g = np.asarray(gaps, dtype=np.float64)
    if g.ndim != 1 or len(g) == 0:
        raise ValueError("gap_jump: needs a non-empty 1-D sequence of gaps")
    d = np.diff(g)
    for k in range(warmup, len(d)):
        scale = np.median(d[:k])
        if d[k] > 0 and d[k] > kappa * max(scale, 0.0):
            return Selection(index=k, gap=float(g[k]), stopped=True)
    return Selection(index=len(g) - 1, gap=float(g[-1]), stopped=False)


def select_from_rows(rows, *, kappa: float = 3.0, warmup: int = 3, size_key: str = "n_hidden"):
    """The early-stopping record of a run from its metrics rows (a DataFrame, single model), or
    None where the rows lack the train and valid log-likelihoods or are too few (< warmup + 2)."""
    if not all(c in rows.columns for c in GAP_COLUMNS):
        return None
    rows = rows.dropna(subset=list(GAP_COLUMNS))
    if len(rows) < warmup + 2:        # too few evaluation points for the rule to say anything
        return None
    gaps = rows[GAP_COLUMNS[0]] - rows[GAP_COLUMNS[1]]
    pick = gap_jump(gaps.to_numpy(), kappa=kappa, warmup=warmup)
    row = rows.iloc[pick.index]
    record = {"epoch": int(row["epoch"]), "gap": pick.gap, "stopped": pick.stopped,
              "rule": pick.describe(kappa, warmup), "kappa": kappa, "warmup": warmup}
    if size_key in rows.columns:
        record[size_key] = int(row[size_key])
    return record


def best_on_validation(rows, metric: str, higher_is_better: bool):
    """The early-stopping record of a run without log-likelihoods (crbm_bp: "early stopping on
    validation error"): the evaluation point with the best ``valid_<metric>``, and every metric
    of that row (its test error is the one a table reports), or None without that column."""
    column = f"valid_{metric}"
    if column not in rows.columns:
        return None
    rows = rows.dropna(subset=[column])
    if rows.empty:
        return None
    index = rows[column].idxmax() if higher_is_better else rows[column].idxmin()
    row = rows.loc[index]
    values = {k: float(v) for k, v in row.items()
              if k.startswith(("train_", "valid_", "test_")) and np.isfinite(v)}
    return {"epoch": int(row["epoch"]), "rule": f"the best {column}", **values}
