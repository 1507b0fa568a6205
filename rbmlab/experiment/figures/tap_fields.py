"""tap Figure 4: receptive fields (columns of W) of the final models of Figure 3, every size, ranked
by ℓ0.1 spread and by mean activation (rbmlab.report.receptive_fields); one figure per dataset,
results/tap/figure-4-<dataset>[-seeds]_<scale>.{png,md}."""

from __future__ import annotations

import numpy as np

from rbmlab.experiment.figures import Canvas, Drawing
from rbmlab.experiment.figures.tap_runs import TAP_RUNS, FigureConfig, canvas_runs, chosen, run_data
from rbmlab.report import receptive_fields as rf
from rbmlab.report.figure_text import top_texts
from rbmlab.run.checkpoint import load_checkpoint


def figure_4(canvas: Canvas, cfg: FigureConfig) -> None:
    """tap paper Figure 4: receptive fields (columns of W) of Figure 3's final models, every size, ranked
    by ℓ0.1 spread and by mean activation; one figure per dataset.

    Registered as ``tap-figure-4``; options in rbmlab.experiment.figures.tap_runs.FigureConfig.
    """
    from matplotlib.figure import Figure  # noqa: PLC0415 - no pyplot: no global backend

    scale = canvas.scale
    for variant, models in chosen(canvas_runs(canvas), cfg).items():
        lines = [
            f"# tap Figure 4 ({variant}): receptive fields (columns of W) of the final models",
            "",
            f"Scale `{scale}`: the last epoch of each run (the first seed) of "
            f"`rbmlab experiment {canvas.source} "
            f"scale={scale}`. Per model, the {cfg.fields} most localised and most spread fields "
            "(ℓ0.1 quasi-norm of the unit-ℓ2 field) and the least and most active hidden units "
            "(mean E[h|x] over the first 10,000 training images, or all of a smaller set: "
            "the images column).",
            "",
            "| dataset | N_h | epochs | images | log10 ℓ0.1 spread min / median / max | "
            "activation min / median / max |",
            "|---|---|---|---|---|---|",
        ]
        rows = []
        for n_hidden, (run, *_) in sorted(models.items()):
            x, _, shape, _ = run_data(run)
            model, meta, _ = load_checkpoint(run / "checkpoint.npz")
            W = np.asarray(model.W)
            spread, activation = rf.lp_spread(W), rf.mean_activation(model, x[:10000])
            rows.append({"label": f"N_h = {n_hidden}", "W": W, "spread": spread, "activation": activation})
            lines.append(
                f"| {variant} | {n_hidden} | {meta['epoch']} | {len(x[:10000]):,} | "
                + " / ".join(f"{v:.2f}" for v in np.log10(np.percentile(spread, [0, 50, 100])))
                + " | "
                + " / ".join(f"{v:.3g}" for v in np.percentile(activation, [0, 50, 100]))
                + " |"
            )
        fig = Figure(figsize=(4 * cfg.fields * 0.55 + 1.5, 0.75 * len(rows) + 0.8))
        rf.draw_fields(fig, rows, shape, cfg.fields)
        top_texts(fig, f"tap Fig. 4, {variant}: receptive fields ({scale})", title_size=9)
        stem = canvas.name(f"figure-4-{variant}")
        canvas.save_png(fig, stem)
        canvas.save_text(stem, "md", "\n".join(lines) + "\n")


FIGURE_4 = Drawing(figure_4, FigureConfig, TAP_RUNS)
