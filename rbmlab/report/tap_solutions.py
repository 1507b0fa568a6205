"""TAP solutions over training drawn (tap Figs. 5–7); the solutions themselves are found by the
figure experiments (rbmlab.experiment.figures.tap_solutions) from the per-epoch snapshots of a run.

* :func:`plot_free_energies`: Fig. 5 — every unique solution's F against the epoch (blue dots), the
  uniform average (red, the Helmholtz estimate), the number of unique solutions (green, right
  axis); below, histograms with a Gaussian kernel density of F at a few epochs.
* :func:`isomap_over_epochs`: Fig. 6 — one 2-D Isomap (scikit-learn) fitted on the last epoch's
  solutions [a^v, a^h], every epoch's solutions mapped into it, coloured by F min–max normalised
  within the epoch.
* :func:`isomap_of_initialisations`: Fig. 7 — an Isomap fitted on the initial images (coloured by
  class), the solutions each image converges to mapped into it (black), and a few of them drawn.
"""

from __future__ import annotations

from typing import Any

import numpy as np


def _kde(values: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """Gaussian kernel density with Scott's bandwidth (a point mass's spike when all are equal)."""
    bandwidth = max(values.std() * len(values) ** (-1 / 5), 1e-3 * max(1.0, abs(values.mean())))
    z = (grid[:, None] - values[None, :]) / bandwidth
    return np.exp(-0.5 * z * z).sum(axis=1) / (len(values) * bandwidth * np.sqrt(2 * np.pi))


def plot_free_energies(fig: Any, s: dict[str, Any], slices: list[int], title: str, n_init: int) -> None:
    """Fig. 5 (one dataset): the scatter over epochs and histograms at ``slices``."""
    top = fig.add_subplot(2, 1, 1)
    top.scatter(
        s["epoch"],
        s["free_energy"],
        s=6,
        alpha=0.25,
        color="tab:blue",
        lw=0,
        label="F of each unique solution",
    )
    means = [s["free_energy"][s["epoch"] == e].mean() for e in s["epochs"]]
    top.plot(s["epochs"], means, color="tab:red", label="uniform average (−ln Z estimate)")
    top.set_xlabel("epoch")
    top.set_ylabel("TAP free energy F")
    top.set_title(title, fontsize=9)
    right = top.twinx()
    right.plot(s["epochs"], s["n_unique"], color="tab:green", label=f"unique solutions (of {n_init})")
    right.set_ylabel("unique solutions", color="tab:green")
    handles = top.get_legend_handles_labels()[0] + right.get_legend_handles_labels()[0]
    top.legend(handles=handles, fontsize=7, loc="best")
    slices = [e for e in slices if e in set(s["epochs"].tolist())]
    for i, e in enumerate(slices):
        ax = fig.add_subplot(2, len(slices), len(slices) + i + 1)
        f = s["free_energy"][s["epoch"] == e]
        ax.hist(f, bins=30, density=True, color="tab:blue", alpha=0.5)
        grid = np.linspace(f.min() - 1, f.max() + 1, 200)
        ax.plot(grid, _kde(f, grid), color="tab:blue")
        ax.set_title(f"epoch {e}: {len(f)} unique", fontsize=8)
        ax.tick_params(labelsize=6)
        ax.set_xlabel("F", fontsize=7)


def _isomap(points: np.ndarray, neighbours: int):
    from sklearn.manifold import Isomap  # noqa: PLC0415

    return Isomap(n_components=2, n_neighbors=max(1, min(neighbours, len(points) - 1))).fit(points)


def isomap_over_epochs(fig: Any, s: dict[str, Any], epochs: list[int], neighbours: int = 10) -> None:
    """Fig. 6: the solutions of ``epochs`` in the Isomap of the last epoch's solutions."""
    last = s["magnetisations"][-1]
    if len(last) < 3:
        fig.text(0.5, 0.5, f"the last epoch has {len(last)} unique solutions: no embedding", ha="center")
        return
    embedding = _isomap(last, neighbours)
    index = {int(e): i for i, e in enumerate(s["epochs"])}
    epochs = [e for e in epochs if e in index]
    for k, e in enumerate(epochs):
        ax = fig.add_subplot(1, len(epochs), k + 1)
        points = embedding.transform(s["magnetisations"][index[e]])
        f = s["free_energy"][s["epoch"] == e]
        span = f.max() - f.min()
        colour = (f - f.min()) / span if span > 0 else np.zeros_like(f)
        ax.scatter(points[:, 0], points[:, 1], c=colour, cmap="viridis", s=10)
        ax.set_title(f"epoch {e}: {len(f)} solutions", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])


def isomap_of_initialisations(
    fig: Any,
    solved: dict[int, tuple[np.ndarray, np.ndarray]],
    x: np.ndarray,
    labels: np.ndarray,
    shape: tuple[int, int],
    n_show: int = 8,
    neighbours: int = 10,
) -> None:
    """Fig. 7: per epoch of ``solved`` (epoch → (the visible magnetisations each row of ``x``
    reaches, the indices of the distinct converged ones)), the initial images (coloured by label)
    and their TAP solutions (black) in the Isomap fitted on the images; ``n_show`` distinct
    solutions drawn below."""
    embedding = _isomap(x, neighbours)
    base = embedding.embedding_
    grid = fig.add_gridspec(2, len(solved), height_ratios=[3, 1])
    for k, (e, (a_v, keep)) in enumerate(solved.items()):
        ax = fig.add_subplot(grid[0, k])
        for label in np.unique(labels):
            mask = labels == label
            ax.scatter(base[mask, 0], base[mask, 1], s=3, alpha=0.3, label=str(label))
        points = embedding.transform(a_v[keep])
        ax.scatter(points[:, 0], points[:, 1], s=14, color="black", label="TAP solutions")
        ax.set_title(f"epoch {e}: {len(keep)} solutions", fontsize=8)
        ax.set_xticks([])
        ax.set_yticks([])
        if k == 0:
            ax.legend(fontsize=6, markerscale=2, loc="best")
        strip = np.ones((shape[0], 0))
        for j in keep[:n_show]:
            strip = np.hstack([strip, a_v[j].reshape(shape), np.ones((shape[0], 1))])
        sub = fig.add_subplot(grid[1, k])
        sub.imshow(strip, cmap="gray_r", vmin=0, vmax=1)
        sub.set_xticks([])
        sub.set_yticks([])
