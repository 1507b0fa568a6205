"""A run's training diagnostics over epochs, one figure (``rbmlab report diagnostics DIR``): the
singular values of W (evaluator=spectrum), the moment errors and the correlation of second moments
(evaluator=moments), the adversarial accuracies and privacy loss (evaluator=overlap), read from
metrics.csv whether each evaluator ran alone or as a part of evaluator=combined. Several runs or
trials under DIR: each column's mean over them."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd

from rbmlab.errors import RbmlabError
from rbmlab.evaluators.metrics import split_prefix
from rbmlab.report.load import load_runs
from rbmlab.report.names import metric_label
from rbmlab.report.plot import png_bytes
from rbmlab.storage.publish import publish

# (panel title, bare metric names it draws, a reference level or None): a column's bare name
# drops its split and part prefixes
PANELS = (
    ("singular values of W", r"sv_\d+", None),
    ("moment errors", r"moment1_rmse|moment2_rmse", None),
    ("correlation of second moments", r"moment2_corr", 1.0),
    ("adversarial accuracy (0.5: no memorisation)", r"aa|privacy_loss", 0.5),
)


def _natural(column: str) -> list:
    """Sort key that puts sv_2 before sv_10."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", column)]


def panel_columns(columns) -> list[tuple[str, list[str], float | None]]:
    """(title, columns, reference level) of each panel with at least one of ``columns``."""
    out = []
    for title, pattern, level in PANELS:
        bare = re.compile(rf"(?:\w+\.)?(?:{pattern})")  # `<part>.` of evaluator=combined
        found = [c for c in columns if bare.fullmatch(split_prefix(c)[1])]
        if found:
            out.append((title, sorted(found, key=_natural), level))
    return out


def diagnostics_figure(curves: pd.DataFrame, x: str = "epoch"):
    """The figure: one panel per diagnostic present in ``curves`` (metrics rows), each column's
    mean over runs against ``x``."""
    from matplotlib.figure import Figure  # noqa: PLC0415 - no pyplot: no global backend

    panels = panel_columns([c for c in curves.columns if curves[c].notna().any()])
    if not panels:
        raise RbmlabError(
            "report diagnostics: no diagnostic metrics (evaluator=spectrum, moments or "
            "overlap) in the runs' metrics.csv"
        )
    from matplotlib.ticker import MaxNLocator  # noqa: PLC0415

    mean = curves.groupby(x)[[c for _, cs, _ in panels for c in cs]].mean()
    fig = Figure(figsize=(4.2 * len(panels), 3.4), layout="constrained")
    for ax, (title, columns, level) in zip(fig.subplots(1, len(panels), squeeze=False)[0], panels):
        for column in columns:
            ax.plot(mean.index, mean[column], marker=".", label=metric_label(column, unit=False))
        if level is not None:
            ax.axhline(level, color="grey", lw=0.8, ls=":")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(x)
        ax.legend(fontsize=6, ncol=2 if len(columns) > 6 else 1)
    return fig


def write_diagnostics(root: str | Path, out: str | Path | None = None) -> Path:
    """diagnostics.png of the runs under ``root`` into ``out`` (default <root>/report); its path."""
    _, curves = load_runs(Path(root))
    path = Path(out or Path(root) / "report") / "diagnostics.png"
    publish({path: png_bytes(diagnostics_figure(curves), dpi=120)})
    return path
