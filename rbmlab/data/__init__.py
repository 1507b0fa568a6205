"""Datasets for rbmlab: found on disk, sha256-checked, options validated, float32 (N, D) arrays.

Example: ``load_dataset("mnist", binarize="stochastic", validation=True).split("valid")``.
"""

from rbmlab.data.dataset import Dataset
from rbmlab.data.registry import (
    DATASET_NAMES,
    dataset_dimension,
    dataset_options,
    fetch_dataset,
    ground_truth,
    has_ground_truth,
    list_datasets,
    load_dataset,
    present_datasets,
    resolve_dataset,
    validate_dataset_options,
    verify_dataset,
)

__all__ = [
    "DATASET_NAMES",
    "Dataset",
    "dataset_dimension",
    "dataset_options",
    "fetch_dataset",
    "ground_truth",
    "has_ground_truth",
    "list_datasets",
    "load_dataset",
    "present_datasets",
    "resolve_dataset",
    "validate_dataset_options",
    "verify_dataset",
]
