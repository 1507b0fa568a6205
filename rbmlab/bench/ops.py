"""Array operations per update (issue 55, item 3): a numpy array that counts every ufunc call
(elementwise passes and reductions: ``.sum()`` is ``add.reduce``), every matmul, every array
function (``where``, ``concatenate``, ``take_along_axis`` …; not allocations without a fill or
views), every copy, conversion, gather and scatter done with it, each about one kernel launch on
a GPU. It stands for a device array (``simulates_device``), so the code takes the paths
a GPU runs: on a GPU each operation costs a launch of ≈ 5–10 µs whatever its size, which is what
bounds crbm_bp's steps at the paper's batch of 20."""

from __future__ import annotations

from typing import Any

import numpy as np


class OpCounted(np.ndarray):
    ops = 0
    macs = 0  # multiply-adds of the matmuls among them
    # (multiply-adds, bytes read and written) of each operation, in order (rbmlab.bench.price)
    work: list[tuple[int, int]] = []
    simulates_device = True  # rbmlab.backend.reads_are_free: the paths a device takes

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        inputs = tuple(_plain(i) for i in inputs)
        macs = _matmul_macs(*inputs[:2]) if ufunc is np.matmul and method == "__call__" else 0
        OpCounted.macs += macs
        if out is not None:
            kwargs["out"] = tuple(_plain(o) for o in out)
        result = getattr(ufunc, method)(*inputs, **kwargs)
        _count(macs, _nbytes(inputs) + _nbytes(result))
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _counted(result)

    def __array_function__(self, func, types, args, kwargs):
        args, kwargs = _plain(args), {k: _plain(v) for k, v in kwargs.items()}
        result = func(*args, **kwargs)
        if func not in NO_KERNEL:
            macs = _factorisation_macs(func, args)
            OpCounted.macs += macs
            _count(macs, _nbytes(args) + _nbytes(tuple(kwargs.values())) + _nbytes(result))
        return _counted(result)

    def copy(self, *args, **kwargs):
        _count(0, 2 * self.nbytes)
        return super().copy(*args, **kwargs)

    def astype(self, *args, **kwargs):
        out = super().astype(*args, **kwargs)
        if out is not self:  # a converted copy; astype(copy=False) of the same dtype is free
            _count(0, self.nbytes + out.nbytes)
        return out

    def __getitem__(self, key):
        result = super().__getitem__(key)
        if _advanced(key):  # a gather (a basic index or slice is a view)
            _count(0, 2 * np.asarray(result).nbytes)
        return result

    def __setitem__(self, key, value):
        super().__setitem__(key, value)  # a fill or a scatter: it writes the selected part
        _count(0, 2 * np.asarray(self.view(np.ndarray)[key]).nbytes)


def _count(macs: int, nbytes: int) -> None:
    """One operation: counted, and its work recorded."""
    OpCounted.ops += 1
    OpCounted.work.append((macs, nbytes))


def _nbytes(x: Any) -> int:
    """Bytes of the arrays in ``x`` (an array, or a tuple or list of them; scalars count 0)."""
    if isinstance(x, np.ndarray):
        return x.nbytes
    if isinstance(x, (list, tuple)):
        return sum(_nbytes(i) for i in x)
    return 0


# array functions that launch no kernel: an allocation without a fill, a view, metadata
NO_KERNEL = frozenset(
    {
        np.empty_like,
        np.broadcast_to,
        np.reshape,
        np.shape,
        np.ndim,
        np.size,
        np.result_type,
        np.may_share_memory,
    }
)


def _factorisation_macs(func, args) -> int:
    """Multiply-adds of a dense factorisation (rbmlab.backend.macs: no matmul counter sees one)
    on a stack of (n, n) matrices ``args[0]``; 0 for any other function."""
    from rbmlab.backend import macs  # noqa: PLC0415

    per_matrix = {
        np.linalg.inv: macs.inverse,
        np.linalg.eigh: macs.eigh,
        np.linalg.eigvalsh: macs.eigvalsh,
        np.linalg.solve: lambda n: macs.lu_solve(n, _right_hand_sides(args)),
    }.get(func)
    if per_matrix is None:
        return 0
    a = np.asarray(args[0])
    return int(int(np.prod(a.shape[:-2], dtype=np.int64)) * per_matrix(a.shape[-1]))


def _right_hand_sides(args) -> int:
    b = np.asarray(args[1])
    return 1 if b.ndim == 1 else b.shape[-1]


def _matmul_macs(a, b) -> int:
    """Multiply-adds of a @ b: (..., m, k) @ (..., k, n) is m·k·n per matrix of the broadcast stack
    (a vector operand: one row or column)."""
    a, b = np.asarray(a), np.asarray(b)
    m, k = (1, a.shape[0]) if a.ndim == 1 else a.shape[-2:]
    n = 1 if b.ndim == 1 else b.shape[-1]
    stack = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return int(np.prod(stack, dtype=np.int64)) * m * k * n


def _advanced(key) -> bool:
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, (np.ndarray, list)) for k in keys)


def _plain(x: Any):
    if isinstance(x, OpCounted):
        return x.view(np.ndarray)
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(i) for i in x)
    return x


def _counted(x: Any):
    if isinstance(x, np.ndarray):
        return x.view(OpCounted)
    if isinstance(x, np.generic):
        return np.asarray(x).view(OpCounted)
    if isinstance(x, tuple):
        return tuple(_counted(i) for i in x)
    return x


def counting(x: Any):
    """``x`` (an array, or a dict of them) as OpCounted arrays; anything else as it is."""
    if isinstance(x, dict):
        return {k: counting(v) for k, v in x.items()}
    return x.view(OpCounted) if isinstance(x, np.ndarray) else x


CREATORS = ("zeros", "ones", "empty", "full", "arange", "asarray", "array")


class CountedDraws:
    """A random Generator whose every draw counts as one operation (one kernel on a device)."""

    def __init__(self, rng):
        self._rng = rng

    def __getattr__(self, name):
        method = getattr(self._rng, name)

        def draw(*args, **kwargs):
            result = method(*args, **kwargs)
            _count(0, _nbytes(result))
            return _counted(result)

        return draw if callable(method) else method


def operations(fn) -> int:
    """The array operations one call of ``fn()`` does: its arrays OpCounted, numpy's array
    creators (``zeros``, ``empty``, ``asarray`` …) made to return OpCounted arrays for the call's
    duration (so that a buffer a step allocates counts too; an allocation itself is not counted).
    ``OpCounted.macs`` holds the call's matmul multiply-adds after it, ``OpCounted.work`` each
    operation's (multiply-adds, bytes its operands and result hold)."""
    saved = {name: getattr(np, name) for name in CREATORS}

    def creating(make):
        return lambda *args, **kwargs: _counted(make(*args, **kwargs))

    try:
        for name, make in saved.items():
            setattr(np, name, creating(make))
        OpCounted.ops = OpCounted.macs = 0
        OpCounted.work = []
        fn()
        return OpCounted.ops
    finally:
        for name, make in saved.items():
            setattr(np, name, make)


def step_work(learner, model, state: dict, batch) -> tuple[tuple[int, int], ...]:
    """Each operation's (multiply-adds, bytes) of one ``learner.step`` on the paths a device runs:
    the model, the state and the Batch ``batch`` as OpCounted arrays, its draws counted; after a
    first call, so that work the step does once (a cached constant) is left out."""
    model, state, batch = model.map(counting), counting(state), batch.map(counting)

    def step():
        return learner.step(model, state, batch, CountedDraws(np.random.default_rng(1)))

    operations(step)
    operations(step)
    return tuple(OpCounted.work)
