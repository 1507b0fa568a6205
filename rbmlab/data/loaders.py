"""Loaders for the shared files that need little processing.

binarized_mnist (Larochelle), caltech101 (Marlin's silhouettes, split1), cbcl_faces, ocr_letters.
Each has an options dataclass, a ``FILES`` table and a ``load_*`` function returning a Dataset.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from rbmlab.data import files as F
from rbmlab.data.dataset import Dataset
from rbmlab.data.transforms import STREAM_TEST, STREAM_TRAIN, as_float32, binarize, binarize_rule, take_first
from rbmlab.errors import RbmlabError
from rbmlab.validation import (
    BINARIZE_MODES,
    binarize_seed_option,
    n_test_option,
    n_train_option,
    option,
    option_error,
    pixel_threshold_option,
)

SOURCES = f"converted copy, see {F.SOURCES_NOTE}"


def _require_all(files: dict[str, F.DataFile], dataset: str) -> dict[str, Path]:
    return {role: F.require(f, dataset) for role, f in files.items()}


def _loadmat(path: Path, keys: tuple[str, ...], dataset: str) -> dict[str, np.ndarray]:
    import scipy.io  # noqa: PLC0415 - the .mat datasets only: a tenth of a second of every run's start

    data = scipy.io.loadmat(path, variable_names=list(keys))
    absent = [k for k in keys if k not in data]
    if absent:
        raise RbmlabError(f"dataset {dataset}: file {path} lacks variable(s) {', '.join(absent)}")
    return {k: data[k] for k in keys}


def _loadnpz(path: Path, keys: tuple[str, ...], dataset: str) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as data:
        absent = [k for k in keys if k not in data.files]
        if absent:
            raise RbmlabError(f"dataset {dataset}: file {path} lacks array(s) {', '.join(absent)}")
        return {k: data[k] for k in keys}


def _info(paths: dict[str, Path], files: dict[str, F.DataFile], opts: Any, **extra: Any) -> dict[str, Any]:
    info: dict[str, Any] = {"files": F.provenance(paths, files), "options": asdict(opts), "deviations": []}
    info.update(extra)
    return info


# --- binarized_mnist ---------------------------------------------------------------------------

BMNIST_HOME = "http://www.cs.toronto.edu/~larocheh/public/datasets/binarized_mnist/"
BMNIST_FILES = {
    split: F.DataFile(f"binarized_mnist/binarized_mnist_{split}.mat", sha, BMNIST_HOME, SOURCES)
    for split, sha in (
        ("train", "79a0312c7389d855cfc97e3812de3998417c5829d8a51543b56a90a91252ae7e"),
        ("valid", "7436afc856959075c7787025bb8a4ba2b520b9230ee39667c66aa7dd2819dd68"),
        ("test", "5bc30222e1e7896cbccd1e1db6b28540cc1230f4d2d5473841a5f6cc54be8d38"),
    )
}


@dataclass(frozen=True)
class BinarizedMnistOptions:
    """Options of dataset ``binarized_mnist``."""

    merge_valid: bool = option(False, "true: train = train + valid (60k), valid = null")
    n_train: int | None = n_train_option()
    n_test: int | None = n_test_option()

    @property
    def dimension(self) -> int:
        """Columns of the data, known without loading them (pre-flight checks)."""
        return 28 * 28


def load_binarized_mnist(opts: BinarizedMnistOptions) -> Dataset:
    """Larochelle & Murray's fixed stochastic binarisation of MNIST, 50k/10k/10k, no labels."""
    name = "binarized_mnist"
    paths = _require_all(BMNIST_FILES, name)
    x = {split: _loadmat(p, ("X",), name)["X"] for split, p in paths.items()}  # uint8 {0,1}
    valid: np.ndarray | None
    if opts.merge_valid:
        train, valid = as_float32(np.concatenate([x["train"], x["valid"]])), None
        split = "train = published train + valid (60,000), test = published test (10,000)"
    else:
        train, valid = as_float32(x["train"]), as_float32(x["valid"])
        split = "files as published: train 50,000 / valid 10,000 / test 10,000"
    train, _ = take_first(train, None, opts.n_train, "n_train", f"{name} training")
    test, _ = take_first(as_float32(x["test"]), None, opts.n_test, "n_test", f"{name} test")
    return Dataset(
        name=name,
        train=train,
        test=test,
        valid=valid,
        image_shape=(28, 28),
        info=_info(
            paths,
            BMNIST_FILES,
            opts,
            source=BMNIST_HOME,
            split=split,
            binarize="as published: fixed stochastic binarisation (Salakhutdinov & Murray 2008), no labels",
        ),
    )


# --- caltech101 --------------------------------------------------------------------------------

CALTECH_HOME = "https://people.cs.umass.edu/~marlin/data.shtml"
CALTECH_FILES = {
    "split1": F.DataFile(
        "caltech101_silhouettes/caltech101_silhouettes_28_split1.mat",
        "eb6735e8d84b1850fabc5590124aab1755e90c9fd28123585324398405e1e42a",
        CALTECH_HOME,
    )
}
# Stored rows are column-major 28x28 images; out[r*28 + c] = row[c*28 + r] makes them row-major.
_COLUMN_TO_ROW_MAJOR = np.arange(784).reshape(28, 28).T.ravel()


@dataclass(frozen=True)
class Caltech101Options:
    """Options of dataset ``caltech101``."""

    n_train: int | None = n_train_option()
    n_test: int | None = n_test_option()

    @property
    def dimension(self) -> int:
        """Columns of the data, known without loading them (pre-flight checks)."""
        return 28 * 28


def load_caltech101(opts: Caltech101Options) -> Dataset:
    """Caltech-101 Silhouettes 28x28, Marlin's split1 (4100/2264/2307), labels 1..101."""
    name = "caltech101"
    paths = _require_all(CALTECH_FILES, name)
    keys = ("train_data", "val_data", "test_data", "train_labels", "val_labels", "test_labels")
    m = _loadmat(paths["split1"], keys, name)
    x = {s: as_float32(m[f"{s}_data"][:, _COLUMN_TO_ROW_MAJOR]) for s in ("train", "val", "test")}
    y = {s: m[f"{s}_labels"].ravel().astype(np.int64) for s in ("train", "val", "test")}
    train, y_tr = take_first(x["train"], y["train"], opts.n_train, "n_train", f"{name} training")
    test, y_te = take_first(x["test"], y["test"], opts.n_test, "n_test", f"{name} test")
    return Dataset(
        name=name,
        train=train,
        test=test,
        valid=x["val"],
        train_labels=y_tr,
        test_labels=y_te,
        valid_labels=y["val"],
        image_shape=(28, 28),
        info=_info(
            paths,
            CALTECH_FILES,
            opts,
            source=CALTECH_HOME,
            split="Marlin's split1 as published: train 4,100 / valid 2,264 / test 2,307",
            binarize="none needed: stored values are {0,1}, kept as stored (1 = background, 0 = object)",
            pixel_values="1 = background, 0 = silhouette (as stored; not inverted)",
            layout="stored column-major; columns reordered so rows are row-major and images upright",
            labels="class index 1..101 as stored",
        ),
    )


# --- cbcl_faces --------------------------------------------------------------------------------

CBCL_HOME = "http://cbcl.mit.edu/software-datasets/FaceData2.html"
CBCL_FILES = {
    "train": F.DataFile(
        "cbcl_faces/cbcl_faces_train.npz",
        "30875ab9e814605ed9d117a8a98964d2c4efa81d2d690b59f7f9c8a4fd8d63b7",
        CBCL_HOME,
        SOURCES,
    )
}
CBCL_SPLIT_SEED = 0
CBCL_N_FACES = 2429


@dataclass(frozen=True)
class CbclFacesOptions:
    """Options of dataset ``cbcl_faces``."""

    binarize: str = option(
        "none", "none (grey/255) | threshold | stochastic", choices=BINARIZE_MODES, label="binarisation"
    )
    threshold: int = pixel_threshold_option()
    binarize_seed: int = binarize_seed_option()
    test_fraction: float = option(
        0.1,
        "fraction of the 2,429 faces held out as test (0: all train, the test split is empty, "
        "as the tap paper, whose 472 test faces are not available)",
        lo=0.0,
        hi=1.0,
        open_hi=True,
        label="fraction held out as test",
    )

    @property
    def dimension(self) -> int:
        """Columns of the data, known without loading them (pre-flight checks)."""
        return 19 * 19

    def __post_init__(self) -> None:
        n_test = cbcl_n_test(self.test_fraction)
        if not (1 if self.test_fraction else 0) <= n_test < CBCL_N_FACES:
            raise option_error(
                "test_fraction", f"{self.test_fraction} leaves {n_test} of {CBCL_N_FACES} faces for test"
            )


def cbcl_n_test(test_fraction: float) -> int:
    """Number of held-out test faces: round(test_fraction * 2429)."""
    return int(round(test_fraction * CBCL_N_FACES))


def load_cbcl_faces(opts: CbclFacesOptions) -> Dataset:
    """The 2,429 19x19 faces of the CBCL #1 training set, split by a seeded permutation."""
    name = "cbcl_faces"
    paths = _require_all(CBCL_FILES, name)
    faces = _loadnpz(paths["train"], ("faces",), name)["faces"].reshape(-1, 19 * 19)
    if faces.shape != (CBCL_N_FACES, 19 * 19):
        raise RbmlabError(f"dataset {name}: unexpected faces shape {faces.shape} in {paths['train']}")
    n_test = cbcl_n_test(opts.test_fraction)
    perm = np.random.default_rng(CBCL_SPLIT_SEED).permutation(len(faces))
    to_float = partial(
        binarize, scale=255, mode=opts.binarize, threshold=opts.threshold, seed=opts.binarize_seed
    )
    train = to_float(faces[perm[n_test:]], stream=STREAM_TRAIN)
    test = to_float(faces[perm[:n_test]], stream=STREAM_TEST)
    return Dataset(
        name=name,
        train=train,
        test=test,
        valid=None,
        image_shape=(19, 19),
        info=_info(
            paths,
            CBCL_FILES,
            opts,
            source=CBCL_HOME,
            split=(
                f"perm = numpy default_rng({CBCL_SPLIT_SEED}).permutation(2429); "
                f"test = faces[perm[:{n_test}]] (n = round(test_fraction * 2429)), "
                f"train = faces[perm[{n_test}:]]"
            ),
            binarize=binarize_rule(
                opts.binarize, scale=255, seed=opts.binarize_seed, threshold_rule=f"level > {opts.threshold}"
            ),
            deviations=[
                "faces only (no non-faces); CBCL's own test set is unavailable: test is held out of training"
            ],
        ),
    )


# --- ocr_letters -------------------------------------------------------------------------------

OCR_HOME = "http://ai.stanford.edu/~btaskar/ocr/"
OCR_FILES = {
    "letters": F.DataFile(
        "ocr_letters/ocr_letters_taskar.npz",
        "e1c6197a082788c19e06d269244d47c3ed03e837948b7570d01d51617bb073dc",
        OCR_HOME,
        SOURCES,
    )
}
OCR_TEST_FOLD = 9


@dataclass(frozen=True)
class OcrLettersOptions:
    """Options of dataset ``ocr_letters``."""

    n_train: int | None = n_train_option()
    n_test: int | None = n_test_option()

    @property
    def dimension(self) -> int:
        """Columns of the data, known without loading them (pre-flight checks)."""
        return 16 * 8


def load_ocr_letters(opts: OcrLettersOptions) -> Dataset:
    """Taskar's 16x8 binary OCR letters; train = word folds 0..8, test = fold 9; labels 0..25."""
    name = "ocr_letters"
    paths = _require_all(OCR_FILES, name)
    d = _loadnpz(paths["letters"], ("X", "y", "fold"), name)
    is_test = d["fold"] == OCR_TEST_FOLD
    x, y = as_float32(d["X"]), d["y"].astype(np.int64)
    train, y_tr = take_first(x[~is_test], y[~is_test], opts.n_train, "n_train", f"{name} training")
    test, y_te = take_first(x[is_test], y[is_test], opts.n_test, "n_test", f"{name} test")
    return Dataset(
        name=name,
        train=train,
        test=test,
        valid=None,
        train_labels=y_tr,
        test_labels=y_te,
        image_shape=(16, 8),
        info=_info(
            paths,
            OCR_FILES,
            opts,
            source=OCR_HOME,
            split=f"Taskar's word folds: train = folds 0..8, test = fold {OCR_TEST_FOLD}; file order kept",
            binarize="none needed: stored values are {0,1}",
            labels="0..25 for 'a'..'z'",
            deviations=[
                "not Larochelle's 32,152/10,000/10,000 split (unavailable): folds 0..8 train, fold 9 test"
            ],
        ),
    )
