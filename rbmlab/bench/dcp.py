"""The dcp paper's cost model (§3.1) from measured parts, and S-DCP epochs against CD-24. Bench
part ``dcp``."""

from __future__ import annotations

from rbmlab.backend import get_backend
from rbmlab.bench.core import Row, binary, epoch_seconds, mnist, random_rbm, row
from rbmlab.bench.method import blas_threads, interleaved, ratio, spread
from rbmlab.inference.block_gibbs import gibbs_chain


def bench_dcp_costs(backend, rounds: int, m=784, n=500, batch=200, d=6, k_inner=4, k_cd=24) -> dict:
    """The dcp paper's cost model (§3.1) with measured parts, at the MNIST shapes.

    CD-K costs K·T + 2L (+ one update U); S-DCP costs d·(K'·T + L) + L (+ d updates), where T is
    one Gibbs transition and L the statistics of a batch. The paper neglects (d − 1)·L, "since L
    is much smaller than T"; in a dense RBM both are two matmuls of the same shapes. Each part is
    timed in every round; the predictions are spreads over the rounds.
    """
    from rbmlab.learners.cd import CD, CDConfig  # noqa: PLC0415

    rbm, rng = random_rbm(backend, m, n), backend.rng(1)
    v = binary(backend, batch, m, 0.2, 2)
    grad = rbm.statistics(v)
    learner = CD(CDConfig(lr=0.01))  # plain SGD, as the epochs of bench_dcp_epochs
    sweeps = 10
    t = interleaved(
        {
            "T": lambda: gibbs_chain(rbm, v, rng, sweeps),
            "L": lambda: rbm.statistics(v),
            "U": lambda: learner.update(rbm, grad, {}),
        },
        rounds,
    )
    T = [s / sweeps for s in t["T"]]
    L, U = t["L"], t["U"]
    cd = [k_cd * a + 2 * b + c for a, b, c in zip(T, L, U)]
    sdcp = [d * (k_inner * a + b + c) + b for a, b, c in zip(T, L, U)]
    sdcp_paper = [d * k_inner * a + 2 * b + d * c for a, b, c in zip(T, L, U)]
    return {
        "batch": batch,
        "d": d,
        "k_inner": k_inner,
        "k_cd": k_cd,
        "T_gibbs_ms": spread([1e3 * a for a in T]),
        "L_statistics_ms": spread([1e3 * b for b in L]),
        "U_update_ms": spread([1e3 * c for c in U]),
        "L_over_T": ratio(L, T),
        "predicted_sdcp_over_cd": ratio(sdcp, cd),
        "predicted_sdcp_over_cd_without_extra_L": ratio(sdcp_paper, cd),
    }


def dcp_cost_rows(c: dict, threads: int) -> list[Row]:
    dd, kk, kc = c["d"], c["k_inner"], c["k_cd"]
    return [
        row(
            f"dcp §3.1 cost model, batch {c['batch']}: Gibbs transition T, ms", c["T_gibbs_ms"], "ms", threads
        ),
        row("batch statistics L, ms", c["L_statistics_ms"], "ms", threads),
        row("parameter update U, ms", c["U_update_ms"], "ms", threads),
        row("L / T (the paper assumes L ≪ T)", c["L_over_T"], "ratio", threads),
        row(
            f"predicted S-DCP({dd}, {kk}) / CD-{kc}: ({dd}({kk}T + L + U) + L) / ({kc}T + 2L + U)",
            c["predicted_sdcp_over_cd"],
            "ratio",
            threads,
        ),
        row(
            f"same, neglecting (d − 1)L as the paper does: ({dd * kk}T + 2L + {dd}U) / ({kc}T + 2L + U)",
            c["predicted_sdcp_over_cd_without_extra_L"],
            "ratio",
            threads,
        ),
    ]


def _epoch_times(
    learners: dict, rounds: int, threads: int, examples: int, batch: int, n_hidden: int
) -> tuple[dict[str, list[float]], str]:
    """Each learner's epoch seconds over the first ``examples`` MNIST images from one random RBM,
    interleaved for ``rounds`` rounds at ``threads`` BLAS threads, and the rows' description."""
    backend = get_backend("numpy", "float32")
    x = backend.asarray(mnist(examples))
    rbm = random_rbm(backend, x.shape[1], n_hidden)
    with blas_threads(threads):
        t = interleaved(
            {
                name: (lambda lr_=learner: epoch_seconds(lr_, rbm, x, batch, 0, backend))
                for name, learner in learners.items()
            },
            rounds,
            warmup=False,
        )
    return t, f"epoch ({examples} MNIST images, {n_hidden} hidden, batch {batch}), s"


def bench_dcp_epochs(rounds: int, threads: int, examples: int, batch=200, lr=0.01, n_hidden=500) -> list[Row]:
    """CD-24 vs S-DCP (d = 6, K' = 4) and (d = 5, K' = 4) epochs, alternating."""
    from rbmlab.learners.cd import CD, CDConfig  # noqa: PLC0415
    from rbmlab.learners.sdcp import SDCP, SDCPConfig  # noqa: PLC0415

    t, what = _epoch_times(
        {
            "CD-24": CD(CDConfig(lr=lr, batch_size=batch, k=24)),
            "S-DCP(6, 4)": SDCP(SDCPConfig(lr=lr, batch_size=batch, d=6, k=4)),
            "S-DCP(5, 4)": SDCP(SDCPConfig(lr=lr, batch_size=batch, d=5, k=4)),
        },
        rounds,
        threads,
        examples,
        batch,
        n_hidden,
    )
    return [
        *(row(f"{name} {what}", spread(ts), "s", threads) for name, ts in t.items()),
        row("S-DCP(6, 4) / CD-24 epoch time", ratio(t["S-DCP(6, 4)"], t["CD-24"]), "ratio", threads, "≤ 1.1"),
        row(
            "S-DCP(5, 4) / CD-24 epoch time (§3.1's pair when L = T)",
            ratio(t["S-DCP(5, 4)"], t["CD-24"]),
            "ratio",
            threads,
        ),
    ]


def bench_ssd_epochs(
    rounds: int, threads: int, examples: int, batch=1000, lr=0.01, ssd_lr=5e-4, n_hidden=500
) -> list[Row]:
    """SSD against the learners of Fig. 5 at its batch 1000 (Sec. 4.2.2: "the SSD algorithm is
    computationally expensive"): CD-25 with plain SGD, SSD (the same CD-25 gradient and the
    spectral step, an SVD of W's gradient per update) and S-DCP (6, 4), epochs alternating."""
    from rbmlab.learners.cd import CD, CDConfig  # noqa: PLC0415
    from rbmlab.learners.sdcp import SDCP, SDCPConfig  # noqa: PLC0415

    ssd = "SSD (CD-25, spectral step)"
    t, what = _epoch_times(
        {
            "CD-25": CD(CDConfig(lr=lr, batch_size=batch, k=25)),
            ssd: CD(CDConfig(lr=ssd_lr, batch_size=batch, k=25, optimizer={"name": "spectral"})),
            "S-DCP(6, 4)": SDCP(SDCPConfig(lr=lr, batch_size=batch, d=6, k=4)),
        },
        rounds,
        threads,
        examples,
        batch,
        n_hidden,
    )
    return [
        *(row(f"{name} {what}", spread(ts), "s", threads) for name, ts in t.items()),
        row(f"SSD / CD-25 epoch time (batch {batch})", ratio(t[ssd], t["CD-25"]), "ratio", threads),
        row(
            f"SSD / S-DCP(6, 4) epoch time (batch {batch})", ratio(t[ssd], t["S-DCP(6, 4)"]), "ratio", threads
        ),
    ]


def dcp_speed(
    rounds: int, examples: int = 10_000, batch: int = 200, n_hidden: int = 500, ssd_batch: int = 1000
) -> list[Row]:
    """The dcp paper's cost claims as a timing artefact (experiments/dcp/speed.yaml): the equal-
    compute claim (Abstract, §3.1) — the cost model at the MNIST shapes (at least 5 rounds), then
    CD-24 against S-DCP (6, 4) and (5, 4) epochs at ``batch`` — and SSD's cost (Sec. 4.2.2) at
    ``ssd_batch`` (:func:`bench_ssd_epochs`); ``examples`` MNIST images, ``rounds`` interleaved
    rounds, 2 BLAS threads."""
    backend = get_backend("numpy", "float32")
    with blas_threads(2):
        rows = dcp_cost_rows(bench_dcp_costs(backend, max(rounds, 5), n=n_hidden, batch=batch), 2)
    return (
        rows
        + bench_dcp_epochs(rounds, 2, examples, batch=batch, n_hidden=n_hidden)
        + bench_ssd_epochs(rounds, 2, examples, batch=ssd_batch, n_hidden=n_hidden)
    )


def dcp_part(rounds: int, examples: int) -> list[Row]:
    """Bench part ``dcp``: the cost model at 2 BLAS threads (at least 5 rounds), then the epochs
    (half the rounds, at least 3: a ratio's spread needs three)."""
    backend = get_backend("numpy", "float32")
    with blas_threads(2):
        rows = dcp_cost_rows(bench_dcp_costs(backend, max(rounds, 5)), 2)
    return rows + bench_dcp_epochs(max(3, rounds // 2), 2, examples)
