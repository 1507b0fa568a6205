"""tap Figs. 6 and 7's sentences as numbers, per seed, from the binary-MNIST N_h = 100 runs of
tap/figure-3-seeds (the paper's Sec. VII.3 reads both figures by eye):

* Fig. 6, "the solutions start from a highly correlated state and then proceed to diversify": the
  mean Pearson correlation over pairs of the unique TAP solutions' visible magnetisations a^v, per
  epoch (found as Fig. 5's, from the first ``n_init`` training images, and cached apart from them).
* Fig. 6, "the assignment of high and low free energy to TAP solutions does not appear random in
  nature": the correlation between each solution's free energy F and the mean F of its ``k``
  nearest solutions (Euclidean, in [a^v, a^h]), against the same with F shuffled over the
  solutions (``permutations`` draws): z = (r - mean of the null) / its std. Random assignment: z ~ 0.
* Fig. 7, "the TAP solutions act as attractors over the data space, clustering together data
  points which the TAP machine recognizes as similar": every image of classes 3, 6, 7 among the
  first 10,000 solved from itself; its basin is the unique solution its chain converged to. The
  basins' class purity (sum over basins of the largest class count, over the images in basins)
  against the purity with the labels shuffled, and the mean squared distance between two images of
  one basin over that between any two images (below 1: a basin holds images nearer each other).

results/tap/figure-7-attractors-seeds_<scale>.{md,png}."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from rbmlab.errors import RbmlabError
from rbmlab.evaluators.variety import mean_pair_distance, pair_distance_sum
from rbmlab.experiment.figures import Canvas, Drawing
from rbmlab.experiment.figures.tap_runs import (
    TAP_RUNS,
    FigureConfig,
    canvas_runs,
    pick,
    pm,
    run_data,
    seed_of,
    snapshot,
    tap_config,
)
from rbmlab.experiment.figures.tap_solutions import FIG7_EPOCHS, converged_solutions, solutions
from rbmlab.inference import tap
from rbmlab.report.figure_text import top_texts

N_HIDDEN = 100  # the paper's Figs. 6 and 7 (binary MNIST)
CLASSES = (3, 6, 7)  # Fig. 7's images
NEIGHBOURS = 5  # the k of the free-energy neighbourhood
PERMUTATIONS = 200  # shuffles of F (Fig. 6) and of the labels (Fig. 7)


# ---------------------------------------------------------------- the measures (pure)
def mean_pair_correlation(a: np.ndarray) -> float:
    """Mean Pearson correlation over the pairs of rows of ``a`` (K, n); nan for K < 2."""
    a = np.asarray(a, dtype=np.float64)
    if a.shape[0] < 2:
        return float("nan")
    c = np.corrcoef(a)
    return float(c[np.triu_indices_from(c, 1)].mean())


def neighbour_mean(points: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    """For each row of ``points``, the mean of ``values`` over its ``k`` nearest other rows."""
    p = np.asarray(points, dtype=np.float64)
    sq = np.einsum("ij,ij->i", p, p)
    d = sq[:, None] + sq[None, :] - 2.0 * p @ p.T
    np.fill_diagonal(d, np.inf)
    near = np.argsort(d, axis=1, kind="stable")[:, :k]
    return np.asarray(values, dtype=np.float64)[near].mean(axis=1)


def neighbour_agreement(points, values, k: int, permutations: int, rng) -> tuple[float, float]:
    """(r, z): the correlation of ``values`` with their ``k``-neighbour means, and its z-score
    against ``permutations`` shuffles of ``values`` over the same points (nan with < k + 2 points)."""
    values = np.asarray(values, dtype=np.float64)
    if len(values) < k + 2:
        return float("nan"), float("nan")

    def r(v):
        return float(np.corrcoef(v, neighbour_mean(points, v, k))[0, 1])

    null = np.array([r(rng.permutation(values)) for _ in range(permutations)])
    observed = r(values)
    return observed, float((observed - null.mean()) / null.std(ddof=1))


def basins(a: np.ndarray, converged: np.ndarray, representatives: np.ndarray) -> np.ndarray:
    """The basin of each row of ``a`` (K, n): the index (into ``representatives``, rows of ``a``)
    of the nearest representative for a converged row, -1 for a chain that did not converge."""
    a = np.asarray(a, dtype=np.float64)
    rep = a[representatives]
    d = np.einsum("ij,ij->i", a, a)[:, None] + np.einsum("ij,ij->i", rep, rep)[None, :] - 2.0 * a @ rep.T
    out = np.argmin(d, axis=1)
    return np.where(np.asarray(converged, dtype=bool), out, -1)


def purity(basin: np.ndarray, labels: np.ndarray) -> float:
    """Sum over basins of the count of their most common label, over the rows in a basin (>= 0)."""
    keep = basin >= 0
    b, y = basin[keep], np.asarray(labels)[keep]
    if not len(b):
        return float("nan")
    _, yi = np.unique(y, return_inverse=True)
    counts = np.zeros((b.max() + 1, yi.max() + 1), dtype=np.int64)
    np.add.at(counts, (b, yi), 1)
    return float(counts.max(axis=1).sum() / len(b))


def shuffled_purity(basin, labels, permutations: int, rng) -> float:
    """Mean :func:`purity` with the labels shuffled over the rows in a basin (chance)."""
    keep = basin >= 0
    b, y = basin[keep], np.asarray(labels)[keep]
    return float(np.mean([purity(b, rng.permutation(y)) for _ in range(permutations)]))


def within_basin_distance_ratio(x: np.ndarray, basin: np.ndarray) -> float:
    """Mean squared distance between two distinct rows of ``x`` in one basin over the mean between
    any two distinct rows in basins (< 1: basins gather nearer rows); nan with no pair in a basin."""
    keep = basin >= 0
    x, b = np.asarray(x, dtype=np.float64)[keep], basin[keep]
    same = [pair_distance_sum(x[b == basin_id]) for basin_id in np.unique(b)]  # a loop over basins
    same_sum, same_pairs = sum(s for s, _ in same), sum(p for _, p in same)
    if same_pairs == 0:
        return float("nan")
    return (same_sum / same_pairs) / mean_pair_distance(x)


# ---------------------------------------------------------------- the figure
def seed_measures(run, cfg: FigureConfig, canvas: Canvas, epochs: list[int]) -> dict[int, dict[str, float]]:
    """Every measure of the module docstring for one run, by epoch."""
    rng = np.random.default_rng(0)
    s = solutions("binary", run, cfg, canvas, tag="attractors")  # as Fig. 5's, at these epochs
    x, labels, _, _ = run_data(run)
    first = np.arange(len(x)) < 10000
    keep = first & np.isin(labels, CLASSES)
    x, labels = x[keep], labels[keep]
    if cfg.n_images:
        x, labels = x[: cfg.n_images], labels[: cfg.n_images]
    n_v = x.shape[1]
    out = {}
    for e in epochs:
        j = list(s["epochs"]).index(e)
        mags, free = s["magnetisations"][j], s["free_energy"][s["epoch"] == e]
        r, z = neighbour_agreement(mags, free, NEIGHBOURS, PERMUTATIONS, rng)
        a_v, _, done = converged_solutions(snapshot(run, e), x, tap_config(cfg))
        reps = tap.fixed_points(a_v, done, cfg.unique_tol)
        basin = basins(a_v, done, reps)
        out[e] = {
            "solutions": len(free),
            "correlation": mean_pair_correlation(mags[:, :n_v]),
            "f_neighbour_r": r,
            "f_neighbour_z": z,
            "images": len(x),
            "in_basins": float((basin >= 0).mean()),
            "basins": len(reps),
            "purity": purity(basin, labels),
            "chance_purity": shuffled_purity(basin, labels, PERMUTATIONS, rng),
            "distance_ratio": within_basin_distance_ratio(x, basin),
        }
    return out


def attractors(canvas: Canvas, cfg: FigureConfig) -> None:
    """tap paper Figs. 6 and 7's sentences (Sec. VII.3) as numbers per seed: the TAP solutions'
    diversification, the non-random assignment of free energies and the solutions as attractors of
    similar images.

    Registered as ``tap-figure-7-attractors``; options in rbmlab.experiment.figures.tap_runs.FigureConfig.
    """
    from matplotlib.figure import Figure  # noqa: PLC0415 - no pyplot: no global backend

    if (found := pick(canvas_runs(canvas), "binary", N_HIDDEN)) is None:
        raise RbmlabError(f"sweep: the attractor measures need the binary MNIST runs of {canvas.source}")
    n_hidden, seeds = found
    available = run_data(seeds[0])[3]
    if cfg.epochs:
        epochs = list(cfg.epochs)
    else:
        epochs = [e for e in FIG7_EPOCHS["binary"] if e in available] or [available[-1]]
        if available[-1] not in epochs and available[-1] < FIG7_EPOCHS["binary"][-1]:
            epochs.append(available[-1])  # a shorter run: its last epoch stands for the paper's
    cfg = replace(cfg, epochs=sorted(set(epochs)))
    per_seed = {seed_of(run): seed_measures(run, cfg, canvas, cfg.epochs) for run in seeds}
    m = next(iter(per_seed.values()))

    def cell(e, key, digits):
        """mean ± std over the seeds where the measure is defined (— where none; (n=k) where some)."""
        values = np.array([v[e][key] for v in per_seed.values()], dtype=float)
        defined = values[np.isfinite(values)]
        if not len(defined):
            return "—"
        return pm(defined, digits) + (f" (n={len(defined)})" if len(defined) < len(values) else "")

    lines = [
        f"# tap Figures 6 and 7 as numbers: the TAP solutions of binary MNIST (N_h = {n_hidden}) "
        "over training",
        "",
        f"Scale `{canvas.scale}`: snapshots of `rbmlab experiment {canvas.source} scale={canvas.scale}`, "
        f"seeds {', '.join(map(str, per_seed))}; each cell mean ± std (ddof=1) over the seeds. TAP "
        f"chains until their mean-square change is below {cfg.tol:g} (cap {cfg.max_iter}); "
        f"solutions within {cfg.unique_tol:g} root-mean-square of each other are one "
        "(rbmlab/experiment/figures/tap_attractors.py).",
        "",
        f"**Fig. 6** — the unique solutions from the first {cfg.n_init:,} training images: their mean "
        "pairwise correlation (visible magnetisations), and the correlation r of each solution's "
        f"F with the mean F of its {NEIGHBOURS} nearest solutions, z against {PERMUTATIONS} "
        "shuffles of F (0: F assigned at random).",
        "",
        "| epoch | solutions | mean pair correlation | F–neighbours r | z |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {e} | {cell(e, 'solutions', 1)} | {cell(e, 'correlation', 3)} | "
        f"{cell(e, 'f_neighbour_r', 3)} | {cell(e, 'f_neighbour_z', 1)} |"
        for e in cfg.epochs
    ]
    lines += [
        "",
        f"**Fig. 7** — the {m[cfg.epochs[0]]['images']:,} images of classes 3, 6, 7 among the first "
        "10,000 training images, each solved from itself; basin: the unique solution its chain "
        f"converged to. Purity: the share of the images in basins that carry their basin's most "
        f"common class (chance: the labels shuffled, {PERMUTATIONS} draws); distance ratio: mean "
        "squared distance of two images of one basin over that of any two.",
        "",
        "| epoch | basins | images in basins | purity | chance purity | distance ratio |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {e} | {cell(e, 'basins', 1)} | {cell(e, 'in_basins', 3)} | {cell(e, 'purity', 3)} | "
        f"{cell(e, 'chance_purity', 3)} | {cell(e, 'distance_ratio', 3)} |"
        for e in cfg.epochs
    ]
    fig = Figure(figsize=(10, 3.4), layout="tight")
    axes = fig.subplots(1, 3)
    for seed, v in per_seed.items():
        ep = cfg.epochs
        axes[0].plot(ep, [v[e]["correlation"] for e in ep], marker="o", label=f"seed {seed}")
        axes[1].plot(ep, [v[e]["f_neighbour_z"] for e in ep], marker="o")
        axes[2].plot(ep, [v[e]["purity"] for e in ep], marker="o", color=f"C{seed % 10}")
        axes[2].plot(ep, [v[e]["chance_purity"] for e in ep], ls=":", color=f"C{seed % 10}")
    for ax, title in zip(
        axes,
        ("Fig. 6: mean pair correlation", "Fig. 6: F–neighbour z", "Fig. 7: basin purity (dotted: chance)"),
    ):
        ax.set_xscale("log")
        ax.set_xlabel("epoch")
        ax.set_title(title, fontsize=8)
    axes[0].legend(fontsize=7)
    top_texts(fig, f"tap Figs. 6-7 as numbers, binary MNIST N_h = {n_hidden} ({canvas.scale})", title_size=9)
    stem = canvas.name("figure-7-attractors")
    canvas.save_png(fig, stem)
    canvas.save_text(stem, "md", "\n".join(lines) + "\n")


ATTRACTORS = Drawing(
    attractors,
    FigureConfig,
    TAP_RUNS,
    reads=frozenset({"n_init", "epochs", "tol", "max_iter", "unique_tol", "n_images"}),
)
