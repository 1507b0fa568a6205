"""Structured-prediction tasks made from clean binary images (crbm_bp §6): each example is the
corrupted image (the CRBM's input x), the clean image (its target v) and the changed-pixel mask
(x ≠ v, the pixels the paper's "Changed" error counts).

    flip     an exact count round(rate · D) of pixel positions per image, uniform without
             replacement, flipped (our reading of Sec. 6's "flipping 10%":
             78 of 784 at 10 %, 157 at 20 %)
    occlude  one square patch per image, its top-left corner uniform over the positions where it
             fits, set to ``value`` (0 on MNIST, 1 = the background on Caltech-101 Silhouettes)

Corruptions are drawn once per split from ``default_rng([seed, stream])`` (a fixed "noisy MNIST";
our choice, the paper does not say); the functions are pure and run on host arrays (N, D).
"""

from __future__ import annotations

import numpy as np

from rbmlab.data.batch import Batch


def flip(images: np.ndarray, rate: float, rng: np.random.Generator) -> Batch:
    """Flip round(rate · D) distinct pixels of every image."""
    n, d = images.shape
    count = int(round(rate * d))
    # the first `count` positions of an independent random permutation per row
    positions = np.argsort(rng.random((n, d)), axis=1)[:, :count]
    changed = np.zeros((n, d), dtype=bool)
    np.put_along_axis(changed, positions, True, axis=1)
    corrupted = np.where(changed, 1 - images, images).astype(images.dtype)
    return Batch(corrupted, targets=images, mask=changed)


def occlude(
    images: np.ndarray, image_shape: tuple[int, int], size: int, value: float, rng: np.random.Generator
) -> Batch:
    """Set one ``size`` × ``size`` patch per image to ``value``; the mask marks the pixels that
    changed (those inside the patch that were not already ``value``)."""
    n = images.shape[0]
    rows, cols = image_shape
    if not 1 <= size <= min(rows, cols):
        raise ValueError(f"occlude: patch size {size} does not fit in a {rows}×{cols} image")
    top = rng.integers(0, rows - size + 1, size=n)
    left = rng.integers(0, cols - size + 1, size=n)
    r, c = np.arange(rows), np.arange(cols)
    inside = ((r[None, :] >= top[:, None]) & (r[None, :] < top[:, None] + size))[:, :, None] & (
        (c[None, :] >= left[:, None]) & (c[None, :] < left[:, None] + size)
    )[:, None, :]
    inside = inside.reshape(n, rows * cols)
    corrupted = np.where(inside, np.asarray(value, images.dtype), images)
    return Batch(corrupted, targets=images, mask=corrupted != images)


def pixel_errors(predicted, target, changed) -> dict[str, float]:
    """The paper's "All" and "Changed" test errors (%), pooled over the whole set (Table 1's
    caption; pooling is our choice: total wrong pixels / total pixels counted; per-image averaging
    of Changed is undefined where a patch changed nothing)."""
    wrong = predicted != target
    changed = changed != 0  # a mask moved to the backend's float dtype counts the same
    n_changed = int(changed.sum())
    return {
        "all": 100.0 * float(wrong.mean()),
        "changed": 100.0 * float((wrong & changed).sum()) / n_changed if n_changed else float("nan"),
    }
