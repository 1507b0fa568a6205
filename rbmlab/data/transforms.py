"""Array steps shared by loaders: binarisation and taking the first n examples."""

from __future__ import annotations

import numpy as np

from rbmlab.validation import option_error

# Independent random streams per split for stochastic binarisation: SeedSequence([seed, stream]).
STREAM_TRAIN = 0
STREAM_TEST = 1


def binarize(
    levels: np.ndarray,
    *,
    scale: int,
    mode: str,
    threshold: float,
    seed: int,
    stream: int,
    binary_dtype: type = np.float32,
) -> np.ndarray:
    """Map integer grey levels in 0..scale to float32.

    'none': levels / scale. 'threshold': 1 where level > threshold (in level units).
    'stochastic': one draw per entry, 1 with probability level / scale exactly: r < level with r
    uniform on {0, ..., scale - 1} from ``default_rng([seed, stream])``. ``binary_dtype``: the
    0/1 values of 'threshold' and 'stochastic' in another type (uint8: a quarter of the memory,
    for a loader that splits and subsets a whole split before it converts the rows it keeps).
    """
    if mode == "threshold":
        return (levels > threshold).astype(binary_dtype)
    if mode == "none":
        out = levels.astype(np.float32)
        out /= np.float32(scale)
        return out
    rng = np.random.default_rng([seed, stream])
    r = rng.integers(0, scale, size=levels.shape, dtype=np.min_scalar_type(scale))
    return np.less(r, levels).astype(binary_dtype)


def binarize_rule(mode: str, *, scale: int, seed: int, threshold_rule: str) -> str:
    """The binarisation rule in words, for ``info['binarize']`` (level = integer grey level)."""
    if mode == "threshold":
        return f"threshold: x = 1 if {threshold_rule} else 0 (level = grey level 0..{scale})"
    if mode == "none":
        return f"none: x = level / {scale} in [0, 1] (level = grey level 0..{scale})"
    return (
        f"stochastic: one fixed draw per pixel, x = 1 with probability level / {scale}, as x = r < level "
        f"with r = rng.integers(0, {scale}); rng = numpy default_rng([{seed}, {STREAM_TRAIN}]) for train and "
        f"default_rng([{seed}, {STREAM_TEST}]) for test, drawn over the full split before any subsetting"
    )


def take_first(
    x: np.ndarray, labels: np.ndarray | None, n: int | None, key: str, what: str
) -> tuple[np.ndarray, np.ndarray | None]:
    """The first ``n`` rows of ``x`` (and labels); ``dataset.<key>`` error if n exceeds them."""
    if n is None:
        return x, labels
    if n > len(x):
        raise option_error(key, f"{n} exceeds the {len(x)} {what} examples")
    return x[:n].copy(), (None if labels is None else labels[:n].copy())


def as_float32(x: np.ndarray) -> np.ndarray:
    """C-contiguous float32 copy-if-needed of ``x``."""
    return np.ascontiguousarray(x, dtype=np.float32)
