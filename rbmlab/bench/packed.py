"""Packed runs against the same runs one after another (rbmlab.run.packed). Bench part ``packed``.

R runs of one learner and model size, each with its own seed (initialisation, draws, data order)
and learning rate, train one epoch over the same MNIST images: alone, one after another (what the
basic launcher does in one process), and packed into one computation with a leading run axis
(``hydra/launcher=packed``). The row is (runs alone) / (packed): the packed throughput as a
multiple of the solo throughput, ≥ 1.0 the target on the CPU (issue 55). Both do the same
arithmetic (the packed runs equal the runs alone bit for bit, tests/test_packed.py); on the CPU a
batched matmul is a loop of the same BLAS calls, so the gain is the shared Python and dispatch
overhead of a step, largest at small batches.
"""

from __future__ import annotations

import numpy as np

from rbmlab.backend import get_backend, wait_for_device
from rbmlab.bench.core import Row, mnist, row
from rbmlab.bench.method import blas_threads, interleaved, ratio, spread
from rbmlab.data.batch import Batch

RATES = (0.01, 0.02, 0.05, 0.1)  # one per run, cycled


def _runs(backend, learner_config: dict, runs: int, x, n_hidden: int):
    """The runs' (learner, model, state) alone, and the packed learner, model and state."""
    from rbmlab.learners import LEARNERS  # noqa: PLC0415
    from rbmlab.models import MODELS  # noqa: PLC0415
    from rbmlab.optimizers.base import RunRates  # noqa: PLC0415
    from rbmlab.run.packed import stack_models, stack_states  # noqa: PLC0415
    from rbmlab.run.training import initial_model, learner_start  # noqa: PLC0415

    family = MODELS.get("rbm")
    model_config = MODELS.parse({"name": "rbm", "n_hidden": n_hidden})
    train = Batch(x)
    alone = []
    for seed in range(runs):
        lr = RATES[seed % len(RATES)]
        learner = LEARNERS.build(LEARNERS.parse({**learner_config, "lr": lr}))
        model = initial_model(family, model_config, backend, seed, backend.to_numpy(x).mean(0), x)
        model, state = learner_start(learner, model, backend, seed, train)
        alone.append((learner, model, state))
    packed = LEARNERS.build(LEARNERS.parse(learner_config))
    packed.lr = RunRates([RATES[s % len(RATES)] for s in range(runs)])
    return alone, packed, stack_models([m for _, m, _ in alone]), stack_states([s for *_, s in alone]), train


def bench_packed(
    backend,
    learner_config: dict,
    what: str,
    runs: int,
    rounds: int,
    threads: int,
    examples: int,
    n_hidden=500,
) -> list[Row]:
    """One epoch of ``runs`` runs alone (one after another) and packed, interleaved."""
    from rbmlab.run.training import epoch_pass, packed_epoch_pass  # noqa: PLC0415

    x = backend.asarray(mnist(examples))
    alone, packed, model, state, train = _runs(backend, learner_config, runs, x, n_hidden)
    batch = learner_config["batch_size"]

    def one_by_one():
        for seed, (learner, m, s) in enumerate(alone):
            epoch_pass(learner, backend, seed, 1, train, examples, batch, m, s)

    def together():
        keys = [(seed, 1) for seed in range(runs)]
        packed_epoch_pass(packed, backend, keys, [train] * runs, examples, batch, model, state)

    label = f"{what}, {runs} runs, {examples} MNIST images, 784 × {n_hidden}, batch {batch}"
    return alone_against_packed(label, one_by_one, together, rounds, threads)


def alone_against_packed(label: str, one_by_one, together, rounds: int, threads: int) -> list[Row]:
    """The runs one after another and packed, interleaved at ``threads`` BLAS threads: each one's
    seconds and alone / packed (≥ 1.0: packing is not slower)."""
    with blas_threads(threads):
        t = interleaved({"alone": one_by_one, "packed": together}, rounds)
    return [
        row(f"{label}: runs alone, s", spread(t["alone"]), "s", threads),
        row(f"{label}: packed, s", spread(t["packed"]), "s", threads),
        row(f"{label}: alone / packed", ratio(t["alone"], t["packed"]), "ratio", threads, "≥ 1.0"),
    ]


def bench_crbm_packed(
    backend,
    name: str,
    options: dict,
    what: str,
    runs: int,
    rounds: int,
    threads: int,
    steps: int = 20,
    n_v: int = 784,
    n_h: int = 256,
) -> list[Row]:
    """``steps`` updates of a crbm_bp learner (``n_v`` × ``n_h``, batch 20, epoch 1) for ``runs``
    runs, each its own model and data: alone, one after another, and packed, interleaved."""
    from rbmlab.backend.run_streams import RunStreams  # noqa: PLC0415
    from rbmlab.bench.crbm_bp import at_epoch, random_crbm  # noqa: PLC0415
    from rbmlab.learners import LEARNERS  # noqa: PLC0415
    from rbmlab.optimizers.base import RunRates  # noqa: PLC0415
    from rbmlab.run.packed import stack_models, stack_states  # noqa: PLC0415

    config = {"name": name, "batch_size": 20, "lr": 0.01, **options}
    learner = LEARNERS.build(LEARNERS.parse(config))
    made = [random_crbm(n_v, n_h, 20, seed) for seed in range(runs)]
    alone = [
        (m, Batch(x, targets=v), at_epoch(learner.init_state(m, Batch(x, targets=v), None), 1))
        for m, x, v in made
    ]
    packed = LEARNERS.build(LEARNERS.parse(config))
    packed.lr = RunRates([0.01] * runs)
    model = stack_models([m for m, _, _ in alone])
    data = Batch(np.stack([x for _, x, _ in made]), targets=np.stack([v for *_, v in made]))
    state = stack_states([s for *_, s in alone])

    def one_by_one():
        for seed, (m, batch, s) in enumerate(alone):
            rng = backend.rng(seed, 1, 1)
            for _ in range(steps):
                m, s = learner.step(m, s, batch, rng)

    def together():
        rngs = RunStreams([backend.rng(seed, 1, 1) for seed in range(runs)])
        m, s = model, state
        for _ in range(steps):
            m, s = packed.step(m, s, data, rngs)

    label = f"crbm_bp {what}, {runs} runs, {steps} updates, {n_v} × {n_h}, batch 20"
    return alone_against_packed(label, one_by_one, together, rounds, threads)


def packed_part(rounds: int, examples: int) -> list[Row]:
    """Bench part ``packed``: 4 runs stacked against one after another: CD-1 and PCD-1 (784 × 500)
    at batch 100 and 20 on up to 2,000 of the ``examples`` (a ratio of epochs needs no more) and
    CD-1 at 784 × 64; crbm_bp's CD-10, MLE-MF and MLE-BP at 784 × 256 and CD-10 and MLE-MF at
    64 × 32 (batch 20); at 1 and 2 BLAS threads (the small models at 1). The evidence for the
    host's rule, rbmlab.run.packed.HOST_STACK_PARAMETERS."""
    backend = get_backend("numpy", "float32")
    rows: list[Row] = []
    n = min(examples, 2000)
    for name, what in (("cd", "CD-1"), ("pcd", "PCD-1")):
        for batch in (100, 20):
            for threads in (1, 2):
                rows += bench_packed(
                    backend, {"name": name, "batch_size": batch}, what, 4, rounds, threads, n
                )
    rows += bench_packed(backend, {"name": "cd", "batch_size": 20}, "CD-1", 4, rounds, 1, n, n_hidden=64)
    for name, options, what in CRBM_PACKED:
        for threads in (1, 2):
            steps = 5 if name == "mle_bp" else 20
            rows += bench_crbm_packed(backend, name, options, what, 4, max(3, rounds // 2), threads, steps)
    for name, options, what in CRBM_PACKED[:2]:
        rows += bench_crbm_packed(backend, name, options, what, 4, rounds, 1, n_v=64, n_h=32)
    return rows


def stacked_pcd_matmuls(backend, runs: int, m: int, n: int, batch: int, steps: int):
    """The bare products of ``steps`` PCD-1 steps of ``runs`` packed runs, as the fused path forms
    them (rbmlab.bench.rbm.pcd_matmuls with a leading run axis): [x; chains]W (2B rows), the
    chains' visible and hidden products, one W statistic for both phases; each into its output."""
    xp, rng = backend.xp, backend.rng(9)

    def rand(*shape):
        return rng.random((runs, *shape), dtype=backend.dtype)

    W, stacked, v, h, p = rand(m, n), rand(2 * batch, m), rand(batch, m), rand(batch, n), rand(2 * batch, n)
    Wt, stacked_t = xp.ascontiguousarray(W.swapaxes(1, 2)), xp.ascontiguousarray(stacked.swapaxes(1, 2))
    out_2h, out_v, out_h, out_w = (
        xp.empty((runs, 2 * batch, n), W.dtype),
        xp.empty((runs, batch, m), W.dtype),
        xp.empty((runs, batch, n), W.dtype),
        xp.empty((runs, m, n), W.dtype),
    )

    def run():
        for _ in range(steps):
            xp.matmul(stacked, W, out=out_2h)
            xp.matmul(h, Wt, out=out_v)
            xp.matmul(v, W, out=out_h)
            xp.matmul(stacked_t, p, out=out_w)
        wait_for_device(xp)

    return run


def bench_packed_scaling(
    backend, rounds: int, runs_list=(1, 8, 32, 128), examples: int = 10_000, n_hidden: int = 500, batch=100
) -> list[Row]:
    """PCD-1 (784 × ``n_hidden``, batch ``batch``) packed at each run count of ``runs_list``: the
    epoch's seconds per run, and the bare products of the same epoch / the packed epoch (the
    fraction of the arithmetic bound it reaches: those products are the step's matrix work,
    6 (B, 784, n_hidden) multiply-add units per run and step), interleaved; the device waited for."""
    from rbmlab.run.training import packed_epoch_pass  # noqa: PLC0415

    x = backend.asarray(mnist(examples))
    steps = -(-examples // batch)
    config = {"name": "pcd", "batch_size": batch}
    rows: list[Row] = []
    for runs in runs_list:
        _, packed, model, state, train = _runs(backend, config, runs, x, n_hidden)
        keys = [(seed, 1) for seed in range(runs)]

        def together(packed=packed, model=model, state=state, keys=keys, train=train):
            packed_epoch_pass(packed, backend, keys, [train] * len(keys), examples, batch, model, state)
            wait_for_device(backend.xp)

        bare = stacked_pcd_matmuls(backend, runs, x.shape[1], n_hidden, batch, steps)
        t = interleaved({"packed": together, "bare": bare}, rounds)
        label = f"PCD-1 epoch, {runs} packed run(s), {examples} MNIST images, 784 × {n_hidden}, batch {batch}"
        rows += [
            row(f"{label}: s per run", spread([s / runs for s in t["packed"]]), "s", None),
            row(f"{label}: bare products / packed", ratio(t["bare"], t["packed"]), "ratio", None),
        ]
    return rows


# crbm_bp's learners as issue 55 prices them: CD-10, MLE-MF, MLE-BP at the paper's batch 20
CRBM_PACKED = (("conditional_cd", {"k": 10}, "CD-10"), ("mle_mf", {}, "MLE-MF"), ("mle_bp", {}, "MLE-BP"))


def bench_crbm_packed_scaling(
    backend, rounds: int, runs_list=(1, 8, 32, 128), n_v: int = 784, n_h: int = 256, batch: int = 20, steps=20
) -> list[Row]:
    """crbm_bp's CD-10, MLE-MF and MLE-BP (``n_v`` × ``n_h``, batch ``batch``, epoch 1: T = 8)
    packed at each run count: seconds per update per run, and the fraction of the arithmetic bound
    it reaches: (the multiply-adds of one update's matmuls, counted on a solo step by
    rbmlab.bench.ops, at the rate the device multiplies the step's own (R, B, n_v) × (R, n_v, n_h)
    products) / the measured time. The bound leaves out the elementwise work (BP's messages are
    B·n_v·n_h elementwise per iteration: there the bound is memory, not multiply-adds)."""
    from rbmlab.backend.run_streams import RunStreams  # noqa: PLC0415
    from rbmlab.bench.crbm_bp import at_epoch, random_crbm  # noqa: PLC0415
    from rbmlab.learners import LEARNERS  # noqa: PLC0415
    from rbmlab.optimizers.base import RunRates  # noqa: PLC0415
    from rbmlab.run.packed import stack_models, stack_states  # noqa: PLC0415

    xp, rows = backend.xp, []
    for runs in runs_list:
        made = [random_crbm(n_v, n_h, batch, seed) for seed in range(runs)]
        model = stack_models([m for m, _, _ in made]).map(backend.asarray)
        data = Batch(
            backend.asarray(np.stack([x for _, x, _ in made])),
            targets=backend.asarray(np.stack([v for *_, v in made])),
        )
        a, w = data.inputs, model.W
        out = xp.empty((runs, batch, n_h), dtype=w.dtype)

        def gemm(a=a, w=w, out=out):
            for _ in range(steps):
                xp.matmul(a, w, out=out)
            wait_for_device(xp)

        for name, options, what in CRBM_PACKED:
            learner = LEARNERS.build(LEARNERS.parse({"name": name, "batch_size": batch, **options}))
            states = [at_epoch(learner.init_state(m, Batch(x, targets=v), None), 1) for m, x, v in made]
            state = backend.learner_state(stack_states(states))
            macs = solo_multiply_adds(learner, made[0], states[0])
            learner.lr = RunRates([0.01] * runs)

            def update(learner=learner, state=state, model=model, data=data, runs=runs):
                rngs = RunStreams([backend.rng(seed, 1, 1) for seed in range(runs)])
                m, s = model, state
                for _ in range(steps):
                    m, s = learner.step(m, s, data, rngs)
                wait_for_device(xp)

            t = interleaved({"update": update, "gemm": gemm}, rounds)
            label = f"crbm_bp {what} update, {runs} packed run(s), {n_v} × {n_h}, batch {batch}"
            per_run = [s / (steps * runs) for s in t["update"]]
            rate = [steps * runs * batch * n_v * n_h / g for g in t["gemm"]]  # MAC/s of the step's products
            rows += [
                row(f"{label}: s per run", spread(per_run), "s", None),
                row(
                    f"{label}: bound / measured ({macs / 1e6:.3g} M multiply-adds an update per run)",
                    spread([macs / r / p for r, p in zip(rate, per_run)]),
                    "ratio",
                    None,
                ),
            ]
    return rows


def solo_multiply_adds(learner, made, state) -> int:
    """The matmul multiply-adds of one update of ``learner`` on one run's (model, x, v) ``made``,
    counted (rbmlab.bench.ops) on the paths a device takes."""
    from rbmlab.bench.price import step_count  # noqa: PLC0415

    model, x, v = made
    return step_count(learner, model, state, Batch(x, targets=v)).macs
