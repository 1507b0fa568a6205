"""The leaderboard's report: entrant × compute point, each learner at its best learning rate.

Its data is the *points* table: one row per run and compute point it reached (the metrics.csv
rows with a ``budget``; a run that reached none has one row with the budget empty), with the run's
entrant, learning rate, seed, status, commit and the
compute spent (gmac, training seconds). Per entrant and point the rate best on the selection
metric (the validation log-likelihood, mean over seeds; a rate counts only where every seed
reached the point with finite values) is chosen, and its test metric shown: mean ± std over seeds,
the mean AIS ±3σ interval, n. The best cell of each point is bold. Written together:
``<stem>.md``, ``<stem>.png`` (test score against compute, with the Pareto front) and
``<stem>_points.csv``, from which ``report_only=true`` renders it again with no runs present.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from rbmlab.errors import RbmlabError
from rbmlab.evaluators.metrics import badness
from rbmlab.report.header import report_header
from rbmlab.report.load import TEXT_COLUMNS, load_runs
from rbmlab.report.render import fmt_number
from rbmlab.storage.publish import publish

METRIC, SELECT = "test_log_likelihood", "valid_log_likelihood"
POINT_KEYS = (
    "run_dir",
    "variant",
    "learner.name",
    "learner.lr",
    "seed",
    "status",
    "source",
    "scale",
    "dataset.name",
    "dataset.n_train",
    "model.n_hidden",
    "epochs_done",
    "train.budget_unit",
    "budget",
    "gmac",
    "wall_time",
    "epoch",
    "updates",
    "overrides",
)
EXACT = ("log_z_error", "log_z_within")  # the AIS evaluator's exact_check columns
BESIDE = {
    "test_tap.log_likelihood": "TAP estimate of the test log-likelihood",  # evaluator=combined's
    "test_mmd.log_mmd2": "log MMD² of model samples against test images (lower is better)",
}


def points_path(stem: Path) -> Path:
    return stem.with_name(f"{stem.name}_points.csv")


def has_points(stem: Path) -> bool:
    return points_path(stem).is_file()


def read_points(stem: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(points_path(stem), dtype=TEXT_COLUMNS)
    except (OSError, ValueError) as e:
        raise RbmlabError(f"report: {points_path(stem)} is unreadable ({type(e).__name__})") from None


def points_of(root: Path, variants: list[str]) -> pd.DataFrame:
    """The points table of the runs under ``root`` (one variant directory per entrant)."""
    runs, curves = load_runs(root, variants)
    if "budget" not in curves.columns:
        raise RbmlabError(f"report: the runs under {root} have no compute points (train.budgets)")
    at = curves[curves["budget"].notna()].drop(columns=["status"], errors="ignore")
    info = runs[[c for c in ("run_dir", "status", "source", "epochs_done", "overrides") if c in runs]]
    at = at.drop(columns=[c for c in info.columns if c != "run_dir" and c in at.columns]).merge(
        info, on="run_dir"
    )
    none = runs[~runs["run_dir"].isin(at["run_dir"])]  # a run that reached no point: budget empty
    at = pd.concat([at, none[[c for c in POINT_KEYS if c in none and c != "budget"]]], ignore_index=True)
    metrics = sorted(c for c in at.columns if c.startswith(("test_", "valid_", "log_z")))
    keys = [k for k in POINT_KEYS if k in at.columns]
    return at[keys + metrics].sort_values(["variant", "learner.lr", "seed", "budget"]).reset_index(drop=True)


def cells(points: pd.DataFrame, metric: str = METRIC, select: str = SELECT) -> pd.DataFrame:
    """One row per entrant and compute point: the chosen learning rate and its test score."""
    rows = []
    seeds = set(points["seed"])  # every entrant runs the same seeds
    for variant, entrant in points.groupby("variant", sort=True):
        for budget in sorted(points["budget"].dropna().unique()):
            chosen, best = None, math.inf
            for _lr, group in entrant[entrant["budget"] == budget].groupby("learner.lr"):
                values = group[select].to_numpy(dtype=float)
                if set(group["seed"]) != seeds or not np.isfinite(values).all():
                    continue  # a seed missed the point (diverged, cut short): not a candidate
                score = float(badness(select, [values.mean()])[0])
                if score < best:
                    chosen, best = group, score
            row = {"variant": variant, "budget": budget, "n": 0, "of": len(seeds)}
            if chosen is not None:
                test = chosen[metric].to_numpy(dtype=float)
                row.update(
                    {
                        "lr": float(chosen["learner.lr"].iloc[0]),
                        "n": len(test),
                        "mean": test.mean(),
                        "std": test.std(ddof=1) if len(test) > 1 else math.nan,
                        # an end AIS cannot bound (log Z's lower end below the chains' reach:
                        # NaN in metrics.csv) stays unbounded in the mean
                        "lower": _mean_end(chosen, f"{metric}_lower", -math.inf),
                        "upper": _mean_end(chosen, f"{metric}_upper", math.inf),
                        "select": chosen[select].mean(),
                        "gmac": chosen["gmac"].mean(),
                        "seconds": chosen["wall_time"].mean(),
                        "epochs": chosen["epoch"].mean(),
                    }
                )
                for column in EXACT:
                    if column in chosen:
                        row[column] = chosen[column].to_numpy(dtype=float)
                for column in BESIDE:
                    if column in chosen:
                        values = chosen[column].to_numpy(dtype=float)
                        row[column] = values.mean()
                        row[f"{column}_std"] = values.std(ddof=1) if len(values) > 1 else math.nan
            rows.append(row)
    return pd.DataFrame(rows)


def _mean_end(group: pd.DataFrame, column: str, unbounded: float) -> float:
    """The mean of an interval end over seeds, ``unbounded`` where any seed's end is (NaN)."""
    if column not in group:
        return math.nan
    ends = group[column].to_numpy(dtype=float)
    return unbounded if np.isnan(ends).any() else float(ends.mean())


def _end(value: float) -> str:
    return "−∞" if value == -math.inf else "+∞" if value == math.inf else fmt_number(value)


def _label(variant: str, names: Mapping[str, str]) -> str:
    return str(names.get(variant, variant))


def _cell_text(row: Mapping[str, Any], bold: bool) -> str:
    if not row["n"]:
        return "— (no rate reached it on every seed)"
    score = f"{fmt_number(row['mean'])} ± {fmt_number(row['std'], 2)}"
    score = f"**{score}**" if bold else score
    return f"{score} [{_end(row['lower'])}, {_end(row['upper'])}] lr {row['lr']:g}, n={row['n']}"


def unit_of(points: pd.DataFrame) -> str:
    """The compute unit of a points table (train.budget_unit; gmac where the table lacks it)."""
    return str(points["train.budget_unit"].iloc[0]) if "train.budget_unit" in points else "gmac"


def _budget_text(budget: float, unit: str) -> str:
    return f"{budget:g} {'GMAC' if unit == 'gmac' else 's'}"


def tables(table: pd.DataFrame, names: Mapping[str, str], unit: str, metric: str = METRIC) -> str:
    """The learner × compute-point table, then the compute each cell actually spent."""
    budgets = sorted(table["budget"].unique())
    best = {b: table[(table["budget"] == b) & (table["n"] > 0)]["mean"].max() for b in budgets}
    order = (
        table[table["budget"] == budgets[-1]]
        .assign(key=lambda t: t["mean"].fillna(-math.inf))
        .sort_values("key", ascending=False)["variant"]
        .tolist()
    )
    head = ["entrant", *(f"{metric.replace('_', ' ')} at {_budget_text(b, unit)}" for b in budgets)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    spent = [
        "| entrant | "
        + " | ".join(f"at {_budget_text(b, unit)}: GMAC, training s, epochs" for b in budgets)
        + " |",
        "|" + "---|" * (len(budgets) + 1),
    ]
    for variant in order:
        rows = {r["budget"]: r for _, r in table[table["variant"] == variant].iterrows()}
        lines.append(
            f"| {_label(variant, names)} | "
            + " | ".join(
                _cell_text(rows[b], rows[b]["n"] > 0 and rows[b]["mean"] == best[b]) for b in budgets
            )
            + " |"
        )
        spent.append(
            f"| {_label(variant, names)} | "
            + " | ".join(
                "—"
                if not rows[b]["n"]
                else f"{rows[b]['gmac']:.4g}, {rows[b]['seconds']:.3g}, {rows[b]['epochs']:.3g}"
                for b in budgets
            )
            + " |"
        )
    return "\n".join(lines) + "\n\n" + "\n".join(spent)


def beside_table(table: pd.DataFrame, names: Mapping[str, str], unit: str) -> str:
    """The other scores of each chosen cell (TAP, MMD): mean ± std over its seeds."""
    columns = [c for c in BESIDE if c in table]
    budgets = sorted(table["budget"].unique())
    head = ["entrant", *(f"{BESIDE[c]} at {_budget_text(b, unit)}" for c in columns for b in budgets)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for variant, group in table.groupby("variant"):
        rows = {r["budget"]: r for _, r in group.iterrows()}
        lines.append(
            f"| {_label(variant, names)} | "
            + " | ".join(
                "—"
                if not rows[b]["n"]
                else f"{fmt_number(rows[b][c])} ± {fmt_number(rows[b][f'{c}_std'], 2)}"
                for c in columns
                for b in budgets
            )
            + " |"
        )
    return "\n".join(lines)


def exact_table(table: pd.DataFrame, names: Mapping[str, str]) -> str:
    """AIS against exact log Z per entrant, over every chosen cell's seeds (exact_check)."""
    lines = [
        "| entrant | AIS − exact log Z (mean) | max abs | exact inside the AIS ±3σ interval |",
        "|---|---|---|---|",
    ]
    for variant, group in table[table["n"] > 0].groupby("variant"):
        errors = np.concatenate(group["log_z_error"].tolist())
        within = np.concatenate(group["log_z_within"].tolist())
        lines.append(
            f"| {_label(variant, names)} | {errors.mean():+.4f} | {np.abs(errors).max():.4f} | "
            f"{int(within.sum())} of {len(within)} |"
        )
    return "\n".join(lines)


def figure(
    table: pd.DataFrame, names: Mapping[str, str], title: str, header: str, metric: str = METRIC
) -> bytes:
    """Test score against compute (GMAC and training seconds, log axes), one line per entrant at
    its chosen rates, error bars one std over seeds; the dashed line is the Pareto front."""
    import matplotlib  # noqa: PLC0415

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    from rbmlab.report.plot import png_bytes  # noqa: PLC0415

    shown = table[table["n"] > 0]
    variants = sorted(shown["variant"].unique())
    colors, markers = plt.get_cmap("tab20").colors, "osD^vPX*<>p"
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    for ax, x, xlabel in (
        (axes[0], "gmac", "compute (GMAC of the learner's products)"),
        (axes[1], "seconds", "training wall clock (s)"),
    ):
        for i, variant in enumerate(variants):
            group = shown[shown["variant"] == variant].sort_values(x)
            ax.errorbar(
                group[x],
                group["mean"],
                yerr=group["std"].fillna(0),
                marker=markers[i % len(markers)],
                color=colors[(2 * i) % 20 + (i // 10) % 2],
                capsize=3,
                label=_label(variant, names),
            )
        front = shown.sort_values(x)
        front = front[front["mean"].cummax() == front["mean"]]
        ax.step(
            front[x],
            front["mean"],
            where="post",
            color="black",
            linestyle="--",
            linewidth=1,
            label="Pareto front",
        )
        ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"{metric.replace('_', ' ')} (nats)")
    axes[1].legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(f"{title}\n{header}", fontsize=9)
    fig.tight_layout()
    data = png_bytes(fig, dpi=110)
    plt.close(fig)
    return data


def render_points(
    points: pd.DataFrame, stem: Path, title: str, names: Mapping[str, str], scale: str, protocol: str = ""
) -> dict[str, Any]:
    """The report's three files from a points table (runs, or the committed CSV)."""
    if points["budget"].isna().all():
        raise RbmlabError("report: no run reached a compute point (train.budgets)")
    table = cells(points)
    unit = unit_of(points)
    header = report_header(points.drop_duplicates("run_dir").drop(columns=["budget"]), scale)
    parts = [
        f"# {title}",
        "",
        header,
        "",
        protocol.strip(),
        "",
        f"Each cell: mean ± std over seeds of the {METRIC.replace('_', ' ')} at the learning rate best on "
        f"the validation split (mean {SELECT}; a rate counts where every seed reached the point), "
        "[mean AIS ±3σ interval], that rate, n seeds. Bold: the best at that compute point.",
        "",
        tables(table, names, unit),
    ]
    if any(c in table for c in BESIDE):
        parts += [
            "",
            "## Beside AIS: the TAP estimate and sample quality",
            "",
            "At the same chosen rate as the cell above (mean ± std over its seeds).",
            "",
            beside_table(table, names, unit),
        ]
    if all(c in table for c in EXACT):
        parts += ["", "## AIS against exact log Z", "", exact_table(table, names)]
    text = "\n".join(p for p in parts if p is not None) + "\n"
    files = {
        stem.with_suffix(".md"): text,
        stem.with_suffix(".png"): figure(table, names, title, header),
        points_path(stem): points.to_csv(index=False),
    }
    publish(files)
    print(text)
    return {"table": stem.with_suffix(".md"), "figure": stem.with_suffix(".png"), "cells": table}


def headline(points: pd.DataFrame, names: Mapping[str, str]) -> tuple[str, str] | None:
    """(ours, measure) for results/README.md's index: the best cell at the last compute point."""
    table = cells(points)
    last = table[(table["budget"] == table["budget"].max()) & (table["n"] > 0)]
    if last.empty:
        return None
    best = last.loc[last["mean"].idxmax()]
    unit = unit_of(points)
    ours = f"{fmt_number(best['mean'])} ± {fmt_number(best['std'], 2)} (n={int(best['n'])})"
    return ours, (
        f"{METRIC.replace('_', ' ')}; the best entrant at {_budget_text(best['budget'], unit)}: "
        f"{_label(best['variant'], names)}"
    )


def leaderboard_report(
    root: Path,
    stem: Path,
    title: str,
    names: Mapping[str, str],
    scale: str,
    variants: list[str],
    protocol: str = "",
) -> dict[str, Any]:
    """:func:`render_points` over the runs under ``root``."""
    return render_points(points_of(Path(root), variants), stem, title, names, scale, protocol)
