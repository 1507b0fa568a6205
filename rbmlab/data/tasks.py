"""Tasks: what a run learns from a dataset's splits (config group ``task``).

    none     the split as it is: inputs, with its labels as targets (unsupervised learners,
             classifiers on hidden features)
    flip     denoising (crbm_bp): inputs = the images with round(rate · D) pixels flipped,
             targets = the clean images, mask = the changed pixels
    occlude  completion (crbm_bp): inputs = the images with one size × size patch set to value
             (0 on MNIST, 1 = the background on Caltech-101 Silhouettes), targets, mask

A corruption is drawn once per split from default_rng([task.seed, stream of the split]): the
same noisy test set for every run and learner (our choice; crbm_bp does not say).

Each task declares what the domain check (rbmlab.data.domain) asks of it before any work:
``check(facts, splits)`` its own constraints on the data (sizes only: a flip rate that flips no
pixel, a patch that does not fit) and ``outputs(values)`` the values of the inputs it makes from
data holding ``values``, which must be values of the model's visible units (``output_key`` is
the option a mismatch names).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.data.batch import Batch
from rbmlab.data.corruption import flip, occlude
from rbmlab.data.dataset import DataFacts
from rbmlab.errors import RbmlabError
from rbmlab.registry import Registry
from rbmlab.units.values import ValueSet
from rbmlab.validation import Config, option

TASKS = Registry(
    "task",
    {
        "none": "rbmlab.data.tasks:Plain",
        "flip": "rbmlab.data.tasks:Flip",
        "occlude": "rbmlab.data.tasks:Occlude",
    },
)
SPLIT_STREAMS = {"train": 0, "valid": 1, "test": 2}


@dataclass
class TaskConfig(Config):
    name: str = option("none", "task")


@dataclass
class FlipConfig(TaskConfig):
    name: str = option("flip", "task")
    rate: float = option(
        0.1,
        "share of each image's pixels flipped (an exact count per image)",
        lo=0,
        hi=1,
        label="fraction of pixels flipped",
    )
    seed: int = option(0, "the corruption's random stream (fixed per split)", lo=0, label="corruption seed")


@dataclass
class OccludeConfig(TaskConfig):
    name: str = option("occlude", "task")
    size: int = option(8, "side of the square patch, in pixels", lo=1, label="occluded square (pixels)")
    value: float = option(
        0.0, "what the patch is set to (0 on MNIST; 1, the background, on Caltech-101 Silhouettes)"
    )
    seed: int = option(0, "the corruption's random stream (fixed per split)", lo=0, label="corruption seed")


class Plain:
    """The split as it is."""

    config_class = TaskConfig
    corrupts = False
    output_key = "task"
    makes = "the inputs are the data"  # how the inputs come from the data (messages)

    def __init__(self, config=None):
        self.config = config if config is not None else TaskConfig()

    def check(self, facts: DataFacts, splits) -> None:
        """One-line errors for data this task cannot be made from (sizes only; no work)."""

    def outputs(self, values: ValueSet) -> ValueSet:
        """The values of the inputs made from data holding ``values``."""
        return values

    def batch(self, data, split: str) -> Batch:
        return data.batch(split)


class _Corruption(Plain):
    corrupts = True

    def _rng(self, split: str) -> np.random.Generator:
        return np.random.default_rng([self.config.seed, SPLIT_STREAMS[split]])

    def _changed(self, batch: Batch, data, split: str) -> Batch:
        """``batch``, refused when the corruption changed no pixel of a non-empty split: the
        changed-pixel error would be 0/0 (crbm_bp's "Changed" column has nothing to count)."""
        if len(batch.inputs) and not batch.mask.any():
            raise RbmlabError(
                f"{self.output_key}: the {self.config.name} task changes no pixel of the "
                f"{split} split of {data.name} ({self.makes}): no changed pixel to score"
            )
        return batch


class Flip(_Corruption):
    """Denoising task (crbm_bp): the inputs are the images with round(rate · D) pixels flipped, the
    targets the clean images, the mask the changed pixels.

    Registered as ``flip``; options (``rate``, ``seed``) in :class:`FlipConfig`.
    """

    config_class = FlipConfig
    makes = "a flipped pixel x becomes 1 − x"

    def flips(self, n_pixels: int) -> int:
        """Pixels flipped per image: round(rate · D), as rbmlab.data.corruption.flip draws them."""
        return int(round(self.config.rate * n_pixels))

    def check(self, facts: DataFacts, splits) -> None:
        d = facts.n_visible
        if self.flips(d) < 1:
            raise RbmlabError(
                f"task.rate: {self.config.rate:g} of the {d} pixels of {facts.name} rounds "
                "to no flipped pixel per image, so no pixel changes and the changed-pixel "
                f"error is undefined; flip at least one (task.rate >= {1 / d:.4g})"
            )

    def outputs(self, values: ValueSet) -> ValueSet:
        return values | values.map(-1.0, 1.0)  # the clean pixels and the flipped ones, 1 − x

    def batch(self, data, split: str) -> Batch:
        self.check(data.facts(), [split])
        return self._changed(flip(data.split(split), self.config.rate, self._rng(split)), data, split)


class Occlude(_Corruption):
    """Completion task (crbm_bp): the inputs are the images with one size × size patch set to
    ``value``, the targets the clean images, the mask the pixels the patch changed.

    Registered as ``occlude``; options (``size``, ``value``, ``seed``) in :class:`OccludeConfig`.
    """

    config_class = OccludeConfig
    output_key = "task.value"

    @property
    def makes(self) -> str:
        return f"each patch is set to {self.config.value:g}"

    def check(self, facts: DataFacts, splits) -> None:
        if facts.image_shape is None:
            raise RbmlabError(f"task=occlude: dataset {facts.name} has no image shape to place a patch in")
        rows, cols = facts.image_shape
        if self.config.size > min(rows, cols):
            raise RbmlabError(
                f"task.size: a {self.config.size}×{self.config.size} patch does not fit "
                f"in the {rows}×{cols} images of {facts.name}"
            )

    def outputs(self, values: ValueSet) -> ValueSet:
        return values | ValueSet.of_points(self.config.value)

    def batch(self, data, split: str) -> Batch:
        self.check(data.facts(), [split])
        batch = occlude(
            data.split(split), data.image_shape, self.config.size, self.config.value, self._rng(split)
        )
        return self._changed(batch, data, split)
