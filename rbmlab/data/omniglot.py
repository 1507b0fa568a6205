"""An approximate 28x28 OMNIGLOT built from Lake's raw 105x105 images.

IWAE's ``chardata.mat`` (Burda et al.) is unavailable, so this rebuilds a 28x28 version: ink =
1 - image, area-average 105 -> 28, and split per character by drawer (1..15 train, 16..20 test),
giving 24,345 / 8,115 images. The grey levels are cached in the cache dir.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import numpy as np

from rbmlab.data import files as F
from rbmlab.data.dataset import Dataset
from rbmlab.data.transforms import STREAM_TEST, STREAM_TRAIN, binarize, binarize_rule, take_first
from rbmlab.errors import RbmlabError
from rbmlab.validation import BINARIZE_MODES, binarize_seed_option, n_test_option, n_train_option, option

NAME = "omniglot"
HOMEPAGE = "https://github.com/brendenlake/omniglot"
FILES = {
    part: F.DataFile(
        f"omniglot/images_{part}.npz", sha, HOMEPAGE, f"npz of Lake's images_{part}.zip, see {F.SOURCES_NOTE}"
    )
    for part, sha in (
        ("background", "8bf84167413cd00beacdce3fe582f780ab538d8dbef043a6d688f2527bbce199"),
        ("evaluation", "0b84c7ffd94c4841c0040e529c86a82eaaccb986d8eadad5673f7991b7475276"),
    )
}
SIZE_IN, SIZE_OUT = 105, 28
# Area weights are multiples of 1/15 (105/28 = 3.75 = 15/4), so each output pixel is an exact
# multiple of 1/225: the cache stores the integer level 0..225 losslessly as uint8.
LEVELS = 225
N_TRAIN_DRAWERS = 15
CHUNK = 512
CACHE_VERSION = 1
CACHE_KEYS = ("train", "test", "train_labels", "test_labels")
N_CHARACTERS, N_DRAWERS = 1623, 20
N_TRAIN, N_TEST = N_CHARACTERS * N_TRAIN_DRAWERS, N_CHARACTERS * (N_DRAWERS - N_TRAIN_DRAWERS)


@dataclass(frozen=True)
class OmniglotOptions:
    """Options of dataset ``omniglot``."""

    binarize: str = option(
        "stochastic",
        "stochastic | threshold | none (grey in [0,1])",
        choices=BINARIZE_MODES,
        label="binarisation",
    )
    threshold: float = option(
        0.5, "binarize=threshold: ink level > threshold -> 1", lo=0.0, hi=1.0, label="binarisation threshold"
    )
    binarize_seed: int = binarize_seed_option()
    n_train: int | None = n_train_option()
    n_test: int | None = n_test_option()

    @property
    def dimension(self) -> int:
        """Columns of the data, known without loading them (pre-flight checks)."""
        return SIZE_OUT * SIZE_OUT


def area_matrix(n_in: int = SIZE_IN, n_out: int = SIZE_OUT) -> np.ndarray:
    """(n_out, n_in) float32 matrix averaging input pixels by their overlap with each output cell."""
    width = n_in / n_out
    edges = np.arange(n_out + 1) * width
    j = np.arange(n_in)[None, :]
    overlap = np.minimum(j + 1, edges[1:, None]) - np.maximum(j, edges[:-1, None])
    return (np.clip(overlap, 0.0, None) / width).astype(np.float32)


def downsample(images: np.ndarray) -> np.ndarray:
    """(N, 105, 105) bool, True = background -> (N, 784) uint8 ink levels 0..225 (ink = 1 - image)."""
    a = area_matrix()
    n = len(images)
    out = np.empty((n, SIZE_OUT, SIZE_OUT), dtype=np.float32)
    ink = np.empty((min(CHUNK, n), SIZE_IN, SIZE_IN), dtype=np.float32)  # reused: first touch is slow
    cols = np.empty((min(CHUNK, n), SIZE_IN, SIZE_OUT), dtype=np.float32)
    for start in range(0, n, CHUNK):  # chunks bound memory; each is two BLAS calls, no per-image loop
        m = min(CHUNK, n - start)
        np.subtract(1.0, images[start : start + m], out=ink[:m], dtype=np.float32)
        np.matmul(ink[:m].reshape(-1, SIZE_IN), a.T, out=cols[:m].reshape(-1, SIZE_OUT))  # ink @ A.T
        np.matmul(a, cols[:m], out=out[start : start + m])  # A @ (ink @ A.T)
    return np.rint(out * LEVELS).astype(np.uint8).reshape(n, SIZE_OUT * SIZE_OUT)


def _cache_path() -> Path:
    bg, ev = FILES["background"].sha256[:16], FILES["evaluation"].sha256[:16]
    return F.cache_dir() / "omniglot" / f"omniglot28_area_v{CACHE_VERSION}_{bg}_{ev}.npz"


def _build(paths: dict[str, Path]) -> dict[str, np.ndarray]:
    """Downsample all 1,623 x 20 images and split them by drawer."""
    parts = []
    for part in ("background", "evaluation"):  # character order: background, then evaluation
        with np.load(paths[part], allow_pickle=False) as d:
            images = d["images"]  # (characters, 20 drawers, 105, 105) bool
        if images.ndim != 4 or images.shape[2:] != (SIZE_IN, SIZE_IN):
            raise RbmlabError(f"dataset {NAME}: unexpected image shape {images.shape} in {paths[part]}")
        parts.append(downsample(images.reshape(-1, SIZE_IN, SIZE_IN)).reshape(*images.shape[:2], -1))
    levels = np.concatenate(parts)  # (1623, 20, 784)
    n_char, n_draw = levels.shape[:2]
    chars = np.broadcast_to(np.arange(n_char)[:, None], (n_char, n_draw))
    k = N_TRAIN_DRAWERS
    return {
        "train": levels[:, :k].reshape(-1, SIZE_OUT * SIZE_OUT),
        "test": levels[:, k:].reshape(-1, SIZE_OUT * SIZE_OUT),
        "train_labels": chars[:, :k].ravel().astype(np.int64),
        "test_labels": chars[:, k:].ravel().astype(np.int64),
    }


def _levels(paths: dict[str, Path]) -> tuple[dict[str, np.ndarray], Path | None]:
    """Cached ink levels, building (and caching, best effort) them if absent."""
    path = _cache_path()
    if path.is_file():
        try:
            with np.load(path, allow_pickle=False) as d:
                cached = {k: d[k] for k in CACHE_KEYS}
            if cached["train"].shape == (N_TRAIN, 784) and cached["test"].shape == (N_TEST, 784):
                return cached, path
        except (OSError, ValueError, KeyError):
            pass  # unreadable or stale cache: rebuild
    arrays = _build(paths)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npz")
        np.savez_compressed(
            tmp,
            train=arrays["train"],
            test=arrays["test"],
            train_labels=arrays["train_labels"],
            test_labels=arrays["test_labels"],
        )
        os.replace(tmp, path)
    except OSError:
        return arrays, None
    return arrays, path


def load(opts: OmniglotOptions) -> Dataset:
    """Approximate 28x28 OMNIGLOT, 24,345 train / 8,115 test, labels = character 0..1622."""
    paths = {part: F.require(f, NAME) for part, f in FILES.items()}
    levels, cache = _levels(paths)
    to_float = partial(
        binarize, scale=LEVELS, mode=opts.binarize, threshold=opts.threshold * LEVELS, seed=opts.binarize_seed
    )
    train = to_float(levels["train"], stream=STREAM_TRAIN)
    test = to_float(levels["test"], stream=STREAM_TEST)
    train, y_tr = take_first(train, levels["train_labels"], opts.n_train, "n_train", f"{NAME} training")
    test, y_te = take_first(test, levels["test_labels"], opts.n_test, "n_test", f"{NAME} test")
    return Dataset(
        name=NAME,
        train=train,
        test=test,
        valid=None,
        train_labels=y_tr,
        test_labels=y_te,
        image_shape=(SIZE_OUT, SIZE_OUT),
        info={
            "source": HOMEPAGE,
            "files": F.provenance(paths, FILES),
            "derived_cache": str(cache) if cache else None,
            "preprocessing": (
                "ink = 1 - image (True = background); 105x105 -> 28x28 by area averaging "
                "(A @ ink @ A.T, A = (28, 105) overlap weights); grey levels are multiples of 1/225"
            ),
            "binarize": binarize_rule(
                opts.binarize,
                scale=LEVELS,
                seed=opts.binarize_seed,
                threshold_rule=f"ink = level / {LEVELS} > {opts.threshold}",
            ),
            "split": (
                "per character (1,623 = 964 background + 659 evaluation, in that order): drawers 1..15 "
                "-> train (24,345), drawers 16..20 -> test (8,115); order = character-major, then drawer"
            ),
            "labels": "global character index 0..1622 (background 0..963, evaluation 964..1622)",
            "options": asdict(opts),
            "deviations": [
                "approximation of IWAE's 28x28 OMNIGLOT (chardata.mat unavailable): own area-average "
                "downsampling and own per-character split; test has 8,115 images, not IWAE's 8,070"
            ],
        },
    )
