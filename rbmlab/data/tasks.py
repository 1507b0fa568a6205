"""Tasks: what a run learns from a dataset's splits (config group ``task``).

    none     the split as it is: inputs, with its labels as targets (unsupervised learners,
             classifiers on hidden features)
    flip     denoising (crbm_bp): inputs = the images with round(rate · D) pixels flipped,
             targets = the clean images, mask = the changed pixels
    occlude  completion (crbm_bp): inputs = the images with one size × size patch set to value
             (0 on MNIST, 1 = the background on Caltech-101 Silhouettes), targets, mask

A corruption is drawn once per split from default_rng([task.seed, stream of the split]): the
same noisy test set for every run and learner (our choice; crbm_bp does not say).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.data.batch import Batch
from rbmlab.data.corruption import flip, occlude
from rbmlab.errors import RbmlabError
from rbmlab.registry import Registry
from rbmlab.validation import Config, option

TASKS = Registry("task", {
    "none": "rbmlab.data.tasks:Plain",
    "flip": "rbmlab.data.tasks:Flip",
    "occlude": "rbmlab.data.tasks:Occlude",
})
SPLIT_STREAMS = {"train": 0, "valid": 1, "test": 2}


@dataclass
class TaskConfig(Config):
    name: str = option("none", "task")


@dataclass
class FlipConfig(TaskConfig):
    name: str = option("flip", "task")
    rate: float = option(0.1, "share of each image's pixels flipped (an exact count per image)",
                         lo=0, hi=1)
    seed: int = option(0, "the corruption's random stream (fixed per split)", lo=0)


@dataclass
class OccludeConfig(TaskConfig):
    name: str = option("occlude", "task")
    size: int = option(8, "side of the square patch, in pixels", lo=1)
    value: float = option(0.0, "what the patch is set to (0 on MNIST; 1, the background, on "
                          "Caltech-101 Silhouettes)")
    seed: int = option(0, "the corruption's random stream (fixed per split)", lo=0)


class Plain:
    """The split as it is."""

    config_class = TaskConfig
    corrupts = False

    def __init__(self, config=None):
        self.config = config if config is not None else TaskConfig()

    def batch(self, data, split: str) -> Batch:
        return data.batch(split)


class _Corruption(Plain):
    corrupts = True

    def _rng(self, split: str) -> np.random.Generator:
        return np.random.default_rng([self.config.seed, SPLIT_STREAMS[split]])


class Flip(_Corruption):
    config_class = FlipConfig

    def batch(self, data, split: str) -> Batch:
        return flip(data.split(split), self.config.rate, self._rng(split))


class Occlude(_Corruption):
    config_class = OccludeConfig

    def batch(self, data, split: str) -> Batch:
        if data.image_shape is None:
            raise RbmlabError(f"task=occlude: dataset {data.name} has no image shape to place a patch in")
        rows, cols = data.image_shape
        if self.config.size > min(rows, cols):
            raise RbmlabError(f"task.size: a {self.config.size}×{self.config.size} patch does not fit "
                              f"in the {rows}×{cols} images of {data.name}")
        return occlude(data.split(split), data.image_shape, self.config.size, self.config.value,
                       self._rng(split))
