"""Maximum mean discrepancy between two sets of binary vectors (pmp Sec 5; we read its printed
formula, k(x⁽ⁱ⁾, x′⁽ʲ⁾) in all three terms, as a typo).

Kernel k(x, y) = exp(−H(x, y) / D), H the Hamming distance over D binary coordinates; the
statistic is the biased V-statistic with the diagonals kept,

    MMD²(X, Y) = mean_ij k(x_i, x_j) + mean_ij k(y_i, y_j) − 2 mean_ij k(x_i, y_j),      (1)

reported as its natural log (lower is better). H takes only the D + 1 values 0 … D, so each mean
in (1) is Σ_h n_h e^{−h/D} / (N N') with exact integer counts n_h (a histogram of H). Written
over one common denominator the three histograms combine into integer coefficients

    c_h = N_Y² n^{XX}_h + N_X² n^{YY}_h − 2 N_X N_Y n^{XY}_h,     Σ_h c_h = 0,                 (2)

    MMD² = Σ_h c_h (e^{−h/D} − 1) / (N_X² N_Y²),                                          (3)

so the only rounding is in the D + 1 terms of (3): no cancellation between three sums of N²
kernel values, at any N, and N_X ≠ N_Y is allowed (the authors' log-space form assumes N_X = N_Y).
H is one matmul per block of rows, H = |x| + |y| − 2 x·y, exact in float32 for D < 2²⁴.
"""

from __future__ import annotations

import math

import numpy as np

from rbmlab.backend import namespace, to_numpy
from rbmlab.errors import RbmlabError

BLOCK = 2048  # rows per block of the Hamming matrix (2048² float32: 16 MiB)


def squared_distances(x, y):
    """‖x_i − y_j‖² of every row pair, (N, M), as ‖x_i‖² + ‖y_j‖² − 2 x_i·y_j (one matmul); the
    Hamming distance for {0, 1} rows."""
    return (x * x).sum(axis=1)[:, None] + (y * y).sum(axis=1)[None, :] - 2.0 * (x @ y.T)


def hamming_histogram(x, y, block: int = BLOCK) -> np.ndarray:
    """Counts n_h (int64, length D + 1) of the Hamming distances between every row of ``x``
    (N, D) and every row of ``y`` (M, D), both {0, 1}; blocks of ``block`` rows at a time."""
    xp = namespace(x)
    d = x.shape[1]
    x = xp.asarray(x, dtype=xp.float32)
    y = xp.asarray(y, dtype=xp.float32)
    counts = np.zeros(d + 1, dtype=np.int64)
    for i in range(0, x.shape[0], block):
        for j in range(0, y.shape[0], block):
            h = squared_distances(x[i : i + block], y[j : j + block])
            counts += to_numpy(xp.bincount(xp.rint(h).astype(xp.int64).ravel(), minlength=d + 1))
    return counts


def _check(name: str, a) -> None:
    values = to_numpy(a)
    if values.ndim != 2 or values.shape[0] == 0:
        raise RbmlabError(f"mmd: {name} must be a non-empty (N, D) array, got shape {values.shape}")
    if not np.isin(values, (0, 1)).all():
        raise RbmlabError(f"mmd: {name} must hold 0/1 values only (convert ±1 samples first)")


def mmd2(x, y, block: int = BLOCK) -> float:
    """MMD²(X, Y) of (1), computed as (3) from exact Hamming histograms; ≥ 0, and 0 exactly when
    X and Y are the same multiset of rows."""
    _check("x", x)
    _check("y", y)
    if x.shape[1] != y.shape[1]:
        raise RbmlabError(f"mmd: x and y differ in width ({x.shape[1]} vs {y.shape[1]})")
    nx, ny, d = x.shape[0], y.shape[0], x.shape[1]
    hxx, hyy, hxy = (hamming_histogram(a, b, block).tolist() for a, b in ((x, x), (y, y), (x, y)))
    c = [ny * ny * a + nx * nx * b - 2 * nx * ny * m for a, b, m in zip(hxx, hyy, hxy)]  # (2), Python ints
    weights = np.expm1(-np.arange(d + 1) / d)  # e^{−h/D} − 1
    value = math.fsum(float(ch) * w for ch, w in zip(c, weights)) / (float(nx) ** 2 * float(ny) ** 2)  # (3)
    return max(value, 0.0)


def log_mmd2(x, y, block: int = BLOCK) -> float:
    """Natural log of MMD²(X, Y) (−inf when X and Y are the same multiset)."""
    value = mmd2(x, y, block)
    return math.log(value) if value > 0 else -math.inf


def v_statistic_floor(mean_kernel: float, n: int) -> float:
    """The expected MMD² of (1) between two independent samples of size ``n`` from one
    distribution whose E k(x, x') = ``mean_kernel``: (2/n)(1 − E k) (derived here, not in the
    paper)."""
    return 2.0 / n * (1.0 - mean_kernel)
