"""scipy.special for numpy arrays, cupyx.scipy.special for cupy arrays (same names)."""

from __future__ import annotations

from rbmlab.backend import namespace


def special(x):
    """The special-function module matching the array namespace of ``x``."""
    if namespace(x).__name__ == "cupy":
        import cupyx.scipy.special as sp  # noqa: PLC0415

        return sp
    import scipy.special as sp  # noqa: PLC0415

    return sp
