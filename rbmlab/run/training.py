"""What training is, apart from the run directory: the random streams, a fresh model and learner
state, and one shuffled pass over the training set. The runner (rbmlab.run.runner) and the Python
API (rbmlab.api) both train through these, so that the same seed and settings give the same
parameters either way.

Random numbers come from generators keyed by (seed, stream, epoch): epoch e draws the same
numbers whether it follows epoch e − 1 in one process or a checkpoint of it in another.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

import numpy as np

from rbmlab.backend import Backend, host_rng
from rbmlab.backend.run_streams import RunStreams
from rbmlab.data.batch import Batch

# Random streams: (seed, stream, epoch) keys one generator each.
INIT_STREAM, TRAIN_STREAM, EVAL_STREAM, SHUFFLE_STREAM, FINAL_EVAL_STREAM = range(5)


def batches(n: int, batch_size: int | str, rng: np.random.Generator, xp=np):
    """Index arrays of one shuffled epoch (None = the whole set in order, for full batch), as
    arrays of ``xp``: the epoch's order goes to the device once, not one transfer per step."""
    if batch_size == "full" or batch_size >= n:
        yield None
        return
    order = xp.asarray(rng.permutation(n))
    for start in range(0, n, batch_size):
        yield order[start : start + batch_size]


def initial_model(
    model_class: type, model_config, backend: Backend, seed: int, data_mean, fit_data, trials: int = 0
):
    """The family's initialisation for ``model_config`` on the backend, from the stream
    (seed, INIT_STREAM); ``data_mean`` (host) and ``fit_data`` (backend rows) are the training
    data it is fitted to."""
    return model_class.initialize(
        model_config,
        xp=backend.xp,
        rng=backend.rng(seed, INIT_STREAM),
        data_mean=backend.asarray(data_mean),
        dtype=backend.dtype,
        data=fit_data,
        trials=trials,
    )


def learner_start(learner, model, backend: Backend, seed: int, train, pretrained: bool = False):
    """(model, state) training starts from: the learner shapes the model (Frank-Wolfe empties it,
    tap_dbm pretrains it, cd and pcd with the draws of (seed, INIT_STREAM, 2)) and makes its state
    from the stream (seed, INIT_STREAM, 1); ``train``
    is the whole training Batch on the backend."""
    model = learner.initial_model(
        model, pretrained=pretrained, train=train, rng=backend.rng(seed, INIT_STREAM, 2)
    )
    return model, learner.init_state(model, train, backend.rng(seed, INIT_STREAM, 1))


def epoch_pass(
    learner,
    backend: Backend,
    seed: int,
    epoch: int,
    train,
    n_train: int,
    batch_size: int | str,
    model,
    state: dict[str, Any],
    after_step=None,
):
    """Epoch ``epoch`` (from 1): the learner's steps over ``train`` (a Batch on the backend of
    ``n_train`` rows) shuffled into mini-batches of ``batch_size``; (model, state, updates).
    ``after_step(model, state, rows, seen, updates)`` after each step (``rows`` in its batch,
    ``seen`` this epoch so far) ends the epoch early by returning True (a compute budget spent)."""
    rng = backend.rng(seed, TRAIN_STREAM, epoch)
    updates = seen = 0
    for idx in batches(n_train, batch_size, host_rng(seed, SHUFFLE_STREAM, epoch), backend.xp):
        batch = train if idx is None else train.take(idx)
        model, state = learner.step(model, state, batch, rng)
        updates += learner.updates_per_step
        rows = n_train if idx is None else len(idx)
        seen += rows
        if after_step is not None and after_step(model, state, rows, seen, updates):
            break
    return model, state, updates


def packed_epoch_pass(
    learner, backend: Backend, keys, trains, n_train: int, batch_size: int | str, model, state: dict[str, Any]
):
    """:func:`epoch_pass` of packed runs (rbmlab.run.packed): run r's epoch ``keys[r]`` = (seed,
    epoch) over its training Batch ``trains[r]`` (``n_train`` rows each), ``model`` and ``state``
    with a leading run axis, each run's draws from its own streams and its mini-batches from its
    own shuffle, as that run alone draws and shuffles; (model, state, updates per run)."""
    xp = backend.xp
    rngs = RunStreams([backend.rng(seed, TRAIN_STREAM, epoch) for seed, epoch in keys])
    orders = [batches(n_train, batch_size, host_rng(seed, SHUFFLE_STREAM, epoch), xp) for seed, epoch in keys]
    updates = 0
    for step in zip(*orders):
        model, state = learner.step(model, state, packed_batch(trains, step, xp), rngs)
        updates += learner.updates_per_step
    return model, state, updates


def packed_batch(trains: list[Batch], orders: tuple, xp) -> Batch:
    """The mini-batch (R, B, ...) of runs whose step takes rows ``orders[r]`` (None: the whole
    set) of their training Batch ``trains[r]``: one gather when they share one training set. It
    holds the arrays every run's set has (the packed learners read the inputs alone; a corruption
    task adds targets and a mask)."""
    if all(t is trains[0] for t in trains) and orders[0] is not None:
        return trains[0].take(xp.stack(orders))
    parts = [t if idx is None else t.take(idx) for t, idx in zip(trains, orders)]
    held = [f.name for f in fields(Batch) if all(getattr(b, f.name) is not None for b in parts)]
    return Batch(**{name: xp.stack([getattr(b, name) for b in parts]) for name in held})
