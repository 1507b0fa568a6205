"""tap Fig. 4's "the trained GRBMs, in the case of both binary-MNIST and real-MNIST, are able to
learn both the localized and stroke features" (Sec. VII.2) as counts per model: of the final model
of each run of tap/figure-3 (or figure-3-seeds), per dataset and N_h,

* localised fields: a participation ratio of at most LOCALISED (the field spreads over at most 5 %
  of the image, ≈ 39 of MNIST's 784 pixels; rbmlab.report.receptive_fields.participation_ratio);
* stroke fields: the core of the field's strongest pixel (its 4-connected pixels of that sign and
  at least half its weight; receptive_fields.stroke_cores) of at least STROKE_PIXELS pixels and at
  least STROKE_ELONGATION times as long as it is wide (a pen stroke, not a blob or a whole digit).

The thresholds were set before any model was measured with them. A model learns both kinds when
it has at least one of each; the table gives the counts (mean ± std over the seeds) and the seeds
with both. The per-model counts are also written as a csv (one row per
run). The drawing shows, for the first seed of each dataset and size, the most localised
fields and the longest stroke cores. results/tap/figure-4-features[-seeds]_<scale>.{png,md,csv}."""

from __future__ import annotations

import numpy as np
import pandas as pd

from rbmlab.experiment.figures import Canvas, Drawing
from rbmlab.experiment.figures.tap_runs import (
    TAP_RUNS,
    FigureConfig,
    canvas_runs,
    chosen,
    pm,
    run_data,
    seed_of,
)
from rbmlab.report.figure_text import top_texts
from rbmlab.report.receptive_fields import participation_ratio, stroke_cores
from rbmlab.run.checkpoint import load_checkpoint

LOCALISED = 0.05  # participation ratio at or below: a localised field
STROKE_ELONGATION = 3.0  # core length / width at or above: a stroke ...
STROKE_PIXELS = 6  # ... of at least this many pixels
LABELS = {"binary": "binary MNIST", "real": "real MNIST", "cbcl": "CBCL faces"}


def field_kinds(W, shape: tuple[int, int]) -> dict[str, np.ndarray]:
    """Per field of W (n_v, n_h): its participation ratio, core elongation and size, and whether it
    is localised and whether it is a stroke."""
    alive = (np.asarray(W) != 0).any(axis=0)  # an all-zero field is neither
    ratio = np.where(alive, participation_ratio(W), np.nan)
    elongation, size = stroke_cores(W, shape)
    return {
        "ratio": ratio,
        "elongation": elongation,
        "size": size,
        "localised": ratio <= LOCALISED,
        "stroke": (elongation >= STROKE_ELONGATION) & (size >= STROKE_PIXELS),
    }


def model_counts(kinds: dict[str, np.ndarray]) -> dict[str, float]:
    """A model's localised and stroke fields and its lowest participation ratio (NaN: every field
    is zero)."""
    ratio = kinds["ratio"]
    return {
        "localised": int(kinds["localised"].sum()),
        "strokes": int(kinds["stroke"].sum()),
        "lowest_ratio": float(np.nanmin(ratio)) if np.isfinite(ratio).any() else float("nan"),
    }


def features(canvas: Canvas, cfg: FigureConfig) -> None:
    """tap paper Fig. 4's localised and stroke features (Sec. VII.2) as counts per model: the receptive
    fields of each final model of tap/figure-3, per dataset and N_h, counted by kind.

    Registered as ``tap-figure-4-features``; options in rbmlab.experiment.figures.tap_runs.FigureConfig.
    """
    from matplotlib.figure import Figure  # noqa: PLC0415 - no pyplot: no global backend

    datasets = chosen(canvas_runs(canvas), cfg)
    measured = []  # (dataset, N_h, [(seed, epoch, kinds, W)], image shape)
    for variant, models in datasets.items():
        shape = tuple(run_data(next(iter(models.values()))[0])[2])
        for n, runs in sorted(models.items()):
            per_seed = []
            for run in runs:
                model, meta, _ = load_checkpoint(run / "checkpoint.npz")
                W = np.asarray(model.W, dtype=np.float64)
                per_seed.append((seed_of(run), int(meta["epoch"]), field_kinds(W, shape), W))
            measured.append((variant, n, per_seed, shape))
    lines = [
        "# tap Figure 4: localised and stroke features of the trained models",
        "",
        f"Scale `{canvas.scale}`: the final model of each run of `rbmlab experiment {canvas.source} "
        f"scale={canvas.scale}`. Localised field: participation ratio (Σ w_i²)² / (n_v Σ w_i⁴) ≤ "
        f"{LOCALISED}. Stroke field: the core of its strongest pixel (4-connected pixels of that sign "
        f"and ≥ half its weight) has ≥ {STROKE_PIXELS} pixels and is ≥ {STROKE_ELONGATION:g} times "
        "as long as wide (√ of the ratio of the eigenvalues of its pixels' coordinate covariance, "
        "each pixel a unit square). All-zero fields count as neither. Counts per "
        "model, mean ± std (ddof=1) over the seeds; 'both': seeds whose model has at least one of each; "
        "the lowest participation ratio of a model's fields (its most localised field).",
        "",
        "| data | N_h | seeds | epochs | localised fields | stroke fields | both | lowest ratio |",
        "|---|---|---|---|---|---|---|---|",
    ]
    rows = [
        {"variant": variant, "n_hidden": n, "seed": seed, "epoch": epoch, **model_counts(k)}
        for variant, n, per_seed, _ in measured
        for seed, epoch, k, _ in per_seed
    ]
    for (variant, n), group in pd.DataFrame(rows).groupby(["variant", "n_hidden"], sort=False):
        both = int(((group["localised"] > 0) & (group["strokes"] > 0)).sum())
        lines.append(
            f"| {LABELS.get(variant, variant)} | {n} | {', '.join(map(str, group['seed']))} | "
            f"{', '.join(sorted({str(e) for e in group['epoch']}))} | {pm(group['localised'], 1)} | "
            f"{pm(group['strokes'], 1)} | {both} of {len(group)} | {pm(group['lowest_ratio'], 4)} |"
        )
    k = cfg.fields
    fig = Figure(figsize=(1.1 * 2 * k, 1.25 * len(measured) + 0.6), layout="constrained")
    axes = np.atleast_2d(fig.subplots(len(measured), 2 * k))
    for row, (variant, n, per_seed, shape) in zip(axes, measured):
        seed, _, kinds, W = per_seed[0]
        localised = np.argsort(kinds["ratio"], kind="stable")[:k]
        cores = [
            j for j in np.argsort(-kinds["elongation"], kind="stable") if kinds["size"][j] >= STROKE_PIXELS
        ][:k]
        for ax, j, what in [(a, j, "local") for a, j in zip(row[:k], localised)] + [
            (a, j, "stroke") for a, j in zip(row[k:], cores)
        ]:
            limit = np.abs(W[:, j]).max()
            ax.imshow(W[:, j].reshape(shape), cmap="RdBu_r", vmin=-limit, vmax=limit)
            mark = "*" if kinds["localised" if what == "local" else "stroke"][j] else ""
            ax.set_title(
                f"{kinds['ratio'][j]:.3f}{mark}"
                if what == "local"
                else f"{kinds['elongation'][j]:.1f}{mark}",
                fontsize=6,
            )
        for ax in row:
            ax.set_axis_off()
        row[0].text(
            -0.15,
            0.5,
            f"{LABELS.get(variant, variant)}\nN_h={n}, seed {seed}",
            fontsize=6,
            transform=row[0].transAxes,
            ha="right",
            va="center",
        )
    top_texts(
        fig,
        f"tap Fig. 4: most localised fields (participation ratio) | longest stroke cores "
        f"(length/width); * counted ({canvas.scale})",
        title_size=8,
    )
    stem = canvas.name("figure-4-features")
    canvas.save_png(fig, stem)
    canvas.save_text(stem, "md", "\n".join(lines) + "\n")
    canvas.save_text(stem, "csv", pd.DataFrame(rows).to_csv(index=False))


FEATURES = Drawing(features, FigureConfig, TAP_RUNS, reads=frozenset({"variants", "fields"}))
