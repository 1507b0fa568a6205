"""tap Fig. 5's two free-energy bands against the counting rules (issue 53 item 6): does the rule
that decides which TAP solutions count hide a second band?

The paper: "the free energies of the TAP solutions ... fall into two bands" on binary MNIST
(Sec. VII.3, Fig. 5(a)). Fig. 5 here (rbmlab.experiment.figures.tap_solutions) counts a chain as
a solution only when its mean-square change fell below 1e-10 within the cap, and merges solutions
within 1e-2 root-mean-square. A band of states the damped iteration cycles around, of slowly
drifting chains (the paper's 1e-8 would stop and count them) or of near-duplicates the merge
folds together would be left out. So the same chains are counted under several rules
(:data:`RULES`), at Fig. 5's epochs, and each rule's free energies are tested for two bands
(:func:`bands`: a two-component Gaussian mixture against one by BIC, with Ashman's D for the
separation). Binary MNIST, N_h = 100 (or ``n_hidden``), every seed of the source's runs.
results/tap/figure-5-counting[-seeds][-h<N_h>]_<scale>.{png,md}."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.errors import RbmlabError
from rbmlab.evaluators.tap import TapEvalConfig, distinct, solved_chunks
from rbmlab.experiment.figures import Canvas, Drawing
from rbmlab.experiment.figures.tap_runs import (
    TAP_RUNS,
    SizedFigureConfig,
    canvas_runs,
    chosen,
    pm,
    run_data,
    seed_of,
    sizes,
    snapshot,
)
from rbmlab.report.figure_text import top_texts

HIDDEN = 100  # Fig. 5's binary MNIST model size
EPOCHS = (1, 8, 40, 100)  # the default epochs: Fig. 5's slices of a 100-epoch run (those that ran)


@dataclass(frozen=True)
class Rule:
    """Which chains' end states count as TAP solutions: ``tol`` the convergence of a chain (mean-
    square change), ``count`` converged chains only or all, ``unique_tol`` the merge distance."""

    label: str
    tol: float
    count: str
    unique_tol: float


RULES = (
    Rule("Fig. 5's: converged at 1e-10, merged within 1e-2", 1e-10, "converged", 1e-2),
    Rule("every chain's end state (unconverged too)", 1e-10, "all", 1e-2),
    Rule("converged at the paper's 1e-8", 1e-8, "converged", 1e-2),
    Rule("merged within 1e-3 (finer)", 1e-10, "converged", 1e-3),
    Rule("merged within 1e-1 (coarser)", 1e-10, "converged", 1e-1),
    Rule("every chain, stopped at 1e-8, merged within 1e-3", 1e-8, "all", 1e-3),
)
MIN_SOLUTIONS = 10  # fewer solutions: no band test
BIC_MARGIN = 10.0  # "very strong" evidence for two components (Kass & Raftery 1995)
ASHMAN_D = 2.0  # two components of a mixture are clearly separated when D > 2 (Ashman et al. 1994)
MINOR_WEIGHT = 0.05  # a band holds at least this share of the solutions


def bands(f) -> dict[str, float]:
    """Two bands in the free energies ``f``? A 1- and a 2-component Gaussian mixture (scikit-learn,
    fixed seed, 5 starts): ``delta_bic`` = BIC(1) − BIC(2) (> 0 favours two), Ashman's
    ``d`` = √2 |μ₁ − μ₂| / √(σ₁² + σ₂²) of the two, the ``minor`` component's weight, and
    ``two`` = 1.0 when all three pass (:data:`BIC_MARGIN`, :data:`ASHMAN_D`, :data:`MINOR_WEIGHT`).
    NaN throughout below :data:`MIN_SOLUTIONS` solutions."""
    from sklearn.mixture import GaussianMixture  # noqa: PLC0415

    f = np.asarray(f, dtype=np.float64).reshape(-1, 1)
    if len(f) < MIN_SOLUTIONS:
        return {"delta_bic": np.nan, "d": np.nan, "minor": np.nan, "two": np.nan}
    one, two = (GaussianMixture(k, n_init=5, random_state=0).fit(f) for k in (1, 2))
    mu, var = two.means_.ravel(), two.covariances_.ravel()
    d = float(np.sqrt(2) * abs(mu[0] - mu[1]) / np.sqrt(var.sum()))
    delta_bic, minor = float(one.bic(f) - two.bic(f)), float(two.weights_.min())
    return {
        "delta_bic": delta_bic,
        "d": d,
        "minor": minor,
        "two": float(delta_bic > BIC_MARGIN and d > ASHMAN_D and minor >= MINOR_WEIGHT),
    }


def counted(model, x, rules=RULES, max_iter: int = 1000) -> list[dict]:
    """Each rule's solutions of ``model`` from the rows of ``x``: the chains are solved once per
    distinct ``tol`` and counted by each rule on the host (rbmlab.evaluators.tap.distinct). Per
    rule: its free energies, their count, the share of chains that converged, and :func:`bands`."""
    solved = {
        tol: list(solved_chunks(model, x, TapEvalConfig(tol=tol, max_iter=max_iter)))
        for tol in sorted({r.tol for r in rules})
    }
    out = []
    for r in rules:
        est = distinct(solved[r.tol], x.shape[0], r.unique_tol, count=r.count)
        out.append(
            {
                "free_energy": est.free_energies,
                "solutions": len(est.free_energies),
                "converged": est.converged,
                **bands(est.free_energies),
            }
        )
    return out


def counting_rules(canvas: Canvas, cfg: SizedFigureConfig) -> None:
    """tap paper Fig. 5's two free-energy bands (Sec. VII.3) against the counting rules: the same TAP
    chains counted under several rules, each rule's free energies tested for two bands (a two-component
    Gaussian mixture against one, by BIC).

    Registered as ``tap-figure-5-counting``; options in rbmlab.experiment.figures.tap_runs.SizedFigureConfig.
    """
    from matplotlib.figure import Figure  # noqa: PLC0415 - no pyplot: no global backend

    sweep = chosen(canvas_runs(canvas), cfg)
    found = cfg.size(sweep, "binary", HIDDEN)
    if found is None:
        raise RbmlabError(
            f"n_hidden: no completed binary runs with N_h = {cfg.n_hidden} in {canvas.source} "
            f"(sizes: {sizes(sweep)})"
            if cfg.n_hidden
            else f"variants: the counting rules need binary MNIST runs of {canvas.source}"
        )
    n_hidden, seeds = found
    x, _, _, ran = run_data(seeds[0])
    epochs = [e for e in (cfg.epochs or EPOCHS) if e in ran] or [ran[-1]]
    x = np.asarray(x[: cfg.n_init])
    per = {
        (seed_of(run), e): counted(snapshot(run, e), x, max_iter=cfg.max_iter)
        for run in seeds
        for e in epochs
    }
    seed_ids = [seed_of(run) for run in seeds]

    fig = Figure(figsize=(3.2 * len(epochs), 1.9 * len(RULES) + 0.8), layout="tight")
    axes = fig.subplots(len(RULES), len(epochs), squeeze=False, sharex="col")
    for j, e in enumerate(epochs):
        for i, rule in enumerate(RULES):
            ax, r = axes[i][j], per[(seed_ids[0], e)][i]
            ax.hist(r["free_energy"], bins=30, color="tab:blue" if r["two"] != 1.0 else "tab:red")
            ax.set_title(
                f"ep. {e}: {r['solutions']} sol."
                + ("" if np.isnan(r["delta_bic"]) else f", ΔBIC {r['delta_bic']:.0f}"),
                fontsize=7,
            )
            ax.tick_params(labelsize=6)
            ax.locator_params(axis="x", nbins=4)
            if j == 0:
                ax.set_ylabel(rule.label.replace(", ", ",\n").replace(" (", "\n("), fontsize=6)
    top_texts(
        fig,
        f"tap Fig. 5's bands under six counting rules: binary MNIST, N_h = {n_hidden}, seed "
        f"{seed_ids[0]} ({canvas.scale}); red: two bands by the test",
        title_size=9,
    )
    stem = cfg.sized_name(canvas, "figure-5-counting")
    canvas.save_png(fig, stem)

    lines = [
        f"# tap Figure 5's free-energy bands under other counting rules (binary MNIST, N_h = {n_hidden})",
        "",
        f"Scale `{canvas.scale}`: snapshots of `rbmlab experiment {canvas.source} scale={canvas.scale}`, "
        f"seeds {', '.join(map(str, seed_ids))}; TAP iterated from the first {len(x)} training images "
        f"(cap {cfg.max_iter} iterations). A rule counts the chains' end states (converged only, or "
        "all) and merges those within its root-mean-square distance. Two bands: a two-component "
        f"Gaussian mixture of the solutions' F beats one by ΔBIC > {BIC_MARGIN:g}, with Ashman's D > "
        f"{ASHMAN_D:g} and each band ≥ {MINOR_WEIGHT:.0%} of the solutions (no test below "
        f"{MIN_SOLUTIONS} solutions). A rule of converged chains counts every chain where none "
        "converged (rbmlab.inference.tap.fixed_points). Mean ± std (ddof=1) over the seeds; the plot is seed "
        f"{seed_ids[0]}'s.",
        "",
        "| epoch | rule | solutions | converged | ΔBIC | Ashman's D | minor band | seeds with two bands |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for e in epochs:
        for i, rule in enumerate(RULES):
            rs = [per[(s, e)][i] for s in seed_ids]
            tested = [r for r in rs if not np.isnan(r["two"])]

            def cell(key, digits, tested=tested):
                return pm([r[key] for r in tested], digits) if tested else "—"

            lines.append(
                f"| {e} | {rule.label} | {pm([r['solutions'] for r in rs], 1 if len(rs) > 1 else 0)} | "
                f"{pm([r['converged'] for r in rs], 3)} | {cell('delta_bic', 1)} | {cell('d', 2)} | "
                f"{cell('minor', 3)} | {sum(r['two'] == 1.0 for r in tested)} of {len(tested)} |"
            )
    canvas.save_text(stem, "md", "\n".join(lines) + "\n")


COUNTING_RULES = Drawing(
    counting_rules,
    SizedFigureConfig,
    TAP_RUNS,
    reads=frozenset({"n_init", "epochs", "max_iter", "n_hidden", "variants"}),
)
