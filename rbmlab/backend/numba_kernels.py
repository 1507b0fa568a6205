"""The optional numba kernels, loaded in one place.

numba comes with the ``fast`` extra. Every compiled kernel has a numpy or plain-Python path that
computes the same thing, so a kernel is an accelerator, never a requirement: where numba is not
installed, or ``RBMLAB_NUMBA=0`` switches kernels off (benchmarks and tests compare the two paths
that way), callers get None and take their own path.

- :func:`load` imports a kernel module (one that imports numba at its top, as
  ``rbmlab.backend.random_bits_numba`` and ``rbmlab.models.factor_graph_numba`` do), once.
- :func:`compile` jit-compiles a plain-Python function written in numba's subset (as
  :func:`rbmlab.inference.mplp._sweep`), once.
- :func:`status` says which it is, for run records and benchmark headers.
"""

from __future__ import annotations

import functools
import importlib
import os
from collections.abc import Callable
from types import ModuleType

SWITCH = "RBMLAB_NUMBA"


def switched_off() -> bool:
    return os.environ.get(SWITCH, "1") == "0"


@functools.cache
def _numba() -> ModuleType | None:
    try:
        return importlib.import_module("numba")
    except ImportError:
        return None


def available() -> bool:
    """Kernels will be used: numba is installed and not switched off."""
    return not switched_off() and _numba() is not None


@functools.cache
def load(module: str) -> ModuleType | None:
    """The kernel module ``module`` (a dotted name), or None when kernels are unavailable."""
    return importlib.import_module(module) if available() else None


@functools.cache
def compile(function: Callable) -> Callable | None:  # noqa: A001 - the verb numba users expect
    """``function`` compiled with numba (cached on disk, GIL released), or None when unavailable."""
    return _numba().njit(cache=True, nogil=True)(function) if available() else None


def status() -> str:
    """'numba <version>', or 'off (<why>)'."""
    if available():
        return f"numba {_numba().__version__}"
    why = f"{SWITCH}=0" if switched_off() else "numba not installed; pip install 'rbmlab[fast]'"
    return f"off ({why})"
