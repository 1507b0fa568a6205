"""tap Figures 4–7 from the runs of the Figure 3 experiment (their per-epoch snapshots).

    python scripts/tap_figures.py FIGURE SCALE [key=value ...]

FIGURE: figure-4 (receptive fields ranked by ℓ0.1 spread and by activation, every model),
figure-8 (the MCC curves of ``rbmlab experiment tap/figure-8-denoising``, the OPE and 1-NN
beside TAP), figure-9 (one test digit denoised by every method and binary model, p from 0 to 0.5),
figure-12 (TAP, with log Z from the solutions averaged and log-sum-exp'd, AIS and
pseudo-likelihood of binary MNIST's N_h = 500 snapshots: the same checkpoints and images, every
evaluated epoch),
figure-5 (free energies and number of unique TAP solutions per epoch; N_h = 100 for both MNIST
variants, CBCL), figure-6 (Isomap of binary MNIST's N_h = 100 solutions over epochs), figure-7
(Isomap of the initial images of classes 3, 6, 7 and the solutions they reach; CBCL: all faces).
SCALE: the tier of ``rbmlab experiment tap/figure-3`` whose runs are read (it must have run).
Keys (FigureConfig): n_init (initialisations for Figs. 5–6), epochs (Fig. 5/6/12 epochs; default
every snapshot, CBCL every 10th; Fig. 12: every evaluated epoch), tol, max_iter, unique_tol, source
(``figure-3``, or ``figure-3-seeds``: three seeds per N_h), sweep (the sweep directory, default
that of ``source``), n_hidden (Figs. 5 and 12 at exactly this size instead of the paper's). Where a size has several seeds (figure-3-seeds; figure-3's paper tier),
Figs. 5, 8 and 12 give mean ± std over them and Figs. 4, 6, 7 and 9 draw the first.
Writes results/tap/<figure>[-<variant>][-seeds][-h<n_hidden>]_<scale>.{png,md} and, for Figs. 5–6, the solutions
under outputs/experiments/tap/figure-5/<scale>/ (Fig. 6 reuses Fig. 5's).
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from pathlib import Path

import matplotlib
import numpy as np
import yaml

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from rbmlab.data import load_dataset  # noqa: E402
from rbmlab.errors import RbmlabError, fail  # noqa: E402
from rbmlab.evaluators.tap import TapEvalConfig  # noqa: E402
from rbmlab.report import receptive_fields as rf  # noqa: E402
from rbmlab.report import tap_solutions as ts  # noqa: E402
from rbmlab.report.plot import png_bytes  # noqa: E402
from rbmlab.run.checkpoint import load_checkpoint  # noqa: E402
from rbmlab.storage.fileio import atomic_write  # noqa: E402
from rbmlab.validation import Config, key_values, option, parse_options  # noqa: E402

FIGURES = ("figure-4", "figure-5", "figure-6", "figure-7", "figure-8", "figure-9", "figure-12")
ROOT = Path(__file__).resolve().parent.parent
FIG7_EPOCHS = {"binary": [1, 3, 25, 100], "real": [1, 3, 25, 100], "cbcl": [5, 100, 200, 500]}
FIG7_HIDDEN = {"binary": 100, "real": 500, "cbcl": 256}
FIG5_HIDDEN = {"binary": 100, "real": 100, "cbcl": 256}


@dataclass
class FigureConfig(Config):
    n_init: int = option(1000, "training images the TAP solutions start from (Figs. 5-6; the "
                               "paper: 10,000; CBCL: all faces)", lo=1)
    epochs: list[int] | None = option(None, "epochs of Figs. 5-6 (default: every snapshot; CBCL "
                                            "every 10th)")
    tol: float = option(1e-10, "TAP convergence of each chain (mean-square change; see "
                               "rbmlab.evaluators.tap)", lo=0, open_lo=True)
    max_iter: int = option(1000, "TAP iteration cap", lo=1)
    unique_tol: float = option(1e-2, "root-mean-square distance below which solutions are one",
                               lo=0, open_lo=True)
    fields: int = option(6, "Fig. 4: fields drawn at each end of each ranking", lo=1)
    n_images: int = option(0, "Fig. 7: initial images (0: every image of classes 3, 6, 7 among the "
                              "first 10,000; CBCL: every face); n: the first n of them", lo=0)
    variants: list[str] | None = option(None, "Figs. 4, 5, 7: only these datasets (binary, real, "
                                              "cbcl); default all that ran", choices=("binary", "real", "cbcl"))
    source: str = option("figure-3", "the tap experiment whose runs are read (figure-3-seeds: "
                                     "three seeds per N_h)", choices=("figure-3", "figure-3-seeds"))
    sweep: str | None = option(None, "the runs' sweep directory (default outputs/experiments/tap/"
                                     "<source>/<scale>)")
    n_hidden: int | None = option(None, "Figs. 5 and 12 only: draw the models of exactly this size (default: "
                                        "the paper's, N_h = 100 for Fig. 5 and 500 for Fig. 12, or "
                                        "the nearest size that ran); the file names get -h<N_h>", lo=1)

    def name(self, stem: str) -> str:
        """The results file stem of a figure drawn from this source."""
        return stem + self.source.removeprefix("figure-3")

    def sized_name(self, stem: str) -> str:
        """Figs. 5 and 12: the stem, with -h<N_h> where ``n_hidden`` chose the size."""
        return self.name(stem) + (f"-h{self.n_hidden}" if self.n_hidden else "")

    def size(self, sweep: dict, variant: str, paper_hidden: int) -> tuple[int, list[Path]] | None:
        """The runs (by seed) Figs. 5 and 12 draw for ``variant``: of ``n_hidden`` units exactly when
        it is set (None when that size did not run), else of the paper's size or the nearest."""
        if self.n_hidden is None:
            return pick(sweep, variant, paper_hidden)
        models = sweep.get(variant) or {}
        return (self.n_hidden, models[self.n_hidden]) if self.n_hidden in models else None


def runs(sweep: Path, source: str = "figure-3") -> dict[str, dict[int, list[Path]]]:
    """variant → n_hidden → run directories (by seed), for the completed runs of the sweep."""
    found: dict[str, dict[int, list[tuple[int, Path]]]] = {}
    for summary in sorted(sweep.glob("*/*/summary.json")):
        run = summary.parent
        if json.loads(summary.read_text()).get("status") != "completed":
            continue
        config = yaml.safe_load((run / "config.yaml").read_text())
        found.setdefault(run.parent.name, {}).setdefault(int(config["model"]["n_hidden"]), []).append(
            (int(config["seed"]), run))
    found = {v: {n: [run for _, run in sorted(seeds)] for n, seeds in models.items()}
             for v, models in found.items()}
    if not found:
        raise RbmlabError(f"sweep: no completed runs under {sweep}; run `rbmlab experiment "
                          f"tap/{source} scale=...` first")
    return found


def chosen(sweep: dict, cfg: FigureConfig) -> dict:
    """The datasets of ``sweep`` that ``cfg.variants`` keeps."""
    return {v: m for v, m in sweep.items() if cfg.variants is None or v in cfg.variants}


def seed_of(run: Path) -> int:
    return int(yaml.safe_load((run / "config.yaml").read_text())["seed"])


def pick(sweep: dict, variant: str, n_hidden: int) -> tuple[int, list[Path]] | None:
    """The runs (by seed) of ``variant`` with ``n_hidden`` hidden units, or the size nearest to it."""
    models = sweep.get(variant)
    if not models:
        return None
    n = min(models, key=lambda m: (abs(m - n_hidden), m))
    return n, models[n]


def _sizes(sweep: dict) -> str:
    return "; ".join(f"{variant} {', '.join(map(str, sorted(models)))}" for variant, models in sweep.items())


def run_data(run: Path):
    """(training images, labels, image shape, snapshot epochs) of a run's dataset."""
    options = yaml.safe_load((run / "config.yaml").read_text())["dataset"]
    data = load_dataset(**options)
    epochs = sorted(int(p.stem.split("_")[1]) for p in (run / "snapshots").glob("epoch_*.npz"))
    return data.train, data.train_labels, data.image_shape, epochs


def tap_config(cfg: FigureConfig) -> TapEvalConfig:
    return TapEvalConfig(tol=cfg.tol, max_iter=cfg.max_iter, unique_tol=cfg.unique_tol)


def save_png(fig, path: Path) -> None:
    atomic_write(path, png_bytes(fig, 110))
    plt.close(fig)
    print(f"wrote {path}")


def figure_4(sweep: dict, cfg: FigureConfig, out: Path, scale: str) -> None:
    for variant, models in chosen(sweep, cfg).items():
        lines = [f"# tap Figure 4 ({variant}): receptive fields (columns of W) of the final models", "",
                 f"Scale `{scale}`: the last epoch of each run (the first seed) of `rbmlab experiment tap/{cfg.source} "
                 f"scale={scale}`. Per model, the {cfg.fields} most localised and most spread fields "
                 "(ℓ0.1 quasi-norm of the unit-ℓ2 field) and the least and most active hidden units "
                 "(mean E[h|x] over the first 10,000 training images, or all of a smaller set: "
                 "the images column).", "",
                 "| dataset | N_h | epochs | images | log10 ℓ0.1 spread min / median / max | "
                 "activation min / median / max |", "|---|---|---|---|---|---|"]
        rows = []
        for n_hidden, (run, *_) in sorted(models.items()):
            x, _, shape, _ = run_data(run)
            model, meta, _ = load_checkpoint(run / "checkpoint.npz")
            W = np.asarray(model.W)
            spread, activation = rf.lp_spread(W), rf.mean_activation(model, x[:10000])
            rows.append({"label": f"N_h = {n_hidden}", "W": W, "spread": spread,
                         "activation": activation})
            lines.append(f"| {variant} | {n_hidden} | {meta['epoch']} | {len(x[:10000]):,} | "
                         + " / ".join(f"{v:.2f}" for v in np.log10(np.percentile(spread, [0, 50, 100])))
                         + " | "
                         + " / ".join(f"{v:.3g}" for v in np.percentile(activation, [0, 50, 100])) + " |")
        fig = plt.figure(figsize=(4 * cfg.fields * 0.55 + 1.5, 0.75 * len(rows) + 0.8))
        rf.draw_fields(fig, rows, shape, cfg.fields)
        fig.suptitle(f"tap Fig. 4, {variant}: receptive fields ({scale})", fontsize=9)
        save_png(fig, out / f"{cfg.name(f'figure-4-{variant}')}_{scale}.png")
        atomic_write(out / f"{cfg.name(f'figure-4-{variant}')}_{scale}.md", "\n".join(lines) + "\n")


def solutions(variant: str, run: Path, cfg: FigureConfig, scale: str) -> dict:
    """Fig. 5's solutions of a run (computed once, kept under outputs/)."""
    config = yaml.safe_load((run / "config.yaml").read_text())
    stem = f"{variant}{cfg.source.removeprefix('figure-3')}-h{config['model']['n_hidden']}-{config['seed']}"
    cache = ROOT / "outputs" / "experiments" / "tap" / "figure-5" / scale / f"{stem}.npz"
    x, _, _, epochs = run_data(run)
    epochs = cfg.epochs or (epochs if variant != "cbcl" else [e for e in epochs if e % 10 == 0 or e == 1])
    key = json.dumps({"run": str(run), "epochs": epochs, "n_init": cfg.n_init, "tol": cfg.tol,
                      "max_iter": cfg.max_iter, "unique_tol": cfg.unique_tol})
    if cache.exists():
        with np.load(cache, allow_pickle=False) as z:
            if str(z["key"]) == key:
                return {k: z[k] for k in ("epochs", "epoch", "free_energy", "log_z", "n_unique",
                                          "iterations", "converged")} | {
                    "magnetisations": np.split(z["magnetisations"], np.cumsum(z["n_unique"])[:-1])}
    s = ts.solutions_by_epoch(run, epochs, x[:cfg.n_init], tap_config(cfg))
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, key=key, magnetisations=np.concatenate(s["magnetisations"]),
             **{k: s[k] for k in ("epochs", "epoch", "free_energy", "log_z", "n_unique", "iterations",
                          "converged")})
    return s


def pm(values, digits: int) -> str:
    """``mean ± std`` (ddof=1) over seeds, or the value alone for one seed."""
    values = np.asarray(values, dtype=float)
    if values.size == 1:
        return f"{values[0]:.{digits}f}"
    return f"{values.mean():.{digits}f} ± {values.std(ddof=1):.{digits}f}"


def figure_5(sweep: dict, cfg: FigureConfig, out: Path, scale: str) -> None:
    drawn = [(variant, found) for variant, paper_hidden in FIG5_HIDDEN.items()
             if (found := cfg.size(chosen(sweep, cfg), variant, paper_hidden)) is not None]
    if not drawn and cfg.n_hidden is not None:
        raise RbmlabError(f"n_hidden: no completed runs with N_h = {cfg.n_hidden} in tap/{cfg.source} "
                          f"(sizes: {_sizes(chosen(sweep, cfg))})")
    if not drawn:
        raise RbmlabError(f"variants: none of {cfg.variants} ran in tap/{cfg.source} "
                          f"(ran: {', '.join(chosen(sweep, FigureConfig()))})")
    for variant, found in drawn:
        n_hidden, seeds = found
        per_seed = [solutions(variant, run, cfg, scale) for run in seeds]
        s = per_seed[0]
        n_init = min(cfg.n_init, run_data(seeds[0])[0].shape[0])
        fig = plt.figure(figsize=(8, 6))
        slices = [int(e) for e in s["epochs"][np.linspace(0, len(s["epochs"]) - 1, 4).astype(int)]]
        ts.plot_free_energies(fig, s, slices, f"tap Fig. 5, {variant}, N_h = {n_hidden} ({scale}"
                              + (f", seed {seed_of(seeds[0])} of {len(seeds)}" if len(seeds) > 1 else "")
                              + ")", n_init)
        fig.tight_layout()
        stem = cfg.sized_name(f"figure-5-{variant}")
        save_png(fig, out / f"{stem}_{scale}.png")
        spread = (f" Mean ± std (ddof=1) over the {len(seeds)} seeds' runs; the plot is the first "
                  "seed's." if len(seeds) > 1 else "")
        lines = [f"# tap Figure 5 ({variant}, N_h = {n_hidden}): TAP free energies of the unique "
                 "solutions over training", "",
                 f"Scale `{scale}`: snapshots of `rbmlab experiment tap/{cfg.source} scale={scale}`; TAP "
                 f"iterated from the first {n_init} training images, each chain until its "
                 f"mean-square change is below {cfg.tol:g} (cap {cfg.max_iter}); solutions within "
                 f"{cfg.unique_tol:g} root-mean-square of each other are one.{spread}", "",
                 "| epoch | unique solutions | fraction | −ln Z estimate (mean F) | F min | F max | "
                 "iterations | converged |", "|---|---|---|---|---|---|---|---|"]
        for i, e in enumerate(s["epochs"]):
            at = [(r, list(r["epochs"]).index(e)) for r in per_seed if e in r["epochs"]]
            f = [r["free_energy"][r["epoch"] == e] for r, _ in at]
            unique = [r["n_unique"][j] for r, j in at]
            lines.append(f"| {e} | {pm(unique, 1 if len(at) > 1 else 0)} | "
                         f"{pm(np.divide(unique, n_init), 3)} | {pm([v.mean() for v in f], 2)} | "
                         f"{pm([v.min() for v in f], 2)} | {pm([v.max() for v in f], 2)} | "
                         f"{pm([r['iterations'][j] for r, j in at], 0)} | "
                         f"{pm([r['converged'][j] for r, j in at], 3)} |")
        atomic_write(out / f"{stem}_{scale}.md", "\n".join(lines) + "\n")


def figure_6(sweep: dict, cfg: FigureConfig, out: Path, scale: str) -> None:
    if (found := pick(sweep, "binary", FIG5_HIDDEN["binary"])) is None:
        raise RbmlabError(f"sweep: Figure 6 needs the binary MNIST runs of tap/{cfg.source}")
    n_hidden, (run, *_) = found
    s = solutions("binary", run, cfg, scale)
    last = int(s["epochs"][-1])
    shown = sorted({e for e in (1, 3, 25, last) if e <= last})
    fig = plt.figure(figsize=(3 * len(shown), 3.2))
    ts.isomap_over_epochs(fig, s, shown)
    fig.suptitle(f"tap Fig. 6: binary MNIST, N_h = {n_hidden} — Isomap fitted on epoch {last}'s "
                 f"solutions, colour: F normalised per epoch ({scale})", fontsize=9)
    save_png(fig, out / f"{cfg.name('figure-6')}_{scale}.png")


def figure_7(sweep: dict, cfg: FigureConfig, out: Path, scale: str) -> None:
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
            x, labels = x[:cfg.n_images], labels[:cfg.n_images]
        shown = [e for e in FIG7_EPOCHS[variant] if e in epochs] or [epochs[-1]]
        if epochs[-1] not in shown and epochs[-1] < FIG7_EPOCHS[variant][-1]:
            shown.append(epochs[-1])   # a shorter run: its last epoch stands for the paper's
        fig = plt.figure(figsize=(3 * len(shown), 4.2))
        counts = ts.isomap_of_initialisations(fig, run, shown, x, labels, tap_config(cfg), shape)
        fig.suptitle(f"tap Fig. 7, {variant}, N_h = {n_hidden} ({scale})", fontsize=9)
        save_png(fig, out / f"{cfg.name(f'figure-7-{variant}')}_{scale}.png")
        lines = [f"# tap Figure 7 ({variant}, N_h = {n_hidden}): initial images and the TAP "
                 "solutions they reach (Isomap)", "",
                 f"Scale `{scale}`. Initial images: " + ("all training faces" if variant == "cbcl" else
                 f"the images of classes 3, 6 and 7 among the first {int(first.sum()):,} training "
                 "images") + (f"; the first {cfg.n_images}" if
                 cfg.n_images else "") + f". Unique solutions (within {cfg.unique_tol:g} "
                 "root-mean-square):", "", "| epoch | initial images | unique solutions |",
                 "|---|---|---|"]
        lines += [f"| {e} | {len(x)} | {c} |" for e, c in counts.items()]
        atomic_write(out / f"{cfg.name(f'figure-7-{variant}')}_{scale}.md", "\n".join(lines) + "\n")


def figure_8(sweep: dict, cfg: FigureConfig, out: Path, scale: str) -> None:
    """The TAP, OPE and 1-NN MCC curves from the runs of tap/figure-8-denoising (final metrics; from
    tap/figure-8-denoising-seeds with source=figure-3-seeds: mean ± std over its seeds)."""
    rows = []
    experiment = cfg.name("figure-8-denoising")
    sweep_dir = ROOT / "outputs" / "experiments" / "tap" / experiment / scale
    for summary in sorted(sweep_dir.glob("*/summary.json")):
        final = json.loads(summary.read_text()).get("final") or {}
        config = yaml.safe_load((summary.parent / "config.yaml").read_text())
        if "test_mcc_tap" in final:
            rows.append((config["model"]["n_hidden"], config["evaluator"]["flip"],
                         final["test_mcc_tap"], final["test_mcc_ope"], final["test_mcc_nn"],
                         final.get("test_mcc_const", np.nan), final.get("test_tap_distinct", np.nan)))
    if not rows:
        raise RbmlabError(f"sweep: no completed runs of tap/{experiment} at scale {scale}; run "
                          f"`rbmlab experiment tap/{experiment} scale={scale}` first")
    rows = np.array(rows, dtype=float)
    fig, ax = plt.subplots(figsize=(6, 4))
    for n in np.unique(rows[:, 0]):
        part = rows[rows[:, 0] == n]
        part = part[np.argsort(part[:, 1])]
        ax.plot(part[:, 1], part[:, 2], marker="o", ms=3, label=f"TAP, N_h = {n:.0f}")
    flips = np.unique(rows[:, 1])
    for column, style, label in ((3, "k--", "OPE"), (4, "k-", "1-NN"), (5, "k:", "constant (mean image)")):
        ax.plot(flips, [rows[rows[:, 1] == p, column].mean() for p in flips], style, label=label)
    ax.set_xlabel("flip probability p")
    ax.set_ylabel("MCC (mean over test images)")
    ax.set_title(f"tap Fig. 8: denoising binary MNIST ({scale})", fontsize=9)
    ax.legend(fontsize=7)
    save_png(fig, out / f"{cfg.name('figure-8-mcc')}_{scale}.png")
    sizes = np.unique(rows[:, 0])
    lines = ["# tap Figure 8: MCC of TAP, OPE and 1-NN vs flip probability", "",
             f"Scale `{scale}`: the runs of `rbmlab experiment tap/{experiment} "
             f"scale={scale}`; each cell the mean (± std, ddof=1, where several seeds ran) over its runs. Constant: the training mean image rounded at ½, whatever the noisy "
             "image (a baseline, not the paper's). In brackets: the distinct TAP estimates per test "
             "image (1/n: one image for every input, i.e. a constant estimate).", "",
             "| p | " + " | ".join(f"TAP N_h={n:.0f}" for n in sizes) + " | OPE | 1-NN | constant |",
             "|---|" + "---|" * (len(sizes) + 3)]
    for p in flips:
        at = rows[rows[:, 1] == p]
        cells = [f"{pm(at[at[:, 0] == n, 2], 3)} ({at[at[:, 0] == n, 6].mean():.3g})" for n in sizes]
        one = at[at[:, 0] == at[0, 0]]    # the OPE, 1-NN and constant do not depend on the model
        lines.append(f"| {p:g} | " + " | ".join(cells) + f" | {pm(one[:, 3], 3)} | {pm(one[:, 4], 3)} | "
                     f"{pm(one[:, 5], 3)} |")
    atomic_write(out / f"{cfg.name('figure-8-mcc')}_{scale}.md", "\n".join(lines) + "\n")


def figure_9(sweep: dict, cfg: FigureConfig, out: Path, scale: str) -> None:
    """One test digit through the channel at p = 0 … 0.5, and each method's estimate: posterior
    magnetisations for the OPE and TAP (white 0, black 1), the nearest training image for 1-NN."""
    from dataclasses import replace  # noqa: PLC0415

    from rbmlab.evaluators.denoising import DenoisingConfig, denoise_images  # noqa: PLC0415

    models = sweep.get("binary") or {}
    if not models:
        raise RbmlabError(f"sweep: Figure 9 needs the binary MNIST runs of tap/{cfg.source}")
    models = {n: seeds[0] for n, seeds in models.items()}
    options = yaml.safe_load((next(iter(models.values())) / "config.yaml").read_text())["dataset"]
    data = load_dataset(**options)
    x, train = data.test[:1], data.train
    flips = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    base = DenoisingConfig(tol=cfg.tol, max_iter=cfg.max_iter)
    rows: list[tuple[str, list]] = [("noisy", []), ("OPE", []), ("1-NN", [])]
    rows += [(f"TAP N_h={n}", []) for n in sorted(models)]
    for p in flips:
        config = replace(base, flip=p)
        for k, n in enumerate(sorted(models)):
            model = load_checkpoint(models[n] / "checkpoint.npz")[0]
            d = denoise_images(model, x, train, train.mean(axis=0), config)
            if k == 0:
                rows[0][1].append(d.noisy[0])
                rows[1][1].append(d.ope[0])
                rows[2][1].append(d.nn[0])
            rows[3 + k][1].append(d.tap[0])
    fig, axes = plt.subplots(len(rows), len(flips), figsize=(1.2 * len(flips), 1.2 * len(rows)))
    for r, (label, images) in enumerate(rows):
        for c, image in enumerate(images):
            ax = axes[r, c]
            ax.imshow(np.asarray(image).reshape(data.image_shape), cmap="gray_r", vmin=0, vmax=1)
            ax.set_xticks([])
            ax.set_yticks([])
            if c == 0:
                ax.set_ylabel(label, fontsize=7)
            if r == 0:
                ax.set_title(f"p = {flips[c]:g}", fontsize=7)
    fig.suptitle(f"tap Fig. 9: test image 0, one noise draw for every method ({scale})", fontsize=8)
    save_png(fig, out / f"{cfg.name('figure-9')}_{scale}.png")


AIS_SETTINGS = {   # Fig. 12's AIS per tier: the paper's 100 runs of 14,500 temperatures; smoke: seconds
    "smoke": ({"n_chains": 16, "schedule": "linear", "n_temperatures": 500},
              "16 chains, 500 linear temperatures (smoke: not the paper's schedule)"),
    "reduced": ({"n_chains": 100, "schedule": "salakhutdinov"}, "100 chains, 14,500 temperatures"),
    "paper": ({"n_chains": 100, "schedule": "salakhutdinov"}, "100 chains, 14,500 temperatures")}


def figure_12(sweep: dict, cfg: FigureConfig, out: Path, scale: str) -> None:
    """tap Fig. 12: the snapshots of binary MNIST's N_h = 500 run (or the size nearest), each scored
    on the same (first 10,000) training images by TAP (the run's own evaluator settings; log Z from
    the unique solutions both averaged, the paper's rule, and log-sum-exp'd:
    rbmlab.inference.tap.combine_log_z), by AIS (the paper's 100 chains and Salakhutdinov's 14,500
    temperatures, base-rate base model; fewer at smoke, AIS_SETTINGS) and by the stochastic
    pseudo-likelihood (100 random pixels), with the evaluators of ``rbmlab run`` (seeded per
    epoch). Several seeds: every seed's run scored, the table and plot as mean ± std over them."""
    import pandas as pd  # noqa: PLC0415

    if "binary" not in sweep:
        raise RbmlabError(f"sweep: Figure 12 needs the binary MNIST runs of tap/{cfg.source}")
    if (found := cfg.size(sweep, "binary", 500)) is None:
        raise RbmlabError(f"n_hidden: no completed binary MNIST runs with N_h = {cfg.n_hidden} in "
                          f"tap/{cfg.source} (sizes: {_sizes({'binary': sweep['binary']})})")
    n_hidden, seeds = found
    rows = [row | {"seed": seed_of(run)} for run in seeds for row in _scores_12(run, cfg, scale)]
    if not rows:
        raise RbmlabError(f"epochs: none of {cfg.epochs} is an evaluated epoch of {seeds[0]}")
    table = pd.DataFrame(rows)
    stem = cfg.sized_name("figure-12")
    atomic_write(out / f"{stem}_{scale}.csv", table.to_csv(index=False))
    columns = ["tap", "tap_logsumexp", "ais", "pseudo", "tap_solutions", "tap_log_z",
               "tap_logsumexp_log_z", "ais_log_z"]
    by_epoch = table.groupby("epoch")[columns]
    mean, std = by_epoch.mean(), by_epoch.std(ddof=1)
    fig, axes = plt.subplots(3, 1, figsize=(6, 7), sharex=True)
    for ax, column, style, label in ((axes[0], "tap", "o-", "TAP, solutions averaged (the paper's)"),
                                     (axes[0], "tap_logsumexp", "s-", "TAP, solutions log-sum-exp'd"),
                                     (axes[0], "ais", "k--", "AIS"), (axes[1], "ais", "o-", None),
                                     (axes[2], "pseudo", "o-", None)):
        ax.plot(mean.index, mean[column], style, ms=3, lw=1, label=label)
        if len(seeds) > 1:
            ax.fill_between(mean.index, mean[column] - std[column], mean[column] + std[column], alpha=0.2)
    axes[0].legend(fontsize=7)
    for ax, label in zip(axes, ("log-likelihood (Eq. 39)", "AIS log-likelihood", "pseudo-log-likelihood")):
        ax.set_ylabel(label, fontsize=8)
    axes[-1].set_xlabel("epoch")
    images = int(table["images"].iloc[0])
    over = f", mean ± std over {len(seeds)} seeds" if len(seeds) > 1 else ""
    axes[0].set_title(f"tap Fig. 12: binary MNIST, N_h = {n_hidden}, {images:,} training images\n"
                      f"({scale}{over})", fontsize=9)
    fig.tight_layout()
    save_png(fig, out / f"{stem}_{scale}.png")
    run_tap = yaml.safe_load((seeds[0] / "config.yaml").read_text())["evaluator"]
    starts = f"{run_tap['n_init']:,}" if run_tap["n_init"] else "all"
    pl_units = int(table["pl_units"].iloc[0])
    lines = ["# tap Figure 12: TAP log-likelihood, AIS and pseudo-likelihood over training", "",
             f"Scale `{scale}`: the snapshots of `rbmlab experiment tap/{cfg.source} scale={scale}` "
             f"(binary MNIST, N_h = {n_hidden}, {len(seeds)} seed{'s' if len(seeds) > 1 else ''}) at "
             f"{'the epochs chosen' if cfg.epochs else 'its evaluated epochs'}; mean over the first "
             f"{images:,} training images (nats). TAP: the run's evaluator ({starts} initialisations), "
             "log Z from the unique solutions averaged (the paper's rule) or log-sum-exp'd. "
             f"AIS: {AIS_SETTINGS[scale][1]}; PL: {pl_units} of {table['pixels'].iloc[0]} pixels."
             + (f" Each cell: mean ± std (ddof=1) over the seeds' runs; per seed in `{stem}_{scale}.csv`."
                if len(seeds) > 1 else ""),
             "", "| epoch | TAP | TAP (log-sum-exp) | AIS | PL | solutions | TAP ln Z | TAP ln Z (log-sum-exp) "
             "| AIS ln Z |", "|---|---|---|---|---|---|---|---|---|"]
    digits = {c: 2 for c in columns} | {"tap_solutions": 1 if len(seeds) > 1 else 0}
    for epoch, row in table.groupby("epoch"):
        lines.append(f"| {epoch} | " + " | ".join(pm(row[c], digits[c]) for c in columns) + " |")
    atomic_write(out / f"{stem}_{scale}.md", "\n".join(lines) + "\n")


def _scores_12(run: Path, cfg: FigureConfig, scale: str) -> list[dict]:
    """Fig. 12's rows of one run: TAP (both combinations), AIS and PL at each scored epoch."""
    import pandas as pd  # noqa: PLC0415

    from rbmlab.backend import get_backend  # noqa: PLC0415
    from rbmlab.data.batch import Batch  # noqa: PLC0415
    from rbmlab.evaluators import EVALUATORS  # noqa: PLC0415
    from rbmlab.evaluators.base import Context  # noqa: PLC0415

    x, _, _, epochs = run_data(run)
    x = x[:10000]
    evaluated = pd.read_csv(run / "metrics.csv").dropna(subset=["train_log_likelihood"])["epoch"]
    backend = get_backend("numpy", "float32")
    run_tap = yaml.safe_load((run / "config.yaml").read_text())["evaluator"]
    tap = EVALUATORS.build(EVALUATORS.parse({**run_tap, "splits": ["train"], "max_examples": 0,
                                             "combine": "uniform", "progress": False}))
    ais = EVALUATORS.build(EVALUATORS.parse({"name": "ais", "splits": ["train"], "progress": False,
                                             **AIS_SETTINGS[scale][0]}))
    pl_units = min(100, x.shape[1])    # the paper's stochastic PL: 100 random pixels per image
    pl = EVALUATORS.build(EVALUATORS.parse({"name": "pl", "splits": ["train"], "n_units": pl_units}))
    rows = []
    for e in [int(e) for e in evaluated if int(e) in epochs and (not cfg.epochs or int(e) in cfg.epochs)]:
        model = ts.snapshot(run, e)
        t = tap.evaluate(model, {"train": Batch(x)}, Context(rng=backend.rng(11, e), final=True, train=Batch(x)))
        clamped = t["train_log_likelihood"] + t["log_z"]     # the exact data term of Eq. 39
        context = Context(rng=backend.rng(12, e), final=True, train=Batch(x), data_mean=x.mean(axis=0))
        a = ais.evaluate(model, {"train": Batch(x)}, context)
        p = pl.evaluate(model, {"train": Batch(x)}, Context(rng=backend.rng(13, e), final=True))
        rows.append({"epoch": e, "tap": clamped - t["log_z_uniform"], "tap_log_z": t["log_z_uniform"],
                     "tap_logsumexp": clamped - t["log_z_logsumexp"],
                     "tap_logsumexp_log_z": t["log_z_logsumexp"], "tap_solutions": t["tap_solutions"],
                     "ais": a["train_log_likelihood"], "ais_log_z": a["log_z"],
                     "pseudo": p["train_pseudo_log_likelihood"], "images": len(x), "pixels": x.shape[1],
                     "pl_units": pl_units})
        r = rows[-1]
        print(f"{run} epoch {e}: TAP {r['tap']:.2f} (log-sum-exp {r['tap_logsumexp']:.2f}), "
              f"AIS {r['ais']:.2f}, PL {r['pseudo']:.2f}")
    return rows


def main(argv: list[str]) -> None:
    if len(argv) < 2 or argv[0] not in FIGURES or argv[1] not in ("smoke", "reduced", "paper"):
        fail(f"usage: python scripts/tap_figures.py {{{'|'.join(FIGURES)}}} "
             "{smoke|reduced|paper} [key=value ...]")
    try:
        cfg = parse_options(FigureConfig, key_values(argv[2:]), "figure")
        if cfg.n_hidden is not None and argv[0] not in ("figure-5", "figure-12"):
            raise RbmlabError(f"n_hidden: only figure-5 and figure-12 take a model size, not {argv[0]}")
        sweep = Path(cfg.sweep or ROOT / "outputs" / "experiments" / "tap" / cfg.source / argv[1])
        out = ROOT / "results" / "tap"
        out.mkdir(parents=True, exist_ok=True)
        {"figure-4": figure_4, "figure-5": figure_5, "figure-6": figure_6, "figure-7": figure_7,
         "figure-8": figure_8, "figure-9": figure_9, "figure-12": figure_12}[argv[0]](
            runs(sweep, cfg.source), cfg, out, argv[1])
    except RbmlabError as e:
        fail(str(e))


if __name__ == "__main__":
    main(sys.argv[1:])
