"""Array backends: numpy on the CPU, cupy on a GPU.

Numerical cores never import numpy or cupy; they take arrays (and read their namespace with
:func:`namespace`) plus a seeded random Generator from :meth:`Backend.rng`. Everything that moves
data between host and device lives here.

The package is the bottom numerical layer (it imports nothing of rbmlab but :mod:`rbmlab.errors`):
``ops`` (elementwise helpers), ``random_bits`` / ``random_bits_numba`` / ``splitmix`` (counter-based
uniforms), ``cupy_kernels`` and ``numba_kernels`` (the optional fused kernels), ``machine`` (CPU,
BLAS and kernel facts for ``rbmlab doctor``) and ``allocator`` (glibc's reuse of freed memory).
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from rbmlab.errors import RbmlabError

BACKENDS = ("numpy", "cupy")
DTYPES = ("float32", "float64")


def _cupy() -> ModuleType | None:
    try:
        import cupy  # noqa: PLC0415 - optional dependency

        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception:  # ImportError, or no CUDA device / driver
        return None


def cupy_available() -> bool:
    return _cupy() is not None


def namespace(x: Any) -> ModuleType:
    """The array module (numpy or cupy) that owns array ``x``."""
    if isinstance(x, np.ndarray) or np.isscalar(x):
        return np
    module = type(x).__module__.split(".")[0]
    if module == "cupy":
        import cupy  # noqa: PLC0415

        return cupy
    return np


def reads_are_free(x: Any) -> bool:
    """Whether reading a value of array ``x`` on the host costs nothing: a numpy array in host
    memory. For a device's array (cupy's, or a numpy subclass that stands for one with a true
    ``simulates_device``, as the tests' sync-counting array) a read waits for the device, so a
    loop that could stop early on a host test runs its budget with masks instead."""
    return isinstance(x, np.ndarray) and not getattr(x, "simulates_device", False)


def wait_for_device(xp: ModuleType) -> None:
    """Block until the work launched on ``xp``'s device is done (cupy runs asynchronously; numpy:
    nothing to wait for), so that a clock read next covers it."""
    cuda = getattr(xp, "cuda", None)
    if cuda is not None:
        cuda.get_current_stream().synchronize()


def to_numpy(x: Any) -> np.ndarray:
    """A host copy of any array (cupy arrays come back from the device)."""
    return x.get() if hasattr(x, "get") else np.asarray(x)


def seed_sequence(*key: int) -> np.random.SeedSequence:
    """SeedSequence of a key; the key length is part of it ((s, 0) and (s,) differ)."""
    return np.random.SeedSequence([len(key), *(int(k) for k in key)])


def host_rng(*key: int) -> np.random.Generator:
    """A numpy Generator for host-side randomness (shuffling), keyed like :meth:`Backend.rng`."""
    return np.random.Generator(np.random.SFC64(seed_sequence(*key)))


def _seed_int(*key: int) -> int:
    """A 63-bit seed derived from a tuple of non-negative integers (stable across runs)."""
    digest = hashlib.sha256(repr(tuple(int(k) for k in key)).encode()).digest()
    return int.from_bytes(digest[:8], "little") >> 1


class DeviceGenerator:
    """cupy's Generator for device arrays, plus ``host_keys``: a numpy Generator keyed alike
    whose 64-bit draws key the fused sampling kernels (:mod:`rbmlab.backend.cupy_kernels`), so a draw
    costs one kernel launch and no round trip. Everything else is the cupy Generator's."""

    def __init__(self, device, host_keys: np.random.Generator):
        self.device, self.host_keys = device, host_keys

    def __getattr__(self, name: str):
        return getattr(self.device, name)


@dataclass(frozen=True)
class Backend:
    """An array namespace plus the default float type and a keyed random-number factory."""

    name: str
    xp: ModuleType
    dtype: Any

    def rng(self, *key: int):
        """A Generator seeded by ``key`` (e.g. ``(seed, epoch)``): the same key gives the same stream.

        Keyed generators make runs resumable without saving generator state: the runner asks for
        one stream per epoch.
        """
        if self.name == "numpy":
            return host_rng(*key)
        return DeviceGenerator(self.xp.random.default_rng(_seed_int(*key)), host_rng(*key))

    def asarray(self, x: Any, dtype: Any = None):
        return self.xp.asarray(x, dtype=self.dtype if dtype is None else dtype)

    def to_numpy(self, x: Any) -> np.ndarray:
        return to_numpy(x)

    def learner_state(self, state: dict[str, Any]) -> dict[str, Any]:
        """A learner's state read back (a checkpoint's, an estimator's) on this backend: its arrays
        on the device, its integer scalars (host counters: a step count, Adam's t) as Python ints, so
        that a step reads them without waiting for the device."""
        return {k: int(v) if host_counter(v) else self.xp.asarray(v) for k, v in state.items()}


def host_counter(v: Any) -> bool:
    """Whether ``v`` is an integer scalar (a learner's host counter), not an array to compute with."""
    return isinstance(v, (int, np.integer)) or (
        isinstance(v, np.ndarray) and v.ndim == 0 and v.dtype.kind in "iu"
    )


def get_backend(name: str = "numpy", dtype: str = "float32") -> Backend:
    if name not in BACKENDS:
        raise RbmlabError(f"backend.name: unknown backend {name!r}; choose one of {', '.join(BACKENDS)}")
    if dtype not in DTYPES:
        raise RbmlabError(f"backend.dtype: unknown dtype {dtype!r}; choose one of {', '.join(DTYPES)}")
    if name == "numpy":
        return Backend("numpy", np, np.dtype(dtype))
    cupy = _cupy()
    if cupy is None:
        raise RbmlabError(
            "backend=cupy: cupy is not installed or no CUDA device is visible "
            "(pip install 'rbmlab[gpu]' on a GPU machine)"
        )
    return Backend("cupy", cupy, cupy.dtype(dtype))


def memory_bytes(name: str) -> int | None:
    """Memory the backend's arrays live in: the host's RAM (numpy) or the GPU's (cupy); None
    when unknown."""
    if name == "cupy" and cupy_available():
        return int(_cupy().cuda.Device().mem_info[1])
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None
