"""The random streams of packed runs: one keyed Generator per run, drawn from as each run alone.

Packed runs (rbmlab.run.packed) train several runs' models as one computation, every array with a
leading run axis of size R. Their draws must stay each run's own: run r's numbers are what run r
trained alone would draw, whatever else shares the pack. A :class:`RunStreams` stands where a
single run passes its Generator; the draws of :mod:`rbmlab.backend.ops` (``uniform``,
``bernoulli_logits_``) give slice r of an (R, ...) array from run r's Generator, drawn for the
shape (...) that run alone would ask for. Nothing else of a Generator is offered: a learner that
draws otherwise fails loudly instead of mixing the runs' streams.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

KEY_CHUNK = 1024  # keys per run moved to the device at once (rbmlab.backend.cupy_kernels' packed draw)


class RunStreams:
    """R Generators (a :meth:`rbmlab.backend.Backend.rng` each), one per packed run, in run order."""

    def __init__(self, generators: Sequence[Any]):
        self.generators = tuple(generators)
        self._table, self._column = None, KEY_CHUNK

    @property
    def keyed_on_host(self) -> bool:
        """Whether every run's Generator keys the fused device kernels from the host (a cupy
        Backend.rng's ``host_keys``), so a packed draw can be one launch for all runs."""
        return all(hasattr(g, "host_keys") for g in self.generators)

    def next_keys(self, xp) -> tuple[Any, int]:
        """(key table, column): every run's next fused-kernel key, column ``column`` of the (R,
        KEY_CHUNK) table on the device. Run r's keys are the 64-bit draws its ``host_keys`` gives
        one at a time (rbmlab.backend.random_bits.draw_key) when it draws alone; they move to the
        device KEY_CHUNK at a time, one transfer per chunk instead of R keys per draw."""
        if self._column == KEY_CHUNK:
            keys = [g.host_keys.bit_generator.random_raw(KEY_CHUNK) for g in self.generators]
            self._table, self._column = xp.asarray(np.stack(keys).astype(np.uint64)), 0
        self._column += 1
        return self._table, self._column - 1

    def __len__(self) -> int:
        return len(self.generators)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.generators)

    def runs_of(self, shape: tuple[int, ...]) -> Iterator[tuple[int, Any]]:
        """(run, its Generator) for a draw of ``shape``, whose leading axis must be the runs'."""
        if not shape or shape[0] != len(self.generators):
            raise ValueError(
                f"a packed draw of shape {tuple(shape)} lacks the leading run axis of "
                f"{len(self.generators)} runs: this learner's draws cannot be packed"
            )
        return enumerate(self.generators)


def run_slice(a: Any, run: int, like: Any) -> Any:
    """Run ``run``'s part of ``a``, an operand broadcast against ``like`` (R, ...): its slice when
    it carries the run axis (as many dimensions as ``like``), otherwise ``a`` itself (a scalar, or
    an array every run shares); None stays None."""
    if a is None or getattr(a, "ndim", 0) < like.ndim:
        return a
    return a[run if a.shape[0] > 1 else 0]
