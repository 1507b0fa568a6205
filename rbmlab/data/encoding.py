"""Data rows as a model's visible units see them: categorical (Potts) codes become one-hot columns.

A dataset holds one column per unit (integer codes 0 … q − 1 for Potts units); a Potts layer holds
q columns per unit (rbmlab.units.potts). The runner and ``rbmlab evaluate`` encode a dataset once,
after the domain check (rbmlab.data.domain) has read its codes, so that everything downstream —
training, sampling, every evaluator — works on the layer's columns. Binary units are one column
each: their data pass unchanged.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from rbmlab.data.dataset import SPLITS, Dataset


def encoded(data: Dataset, units) -> Dataset:
    """``data`` with each split in the columns of the visible unit type ``units`` (the same
    Dataset when the type is one column per unit)."""
    if units is None or units.width() == 1:
        return data
    splits = {
        s: None if getattr(data, s) is None else units.encode(getattr(data, s), np.float32) for s in SPLITS
    }
    info = {**data.info, "encoding": f"one-hot: {units.width()} columns per unit ({units.name})"}
    return dataclasses.replace(data, **splits, image_shape=None, info=info)
