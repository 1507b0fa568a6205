"""Frank-Wolfe: the linear oracle's L-BFGS-B runs against the bare gemv's of their evaluations,
and one FW iteration split into sampling, oracle and visible-bias loop. Bench part
``frank_wolfe``."""

from __future__ import annotations

import numpy as np

from rbmlab.backend import get_backend, namespace
from rbmlab.bench.core import Row, mnist, random_rbm, row, timed
from rbmlab.bench.method import ratio, spread
from rbmlab.data.batch import Batch


def fw_model_states(backend, x, n: int, seed: int):
    """``n`` states of q_0, the FW model with no units whose visible biases give the data means:
    the model states of a first oracle call."""
    rng = backend.rng(seed)
    return (rng.random((n, x.shape[1]), dtype=backend.dtype) < x.mean(axis=0)).astype(backend.dtype)


def oracle_gemvs(x, states, evaluations: list[int]):
    """The products of ``evaluations[-1]`` f/∇f evaluations of the FW oracle, bare: ``x u`` and
    ``σ x`` for the data and for the model states. An evaluation is matrix-VECTOR work (BLAS-2,
    memory bound: each product reads the whole array for two flops an element), so these four
    gemv's, not matmul throughput, are its bound."""
    xp = namespace(x)
    u = xp.full(x.shape[1], 0.01, dtype=x.dtype)
    a_x, a_s = xp.empty(x.shape[0], dtype=x.dtype), xp.empty(states.shape[0], dtype=x.dtype)
    grad = xp.empty(x.shape[1], dtype=x.dtype)

    def run():
        for _ in range(evaluations[-1]):
            xp.matmul(x, u, out=a_x)
            xp.matmul(a_x, x, out=grad)
            xp.matmul(states, u, out=a_s)
            xp.matmul(a_s, states, out=grad)

    return run


def counts(values: list[int]) -> str:
    return f"{min(values)}" if min(values) == max(values) else f"{min(values)} – {max(values)}"


def bench_fw_oracle(backend, x, what: str, rounds: int, threads: int, n_states=1000) -> list[Row]:
    """One L-BFGS-B run of the FW linear oracle (restarts 1 from a fixed start, the learner's
    default λ, maxiter, gtol) over data ``x`` and ``n_states`` states of q_0, interleaved with the
    bare gemv's of as many evaluations (:func:`oracle_gemvs`). With more than one thread and a
    separate scipy BLAS, also the same run with scipy's BLAS left at ``threads`` threads (two
    OpenBLAS pools of ``threads`` threads each share the cores; ``solve`` limits scipy's to 1)."""
    from rbmlab.learners.frank_wolfe import FrankWolfeConfig  # noqa: PLC0415
    from rbmlab.learners.frank_wolfe_oracle import LinearOracle, scipy_blas, solve  # noqa: PLC0415

    cfg = FrankWolfeConfig()
    states = fw_model_states(backend, x, n_states, 5)
    evaluations: dict[str, list[int]] = {}
    iterations: dict[str, list[int]] = {}

    def run_solve(key: str, scipy_threads: int | None):
        evaluations[key], iterations[key] = [], []

        def run():
            oracle = LinearOracle(x, states, lam=cfg.lam, penalize_bias=cfg.penalize_bias)
            result = solve(
                oracle,
                np.random.default_rng(0),
                restarts=1,
                init_std=cfg.init_std,
                maxiter=cfg.maxiter,
                gtol=cfg.gtol,
                scipy_blas_threads=scipy_threads,
            )
            evaluations[key].append(result.evaluations)
            iterations[key].append(result.iterations)

        return run

    fns = {"solve": run_solve("solve", 1)}
    separate = scipy_blas() if threads > 1 else None
    if separate is not None:
        fns["scipy N"] = run_solve("scipy N", None)
    fns["gemvs"] = oracle_gemvs(x, states, evaluations["solve"])
    t = timed(backend, rounds, threads, fns)
    n = {key: e[1:] for key, e in evaluations.items()}  # the timed rounds' (the first: warm-up)
    per_evaluation = {key: [s / e for s, e in zip(t[key], n[key])] for key in n}
    gemvs = [s / e for s, e in zip(t["gemvs"], n["solve"])]
    shape = f"{what}, S = {n_states}"
    rows = [
        row(
            f"FW oracle, one L-BFGS-B run ({shape}), s",
            spread(t["solve"]),
            "s",
            threads,
            note=f"{counts(n['solve'])} f/∇f evaluations, {counts(iterations['solve'][1:])} iterations",
        ),
        row(
            f"FW oracle f/∇f evaluation ({shape}), ms",
            spread([1e3 * s for s in per_evaluation["solve"]]),
            "ms",
            threads,
        ),
        row(
            f"bare gemv's / FW oracle evaluation ({shape})",
            ratio(gemvs, per_evaluation["solve"]),
            "ratio",
            threads,
        ),
    ]
    if separate is not None:
        rows += [
            row(
                f"FW oracle f/∇f evaluation ({shape}), scipy's own BLAS left at {threads} threads, ms",
                spread([1e3 * s for s in per_evaluation["scipy N"]]),
                "ms",
                threads,
            ),
            row(
                f"FW oracle evaluation, scipy's own BLAS at {threads} / at 1 thread ({shape})",
                ratio(per_evaluation["scipy N"], per_evaluation["solve"]),
                "ratio",
                threads,
            ),
        ]
    return rows


def bench_fw_iteration(
    backend, x, what: str, rounds: int, threads: int, n_hidden=100, config=None
) -> list[Row]:
    """One Frank-Wolfe iteration at a random model of ``n_hidden`` units, as FrankWolfe.step
    runs it, phase by phase in turn: the S persistent chains' sweeps, the oracle (best of
    ``restarts`` L-BFGS-B runs, then the unit appended) and the visible-bias loop (``bias_steps``
    updates, each after ``bias_sweeps`` sweeps of M chains). Shares are per round, of the sum."""
    from rbmlab.learners.frank_wolfe import FrankWolfe, FrankWolfeConfig, append_unit, oracle_pool  # noqa: PLC0415
    from rbmlab.learners.frank_wolfe_oracle import LinearOracle, solve  # noqa: PLC0415

    learner = FrankWolfe(config or FrankWolfeConfig())
    cfg = learner.config
    model = random_rbm(backend, x.shape[1], n_hidden)
    now = {"state": learner.init_state(model, Batch(x), backend.rng(0))}
    rng, data_mean = backend.rng(1), x.mean(axis=0)
    lam = cfg.lam / (n_hidden + 1) if cfg.lambda_scaling == "over_t" else cfg.lam
    evaluations: list[int] = []

    def sampling():
        now["chains"] = learner.sample(
            model, now["state"][oracle_pool(cfg.chain_pool)], rng, cfg.sample_steps
        )

    def oracle():
        best = solve(
            LinearOracle(x, now["chains"], lam=lam, penalize_bias=cfg.penalize_bias),
            getattr(rng, "host_keys", rng),
            restarts=cfg.restarts,
            init_std=cfg.init_std,
            maxiter=cfg.maxiter,
            gtol=cfg.gtol,
        )
        now["model"] = append_unit(model, best.w)
        evaluations.append(best.evaluations)

    bias_steps: list[int] = []

    def bias():
        _, now["state"] = learner.fit_visible_bias(
            now["model"], {**now["state"], oracle_pool(cfg.chain_pool): now["chains"]}, data_mean, rng
        )
        bias_steps.append(int(now["state"]["bias_steps"]))

    t = timed(backend, rounds, threads, {"sampling": sampling, "oracle": oracle, "bias": bias})
    total = [sum(parts) for parts in zip(*t.values())]
    bias = f"{cfg.bias_steps} bias steps" if cfg.bias_fit == "fixed" else "the bias fitted to convergence"
    shape = (
        f"{what}, {n_hidden} hidden; S = {cfg.n_samples} × {cfg.sample_steps} sweeps, {cfg.restarts} "
        f"restarts, {bias} × {cfg.bias_chains} chains"
    )
    return [
        row(
            f"one Frank-Wolfe iteration ({shape}), s",
            spread(total),
            "s",
            threads,
            note=f"oracle: {counts(evaluations[1:])} f/∇f evaluations; bias steps: {counts(bias_steps[1:])}",
        ),
        *(
            row(
                f"FW iteration share: {label}",
                spread([a / b for a, b in zip(t[key], total)]),
                "ratio",
                threads,
            )
            for key, label in (
                ("sampling", f"sampling ({cfg.n_samples} chains' sweeps)"),
                ("oracle", f"oracle (best of {cfg.restarts} L-BFGS-B runs)"),
                ("bias", "visible-bias loop"),
            )
        ),
    ]


def bench_frank_wolfe(backend, rounds: int, examples: int) -> list[Row]:
    """The FW oracle on the Caltech-101 Silhouettes training set (4,100 × 784) and on ``examples``
    MNIST images, 1 and 2 BLAS threads; one FW iteration on Caltech at 100 hidden units, 1 thread."""
    from rbmlab.data import load_dataset  # noqa: PLC0415

    caltech = backend.asarray(load_dataset("caltech101").train)
    images = backend.asarray(mnist(examples))
    rows = []
    for x, what in (
        (caltech, f"Caltech-101 Silhouettes train, {caltech.shape[0]} × {caltech.shape[1]}"),
        (images, f"{images.shape[0]} MNIST images"),
    ):
        rows += [r for threads in (1, 2) for r in bench_fw_oracle(backend, x, what, rounds, threads)]
    return rows + bench_fw_iteration(backend, caltech, "Caltech-101 Silhouettes train", rounds, 1)


def frank_wolfe_part(rounds: int, examples: int) -> list[Row]:
    """Bench part ``frank_wolfe``: :func:`bench_frank_wolfe`."""
    return bench_frank_wolfe(get_backend("numpy", "float32"), rounds, examples)
