"""The RBM cores against their bare work: a Gibbs sweep and an AIS temperature against the matmuls
of the same shapes, one PCD-1 epoch against scikit-learn's BernoulliRBM, and the fused (numba)
Bernoulli draw against its numpy fallback. Bench parts ``gibbs``, ``ais``, ``pcd``, ``sampler``."""

from __future__ import annotations

from rbmlab.backend import get_backend, random_bits
from rbmlab.backend.ops import bernoulli_logits_
from rbmlab.bench.core import Row, binary, epoch_seconds, mnist, random_rbm, row, timed, two_matmuls
from rbmlab.bench.method import blas_threads, interleaved, ratio, spread
from rbmlab.evaluators.ais import ais_log_partition, temperature_schedule
from rbmlab.inference.block_gibbs import gibbs_chain


def bench_gibbs(
    backend,
    rounds: int,
    threads: int | None,
    m=784,
    n=500,
    batch=200,
    sweeps=10,
    target="≥ 0.85 (1 thread), ≥ 0.7 (2)",
) -> list[Row]:
    rbm, rng = random_rbm(backend, m, n), backend.rng(1)
    v, h = binary(backend, batch, m, 0.2, 2), binary(backend, batch, n, 0.5, 3)
    t = timed(
        backend,
        rounds,
        threads,
        {
            "matmuls": two_matmuls(backend, rbm.W, v, h, sweeps),
            "sweeps": lambda: gibbs_chain(rbm, v, rng, sweeps),
        },
    )
    shape = f"{m}×{n}, batch {batch}, {backend.dtype}"
    return [
        row(f"Gibbs sweep ({shape}), ms", spread([1e3 * s / sweeps for s in t["sweeps"]]), "ms", threads),
        row("bare matmuls / Gibbs sweep", ratio(t["matmuls"], t["sweeps"]), "ratio", threads, target),
    ]


def bench_ais(
    backend, rounds: int, threads: int | None, m=784, n=500, chains=100, temps=100, target="≥ 0.75"
) -> list[Row]:
    rbm = random_rbm(backend, m, n)
    betas = temperature_schedule("linear", temps)
    base = backend.xp.zeros(m, dtype=backend.dtype) - 1.0
    v, h = binary(backend, chains, m, 0.2, 2), binary(backend, chains, n, 0.5, 3)
    t = timed(
        backend,
        rounds,
        threads,
        {
            "matmuls": two_matmuls(backend, rbm.W, v, h, temps + 1),
            "ais": lambda: ais_log_partition(
                rbm, backend.rng(2), base_bias=base, betas=betas, n_chains=chains
            ),
        },
    )
    per_temperature = [s / (temps + 1) for s in t["ais"]]
    return [
        row(
            f"AIS ({chains} chains, {m}×{n}) per temperature, ms",
            spread([1e3 * s for s in per_temperature]),
            "ms",
            threads,
            note=f"one 14,500-temperature run ≈ {14500 * spread(per_temperature)['median']:.0f} s",
        ),
        row("bare matmuls / AIS temperature", ratio(t["matmuls"], t["ais"]), "ratio", threads, target),
    ]


def pcd_matmuls(backend, m: int, n: int, batch: int, steps: int):
    """The products of ``steps`` PCD-1 steps as rbmlab's fused path forms them, bare: one hidden
    product for data and chains (2B rows), the chains' visible and hidden products, and one W
    product for both phases (2B inner). Six (B, m, n) matmul units a step: the floor of an epoch."""
    xp = backend.xp
    W = random_rbm(backend, m, n).W
    stacked, v, h = (
        binary(backend, 2 * batch, m, 0.2, 4),
        binary(backend, batch, m, 0.2, 5),
        binary(backend, batch, n, 0.5, 6),
    )
    p = binary(backend, 2 * batch, n, 0.5, 7)
    out_2h, out_v, out_h = (
        xp.empty((2 * batch, n), W.dtype),
        xp.empty((batch, m), W.dtype),
        xp.empty((batch, n), W.dtype),
    )
    out_w, Wt = xp.empty((m, n), W.dtype), xp.ascontiguousarray(W.T)

    def run():
        for _ in range(steps):
            xp.matmul(stacked, W, out=out_2h)
            xp.matmul(h, Wt, out=out_v)
            xp.matmul(v, W, out=out_h)
            xp.matmul(stacked.T, p, out=out_w)

    return run


def bench_pcd(
    dtype: str, batch: int, rounds: int, threads: int, examples: int, lr=0.05, n_hidden=500
) -> list[Row]:
    """One PCD-1 epoch, rbmlab against scikit-learn's BernoulliRBM, epochs alternating."""
    from sklearn.neural_network import BernoulliRBM  # noqa: PLC0415

    from rbmlab.learners.pcd import PCD, PCDConfig  # noqa: PLC0415

    backend = get_backend("numpy", dtype)
    x_np = mnist(examples).astype(dtype)
    x = backend.asarray(x_np)
    learner = PCD(PCDConfig(lr=lr, batch_size=batch, k=1))
    rbm = random_rbm(backend, x.shape[1], n_hidden)
    sk = BernoulliRBM(n_components=n_hidden, learning_rate=lr, batch_size=batch, n_iter=1, random_state=0)
    floor = pcd_matmuls(backend, x.shape[1], n_hidden, batch, -(-examples // batch))
    with blas_threads(threads):
        t = interleaved(
            {
                "rbmlab": lambda: epoch_seconds(learner, rbm, x, batch, 3, backend),
                "sklearn": lambda: sk.fit(x_np),
                "matmuls": floor,
            },
            rounds,
        )
    what = f"PCD-1 epoch ({examples} MNIST images, 500 hidden, batch {batch}, {dtype})"
    target = {("float32", 200): "≥ 1.6", ("float32", 10): "≥ 1.8", ("float64", 200): "≥ 1.0"}.get(
        (dtype, batch), ""
    )
    return [
        row(f"{what}, rbmlab s", spread(t["rbmlab"]), "s", threads),
        row(f"{what}, scikit-learn s", spread(t["sklearn"]), "s", threads),
        row(
            f"scikit-learn / rbmlab, batch {batch}, {dtype}",
            ratio(t["sklearn"], t["rbmlab"]),
            "ratio",
            threads,
            target,
        ),
        row(
            f"bare matmuls of the epoch (6 units a step) / rbmlab, batch {batch}, {dtype}",
            ratio(t["matmuls"], t["rbmlab"]),
            "ratio",
            threads,
        ),
        row(
            f"scikit-learn / bare matmuls: the most scikit-learn / rbmlab can be, batch {batch}, {dtype}",
            ratio(t["sklearn"], t["matmuls"]),
            "ratio",
            threads,
        ),
    ]


def bench_sampler(backend, rounds: int, m=784, n=500, batch=200, chains=100, temps=100) -> list[Row]:
    """The fused numba draw against the numpy fallback (same bits): one draw, a Gibbs sweep
    (1 BLAS thread) and an AIS temperature (2 threads), interleaved."""
    if not random_bits.numba_available():
        return []
    xp, rbm, rng = backend.xp, random_rbm(backend, m, n), backend.rng(1)
    logits = backend.rng(4).standard_normal((batch, m + n), dtype=backend.dtype)
    work = xp.empty_like(logits)

    def draws():
        for _ in range(100):
            work[...] = logits
            bernoulli_logits_(work, rng)

    def fallback(fn):
        def run():
            with random_bits.numpy_fallback():
                fn()

        return run

    v = binary(backend, batch, m, 0.2, 2)
    sweeps = lambda: gibbs_chain(rbm, v, rng, 10)  # noqa: E731
    betas, base = temperature_schedule("linear", temps), xp.zeros(m, dtype=backend.dtype) - 1.0
    ais = lambda: ais_log_partition(rbm, backend.rng(2), base_bias=base, betas=betas, n_chains=chains)  # noqa: E731
    rows = []
    cases = (
        (f"Bernoulli draw from logits ({batch}×{m + n}, {backend.dtype})", draws, 1, "µs", 1e6 / 100),
        (f"Gibbs sweep ({m}×{n}, batch {batch})", sweeps, 1, "ms", 1e3 / 10),
        (f"AIS ({chains} chains, {m}×{n}) per temperature", ais, 2, "ms", 1e3 / (temps + 1)),
    )
    for what, fn, threads, unit, scale in cases:
        t = timed(backend, rounds, threads, {"fused": fn, "fallback": fallback(fn)})
        rows += [
            *(
                row(f"{what}, {unit}: {name}", spread([scale * s for s in t[key]]), unit, threads)
                for key, name in (("fused", "numba fused"), ("fallback", "numpy fallback"))
            ),
            row(
                f"{what}: numpy fallback / numba fused (the gain)",
                ratio(t["fallback"], t["fused"]),
                "ratio",
                threads,
            ),
        ]
    return rows


def gibbs_part(rounds: int, examples: int) -> list[Row]:
    """Bench part ``gibbs``: :func:`bench_gibbs` at 1 and 2 BLAS threads."""
    backend = get_backend("numpy", "float32")
    return [r for threads in (1, 2) for r in bench_gibbs(backend, rounds, threads)]


def ais_part(rounds: int, examples: int) -> list[Row]:
    """Bench part ``ais``: :func:`bench_ais` at 1 and 2 BLAS threads."""
    backend = get_backend("numpy", "float32")
    return [r for threads in (1, 2) for r in bench_ais(backend, rounds, threads)]


def pcd_part(rounds: int, examples: int) -> list[Row]:
    """Bench part ``pcd``: :func:`bench_pcd` at batch 200 and 10 in float32 and 200 in float64,
    2 BLAS threads (batch 10 on a quarter of the ``examples``)."""
    rows: list[Row] = []
    for dtype, batch in (("float32", 200), ("float32", 10), ("float64", 200)):
        rows += bench_pcd(dtype, batch, rounds, 2, examples if batch > 10 else examples // 4)
    return rows


def sampler_part(rounds: int, examples: int) -> list[Row]:
    """Bench part ``sampler``: :func:`bench_sampler` (no rows without numba)."""
    return bench_sampler(get_backend("numpy", "float32"), rounds)
