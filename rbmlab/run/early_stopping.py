"""Early stopping on the train − validation log-likelihood gap (Hinton 2010; frank_wolfe §4).

The gap ḡ = mean log p(train) − mean log p(valid) needs no partition function (log Z cancels),
so it is exact wherever the per-split log-likelihoods are recorded (any evaluator writing
``train_log_likelihood`` and ``valid_log_likelihood``: exact, ais; free_energy writes it from
−F(v) alone as ``train_valid_gap``, read first where present). The paper stops "when the gap
… largely increases" and gives no threshold (frank_wolfe Sec. 4); the rule here: with increments
d_k = g_k − g_{k−1} between evaluation points, stop at the first point k (after ``warmup``
increments) whose increment exceeds ``kappa`` times the median of the increments before it and
is positive; the selected point is the one before it. With no such jump, the last point.

The same rules stop training online (``train.stop_rule``, :class:`StopRule`): ``gap`` as above,
judged at each evaluation point as it comes, and ``valid`` (crbm_bp: "early stopping based on the
validation error", §6): stop once a validation metric has not improved for ``patience`` evaluation
points; the selected point is the best one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.evaluators.metrics import UNDECLARED, MetricSpec

GAP_COLUMNS = ("train_log_likelihood", "valid_log_likelihood")
GAP_COLUMN = "train_valid_gap"  # the free_energy evaluator's gap (log Z cancels), used when present


@dataclass(frozen=True)
class Selection:
    index: int  # row of the selected evaluation point
    gap: float  # the gap there
    stopped: bool  # False: no jump found, the last point is returned

    def describe(self, kappa: float, warmup: int) -> str:
        return (
            f"first increment of the train − valid gap above {kappa:g} × the median of the "
            f"earlier increments (after {warmup}); selected: the point before it"
            if self.stopped
            else "no such jump: the last point"
        )


def gap_jump(gaps, *, kappa: float = 3.0, warmup: int = 3) -> Selection:
    """The rule of the module docstring over ``gaps`` in the order of the evaluation points."""
    g = np.asarray(gaps, dtype=np.float64)
    if g.ndim != 1 or len(g) == 0:
        raise ValueError("gap_jump: needs a non-empty 1-D sequence of gaps")
    d = np.diff(g)
    for k in range(warmup, len(d)):
        if jumps_at(d, k, kappa):
            return Selection(index=k, gap=float(g[k]), stopped=True)
    return Selection(index=len(g) - 1, gap=float(g[-1]), stopped=False)


def jumps_at(increments: np.ndarray, k: int, kappa: float) -> bool:
    """Whether increment k is the jump: positive and above ``kappa`` × the median of those before."""
    return bool(increments[k] > 0 and increments[k] > kappa * max(np.median(increments[:k]), 0.0))


def gap_of(row) -> float | None:
    """The train − valid gap of one metrics row (a mapping): ``train_valid_gap`` where recorded,
    else train_log_likelihood − valid_log_likelihood; None where neither is there."""
    if row.get(GAP_COLUMN) is not None:
        return float(row[GAP_COLUMN])
    if all(row.get(c) is not None for c in GAP_COLUMNS):
        return float(row[GAP_COLUMNS[0]]) - float(row[GAP_COLUMNS[1]])
    return None


def select_from_rows(rows, *, kappa: float = 3.0, warmup: int = 3, size_key: str = "n_hidden"):
    """The early-stopping record of a run from its metrics rows (a DataFrame, single model), or
    None where the rows lack the gap (``train_valid_gap``, or the train and valid
    log-likelihoods) or are too few (< warmup + 2)."""
    columns = _gap_columns(rows.columns)
    if columns is None:
        return None
    rows = rows.dropna(subset=columns)
    if len(rows) < warmup + 2:  # too few evaluation points for the rule to say anything
        return None
    gaps = rows[GAP_COLUMN] if columns == [GAP_COLUMN] else rows[GAP_COLUMNS[0]] - rows[GAP_COLUMNS[1]]
    pick = gap_jump(gaps.to_numpy(), kappa=kappa, warmup=warmup)
    row = rows.iloc[pick.index]
    record = {
        "epoch": int(row["epoch"]),
        "gap": pick.gap,
        "stopped": pick.stopped,
        "rule": pick.describe(kappa, warmup),
        "kappa": kappa,
        "warmup": warmup,
        **split_metrics(row),
    }
    if size_key in rows.columns:
        record[size_key] = int(row[size_key])
    return record


def _gap_columns(columns) -> list[str] | None:
    """The columns the gap is read from: ``train_valid_gap`` where recorded, else the train and
    valid log-likelihoods; None where ``columns`` lack them."""
    if GAP_COLUMN in columns:
        return [GAP_COLUMN]
    return list(GAP_COLUMNS) if all(c in columns for c in GAP_COLUMNS) else None


def _validation_column(metric: MetricSpec) -> str:
    return f"valid_{metric.name}"


def can_select(columns, metric: MetricSpec | None) -> bool:
    """Whether :func:`select_from_rows` or :func:`best_on_validation` (for ``metric``) finds its
    columns among ``columns`` (a run without a validation split has neither)."""
    if _gap_columns(columns) is not None:
        return True
    return metric is not None and _validation_column(metric) in columns


def best_on_validation(rows, metric: MetricSpec):
    """The early-stopping record of a run without log-likelihoods (crbm_bp: "early stopping on
    validation error"): the evaluation point with the best ``valid_<metric>`` (the first of
    equals; best by :meth:`MetricSpec.badness`), and every metric of that row (its test error is
    the one a table reports), or None without that column."""
    column = _validation_column(metric)
    if column not in rows.columns:
        return None
    rows = rows.dropna(subset=[column])
    if rows.empty:
        return None
    row = rows.iloc[int(np.argmin(metric.badness(rows[column])))]
    return {"epoch": int(row["epoch"]), "rule": f"the best {column}", **split_metrics(row)}


def split_metrics(row) -> dict[str, float]:
    """The per-split metrics of a metrics row (``train_…``, ``valid_…``, ``test_…``), finite ones:
    what a table reports at the point early stopping selects."""
    return {
        k: float(v) for k, v in row.items() if k.startswith(("train_", "valid_", "test_")) and np.isfinite(v)
    }


# ----------------------------------------------------------------- online: train.stop_rule
@dataclass(frozen=True)
class Decision:
    selected: int  # index of the selected evaluation point among those so far
    keep: bool  # the newest point's model is to be kept (it is, or may become, selected)
    stop: bool  # the rule fires: training ends here


@dataclass(frozen=True)
class StopRule:
    """``train.stop_rule`` judged at the newest of the evaluation points seen so far; a pure
    function of their values (gaps, or the stop metric), so a resumed run recomputes it from
    metrics.csv."""

    rule: str  # gap | valid
    kappa: float = 3.0  # gap: the jump factor (module docstring)
    warmup: int = 3  # gap: increments before a jump may count
    patience: int = 5  # valid: evaluation points without improvement
    metric: MetricSpec = UNDECLARED  # valid: the stop metric's declaration (its direction or target)

    def decide(self, values) -> Decision:
        v = np.asarray(values, dtype=np.float64)
        if v.ndim != 1 or len(v) == 0:
            raise ValueError("StopRule.decide: needs a non-empty 1-D sequence of values")
        return (
            gap_decision(v, self.kappa, self.warmup)
            if self.rule == "gap"
            else patience_decision(self.metric.badness(v), self.patience)
        )

    def describe(self, metric: str | None = None) -> str:
        if self.rule == "gap":
            return (
                f"gap: the train − valid gap jumped above {self.kappa:g} × the median earlier "
                f"increment (after {self.warmup}); selected: the point before the jump"
            )
        return f"valid: {metric} not improved for {self.patience} evaluation points; selected: the best"


def gap_decision(gaps: np.ndarray, kappa: float, warmup: int) -> Decision:
    """:func:`gap_jump` at the newest point only (the earlier ones were judged as they came): it
    fires when the newest increment is the jump; the point before it is then selected, else the
    newest is kept as the candidate the next jump would select."""
    d = np.diff(gaps)
    k = len(d) - 1
    jump = k >= warmup and jumps_at(d, k, kappa)
    newest = len(gaps) - 1
    return (
        Decision(selected=newest - 1, keep=False, stop=True)
        if jump
        else Decision(selected=newest, keep=True, stop=False)
    )


def patience_decision(badness: np.ndarray, patience: int) -> Decision:
    """The best point so far, the smallest ``badness`` (:meth:`MetricSpec.badness` of the values;
    the first of equals: an improvement must be strict), is selected; the rule fires once
    ``patience`` points have come after it."""
    best = int(np.argmin(badness))
    newest = len(badness) - 1
    return Decision(selected=best, keep=best == newest, stop=newest - best >= patience)
