"""Examples as a task: inputs, and optionally targets and a mask, kept together.

A training set, an evaluation split and a mini-batch are all a :class:`Batch`: unsupervised
learners read ``inputs``; conditional models read ``targets`` and ``mask`` (corrupted input, clean
target, changed-pixel mask in the crbm_bp paper); classifiers on hidden features read the labels
in ``targets`` (frank_wolfe). Rows are examples; the arrays share their first axis.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Batch:
    inputs: Any
    targets: Any = None
    mask: Any = None

    def __len__(self) -> int:
        return int(self.inputs.shape[0])

    def map(self, fn) -> Batch:
        """The batch with ``fn`` applied to each array present (host/device moves, casts)."""
        return Batch(
            **{
                f.name: None if getattr(self, f.name) is None else fn(getattr(self, f.name))
                for f in fields(self)
            }
        )

    def take(self, index) -> Batch:
        """Rows ``index`` (an index array or a slice) of every array."""
        return self.map(lambda a: a[index])
