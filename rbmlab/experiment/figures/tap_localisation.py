"""tap Fig. 4's "we see feature localization increase with the number of hidden units" (Sec. VII.2)
as a number: the participation ratio of each receptive field (a column of W; rbmlab.report.
receptive_fields.participation_ratio, the share of the pixels a field spreads over) of the final
binary-MNIST models of tap/figure-3-seeds, its median over the fields of a model, mean ± std over
the seeds, per N_h. Localisation grows with N_h when the ratio falls. The ℓ0.1 spread that ranks
Fig. 4's fields saturates on the fields' many small weights, so it cannot show a trend.
results/tap/figure-4-localisation-seeds_<scale>.{png,md}."""

from __future__ import annotations

import numpy as np

from rbmlab.errors import RbmlabError
from rbmlab.experiment.figures import Canvas, Drawing
from rbmlab.experiment.figures.tap_runs import TAP_RUNS, FigureConfig, canvas_runs, chosen, pm, seed_of
from rbmlab.report.figure_text import top_texts
from rbmlab.report.receptive_fields import participation_ratio
from rbmlab.run.checkpoint import load_checkpoint

QUANTILES = (10, 50, 90)  # of the fields' ratios within one model


def field_ratios(run) -> tuple[np.ndarray, int]:
    """(participation ratio of each field, epoch) of the run's final model."""
    model, meta, _ = load_checkpoint(run / "checkpoint.npz")
    return participation_ratio(np.asarray(model.W)), int(meta["epoch"])


def localisation(canvas: Canvas, cfg: FigureConfig) -> None:
    """tap paper Fig. 4's feature localisation (Sec. VII.2) as a number: the median participation ratio
    of the receptive fields of the binary-MNIST models, mean ± std over seeds, per N_h.

    Registered as ``tap-figure-4-localisation``; options in rbmlab.experiment.figures.tap_runs.FigureConfig.
    """
    from matplotlib.figure import Figure  # noqa: PLC0415 - no pyplot: no global backend

    models = chosen(canvas_runs(canvas), cfg).get("binary")
    if not models:
        raise RbmlabError(f"variants: the localisation measure needs binary MNIST runs of {canvas.source}")
    per = {n: [(seed_of(run), *field_ratios(run)) for run in runs] for n, runs in sorted(models.items())}
    lines = [
        "# tap Figure 4: feature localisation against the number of hidden units (binary MNIST)",
        "",
        f"Scale `{canvas.scale}`: the final model of each run of `rbmlab experiment {canvas.source} "
        f"scale={canvas.scale}`. Participation ratio of a field w (a column of W): (Σ w_i²)² / "
        "(784 Σ w_i⁴), the share of the pixels it spreads over (lower: more localised). Per model "
        "the 10th, 50th and 90th percentile over its fields; mean ± std (ddof=1) over the seeds.",
        "",
        "| N_h | seeds | epochs | 10th percentile | median | 90th percentile |",
        "|---|---|---|---|---|---|",
    ]
    for n, rows in per.items():
        q = np.array([np.percentile(r, QUANTILES) for _, r, _ in rows])
        lines.append(
            f"| {n} | {', '.join(str(s) for s, _, _ in rows)} | "
            f"{', '.join(sorted({str(e) for _, _, e in rows}))} | "
            + " | ".join(pm(q[:, k], 4) for k in range(len(QUANTILES)))
            + " |"
        )
    fig = Figure(figsize=(5.5, 4), layout="tight")
    ax = fig.subplots()
    for n, rows in per.items():
        for s, r, _ in rows:
            ax.scatter(np.full(len(r), n) * np.exp(0.04 * (s - 1)), r, s=3, alpha=0.25, color="tab:blue")
    medians = [[np.median(r) for _, r, _ in rows] for rows in per.values()]
    ax.errorbar(
        list(per),
        [np.mean(m) for m in medians],
        yerr=[np.std(m, ddof=1) if len(m) > 1 else 0 for m in medians],
        color="k",
        marker="o",
        capsize=3,
        label="median field, mean ± std over seeds",
    )
    ax.set_xscale("log")
    ax.set_xlabel("hidden units N_h")
    ax.set_ylabel("participation ratio of a field")
    ax.legend(fontsize=7)
    top_texts(fig, f"tap Fig. 4: localisation vs N_h, binary MNIST ({canvas.scale})", title_size=9)
    stem = canvas.name("figure-4-localisation")
    canvas.save_png(fig, stem)
    canvas.save_text(stem, "md", "\n".join(lines) + "\n")


LOCALISATION = Drawing(localisation, FigureConfig, TAP_RUNS, reads=frozenset({"variants"}))
