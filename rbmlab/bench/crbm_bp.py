"""crbm_bp's speed claims: loopy BP (sum-, max-, mixed-product) on a random RBM beside the bare
transcendentals of sum-product, its batched throughput, and BP to convergence at 10,000 × 2,000.
Bench part ``crbm_bp``; the experiments' ``bp_speed``."""

from __future__ import annotations

import statistics

import numpy as np

from rbmlab.backend import get_backend
from rbmlab.bench.core import Row, row, timed
from rbmlab.bench.method import ratio, spread


def transcendental_floor(shape, dtype, iterations: int, xp=np):
    """The unavoidable elementwise work of ``iterations`` sum-product BP iterations on messages of
    ``shape``: per direction one exp (the cavity's σ) and one log1p per message, into a
    preallocated array."""
    a = xp.full(shape, 0.3, dtype=dtype)
    out = xp.empty_like(a)

    def run():
        for _ in range(2 * iterations):
            xp.exp(a, out=out)
            xp.log1p(out, out=out)

    return run


def bench_crbm_bp(
    backend,
    rounds: int,
    threads: int | None,
    n_v=1000,
    n_h=500,
    iterations=10,
    target="≤ 100 ms on 2 cores (aim 50)",
    floor_target: str = "",
    batch: int = 100,
) -> list[Row]:
    """crbm_bp's speed claim: loopy BP on one random 1000 × 500 RBM for 10 iterations (W ~
    N(0, 0.1²), b ~ N(0, 1): our choice, the paper gives no distribution, Sec. 1 footnote 1), sum-,
    max- and mixed-product, beside the bare
    transcendentals of sum-product (:func:`transcendental_floor`, the elementwise bound; its row
    carries ``floor_target``); and BP's batched throughput on the CRBM's x-conditioned RBMs,
    784 × 256, ``batch`` instances."""
    from rbmlab.inference.matrix_bp import loopy_bp  # noqa: PLC0415

    rng = backend.rng(0)
    W = (0.1 * rng.standard_normal((n_v, n_h))).astype(backend.dtype)
    b_v = rng.standard_normal((1, n_v)).astype(backend.dtype)
    b_h = rng.standard_normal((1, n_h)).astype(backend.dtype)
    fns = {
        mode: (lambda mode=mode: loopy_bp(W, b_v, b_h, mode=mode, max_iter=iterations, tol=None))
        for mode in ("sum", "max", "mixed")
    }
    fns["floor"] = transcendental_floor((1, n_v, n_h), backend.dtype, iterations, backend.xp)
    t = timed(backend, rounds, threads, fns)
    shape = f"random {n_v}×{n_h} RBM, {iterations} iterations, {backend.dtype}"
    paper_case = (n_v, n_h, iterations) == (1000, 500, 10)  # the case timed in Sec. 5.2
    rows = [
        row(
            f"BP {mode}-product ({shape}), ms",
            spread([1e3 * s for s in t[mode]]),
            "ms",
            threads,
            target if mode == "sum" else "",
            note="paper: 500 ms in Matlab, libDAI 297 s" if mode == "sum" and paper_case else "",
        )
        for mode in ("sum", "max", "mixed")
    ]
    rows.append(
        row(
            f"bare exp + log1p / BP sum-product ({shape})",
            ratio(t["floor"], t["sum"]),
            "ratio",
            threads,
            floor_target,
        )
    )
    W = (0.05 * rng.standard_normal((784, 256))).astype(backend.dtype)
    b_v = rng.standard_normal((batch, 784)).astype(backend.dtype)
    b_h = rng.standard_normal((batch, W.shape[1])).astype(backend.dtype)
    batched = timed(
        backend, max(3, rounds // 2), threads, {"bp": lambda: loopy_bp(W, b_v, b_h, max_iter=5, tol=None)}
    )["bp"]
    rows.append(
        row(
            f"BP sum-product throughput (784×{W.shape[1]}, batch {batch}), instance-iterations per s",
            spread([5 * batch / s for s in batched]),
            "1/s",
            threads,
        )
    )
    return rows


def bp_to_convergence(
    backend,
    rounds: int,
    threads: int,
    n_v: int,
    n_h: int,
    weight_std: float,
    max_iter: int = 500,
    tol: float = 1e-3,
    scan: bool = False,
    draws: int = 1,
) -> list[Row]:
    """Sum-product BP on ``draws`` random n_v × n_h RBMs (W ~ N(0, weight_std²), b ~ N(0, 1);
    draw i from seed i) until no message probability moves by more than ``tol`` (crbm_bp's
    scalability claim, Sec. 1 footnote 1: at 10,000 × 2,000 their Matlab "converges within a few
    seconds"; libDAI's 297.4 s, Sec. 5.2, is the 1000 × 500 case at 10 iterations,
    :func:`bench_crbm_bp`): the spread of the seconds over every draw and round, with each draw's
    iterations and how many converged. ``scan``: a row of the weight-scale scan, named apart (the
    paper's time belongs to the compared row only)."""
    from rbmlab.inference.matrix_bp import loopy_bp  # noqa: PLC0415

    seconds, iterations, converged = [], [], 0
    for seed in range(1, draws + 1):
        rng = backend.rng(seed)
        W = (weight_std * rng.standard_normal((n_v, n_h))).astype(backend.dtype)
        b_v = rng.standard_normal((1, n_v)).astype(backend.dtype)
        b_h = rng.standard_normal((1, n_h)).astype(backend.dtype)
        runs = []
        seconds += timed(
            backend,
            rounds,
            threads,
            {"bp": lambda: runs.append(loopy_bp(W, b_v, b_h, max_iter=max_iter, tol=tol))},  # noqa: B023 - timed now
        )["bp"]
        iterations.append(runs[-1].iterations)
        converged += bool(runs[-1].converged.all())
    of = f", {draws} random draws" if draws > 1 else ""
    name = (
        (
            f"BP scan, W ~ N(0, {weight_std:g}²): sum-product to tol {tol:g} or {max_iter} iterations, "
            f"random {n_v}×{n_h} RBM{of}, {backend.dtype}, s"
        )
        if scan
        else (
            f"BP sum-product to convergence (tol {tol:g}), random {n_v}×{n_h} RBM{of}, "
            f"W ~ N(0, {weight_std:g}²), {backend.dtype}, s"
        )
    )
    if draws > 1:
        note = f"iterations {' / '.join(map(str, iterations))}, converged {converged} of {draws}"
    else:
        note = f"{iterations[0]} iterations, converged: {bool(converged)}"
    return [
        row(
            name,
            spread(seconds),
            "s",
            threads,
            note=note if scan else f"{note}; paper: a few seconds in Matlab",
        )
    ]


def bp_speed(
    rounds: int,
    small=(1000, 500, 10),
    large=(10_000, 2_000, 0.01),
    scan=(),
    scan_max_iter: int = 100,
    draws: int = 1,
) -> list[Row]:
    """crbm_bp's BP speed claim, both cases: ``small`` = (n_v, n_h, iterations) timed in the three
    modes (bench_crbm_bp), ``large`` = (n_v, n_h, weight std) to convergence; 1 and 2 threads.
    ``scan``: further weight stds at the large size, once each with at most ``scan_max_iter``
    iterations (the paper gives no distribution; stronger weights make convergence harder).
    ``draws``: random RBMs per weight std at the large size (seeds 1 … draws)."""
    backend = get_backend("numpy", "float32")
    n_v, n_h, iterations = small
    rows = []
    for threads in (1, 2):
        rows += bench_crbm_bp(backend, rounds, threads, n_v=n_v, n_h=n_h, iterations=iterations)[:4]
    rows += bp_to_convergence(backend, max(1, rounds // 3), 2, *large, draws=draws)
    for weight_std in scan:
        rows += bp_to_convergence(
            backend, 1, 2, *large[:2], weight_std, max_iter=scan_max_iter, scan=True, draws=draws
        )
    return rows


def bare_mle_bp_update(model, x, v, iterations: int, lr: float):
    """One MLE-BP update (crbm_bp Eq. 5 with sum-product BP, Alg. 1) in the passes rbmlab's makes,
    every message-sized array allocated once, outside the returned function: the conditional
    biases, T iterations of both directions' messages with the per-instance change test, the
    pairwise beliefs (Eq. 18), the gradient's products and an SGD step. The bound MLE-BP's update
    is held to (issue 55: at least 0.8 of it)."""
    W, W_xv, W_xh, b_v, b_h = (getattr(model, p).copy() for p in ("W", "W_xv", "W_xh", "b_v", "b_h"))
    (B, n_v), n_h = v.shape, W.shape[1]
    expm1_w = np.maximum(np.expm1(W), np.nextafter(W.dtype.type(-1), W.dtype.type(0)))
    L, K, L2, K2, spare = (np.empty((B, n_v, n_h), W.dtype) for _ in range(5))
    b1, b2, eta_v, eta_h = (np.empty((B, n), W.dtype) for n in (n_v, n_h, n_v, n_h))
    change = np.empty(B, W.dtype)

    def message(eta, received, out):  # g_sum(w, eta - received) in place (Eqs. 13, 14)
        np.subtract(eta, received, out=out)
        np.negative(out, out=out)
        np.exp(out, out=out)
        out += 1.0
        np.divide(expm1_w, out, out=out)
        return np.log1p(out, out=out)

    def moved(new, old):  # the largest change per instance: the convergence test's passes
        np.subtract(new, old, out=spare)
        np.abs(spare, out=spare)
        return spare.reshape(B, -1).max(axis=1, out=change)

    def run():
        nonlocal L, K, L2, K2
        np.matmul(x, W_xv, out=b1)
        np.add(b1, b_v, out=b1)
        np.matmul(x, W_xh, out=b2)
        np.add(b2, b_h, out=b2)
        L.fill(0.0)
        K.fill(0.0)
        np.copyto(eta_h, b2)
        for _ in range(iterations):
            message(eta_h[:, None, :], K, L2)
            np.sum(L2, axis=2, out=eta_v)
            np.add(eta_v, b1, out=eta_v)
            message(eta_v[:, :, None], L2, K2)
            np.sum(K2, axis=1, out=eta_h)
            np.add(eta_h, b2, out=eta_h)
            moved(L2, L)  # (the learner tests K only once an instance's L has converged: at tol 0, never)
            L, L2, K, K2 = L2, L, K2, K
        cv = np.subtract(eta_v[:, :, None], L, out=L2)  # the cavities (Eq. 18)
        ch = np.subtract(eta_h[:, None, :], K, out=K2)
        cv += W
        ch += W
        gamma = np.add(cv, ch, out=spare)
        gamma -= W
        for a in (cv, ch, gamma):
            np.exp(np.negative(a, out=a), out=a)
        gamma += cv
        gamma += ch
        gamma += 1.0
        np.reciprocal(gamma, out=gamma)
        tau_v, tau_h = 1.0 / (1.0 + np.exp(-eta_v)), 1.0 / (1.0 + np.exp(-eta_h))
        data_h = 1.0 / (1.0 + np.exp(-(v @ W + b2)))
        d_v, d_h = v - tau_v, data_h - tau_h
        g_w = v.T @ data_h / B
        g_w -= gamma.mean(axis=0)
        for theta, g in (
            (W, g_w),
            (W_xv, x.T @ d_v / B),
            (W_xh, x.T @ d_h / B),
            (b_v, d_v.mean(0)),
            (b_h, d_h.mean(0)),
        ):
            np.add(theta, lr * g, out=theta)  # the SGD step
        return W, W_xv, W_xh, b_v, b_h

    return run


def bench_mle_bp_update(
    rounds: int, threads: int | None, batch: int, n_v: int = 784, n_h: int = 256, epoch: int = 1
) -> list[Row]:
    """MLE-BP's update (the learner's step; tol 0, so that every instance runs T = 7 + epoch
    iterations, as the bare does) beside :func:`bare_mle_bp_update`, at crbm_bp's sizes."""
    from rbmlab.data.batch import Batch  # noqa: PLC0415
    from rbmlab.learners import LEARNERS  # noqa: PLC0415

    model, x, v = random_crbm(n_v, n_h, batch)
    learner = LEARNERS.build(LEARNERS.parse({"name": "mle_bp", "batch_size": batch, "lr": 0.01, "tol": 0.0}))
    data = Batch(x, targets=v)
    state = at_epoch(learner.init_state(model, data, None), epoch)
    T = learner.iterations(state)
    fns = {
        "learner": lambda: learner.step(model, state, data, None),
        "bare": bare_mle_bp_update(model, x, v, T, 0.01),
    }
    t = timed(get_backend("numpy", "float32"), rounds, threads, fns)
    return [
        row(
            f"bare / MLE-BP update ({n_v}×{n_h}, batch {batch}, T = {T}, float32)",
            ratio(t["bare"], t["learner"]),
            "ratio",
            threads,
            "≥ 0.8",
            note=f"update {statistics.median(t['learner']) * 1e3:.0f} ms",
        )
    ]


def at_epoch(state: dict, epoch: int) -> dict:
    """A crbm_bp learner's state at the first step of epoch ``epoch`` (its host step counter)."""
    return {**state, "steps": state["batches_per_epoch"] * (epoch - 1)}


def random_crbm(n_v: int, n_h: int, batch: int, seed: int = 0):
    """A CRBM at crbm_bp's sizes (x and v both n_v wide; weights N(0, 0.05²)) and a batch of
    random binary (x, v)."""
    from rbmlab.models.crbm import CRBM  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    weights = lambda *shape: (0.05 * rng.standard_normal(shape)).astype(np.float32)  # noqa: E731
    model = CRBM(
        W=weights(n_v, n_h),
        W_xv=weights(n_v, n_v),
        W_xh=weights(n_v, n_h),
        b_v=weights(n_v),
        b_h=weights(n_h),
    )
    x, v = ((rng.random((batch, n_v)) < 0.5).astype(np.float32) for _ in range(2))
    return model, x, v


# crbm_bp's learners as the paper trains them (Sec. 6: CD-1, CD-10, CD-PercLoss, MLE-MF, MLE-BP,
# the SSVMs; the LR baseline)
UPDATE_LEARNERS = (
    ("conditional_cd", {"k": 1}),
    ("conditional_cd", {"k": 10}),
    ("cd_percloss", {}),
    ("mle_mf", {}),
    ("mle_bp", {}),
    ("mssvm", {}),
    ("lssvm", {}),
    ("logistic", {}),
)


def operations_per_update(n_v: int = 784, n_h: int = 256, batch: int = 20, epoch: int = 1) -> list[Row]:
    """The array operations (each ≈ one kernel launch on a GPU: rbmlab.bench.ops) of one update of
    each crbm_bp learner at the paper's sizes, on the paths a device runs, in epoch ``epoch``
    (inference T = 7 + epoch; the per-iteration count is the growth from one epoch to the next)."""
    from rbmlab.bench.ops import step_work  # noqa: PLC0415
    from rbmlab.data.batch import Batch  # noqa: PLC0415
    from rbmlab.learners import LEARNERS  # noqa: PLC0415

    model, x, v = random_crbm(n_v, n_h, batch)
    data = Batch(x, targets=v)
    rng = np.random.default_rng(1)
    rows = []
    for name, options in UPDATE_LEARNERS:
        learner = LEARNERS.build(LEARNERS.parse({"name": name, "batch_size": batch, **options}))
        counts = []
        for e in (epoch, epoch + 1):
            state = at_epoch(learner.init_state(model, data, rng), e)
            counts.append(len(step_work(learner, model, state, data)))
        label = name + "".join(f" {k}={val}" for k, val in options.items())
        per_iteration = counts[1] - counts[0]
        note = f"+{per_iteration} per inference iteration (T = {7 + epoch} here)" if per_iteration else ""
        rows.append(
            row(
                f"array operations per update, {label} ({n_v}×{n_h}, batch {batch})",
                spread([counts[0]]),
                "ops",
                note=note,
            )
        )
    return rows


def crbm_bp_part(rounds: int, examples: int) -> list[Row]:
    """Bench part ``crbm_bp``: :func:`bench_crbm_bp` at 1 and 2 BLAS threads, MLE-BP's update
    beside its bare at the paper's batch of 20 and at 100 (1 thread), and the array operations
    per update of each learner (:func:`operations_per_update`)."""
    backend = get_backend("numpy", "float32")
    return (
        [r for threads in (1, 2) for r in bench_crbm_bp(backend, rounds, threads)]
        + [r for batch in (20, 100) for r in bench_mle_bp_update(rounds, 1, batch)]
        + operations_per_update()
    )
