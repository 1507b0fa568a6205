"""pmp's wall-clock legends measured here: every sampler of a paper setting on one model, interleaved.

The paper's figures carry wall-clock ratios in their legends ("Gibbs (10x slower)", "GWG (30x
slower)", "PMapLP (1400x slower)", "PCD-1 (300x faster)", ...; Secs 5.3–5.5, legend text read
in the authors' notebook), measured on an RTX 2080 Ti with every method in JAX. This part times
the same samplers of rbmlab on the same shapes, on this machine (2 CPU cores, one BLAS thread,
numba kernels on one thread), in interleaved rounds (rbmlab.bench.method), and reports each as
a multiple of PMP's time for the same work — so a row reads like a legend: "Gibbs / PMP = 0.2" means
Gibbs is 5× faster here.

Settings (the model is the shape of the learned one, dense where the learned model is dense):
  * ``zeros``: fully connected Ising on the 30×30 contours (d = 900), 100 chains, 10 full sweeps
    (Sec 5.3; Figure 1 right): PMP, systematic-scan Gibbs, Gibbs-with-gradients; PMP's set-up (its
    factor graph, built on every call) timed alone too, and the ratios also against its sweeps
    alone (at one sweep the set-up dominates PMP's time);
  * ``lattice``: the dense Ising model learned on the 25×25 torus (d = 625), 20 chains, 10 full
    sweeps (Sec 5.4; Figure 2 left): PMP, Gibbs-reset, GWG-reset, as ``zeros``;
  * ``rbm``: the 784 × 500 MNIST RBM, 100 chains, one learning iteration's sampling (Sec 5.5;
    Figure 3): PMP and Gibbs-reset with 100 sweeps from fresh states, PCD-100 with 100 sweeps,
    PCD-1 with one;
  * ``lp``: one perturbed MAP problem of the 784 × 250 RBM of Figure 7 solved by the LP baseline
    (HiGHS, rbmlab.inference.lp_map) against one PMP sample of it (100 sweeps, the per-sample share
    of a batch of 50): the paper's "three orders of magnitude" (and "1400x" on the zeros model,
    whose LP is twice as large).
Per sweep, a sampler's cost does not depend on the parameter values, so random models of the
right shape stand in for the trained ones.
"""

from __future__ import annotations

import numpy as np

from rbmlab.backend import get_backend
from rbmlab.bench.core import Row, random_rbm, row, timed
from rbmlab.bench.method import ratio, spread
from rbmlab.inference import INFERENCE
from rbmlab.models.ising import fully_connected

THREADS = 1

# the paper's legends, as multiples of PMP's wall-clock (pmp Figures 1–3; their text is read in the
# authors' notebook)
PAPER = {
    ("zeros", "gibbs"): "paper: Gibbs 10× slower",
    ("zeros", "gwg"): "paper: GWG 30× slower",
    ("lattice", "gibbs"): "paper: Gibbs-reset 150× slower",
    ("lattice", "gwg"): "paper: GWG-reset 800× slower",
    ("rbm", "gibbs_reset"): "paper: Gibbs-reset 3× faster",
    ("rbm", "pcd100"): "paper: PCD-100 3× faster",
    ("rbm", "pcd1"): "paper: PCD-1 300× faster",
    ("lp", "lp"): "paper: PMapLP 1400× slower (zeros), 'three orders of magnitude' (2s)",
}
NAMES = {
    "gibbs": "Gibbs",
    "gwg": "GWG",
    "gibbs_reset": "Gibbs-reset",
    "pcd100": "PCD-100",
    "pcd1": "PCD-1",
    "lp": "LP (HiGHS)",
}


def _sampler(name: str):
    return INFERENCE.build(INFERENCE.parse(name, "bench.sampler"))


def _run(sampler, model, x, rng, steps):
    return lambda: sampler.run(model, x, rng, steps)


def _ising_rows(setting: str, rounds: int, d: int, chains: int, sweeps: int) -> list[Row]:
    """PMP, Gibbs and GWG for ``sweeps`` full sweeps of ``chains`` chains; PMP's set-up (the model's
    factor graph, built on every call of the sampler) is also timed alone, and each ratio is given
    against PMP's whole call and against its sweeps alone (the graph built once)."""
    from rbmlab.inference.max_product import perturb_and_max_product  # noqa: PLC0415

    backend = get_backend("numpy", "float32")
    rng = np.random.default_rng(0)
    model = fully_connected(d, rng=rng, coupling_std=0.05, field_std=0.5)
    x = (rng.random((chains, d)) < 0.5).astype(np.float32)
    draws = backend.rng(1)
    graph = model.factor_graph()
    fns = {name: _run(_sampler(name), model, x, draws, sweeps) for name in ("pmp", "gibbs", "gwg")}
    fns["setup"] = model.factor_graph
    fns["sweeps"] = lambda: perturb_and_max_product(graph, draws, chains, sweeps)
    t = timed(backend, rounds, THREADS, fns)
    what = f"{setting}: dense Ising d = {d}, {chains} chains, {sweeps} full sweep(s)"
    rows = [
        row(f"PMP ({what}), s", spread(t["pmp"]), "s", THREADS),
        row(f"PMP set-up alone, the factor graph ({what}), s", spread(t["setup"]), "s", THREADS),
        row(f"PMP sweeps alone ({what}), s", spread(t["sweeps"]), "s", THREADS),
    ]
    for name in ("gibbs", "gwg"):
        rows += [
            row(f"{NAMES[name]} ({what}), s", spread(t[name]), "s", THREADS),
            row(
                f"{NAMES[name]} / PMP ({what})",
                ratio(t[name], t["pmp"]),
                "ratio",
                THREADS,
                PAPER[(setting, name)],
            ),
            row(
                f"{NAMES[name]} / PMP sweeps alone ({what})",
                ratio(t[name], t["sweeps"]),
                "ratio",
                THREADS,
                PAPER[(setting, name)],
            ),
        ]
    return rows


def _rbm_rows(rounds: int, m: int, n: int, chains: int, sweeps: int) -> list[Row]:
    backend = get_backend("numpy", "float32")
    rbm, rng = random_rbm(backend, m, n), backend.rng(1)
    x = (np.random.default_rng(1).random((chains, m)) < 0.5).astype(np.float32)
    pmp, gibbs = _sampler("pmp"), _sampler("block_gibbs")
    t = timed(
        backend,
        rounds,
        THREADS,
        {
            "pmp": _run(pmp, rbm, x, rng, sweeps),
            "gibbs_reset": _run(gibbs, rbm, x, rng, sweeps),  # PCD-100's sampling is the same work
            "pcd1": _run(gibbs, rbm, x, rng, 1),
        },
    )
    t["pcd100"] = t["gibbs_reset"]
    what = f"rbm: {m}×{n} RBM, {chains} chains, one learning iteration's sampling"
    rows = [row(f"PMP, {sweeps} sweeps ({what}), s", spread(t["pmp"]), "s", THREADS)]
    for name, steps in (("gibbs_reset", sweeps), ("pcd100", sweeps), ("pcd1", 1)):
        rows.append(
            row(
                f"{NAMES[name]} / PMP ({what}; {steps} block-Gibbs sweep(s))",
                ratio(t[name], t["pmp"]),
                "ratio",
                THREADS,
                PAPER[("rbm", name)],
            )
        )
    return rows


def _lp_rows(rounds: int, m: int, n: int, batch: int, sweeps: int) -> list[Row]:
    from rbmlab.inference.lp_map import lp_map  # noqa: PLC0415
    from rbmlab.inference.max_product import logistic_noise, max_product  # noqa: PLC0415
    from rbmlab.models.rbm import init_rbm  # noqa: PLC0415

    backend = get_backend("numpy", "float32")
    rng = np.random.default_rng(2)
    rbm = init_rbm(np, rng, m, n, visible_bias="normal", hidden_bias="normal")
    graph = rbm.factor_graph()
    unary = graph.unary[None, :] + logistic_noise(rng, (batch, graph.n), np.float32)
    t = timed(
        backend,
        rounds,
        THREADS,
        {"pmp": lambda: max_product(graph, unary, sweeps), "lp": lambda: lp_map(graph, unary[:1])},
    )
    per_sample = [s / batch for s in t["pmp"]]
    what = f"lp: {m}×{n} RBM (Figure 7), one perturbed MAP problem"
    return [
        row(
            f"PMP, {sweeps} sweeps, per sample of a batch of {batch} ({what}), s",
            spread(per_sample),
            "s",
            THREADS,
        ),
        row(f"LP (HiGHS) ({what}), s", spread(t["lp"]), "s", THREADS),
        row(f"LP / PMP ({what})", ratio(t["lp"], per_sample), "ratio", THREADS, PAPER[("lp", "lp")]),
    ]


def sampler_speed(
    rounds: int,
    zeros=(900, 100, 10),
    lattice=(625, 20, 10),
    rbm=(784, 500, 100, 100),
    lp=(784, 250, 50, 100),
    lp_rounds: int = 1,
) -> list[Row]:
    """The legend ratios of pmp Figures 1–3 and 7 (module docstring). ``zeros`` and ``lattice``:
    (d, chains, sweeps); ``rbm``: (m, n, chains, sweeps); ``lp``: (m, n, PMP batch, sweeps), or
    an empty list to skip the LP (a solve takes minutes); ``lp_rounds`` rounds for it."""
    rows = []
    if zeros:
        rows += _ising_rows("zeros", rounds, *zeros)
    if lattice:
        rows += _ising_rows("lattice", rounds, *lattice)
    if rbm:
        rows += _rbm_rows(rounds, *rbm)
    if lp:
        rows += _lp_rows(lp_rounds, *lp)
    return rows
