"""``deconvolution``: binary images made by OR-convolving known features (pmp Sec 5.6).

The authors' generator (``generate_convor.py``): the 4 ground-truth 5 × 5 features below (square
outline, plus, triangle, diamond), ``n_candidates`` candidate images whose locations S
(n_candidates, 4, grid, grid) are i.i.d. Bernoulli(``p_location``), images X = OR-convolution of
S and the features (rbmlab.models.convolution_or eq. 1; (grid + 4)² pixels), then the first
``n_images`` candidates with more than ``min_placements`` − 1 placements (ΣS ≥ 3 by default).
Our numpy draws (``seed``) cannot match the authors' JAX PRNGKey(42), so the images differ from
theirs while following the same rule.

train = test = the kept images, float32 (n_images, H·W); ``info["ground_truth"]`` keeps the
features W (4, 5, 5) and the kept images' locations S (n_images, 4, grid, grid) as {0, 1} lists
(:func:`truth_arrays` gives them back as arrays).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from rbmlab.backend import host_rng
from rbmlab.data.dataset import Dataset
from rbmlab.limits import ARRAY_ELEMENTS, EXAMPLES, exceeds
from rbmlab.validation import invalid, option, option_error

SQUARE = [[1, 1, 1, 1, 1], [1, 0, 0, 0, 1], [1, 0, 0, 0, 1], [1, 0, 0, 0, 1], [1, 1, 1, 1, 1]]
PLUS = [[0, 0, 1, 0, 0], [0, 0, 1, 0, 0], [1, 1, 1, 1, 1], [0, 0, 1, 0, 0], [0, 0, 1, 0, 0]]
TRIANGLE = [[0, 0, 1, 0, 0], [0, 1, 0, 1, 0], [0, 1, 0, 1, 0], [1, 0, 0, 0, 1], [1, 1, 1, 1, 1]]
DIAMOND = [[0, 0, 1, 0, 0], [0, 1, 0, 1, 0], [1, 0, 0, 0, 1], [0, 1, 0, 1, 0], [0, 0, 1, 0, 0]]
FEATURES = np.array([SQUARE, PLUS, TRIANGLE, DIAMOND], dtype=np.float32)  # (4, 5, 5)


@dataclass(frozen=True)
class DeconvolutionOptions:
    """Options of dataset ``deconvolution``."""

    n_images: int = option(
        100, "images kept (the first candidates with enough placements)", lo=1, hi=EXAMPLES
    )
    n_candidates: int = option(500, "candidate images drawn", lo=1, hi=EXAMPLES)
    grid: int = option(10, "location grid side (images are (grid + 4) x (grid + 4))", lo=1, hi=1024)
    p_location: float = option(0.01, "P(S = 1) of each (image, feature, location)", lo=0.0, hi=1.0)
    min_placements: int = option(
        3, "placements (sum of S) an image needs to be kept (at most its 4 × grid²)", lo=0, hi=4 * 1024**2
    )
    seed: int = option(42, "seed of the locations' draws", lo=0)

    @property
    def dimension(self) -> int:
        """Columns of the data, known without loading them (pre-flight checks)."""
        return (self.grid + 4) ** 2

    def __post_init__(self) -> None:
        # the candidates' locations S, (n_candidates, 4, grid, grid), are drawn as one array
        size = self.n_candidates * len(FEATURES) * self.grid**2
        if problem := exceeds(
            ARRAY_ELEMENTS, size, f"n_candidates x {len(FEATURES)} features x grid^2 (elements of S)"
        ):
            raise invalid("n_candidates", problem)


def generate(opts: DeconvolutionOptions) -> tuple[np.ndarray, np.ndarray]:
    """(X (n_images, H, W) float32, S (n_images, 4, grid, grid) float32) of ``opts``."""
    from rbmlab.models.convolution_or import or_convolve  # noqa: PLC0415 - models only when generating

    rng = host_rng(opts.seed)
    g = opts.grid
    S = (rng.random((opts.n_candidates, len(FEATURES), g, g)) < opts.p_location).astype(np.float32)
    S = S[S.sum(axis=(1, 2, 3)) >= opts.min_placements]
    if S.shape[0] < opts.n_images:
        raise option_error(
            "n_images",
            f"only {S.shape[0]} of {opts.n_candidates} candidates have "
            f"{opts.min_placements}+ placements, {opts.n_images} wanted; "
            "raise dataset.n_candidates or dataset.p_location",
        )
    S = S[: opts.n_images]
    return or_convolve(S, FEATURES), S


def load_deconvolution(opts: DeconvolutionOptions) -> Dataset:
    """The kept images as a train = test dataset, with their features and locations as ground truth."""
    X, S = generate(opts)
    n, H, W = X.shape
    flat = np.ascontiguousarray(X.reshape(n, H * W))
    return Dataset(
        name="deconvolution",
        train=flat,
        test=flat.copy(),
        valid=None,
        image_shape=(H, W),
        info={
            "source": "synthetic",
            "generation": (
                f"S ~ Bernoulli({opts.p_location}) on a {opts.grid}x{opts.grid} grid for each of "
                f"{opts.n_candidates} candidates and the 4 features (square, plus, triangle, "
                f"diamond, 5x5); X = OR-convolution of S and the features; the first "
                f"{opts.n_images} candidates with sum(S) >= {opts.min_placements}; seed {opts.seed}"
            ),
            "split": "train = test = the kept images",
            "binarize": "none needed: images are {0,1}",
            "ground_truth": {"W": FEATURES.astype(int).tolist(), "S": S.astype(int).tolist()},
            "options": asdict(opts),
            "deviations": ["numpy draws, not the authors' JAX PRNGKey(42): same rule, other images"],
        },
    )


def truth_arrays(dataset: Dataset) -> tuple[np.ndarray, np.ndarray]:
    """(W (4, 5, 5), S (n_images, 4, grid, grid)) float32 of a ``deconvolution`` dataset."""
    truth = dataset.info["ground_truth"]
    return np.asarray(truth["W"], dtype=np.float32), np.asarray(truth["S"], dtype=np.float32)
