"""pmp's sampler against the bare work (PMP sweeps against block-Gibbs sweeps, their matmuls and the
messages' memory traffic), and pmp Sec 5.2's MPLP / PMP. Bench part ``pmp``; the experiments'
``pmap_speed`` (the sampler legends are :mod:`rbmlab.bench.samplers`)."""

from __future__ import annotations

import numpy as np

from rbmlab.backend import get_backend
from rbmlab.bench.core import Row, binary, random_rbm, row, timed, two_matmuls
from rbmlab.bench.method import ratio, spread
from rbmlab.inference.block_gibbs import gibbs_chain


def pmap_speed(
    rounds: int, sides=(5, 10), n_samples: int = 100, sweeps: int = 200, tol: float = 1e-6
) -> list[Row]:
    """pmp Sec 5.2's "MPLP (500× slower)": the perturb-and-MAP problems of pmp/figure-1a (the cyclic
    lattice, J = −0.2 per edge in ±1 spins, ``n_samples`` Logistic perturbations, the same for
    both) solved by PMP (``sweeps`` sweeps, damping ½, float32) and by MPLP (to ``tol``, float64,
    numba), interleaved, one BLAS thread; seconds of each and MPLP / PMP per round."""
    from rbmlab.evaluators.pmap_log_z import perturbed_objectives  # noqa: PLC0415
    from rbmlab.inference.max_product import logistic_noise  # noqa: PLC0415
    from rbmlab.inference.solvers import SOLVERS  # noqa: PLC0415
    from rbmlab.models.ising import lattice_2d  # noqa: PLC0415

    rows = []
    for side in sides:
        model = lattice_2d(side, coupling=-0.2, spins="pm1")
        noise = logistic_noise(np.random.default_rng(0), (n_samples, model.n), np.float64)
        pmp = SOLVERS.build(SOLVERS.parse({"name": "max_product", "max_iter": sweeps}))
        mplp = SOLVERS.build(SOLVERS.parse({"name": "mplp", "tol": tol}))
        t = timed(
            get_backend("numpy", "float32"),
            rounds,
            1,
            {
                "pmp": lambda: perturbed_objectives(model, pmp, noise),  # noqa: B023 - timed now
                "mplp": lambda: perturbed_objectives(model, mplp, noise, np.random.default_rng(1)),  # noqa: B023
            },
        )
        what = f"{side}×{side} cyclic lattice, {n_samples} perturbed MAP problems"
        rows += [
            row(f"PMP, {sweeps} sweeps ({what}), s", spread(t["pmp"]), "s", 1),
            row(f"MPLP to tol {tol:g} ({what}), s", spread(t["mplp"]), "s", 1),
            row(
                f"MPLP / PMP ({what})",
                ratio(t["mplp"], t["pmp"]),
                "ratio",
                1,
                "paper: 500× at 15×15 (GPU JAX PMP vs numba MPLP)",
            ),
        ]
    return rows


def message_floor(backend, shape, repeat: int):
    """The memory traffic no damped max-product sweep avoids: its messages (``shape``) read and
    written once, ``repeat`` times (one elementwise pass into a second buffer)."""
    xp = backend.xp
    a = xp.zeros(shape, dtype=backend.dtype)
    b = xp.empty_like(a)

    def run():
        for _ in range(repeat):
            xp.multiply(a, 0.5, out=b)

    return run


def bench_pmp(
    backend,
    rounds: int,
    threads: int | None,
    m=784,
    n=500,
    chains=100,
    d=900,
    sweeps=10,
    target="goal ≤ 10× (plain numpy ≈ 30×)",
) -> list[Row]:
    """pmp's sampler against the bare work: PMP sweeps (damping ½, from zero messages, as the
    sampler runs them) on a random m × n RBM with ``chains`` perturbations, against block-Gibbs
    sweeps of the same chains and the two matmuls they are made of; and PMP sweeps on a dense
    d-variable Ising model against the one matmul of a sweep's local fields (``chains`` × d × d).
    Both also against :func:`message_floor`, reading and writing their messages once (2·chains·m·n
    and chains·d² floats): the memory-bound floor of any sweep that keeps its messages. PMP's
    time includes zeroing its messages (one write, spread over ``sweeps``); its numba kernels run
    on one thread whatever the BLAS threads (the rows' thread count is BLAS's)."""
    from rbmlab.inference.max_product import logistic_noise, max_product  # noqa: PLC0415
    from rbmlab.models import factor_graph  # noqa: PLC0415
    from rbmlab.models.ising import fully_connected  # noqa: PLC0415

    rbm, rng = random_rbm(backend, m, n), backend.rng(1)
    v, h = binary(backend, chains, m, 0.2, 2), binary(backend, chains, n, 0.5, 3)
    graph = rbm.factor_graph()
    unary = graph.unary[None, :] + logistic_noise(rng, (chains, graph.n), backend.dtype)
    t = timed(
        backend,
        rounds,
        threads,
        {
            "pmp": lambda: max_product(graph, unary, sweeps),
            "gibbs": lambda: gibbs_chain(rbm, v, rng, sweeps),
            "matmuls": two_matmuls(backend, rbm.W, v, h, sweeps),
            "floor": message_floor(backend, (2, chains, m, n), sweeps),
        },
    )
    shape = f"{m}×{n} RBM, {chains} chains, {backend.dtype}"
    kernel = "numba kernel, 1 thread" if factor_graph._kernels() else "numpy path"
    rows = [
        row(
            f"PMP sweep ({shape}; {kernel}), ms", spread([1e3 * s / sweeps for s in t["pmp"]]), "ms", threads
        ),
        row(
            f"block-Gibbs sweep ({shape}), ms", spread([1e3 * s / sweeps for s in t["gibbs"]]), "ms", threads
        ),
        row(
            f"PMP sweep / block-Gibbs sweep ({shape})", ratio(t["pmp"], t["gibbs"]), "ratio", threads, target
        ),
        row(
            f"bare matmuls of a Gibbs sweep / PMP sweep ({shape})",
            ratio(t["matmuls"], t["pmp"]),
            "ratio",
            threads,
        ),
        row(f"message read + write / PMP sweep ({shape})", ratio(t["floor"], t["pmp"]), "ratio", threads),
    ]
    ising = fully_connected(
        d, rng=np.random.default_rng(0), coupling_std=0.05, field_std=0.5, dtype=backend.dtype, xp=backend.xp
    )
    graph = ising.factor_graph()
    unary = graph.unary[None, :] + logistic_noise(rng, (chains, d), backend.dtype)
    x, J, out = (
        binary(backend, chains, d, 0.5, 4),
        graph.groups[0].W,
        backend.xp.empty((chains, d), backend.dtype),
    )

    def fields():
        for _ in range(sweeps):
            backend.xp.matmul(x, J, out=out)

    t = timed(
        backend,
        max(3, rounds // 2),
        threads,
        {
            "pmp": lambda: max_product(graph, unary, sweeps),
            "matmul": fields,
            "floor": message_floor(backend, (chains, d, d), sweeps),
        },
    )
    shape = f"dense Ising, d = {d}, {chains} chains, {backend.dtype}"
    rows += [
        row(
            f"PMP sweep ({shape}; {kernel}), ms", spread([1e3 * s / sweeps for s in t["pmp"]]), "ms", threads
        ),
        row(f"bare matmul x J / PMP sweep ({shape})", ratio(t["matmul"], t["pmp"]), "ratio", threads),
        row(f"message read + write / PMP sweep ({shape})", ratio(t["floor"], t["pmp"]), "ratio", threads),
    ]
    return rows


def pmp_part(rounds: int, examples: int) -> list[Row]:
    """Bench part ``pmp``: :func:`bench_pmp` at 1 and 2 BLAS threads."""
    backend = get_backend("numpy", "float32")
    return [r for threads in (1, 2) for r in bench_pmp(backend, rounds, threads)]
