"""tap's Alg. 1 against the four bare matmuls of an iteration, and tap Fig. 10 (right): TAP and
adaTAP (VAMP) time per iteration against the batch size. Bench part ``tap``; the experiments'
``tap_speed``."""

from __future__ import annotations

from rbmlab.backend import get_backend
from rbmlab.bench.core import Row, bare_matmuls, binary, random_rbm, row, timed
from rbmlab.bench.method import ratio, spread


def tap_matmuls(backend, W, a_v, a_h, repeat: int):
    """The bare matmuls of ``repeat`` TAP iterations: a^v W, c^v W², a^h Wᵀ, c^h W²ᵀ."""
    W2 = W * W
    return bare_matmuls(backend, [(a_v, W), (a_v, W2), (a_h, W.T), (a_h, W2.T)], repeat)


def bench_tap(
    backend, rounds: int, threads: int | None, m=784, n=500, chains=100, iterations=10, target="≥ 0.7"
) -> list[Row]:
    """tap's Alg. 1 (rbmlab.inference.tap.solve, damped, convergence checked every iteration, never
    met: tol = 0) from ``chains`` binary initialisations of a random m × n RBM, against the four
    bare matmuls an iteration is made of."""
    from rbmlab.inference.tap import solve  # noqa: PLC0415

    rbm = random_rbm(backend, m, n)
    visible, hidden = rbm.tap_layers()
    x, h = binary(backend, chains, m, 0.2, 2), binary(backend, chains, n, 0.5, 3)
    t = timed(
        backend,
        rounds,
        threads,
        {
            "tap": lambda: solve(rbm.W, visible, hidden, x, tol=0.0, max_iter=iterations),
            "matmuls": tap_matmuls(backend, rbm.W, x, h, iterations),
        },
    )
    per = [s / iterations for s in t["tap"]]
    shape = f"{m}×{n}, {chains} initialisations, {backend.dtype}"
    return [
        row(f"TAP iterations per second ({shape})", spread([1.0 / s for s in per]), "1/s", threads),
        row(f"TAP iteration ({shape}), ms", spread([1e3 * s for s in per]), "ms", threads),
        row(
            f"bare matmuls / TAP iteration ({shape})", ratio(t["matmuls"], t["tap"]), "ratio", threads, target
        ),
    ]


def tap_speed(
    rounds: int,
    batches=(1, 10, 100),
    m: int = 784,
    n: int = 500,
    tap_iterations: int = 20,
    adatap_iterations: int = 2,
    backend_name: str = "numpy",
) -> list[Row]:
    """tap Fig. 10 (right): milliseconds per iteration of TAP (Alg. 1) and of adaTAP by VAMP (Alg. 3)
    against the batch size, the same random m × n binary RBM and binary initialisations for both,
    interleaved in one process (numpy: at one BLAS thread), float32; VAMP / TAP per round."""
    from rbmlab.inference import adatap, tap  # noqa: PLC0415

    threads = 1 if backend_name == "numpy" else None
    backend = get_backend(backend_name, "float32")
    rbm = random_rbm(backend, m, n)
    visible, hidden = rbm.tap_layers()
    rows = []
    for batch in batches:
        x = binary(backend, batch, m, 0.2, 2)
        t = timed(
            backend,
            rounds,
            threads,
            {
                "tap": lambda: tap.solve(rbm.W, visible, hidden, x, tol=0.0, max_iter=tap_iterations),  # noqa: B023 - timed now
                "vamp": lambda: adatap.solve(rbm.W, visible, hidden, x, tol=0.0, max_iter=adatap_iterations),  # noqa: B023
            },
        )
        tap_ms = [1e3 * v / tap_iterations for v in t["tap"]]
        vamp_ms = [1e3 * v / adatap_iterations for v in t["vamp"]]
        what = f"{m}×{n}, batch {batch}" + ("" if threads else f", {backend.name}")
        rows += [
            row(f"TAP iteration ({what}), ms", spread(tap_ms), "ms", threads),
            row(f"adaTAP (VAMP) iteration ({what}), ms", spread(vamp_ms), "ms", threads),
            row(
                f"VAMP / TAP per iteration ({what})",
                ratio(vamp_ms, tap_ms),
                "ratio",
                threads,
                "paper: 3 orders of magnitude",
            ),
        ]
    return rows


def tap_part(rounds: int, examples: int) -> list[Row]:
    """Bench part ``tap``: :func:`bench_tap` at 1 and 2 BLAS threads."""
    backend = get_backend("numpy", "float32")
    return [r for threads in (1, 2) for r in bench_tap(backend, rounds, threads)]
