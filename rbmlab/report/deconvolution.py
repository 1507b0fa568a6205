"""pmp Figure 4 (bottom): data images, ground-truth features and PMP posterior samples of the
features of Bayesian binary blind deconvolution (rbmlab.experiment.deconvolution); Figure 5
(right): the whole dataset.

Three blocks, top to bottom: one row of data images, one row of the ground-truth features, then
one row per posterior sample with its K features (the paper's bottom-right panel: 5 samples).
Pixels on are black, as in the paper.
"""

from __future__ import annotations

import numpy as np

from rbmlab.report.plot import png_bytes


def plot_posterior_features(samples_W, truth_W, images) -> bytes:
    """The figure as PNG bytes: ``images`` (M, H, W'), ``truth_W`` (G, f, f),
    ``samples_W`` (B, K, fh, fw), all {0, 1}."""
    from matplotlib.figure import Figure  # noqa: PLC0415 - no pyplot: no global backend or display

    samples_W, truth_W, images = (np.asarray(a) for a in (samples_W, truth_W, images))
    rows = [("data", list(images)), ("truth", list(truth_W))]
    rows += [(f"sample {b + 1}", list(W)) for b, W in enumerate(samples_W)]
    columns = max(len(r) for _, r in rows)
    fig = Figure(figsize=(1.0 + 0.9 * columns, 0.95 * len(rows)))
    axes = fig.subplots(len(rows), columns, squeeze=False)
    for axes_row, (label, pictures) in zip(axes, rows):
        for j, ax in enumerate(axes_row):
            ax.set_xticks([])
            ax.set_yticks([])
            if j < len(pictures):
                ax.imshow(pictures[j], cmap="gray_r", vmin=0, vmax=1, interpolation="nearest")
            else:
                ax.set_axis_off()
        axes_row[0].set_ylabel(label, rotation=0, ha="right", va="center", fontsize=9)
    fig.suptitle("pmp Figure 4: data, true features, PMP posterior samples of W", fontsize=10)
    return png_bytes(fig, dpi=100, bbox_inches="tight")


def plot_dataset(images, columns: int = 10) -> bytes:
    """pmp Figure 5 (right): every image of ``images`` (M, H, W') {0, 1}, ``columns`` per row, as
    PNG bytes."""
    from matplotlib.figure import Figure  # noqa: PLC0415

    images = np.asarray(images)
    rows = -(-images.shape[0] // columns)
    fig = Figure(figsize=(0.7 * columns, 0.7 * rows + 0.4))
    axes = fig.subplots(rows, columns, squeeze=False)
    for k, ax in enumerate(axes.flat):
        ax.set_axis_off()
        if k < images.shape[0]:
            ax.imshow(images[k], cmap="gray_r", vmin=0, vmax=1, interpolation="nearest")
    fig.suptitle(f"pmp Figure 5 (right): the {images.shape[0]} images of the deconvolution data", fontsize=10)
    return png_bytes(fig, dpi=100, bbox_inches="tight")
