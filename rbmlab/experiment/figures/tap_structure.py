"""tap Fig. 9's "the TAP inference for the RBM provides estimates which still possess digit
structure" as a number per seed: the first ``n_test`` test images through the binary symmetric
channel at p = 0 … 0.5 (the noise drawn per seed), denoised by TAP on each seed's final binary
model of tap/figure-3-seeds (N_h nearest 100, or ``n_hidden``), and each estimate (rounded at ½)
scored by the rule of ``evaluator=recognised`` (rbmlab.evaluators.recognised): a logistic
regression on the first 10,000 training images names it with probability ≥ ``confidence``, and its
Hamming distance to the nearest training image is at most the ``quantile`` of the clean test
images' distances. Beside TAP: the noisy image itself (the control: noise is no digit) and the
OPE's estimate; and the share recognised as the image's own digit. Mean ± std over the seeds.
results/tap/figure-9-structure-seeds_<scale>.{png,md}."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import yaml

from rbmlab.data import load_dataset
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.denoising import DenoisingConfig, denoise_images
from rbmlab.evaluators.feature_classifier import fit_classifiers
from rbmlab.evaluators.recognised import class_probabilities, nearest_distances, percent, recognised
from rbmlab.experiment.figures import Canvas, Drawing, FigureOptions
from rbmlab.experiment.figures.tap_runs import TAP_RUNS, canvas_runs, pick, pm, seed_of
from rbmlab.limits import EVALUATION_STEPS, EXAMPLES, UNITS
from rbmlab.report.figure_text import top_texts
from rbmlab.run.checkpoint import load_checkpoint
from rbmlab.validation import option

FLIPS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5)  # the paper's Fig. 9
CLASSIFIER_IMAGES = 10000  # the classifier's training images (the first)
METHODS = ("noisy", "ope", "tap")
NAMES = {"noisy": "noisy input", "ope": "OPE", "tap": "TAP"}


@dataclass
class StructureConfig(FigureOptions):
    n_test: int = option(500, "test images denoised (the first n)", lo=1, hi=EXAMPLES)
    n_hidden: int | None = option(
        None, "the models of this size (default: the size nearest 100)", lo=1, hi=UNITS
    )
    confidence: float = option(
        0.9, "recognised: the classifier's top probability at least this", lo=0.0, hi=1.0, open_lo=True
    )
    quantile: float = option(
        0.95,
        "recognised: nearest-training-image distance at most this quantile "
        "of the clean test images' distances",
        lo=0.0,
        hi=1.0,
    )
    tol: float = option(
        1e-8, "TAP convergence (mean-square change), as evaluator=denoising", lo=0, open_lo=True
    )
    max_iter: int = option(1000, "TAP iteration cap", lo=1, hi=EVALUATION_STEPS)


def scores(
    estimate: np.ndarray, labels: np.ndarray, fit, train: np.ndarray, radius: float, confidence: float
) -> tuple[float, float]:
    """(% recognised, % recognised as the row's own label) of binary rows ``estimate``."""
    x = np.asarray(estimate, dtype=np.float64)
    p = class_probabilities(fit, x)
    kept = recognised(p, nearest_distances(x, train), confidence, radius)
    own = fit[2][p.argmax(axis=1)] == labels
    return percent(kept), percent(kept & own)


def structure(canvas: Canvas, cfg: StructureConfig) -> None:
    """tap paper Fig. 9's digit structure of TAP estimates (Sec. VII.4) as a number per seed: the share
    of test images through the binary symmetric channel, denoised by TAP, that are recognised as
    ``evaluator=recognised`` scores (beside the noisy image and the OPE's estimate).

    Registered as ``tap-figure-9-structure``; options (``n_test``, ``confidence``, ``quantile``, ...)
    in :class:`StructureConfig`.
    """
    from matplotlib.figure import Figure  # noqa: PLC0415 - no pyplot: no global backend

    models = canvas_runs(canvas).get("binary") or {}
    if cfg.n_hidden is not None and cfg.n_hidden not in models:
        raise RbmlabError(
            f"n_hidden: no completed binary runs with N_h = {cfg.n_hidden} in {canvas.source} "
            f"(sizes: {', '.join(map(str, sorted(models))) or 'none'})"
        )
    if (found := pick({"binary": models}, "binary", cfg.n_hidden or 100)) is None:
        raise RbmlabError(
            f"sweep: the digit-structure measure needs the binary MNIST runs of {canvas.source}"
        )
    n_hidden, runs = found
    options = yaml.safe_load((runs[0] / "config.yaml").read_text())["dataset"]
    data = load_dataset(**options)
    train = np.asarray(data.train, dtype=np.float64)
    fit = fit_classifiers(
        train[:CLASSIFIER_IMAGES], np.asarray(data.train_labels)[:CLASSIFIER_IMAGES], [1.0], 1000
    )[1.0]
    test, labels = (
        np.asarray(data.test[: cfg.n_test], dtype=np.float64),
        np.asarray(data.test_labels[: cfg.n_test]),
    )
    radius = float(np.quantile(nearest_distances(test, train), cfg.quantile))
    clean = scores(test, labels, fit, train, radius, cfg.confidence)
    per_seed: dict[int, dict[float, dict[str, tuple[float, float]]]] = {}
    for run in runs:
        model, seed = load_checkpoint(run / "checkpoint.npz")[0], seed_of(run)
        per_seed[seed] = {}
        for p in FLIPS:
            d = denoise_images(
                model,
                test,
                data.train,
                data.train.mean(axis=0),
                DenoisingConfig(flip=p, seed=seed, methods=["tap"], tol=cfg.tol, max_iter=cfg.max_iter),
            )
            per_seed[seed][p] = {
                m: scores(
                    d.noisy if m == "noisy" else d.estimate(m), labels, fit, train, radius, cfg.confidence
                )
                for m in METHODS
            }

    def cell(p, m, k):
        return pm([v[p][m][k] for v in per_seed.values()], 1)

    lines = [
        f"# tap Figure 9 as a number: do the TAP estimates still look like digits? (binary MNIST, "
        f"N_h = {n_hidden})",
        "",
        f"Scale `{canvas.scale}`: the final models of `rbmlab experiment {canvas.source} "
        f"scale={canvas.scale}`, seeds {', '.join(map(str, per_seed))} (each seed its own channel "
        f"noise); the first {len(test)} test images at each flip probability p; TAP to a mean-square "
        f"change below {cfg.tol:g} (cap {cfg.max_iter}), estimates rounded at ½. Recognised: a "
        f"logistic regression on the first {min(CLASSIFIER_IMAGES, len(train)):,} training images "
        "names the image with "
        f"probability ≥ {cfg.confidence:g} and its nearest training image is at most {radius:.0f} "
        f"pixels away (the {cfg.quantile:g} quantile of the clean test images'); the clean test "
        f"images: {clean[0]:.1f} % recognised, {clean[1]:.1f} % as their own digit. Mean ± std "
        "(ddof=1) over the seeds, in %.",
        "",
        "| p | noisy input recognised | OPE recognised | TAP recognised | TAP as its own digit |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {p:g} | {cell(p, 'noisy', 0)} | {cell(p, 'ope', 0)} | {cell(p, 'tap', 0)} | {cell(p, 'tap', 1)} |"
        for p in FLIPS
    ]
    fig = Figure(figsize=(5.5, 4), layout="tight")
    ax = fig.subplots()
    for k, m in enumerate(METHODS):
        values = np.array([[v[p][m][0] for p in FLIPS] for v in per_seed.values()])
        ax.errorbar(
            FLIPS,
            values.mean(axis=0),
            yerr=values.std(axis=0, ddof=1) if len(values) > 1 else None,
            marker="os^"[k],
            capsize=3,
            label=f"{NAMES[m]} recognised",
        )
    ax.axhline(clean[0], color="k", ls=":", label="clean test images")
    ax.set_xlabel("flip probability p")
    ax.set_ylabel("% of images recognised as a digit")
    ax.legend(fontsize=7)
    top_texts(fig, f"tap Fig. 9 as a number, N_h = {n_hidden} ({canvas.scale})", title_size=9)
    stem = canvas.name("figure-9-structure")
    canvas.save_png(fig, stem)
    canvas.save_text(stem, "md", "\n".join(lines) + "\n")


STRUCTURE = Drawing(structure, StructureConfig, TAP_RUNS)
