"""A numpy array that stands in for a device array and counts host reads (issue 55's counting
backend): every ``bool``, ``int``, ``float``, ``__index__``, ``item``, ``tolist`` and scalar
index of one, and every result whose shape depends on its values (``nonzero``, a boolean mask's
selection), is a place where code on a GPU would wait for the device. Results of computations
with one are ones too (reductions stay 0-d arrays, so reading them counts), and
rbmlab.backend.reads_are_free is False for it, so the code takes its device paths."""

from __future__ import annotations

import numpy as np


class Counted(np.ndarray):
    reads = 0  # host reads since the last reset()
    simulates_device = True  # rbmlab.backend.reads_are_free: the code takes its device paths

    def __array_wrap__(self, array, context=None, return_scalar=False):
        return np.asarray(array).view(Counted)  # a reduction's 0-d result stays an array

    def _read(self):
        Counted.reads += 1
        return self.view(np.ndarray)

    def __bool__(self):
        return bool(self._read())

    def __int__(self):
        return int(self._read())

    def __float__(self):
        return float(self._read())

    def __index__(self):
        return self._read().__index__()

    def item(self, *args):
        return self._read().item(*args)

    def tolist(self):
        return self._read().tolist()

    def argmax(self, *args, **kwargs):
        return np.asarray(self.view(np.ndarray).argmax(*args, **kwargs)).view(Counted)

    def argmin(self, *args, **kwargs):
        return np.asarray(self.view(np.ndarray).argmin(*args, **kwargs)).view(Counted)

    def nonzero(self):
        Counted.reads += 1
        return self.view(np.ndarray).nonzero()

    def __getitem__(self, key):
        out = super().__getitem__(key)
        masked = isinstance(key, np.ndarray) and key.dtype == bool
        if masked or not isinstance(out, np.ndarray):  # a shape from values, or an element
            Counted.reads += 1
        return out


def counted(x):
    """``x`` (an array, or a dict or list of them) as Counted arrays; anything else as it is."""
    if isinstance(x, dict):
        return {k: counted(v) for k, v in x.items()}
    if isinstance(x, np.ndarray):
        return x.view(Counted)
    return x


def reset() -> None:
    Counted.reads = 0
