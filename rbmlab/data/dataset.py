"""The :class:`Dataset` container every loader returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.units.values import ValueSet, observed

SPLITS = ("train", "test", "valid")


@dataclass(frozen=True)
class DataFacts:
    """What the checks before a run read of a dataset, small enough to keep per configuration
    (a sweep checks each distinct dataset once): its name, dimension, image shape, the values it
    holds, and the rows of each split (None: no such split with these options)."""

    name: str
    n_visible: int
    image_shape: tuple[int, int] | None
    values: ValueSet
    rows: dict[str, int | None]
    path: str | None = None  # dataset=file: the user's file (a values mismatch names dataset.path)


@dataclass(eq=False)
class Dataset:
    """Splits of one dataset as float32 (N, D) arrays, plus labels and provenance.

    Values are {0, 1} unless binarisation is 'none' (then in [0, 1]). ``image_shape`` is row-major:
    ``train[i].reshape(image_shape)`` is upright. ``info`` records files and sha256, the
    binarisation rule, the split rule and any deviation from the published dataset.
    """

    name: str
    train: np.ndarray
    test: np.ndarray
    valid: np.ndarray | None
    train_labels: np.ndarray | None = None
    test_labels: np.ndarray | None = None
    valid_labels: np.ndarray | None = None
    image_shape: tuple[int, int] | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @cached_property
    def values(self) -> ValueSet:
        """The values its splits hold, read once from the arrays (rbmlab.units.values.observed:
        the distinct values, or their range when there are many): what the domain check
        (rbmlab.data.domain) compares with a model's visible units."""
        return observed(self.train, self.valid, self.test)

    @property
    def n_visible(self) -> int:
        """Number of visible units D."""
        return int(self.train.shape[1])

    def facts(self) -> DataFacts:
        """This dataset's :class:`DataFacts`."""
        rows = {s: None if getattr(self, s) is None else int(getattr(self, s).shape[0]) for s in SPLITS}
        return DataFacts(
            self.name, self.n_visible, self.image_shape, self.values, rows, self.info.get("path")
        )

    def split(self, name: str) -> np.ndarray:
        """The array of split ``name`` ('train' | 'test' | 'valid'); RbmlabError if absent."""
        if name not in SPLITS:
            raise RbmlabError(f"dataset {self.name}: unknown split {name!r}; expected train, test or valid")
        data = getattr(self, name)
        if data is None:
            raise RbmlabError(f"dataset {self.name} has no {name} split with these options")
        return data

    def batch(self, name: str) -> Batch:
        """Split ``name`` as a Batch: inputs, with its labels (if any) as targets."""
        return Batch(self.split(name), targets=getattr(self, f"{name}_labels"))
