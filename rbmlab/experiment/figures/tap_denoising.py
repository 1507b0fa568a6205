"""tap Figures 8 and 9: denoising binary MNIST observed through the binary symmetric channel (§VII.4).

* Fig. 8: the MCC curves of the runs of tap/figure-8-denoising (final metrics: TAP per N_h, the OPE,
  1-NN and the constant image beside); from tap/figure-8-denoising-seeds mean ± std over its seeds.
  results/tap/figure-8-mcc[-seeds]_<scale>.{png,md}.
* Fig. 9: one test digit through the channel at p = 0 … 0.5 and each method's estimate, with the
  binary models of Figure 3 (every size, the first seed). results/tap/figure-9[-seeds]_<scale>.png."""

from __future__ import annotations

import numpy as np
import yaml

from rbmlab.data import load_dataset
from rbmlab.errors import RbmlabError
from rbmlab.experiment.figures import Canvas, Drawing, FigureOptions
from rbmlab.experiment.figures.tap_runs import TAP_RUNS, FigureConfig, canvas_runs, pm
from rbmlab.report.load import read_summary
from rbmlab.run.checkpoint import load_checkpoint

DENOISING_RUNS = {"tap/figure-8-denoising": "", "tap/figure-8-denoising-seeds": "-seeds"}


def figure_8(canvas: Canvas, cfg: FigureOptions) -> None:
    """The TAP, OPE and 1-NN MCC curves from the runs of tap/figure-8-denoising (final metrics; from
    tap/figure-8-denoising-seeds: mean ± std over its seeds)."""
    from matplotlib.figure import Figure  # noqa: PLC0415 - no pyplot: no global backend

    scale, rows = canvas.scale, []
    for summary in sorted(canvas.sweep.glob("*/summary.json")):
        final = read_summary(summary).get("final") or {}  # unreadable: one line naming it
        config = yaml.safe_load((summary.parent / "config.yaml").read_text())
        if "test_mcc_tap" in final:
            rows.append(
                (
                    config["model"]["n_hidden"],
                    config["evaluator"]["flip"],
                    final["test_mcc_tap"],
                    final["test_mcc_ope"],
                    final["test_mcc_nn"],
                    final.get("test_mcc_const", np.nan),
                    final.get("test_tap_distinct", np.nan),
                )
            )
    if not rows:
        raise RbmlabError(
            f"sweep: no completed runs of {canvas.source} at scale {scale} in {canvas.sweep}; "
            f"run `rbmlab experiment {canvas.source} scale={scale}` first"
        )
    rows = np.array(rows, dtype=float)
    fig = Figure(figsize=(6, 4))
    ax = fig.subplots()
    for i, n in enumerate(np.unique(rows[:, 0])):  # a marker shape per size: equal lines stay apart
        part = rows[rows[:, 0] == n]
        part = part[np.argsort(part[:, 1])]
        ax.plot(part[:, 1], part[:, 2], marker="osD^v"[i % 5], ms=4, mfc="none", label=f"TAP, N_h = {n:.0f}")
    flips = np.unique(rows[:, 1])
    for column, style, label in ((3, "k--", "OPE"), (4, "k-", "1-NN"), (5, "k:", "constant (mean image)")):
        ax.plot(flips, [rows[rows[:, 1] == p, column].mean() for p in flips], style, label=label)
    ax.set_xlabel("flip probability p")
    ax.set_ylabel("MCC (mean over test images)")
    ax.set_title(f"tap Fig. 8: denoising binary MNIST ({scale})", fontsize=9)
    ax.legend(fontsize=7)
    stem = canvas.name("figure-8-mcc")
    canvas.save_png(fig, stem)
    sizes = np.unique(rows[:, 0])
    lines = [
        "# tap Figure 8: MCC of TAP, OPE and 1-NN vs flip probability",
        "",
        f"Scale `{scale}`: the runs of `rbmlab experiment {canvas.source} "
        f"scale={scale}`; each cell the mean (± std, ddof=1, where several seeds ran) over its runs. "
        "Constant: the training mean image rounded at ½, whatever the noisy "
        "image (a baseline, not the paper's). In brackets: the distinct TAP estimates per test "
        "image (1/n: one image for every input, i.e. a constant estimate).",
        "",
        "| p | " + " | ".join(f"TAP N_h={n:.0f}" for n in sizes) + " | OPE | 1-NN | constant |",
        "|---|" + "---|" * (len(sizes) + 3),
    ]
    for p in flips:
        at = rows[rows[:, 1] == p]
        cells = [f"{pm(at[at[:, 0] == n, 2], 3)} ({at[at[:, 0] == n, 6].mean():.3g})" for n in sizes]
        one = at[at[:, 0] == at[0, 0]]  # the OPE, 1-NN and constant do not depend on the model
        lines.append(
            f"| {p:g} | " + " | ".join(cells) + f" | {pm(one[:, 3], 3)} | {pm(one[:, 4], 3)} | "
            f"{pm(one[:, 5], 3)} |"
        )
    canvas.save_text(stem, "md", "\n".join(lines) + "\n")


def figure_9(canvas: Canvas, cfg: FigureConfig) -> None:
    """One test digit through the channel at p = 0 … 0.5, and each method's estimate: posterior
    magnetisations for the OPE and TAP (white 0, black 1), the nearest training image for 1-NN."""
    from dataclasses import replace  # noqa: PLC0415

    from matplotlib.figure import Figure  # noqa: PLC0415

    from rbmlab.evaluators.denoising import DenoisingConfig, denoise_images  # noqa: PLC0415

    models = canvas_runs(canvas).get("binary") or {}
    if not models:
        raise RbmlabError(f"sweep: Figure 9 needs the binary MNIST runs of {canvas.source}")
    models = {n: seeds[0] for n, seeds in models.items()}
    options = yaml.safe_load((next(iter(models.values())) / "config.yaml").read_text())["dataset"]
    data = load_dataset(**options)
    x, train = data.test[:1], data.train
    flips = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    base = DenoisingConfig(tol=cfg.tol, max_iter=cfg.max_iter)
    rows: list[tuple[str, list]] = [("noisy", []), ("OPE", []), ("1-NN", [])]
    rows += [(f"TAP N_h={n}", []) for n in sorted(models)]
    for p in flips:
        config = replace(base, flip=p)
        for k, n in enumerate(sorted(models)):
            model = load_checkpoint(models[n] / "checkpoint.npz")[0]
            d = denoise_images(model, x, train, train.mean(axis=0), config)
            if k == 0:
                rows[0][1].append(d.noisy[0])
                rows[1][1].append(d.ope[0])
                rows[2][1].append(d.nn[0])
            rows[3 + k][1].append(d.tap[0])
    fig = Figure(figsize=(1.2 * len(flips), 1.2 * len(rows)))
    axes = fig.subplots(len(rows), len(flips))
    for r, (label, images) in enumerate(rows):
        for c, image in enumerate(images):
            ax = axes[r, c]
            ax.imshow(np.asarray(image).reshape(data.image_shape), cmap="gray_r", vmin=0, vmax=1)
            ax.set_xticks([])
            ax.set_yticks([])
            if c == 0:
                ax.set_ylabel(label, fontsize=7)
            if r == 0:
                ax.set_title(f"p = {flips[c]:g}", fontsize=7)
    fig.suptitle(f"tap Fig. 9: test image 0, one noise draw for every method ({canvas.scale})", fontsize=8)
    canvas.save_png(fig, canvas.name("figure-9"))


FIGURE_8 = Drawing(figure_8, FigureOptions, DENOISING_RUNS)
FIGURE_9 = Drawing(figure_9, FigureConfig, TAP_RUNS)
