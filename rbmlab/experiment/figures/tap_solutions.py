"""tap Figures 5–7: the TAP solutions of the Figure 3 models over training, found from their
per-epoch snapshots here and drawn by rbmlab.report.tap_solutions.

* Fig. 5: the free energies and the number of unique TAP solutions per epoch; N_h = 100 for both
  MNIST variants, CBCL's N_h = 256 (or the sizes nearest; ``n_hidden``: exactly that size).
  results/tap/figure-5-<dataset>[-seeds][-h<N_h>]_<scale>.{png,md,csv} (the csv: per seed and
  epoch); the solutions are kept under outputs/experiments/tap/figure-5/<scale>/ (computed once per
  run and settings).
* Fig. 6: Isomap of binary MNIST's N_h = 100 solutions over epochs (Fig. 5's, reused).
* Fig. 7: Isomap of the initial images of classes 3, 6, 7 and the solutions they reach (CBCL: all
  faces), at the paper's epochs 1, 3, 25, 100 (CBCL 5, 100, 200, 500) that ran."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from rbmlab.errors import RbmlabError
from rbmlab.evaluators.tap import TapEvalConfig, estimate, solved_chunks
from rbmlab.experiment.figures import Canvas, Drawing
from rbmlab.experiment.figures.tap_runs import (
    TAP_RUNS,
    FigureConfig,
    SizedFigureConfig,
    canvas_runs,
    chosen,
    pick,
    pm,
    run_data,
    seed_of,
    sizes,
    snapshot,
    tap_config,
)
from rbmlab.inference import tap
from rbmlab.report import tap_solutions as ts
from rbmlab.report.figure_text import top_texts

FIG5_HIDDEN = {"binary": 100, "real": 100, "cbcl": 256}
FIG7_EPOCHS = {"binary": [1, 3, 25, 100], "real": [1, 3, 25, 100], "cbcl": [5, 100, 200, 500]}
FIG7_HIDDEN = {"binary": 100, "real": 500, "cbcl": 256}
SOLUTION_ARRAYS = ("epochs", "epoch", "free_energy", "log_z", "n_unique", "iterations", "converged")


def solutions_by_epoch(run_dir: Path, epochs: list[int], x, config: TapEvalConfig) -> dict[str, Any]:
    """Unique TAP solutions from the rows of ``x`` at each of ``epochs`` (rbmlab.evaluators.tap.
    estimate): flat arrays ``epoch``, ``free_energy`` (one entry per unique solution), and per
    epoch ``log_z``, ``n_unique``, ``iterations``, ``converged`` (fraction); ``magnetisations`` is
    a list of (n_unique, n_v + n_h) arrays."""
    out: dict[str, Any] = {
        "epochs": np.asarray(epochs),
        "epoch": [],
        "free_energy": [],
        "log_z": [],
        "n_unique": [],
        "iterations": [],
        "converged": [],
        "magnetisations": [],
    }
    for e in epochs:
        model = snapshot(run_dir, e)
        est = estimate(model, np.asarray(x, dtype=model.dtype), config)
        out["epoch"].append(np.full(len(est.free_energies), e))
        out["free_energy"].append(est.free_energies)
        out["magnetisations"].append(est.unique)
        out["log_z"].append(est.log_z)
        out["n_unique"].append(len(est.free_energies))
        out["iterations"].append(est.iterations)
        out["converged"].append(est.converged)
    for key in ("epoch", "free_energy"):
        out[key] = np.concatenate(out[key])
    for key in ("log_z", "n_unique", "iterations", "converged"):
        out[key] = np.asarray(out[key])
    return out


def converged_solutions(model, x, config: TapEvalConfig):
    """The TAP solution each row of ``x`` reaches: (K, n_v) visible magnetisations, F, and whether
    it converged."""
    a, f, done, _ = zip(*solved_chunks(model, x, config))
    return np.concatenate(a)[:, : model.W.shape[-2]], np.concatenate(f), np.concatenate(done)


def solutions(variant: str, run: Path, cfg: FigureConfig, canvas: Canvas, tag: str = "") -> dict:
    """Fig. 5's solutions of a run (computed once, kept under outputs/experiments/tap/figure-5/<scale>/;
    ``tag``: a drawing that asks for other epochs keeps its own file, <stem>-<tag>.npz)."""
    config = yaml.safe_load((run / "config.yaml").read_text())
    stem = f"{canvas.name(variant)}-h{config['model']['n_hidden']}-{config['seed']}" + (
        f"-{tag}" if tag else ""
    )
    cache = canvas.cache / "figure-5" / canvas.scale / f"{stem}.npz"
    x, _, _, epochs = run_data(run)
    epochs = cfg.epochs or (epochs if variant != "cbcl" else [e for e in epochs if e % 10 == 0 or e == 1])
    key = json.dumps(
        {
            "run": str(Path(run).resolve()),
            "epochs": epochs,
            "n_init": cfg.n_init,
            "tol": cfg.tol,
            "max_iter": cfg.max_iter,
            "unique_tol": cfg.unique_tol,
        }
    )
    if cache.exists():
        with np.load(cache, allow_pickle=False) as z:
            if str(z["key"]) == key:
                return {k: z[k] for k in SOLUTION_ARRAYS} | {
                    "magnetisations": np.split(z["magnetisations"], np.cumsum(z["n_unique"])[:-1])
                }
    s = solutions_by_epoch(run, epochs, x[: cfg.n_init], tap_config(cfg))
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(
        cache,
        key=key,
        magnetisations=np.concatenate(s["magnetisations"]),
        **{k: s[k] for k in SOLUTION_ARRAYS},
    )
    return s


def figure_5(canvas: Canvas, cfg: SizedFigureConfig) -> None:
    """tap paper Figure 5: the free energies and the number of unique TAP solutions of the Figure 3
    models per epoch, found from their per-epoch snapshots.

    Registered as ``tap-figure-5``; options (``n_hidden``, ...) in
    rbmlab.experiment.figures.tap_runs.SizedFigureConfig.
    """
    from matplotlib.figure import Figure  # noqa: PLC0415 - no pyplot: no global backend

    scale, sweep = canvas.scale, canvas_runs(canvas)
    drawn = [
        (variant, found)
        for variant, paper_hidden in FIG5_HIDDEN.items()
        if (found := cfg.size(chosen(sweep, cfg), variant, paper_hidden)) is not None
    ]
    if not drawn and cfg.n_hidden is not None:
        raise RbmlabError(
            f"n_hidden: no completed runs with N_h = {cfg.n_hidden} in {canvas.source} "
            f"(sizes: {sizes(chosen(sweep, cfg))})"
        )
    if not drawn:
        raise RbmlabError(
            f"variants: none of {cfg.variants} ran in {canvas.source} (ran: {', '.join(sweep)})"
        )
    for variant, (n_hidden, seeds) in drawn:
        per_seed = [solutions(variant, run, cfg, canvas) for run in seeds]
        s = per_seed[0]
        n_init = min(cfg.n_init, run_data(seeds[0])[0].shape[0])
        fig = Figure(figsize=(8, 6))
        slices = [int(e) for e in s["epochs"][np.linspace(0, len(s["epochs"]) - 1, 4).astype(int)]]
        ts.plot_free_energies(
            fig,
            s,
            slices,
            f"tap Fig. 5, {variant}, N_h = {n_hidden} ({scale}"
            + (f", seed {seed_of(seeds[0])} of {len(seeds)}" if len(seeds) > 1 else "")
            + ")",
            n_init,
        )
        fig.tight_layout()
        stem = cfg.sized_name(canvas, f"figure-5-{variant}")
        canvas.save_png(fig, stem)
        spread = (
            f" Mean ± std (ddof=1) over the {len(seeds)} seeds' runs; the plot is the first seed's."
            if len(seeds) > 1
            else ""
        )
        lines = [
            f"# tap Figure 5 ({variant}, N_h = {n_hidden}): TAP free energies of the unique "
            "solutions over training",
            "",
            f"Scale `{scale}`: snapshots of `rbmlab experiment {canvas.source} scale={scale}`; TAP "
            f"iterated from the first {n_init} training images, each chain until its "
            f"mean-square change is below {cfg.tol:g} (cap {cfg.max_iter}); solutions within "
            f"{cfg.unique_tol:g} root-mean-square of each other are one.{spread}",
            "",
            "| epoch | unique solutions | fraction | −ln Z estimate (mean F) | F min | F max | "
            "iterations | converged |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for e in s["epochs"]:
            at = [(r, list(r["epochs"]).index(e)) for r in per_seed if e in r["epochs"]]
            f = [r["free_energy"][r["epoch"] == e] for r, _ in at]
            unique = [r["n_unique"][j] for r, j in at]
            lines.append(
                f"| {e} | {pm(unique, 1 if len(at) > 1 else 0)} | "
                f"{pm(np.divide(unique, n_init), 3)} | {pm([v.mean() for v in f], 2)} | "
                f"{pm([v.min() for v in f], 2)} | {pm([v.max() for v in f], 2)} | "
                f"{pm([r['iterations'][j] for r, j in at], 0)} | "
                f"{pm([r['converged'][j] for r, j in at], 3)} |"
            )
        canvas.save_text(stem, "md", "\n".join(lines) + "\n")
        rows = [
            {
                "variant": variant,
                "n_hidden": n_hidden,
                "seed": seed_of(run),
                "epoch": int(e),
                "unique": int(r["n_unique"][j]),
                "fraction": r["n_unique"][j] / n_init,
                "mean_f": f.mean(),
                "f_min": f.min(),
                "f_max": f.max(),
                "iterations": r["iterations"][j],
                "converged": r["converged"][j],
            }
            for run, r in zip(seeds, per_seed)
            for j, e in enumerate(r["epochs"])
            if (f := r["free_energy"][r["epoch"] == e]).size
        ]
        canvas.save_text(stem, "csv", pd.DataFrame(rows).to_csv(index=False))  # per seed: the table's inputs


def figure_6(canvas: Canvas, cfg: FigureConfig) -> None:
    """tap paper Figure 6: Isomap of binary MNIST's N_h = 100 TAP solutions over epochs (Figure 5's).

    Registered as ``tap-figure-6``; options in rbmlab.experiment.figures.tap_runs.FigureConfig.
    """
    from matplotlib.figure import Figure  # noqa: PLC0415

    if (found := pick(canvas_runs(canvas), "binary", FIG5_HIDDEN["binary"])) is None:
        raise RbmlabError(f"sweep: Figure 6 needs the binary MNIST runs of {canvas.source}")
    n_hidden, (run, *_) = found
    s = solutions("binary", run, cfg, canvas)
    last = int(s["epochs"][-1])
    shown = sorted({e for e in (1, 3, 25, last) if e <= last})
    fig = Figure(figsize=(3 * len(shown), 3.2))
    ts.isomap_over_epochs(fig, s, shown)
    top_texts(
        fig,
        f"tap Fig. 6: binary MNIST, N_h = {n_hidden} — Isomap fitted on epoch {last}'s "
        f"solutions, colour: F normalised per epoch ({canvas.scale})",
        title_size=9,
    )
    canvas.save_png(fig, canvas.name("figure-6"))


def figure_7(canvas: Canvas, cfg: FigureConfig) -> None:
    """tap paper Figure 7: Isomap of the initial images of classes 3, 6, 7 (CBCL: all faces) and the TAP
    solutions they reach, at the paper's epochs.

    Registered as ``tap-figure-7``; options in rbmlab.experiment.figures.tap_runs.FigureConfig.
    """
    from matplotlib.figure import Figure  # noqa: PLC0415

    scale, sweep = canvas.scale, canvas_runs(canvas)
    for variant, paper_hidden in FIG7_HIDDEN.items():
        if (found := pick(chosen(sweep, cfg), variant, paper_hidden)) is None:
            continue
        n_hidden, (run, *_) = found
        x, labels, shape, epochs = run_data(run)
        first = np.arange(len(x)) < 10000
        if variant == "cbcl":
            labels = np.zeros(len(x), dtype=int)
        else:
            keep = first & np.isin(labels, [3, 6, 7])
            x, labels = x[keep], labels[keep]
        if cfg.n_images:
            x, labels = x[: cfg.n_images], labels[: cfg.n_images]
        shown = [e for e in FIG7_EPOCHS[variant] if e in epochs] or [epochs[-1]]
        if epochs[-1] not in shown and epochs[-1] < FIG7_EPOCHS[variant][-1]:
            shown.append(epochs[-1])  # a shorter run: its last epoch stands for the paper's
        fig = Figure(figsize=(3 * len(shown), 4.2))
        solved = {}
        for e in shown:  # the solution each image reaches, and the distinct converged ones
            a_v, _, done = converged_solutions(snapshot(run, e), x, tap_config(cfg))
            solved[e] = (a_v, tap.fixed_points(a_v, done, cfg.unique_tol))
        ts.isomap_of_initialisations(fig, solved, x, labels, shape)
        counts = {e: len(keep) for e, (_, keep) in solved.items()}
        top_texts(fig, f"tap Fig. 7, {variant}, N_h = {n_hidden} ({scale})", title_size=9)
        stem = canvas.name(f"figure-7-{variant}")
        canvas.save_png(fig, stem)
        lines = [
            f"# tap Figure 7 ({variant}, N_h = {n_hidden}): initial images and the TAP "
            "solutions they reach (Isomap)",
            "",
            f"Scale `{scale}`. Initial images: "
            + (
                "all training faces"
                if variant == "cbcl"
                else f"the images of classes 3, 6 and 7 among the first {int(first.sum()):,} training images"
            )
            + (f"; the first {cfg.n_images}" if cfg.n_images else "")
            + f". Unique solutions (within {cfg.unique_tol:g} "
            "root-mean-square):",
            "",
            "| epoch | initial images | unique solutions |",
            "|---|---|---|",
        ]
        lines += [f"| {e} | {len(x)} | {c} |" for e, c in counts.items()]
        canvas.save_text(stem, "md", "\n".join(lines) + "\n")


FIGURE_5 = Drawing(figure_5, SizedFigureConfig, TAP_RUNS)
FIGURE_6 = Drawing(figure_6, FigureConfig, TAP_RUNS)
FIGURE_7 = Drawing(figure_7, FigureConfig, TAP_RUNS)
