"""Small synthetic datasets whose exact distribution is known: bars-and-stripes and shifting bar.

Both hold every distinct pattern once, with train = test, so the best achievable average
log-likelihood is -log(number of patterns).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from rbmlab.data.dataset import Dataset
from rbmlab.validation import option, option_error


@dataclass(frozen=True)
class BarsStripesOptions:
    """Options of dataset ``bars_stripes``."""

    size: int = option(3, "image side D (D x D pixels, 2^(D+1) - 2 patterns)", lo=2, hi=5, label="image side")

    @property
    def dimension(self) -> int:
        """Columns of the data, known without loading them (pre-flight checks)."""
        return self.size * self.size


@dataclass(frozen=True)
class ShiftingBarOptions:
    """Options of dataset ``shifting_bar``."""

    n: int = option(
        9, "pattern length (number of visible units and of patterns)", lo=2, hi=1024, label="variables (n)"
    )
    bar: int = option(
        1, "bar length: consecutive ones, cyclic wrap-around (1..n-1)", lo=1, hi=1024, label="bar length"
    )

    @property
    def dimension(self) -> int:
        """Columns of the data, known without loading them (pre-flight checks)."""
        return self.n

    def __post_init__(self) -> None:
        if self.bar >= self.n:
            raise option_error(
                "bar", f"must be below n={self.n} so that the {self.n} shifts are distinct, got {self.bar}"
            )


def bars_stripes_patterns(size: int) -> np.ndarray:
    """All distinct size x size bars-and-stripes patterns, sorted, as (2^(size+1) - 2, size^2) float32."""
    bits = (np.arange(2**size)[:, None] >> np.arange(size)[None, :]) & 1  # (2^D, D)
    rows = np.repeat(bits[:, :, None], size, axis=2)  # pattern[r, c] = bits[r]: each row constant
    cols = np.repeat(bits[:, None, :], size, axis=1)  # pattern[r, c] = bits[c]: each column constant
    flat = np.concatenate([rows, cols]).reshape(-1, size * size)
    return np.unique(flat, axis=0).astype(np.float32)


def shifting_bar_patterns(n: int, bar: int) -> np.ndarray:
    """The n cyclic shifts of ``bar`` consecutive ones in length n; row s has ones at s..s+bar-1 mod n."""
    offset = (np.arange(n)[None, :] - np.arange(n)[:, None]) % n
    return (offset < bar).astype(np.float32)


def _exact(
    name: str, patterns: np.ndarray, image_shape: tuple[int, int] | None, opts: object, rule: str
) -> Dataset:
    n = len(patterns)
    return Dataset(
        name=name,
        train=patterns,
        test=patterns.copy(),
        valid=None,
        image_shape=image_shape,
        info={
            "source": "synthetic",
            "generation": rule,
            "split": "train = test = every distinct pattern once",
            "binarize": "none needed: patterns are {0,1}",
            "n_patterns": n,
            "best_mean_loglik": -math.log(n),
            "options": asdict(opts),  # type: ignore[call-overload]
            "deviations": [],
        },
    )


def load_bars_stripes(opts: BarsStripesOptions) -> Dataset:
    """Bars and stripes (MacKay): every D x D image whose rows, or whose columns, are each constant."""
    d = opts.size
    rule = (
        f"all {d}x{d} patterns with every row all-0 or all-1, plus all with every column all-0 or all-1; "
        "deduplicated (all-0 and all-1 once); sorted lexicographically on the row-major pixels"
    )
    return _exact("bars_stripes", bars_stripes_patterns(d), (d, d), opts, rule)


def load_shifting_bar(opts: ShiftingBarOptions) -> Dataset:
    """Shifting bar (Melchior et al. 2016): all n cyclic shifts of a bar of ``bar`` ones."""
    rule = f"{opts.bar} consecutive ones in length {opts.n}, cyclic wrap-around, all {opts.n} shifts in order"
    return _exact("shifting_bar", shifting_bar_patterns(opts.n, opts.bar), None, opts, rule)
