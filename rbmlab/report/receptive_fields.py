"""Receptive fields of a trained RBM ranked two ways (tap Fig. 4): columns of W, one per hidden unit.

* spread: the ℓ_p quasi-norm, p = 0.1, of the field scaled to unit ℓ2 norm, (Σ_i |w_i|^p)^{1/p}:
  small for a field concentrated on a few pixels (localised), large for one spread over the
  image (the paper ranks by the ℓ_0.1 norm and does not say how fields are scaled; unit ℓ2 makes
  the ranking about shape, not size);
* activation: the mean of E[h_j | x] over the training images.
Each ranking's extremes are drawn, with the paper's colour map (viridis, W clipped to [−1, 1]).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import ndimage

from rbmlab.backend import to_numpy


def lp_spread(W, p: float = 0.1) -> np.ndarray:
    """(Σ_i |w_i|^p)^{1/p} of each column of W (n_v, n_h) after scaling it to unit ℓ2 norm."""
    W = np.asarray(W, dtype=np.float64)
    w = np.abs(W) / np.maximum(np.linalg.norm(W, axis=0), 1e-300)
    return np.exp(np.log(np.sum(w**p, axis=0)) / p)


def participation_ratio(W) -> np.ndarray:
    """The participation ratio of each column w of W (n_v, n_h), (Σ_i w_i²)² / (n_v Σ_i w_i⁴): the
    share of the visible units a field spreads over, 1 when all weigh alike, 1/n_v on one unit
    (the localisation measure of Tubiana & Monasson 2017 for RBM features); small background
    weights count little, unlike :func:`lp_spread` at p = 0.1."""
    w2 = np.asarray(W, dtype=np.float64) ** 2
    return w2.sum(axis=0) ** 2 / (w2.shape[0] * np.maximum((w2**2).sum(axis=0), 1e-300))


def mean_activation(model, x, chunk: int = 5000) -> np.ndarray:
    """The mean of E[h | x] over the rows of ``x`` (n_h,)."""
    total = sum(
        to_numpy(model.hidden_probs(x[i : i + chunk])).sum(axis=0, dtype=np.float64)
        for i in range(0, x.shape[0], chunk)
    )
    return total / x.shape[0]


def extremes(score: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices of the ``k`` lowest and the ``k`` highest scores (each in rank order)."""
    order = np.argsort(score, kind="stable")
    k = min(k, len(order) // 2)
    return order[:k], order[::-1][:k]


def draw_fields(fig: Any, rows: list[dict], shape: tuple[int, int], k: int) -> None:
    """One row of fields per model: k most localised, k most spread, k least and k most active.
    ``rows``: {"label", "W" (n_v, n_h), "spread", "activation"}."""
    groups = ("most localised", "most spread", "least active", "most active")
    grid = fig.add_gridspec(
        len(rows), 4 * k + 3, wspace=0.05, hspace=0.35, width_ratios=([1] * k + [0.3]) * 3 + [1] * k
    )
    image = None
    for r, row in enumerate(rows):
        localised, spread = extremes(row["spread"], k)
        quiet, active = extremes(row["activation"], k)
        for g, columns in enumerate((localised, spread, quiet, active)):
            for c, j in enumerate(columns):
                ax = fig.add_subplot(grid[r, g * (k + 1) + c])
                image = ax.imshow(np.asarray(row["W"])[:, j].reshape(shape), cmap="viridis", vmin=-1, vmax=1)
                ax.set_xticks([])
                ax.set_yticks([])
                if c == 0:
                    ax.set_title(groups[g] if r == 0 else "", fontsize=7, loc="left")
                    if g == 0:
                        ax.set_ylabel(row["label"], fontsize=7)
    if image is not None:
        fig.colorbar(image, ax=fig.axes, shrink=0.6, label="W (clipped to [−1, 1])")


def stroke_cores(W, shape: tuple[int, int], frac: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Of each column w of W (n_v, n_h), an image of ``shape``: the core of its strongest pixel, the
    4-connected set of pixels around it whose weight has its sign and at least ``frac`` of its
    size. Returns (elongation, size in pixels) per field; the elongation is √(λ₁/λ₂) of the core
    pixels' coordinate covariance, each pixel a unit square (+1/12 on the diagonal): 1 for a
    square, L for a straight L × 1 line. A pen stroke is a long thin core, a blob a round one; a
    curved stroke (a ring) or a one-pixel diagonal (not 4-connected) reads as short. An all-zero
    field has no core: NaN and 0."""
    W = np.asarray(W, dtype=np.float64)
    fields = W.T.reshape(-1, *shape)  # (n_h, H, W)
    flat = fields.reshape(len(fields), -1)
    strongest = np.abs(flat).argmax(axis=1)
    peak = flat[np.arange(len(flat)), strongest]
    sign = np.where(peak < 0, -1.0, 1.0)[:, None, None]
    mask = sign * fields >= frac * np.abs(peak)[:, None, None]
    structure = np.zeros((3, 3, 3), dtype=bool)
    structure[1] = ndimage.generate_binary_structure(2, 1)  # within one field only
    labels, _ = ndimage.label(mask, structure)
    core = labels == labels.reshape(len(fields), -1)[np.arange(len(fields)), strongest][:, None, None]
    core &= (peak != 0)[:, None, None]  # an all-zero field: no core
    n = core.sum(axis=(1, 2)).astype(np.float64)
    y, x = np.indices(shape, dtype=np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        my, mx = (core * y).sum(axis=(1, 2)) / n, (core * x).sum(axis=(1, 2)) / n
        cyy = (core * y * y).sum(axis=(1, 2)) / n - my * my + 1 / 12
        cxx = (core * x * x).sum(axis=(1, 2)) / n - mx * mx + 1 / 12
        cxy = (core * x * y).sum(axis=(1, 2)) / n - mx * my
        half, gap = (cyy + cxx) / 2, np.sqrt(((cyy - cxx) / 2) ** 2 + cxy**2)
        return np.sqrt((half + gap) / (half - gap)), n.astype(np.int64)
