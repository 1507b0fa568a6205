"""What tap Figs. 4–9 and 12 share: their options (:class:`FigureConfig`) and the runs of the Figure 3
experiment (tap/figure-3, or tap/figure-3-seeds: three seeds per N_h) they are drawn from, by
dataset (variant), model size and seed. Where a size has several seeds, Figs. 5, 8 and 12 give
mean ± std over them and Figs. 4, 6, 7 and 9 draw the first."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from rbmlab.data import load_dataset
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.tap import TapEvalConfig
from rbmlab.experiment.figures import FigureOptions
from rbmlab.limits import EPOCHS, EVALUATION_STEPS, EXAMPLES, UNITS
from rbmlab.report.load import read_summary
from rbmlab.run.checkpoint import load_checkpoint
from rbmlab.validation import option

# the Figure 3 experiments whose snapshots the figures read → the suffix of the figures' file names
TAP_RUNS = {"tap/figure-3": "", "tap/figure-3-seeds": "-seeds"}


@dataclass
class FigureConfig(FigureOptions):
    n_init: int = option(
        1000,
        "training images the TAP solutions start from (Figs. 5-6; the paper: 10,000; CBCL: all faces)",
        lo=1,
        hi=EXAMPLES,
    )
    epochs: list[int] | None = option(
        None,
        "epochs of Figs. 5-6 (default: every snapshot; CBCL every 10th); Fig. 12: of its evaluated epochs",
        lo=0,
        hi=EPOCHS,
    )
    tol: float = option(
        1e-10,
        "TAP convergence of each chain (mean-square change; see rbmlab.evaluators.tap)",
        lo=0,
        open_lo=True,
    )
    max_iter: int = option(1000, "TAP iteration cap", lo=1, hi=EVALUATION_STEPS)
    unique_tol: float = option(
        1e-2, "root-mean-square distance below which solutions are one", lo=0, open_lo=True
    )
    fields: int = option(6, "Fig. 4: fields drawn at each end of each ranking", lo=1, hi=UNITS)
    n_images: int = option(
        0,
        "Fig. 7: initial images (0: every image of classes 3, 6, 7 among the "
        "first 10,000; CBCL: every face); n: the first n of them",
        lo=0,
        hi=EXAMPLES,
    )
    variants: list[str] | None = option(
        None,
        "Figs. 4, 5, 7: only these datasets (binary, real, cbcl); default all that ran",
        choices=("binary", "real", "cbcl"),
    )


@dataclass
class SizedFigureConfig(FigureConfig):
    """Figs. 5 and 12: the options, and the model size drawn."""

    n_hidden: int | None = option(
        None,
        "draw the models of exactly this size (default: the paper's, "
        "N_h = 100 for Fig. 5 and 500 for Fig. 12, or the nearest size "
        "that ran); the file names get -h<N_h>",
        lo=1,
        hi=UNITS,
    )

    def sized_name(self, canvas, stem: str) -> str:
        """The file stem of the figure, with -h<N_h> where ``n_hidden`` chose the size."""
        return canvas.name(stem) + (f"-h{self.n_hidden}" if self.n_hidden else "")

    def size(self, sweep: dict, variant: str, paper_hidden: int) -> tuple[int, list[Path]] | None:
        """The runs (by seed) Figs. 5 and 12 draw for ``variant``: of ``n_hidden`` units exactly when
        it is set (None when that size did not run), else of the paper's size or the nearest."""
        if self.n_hidden is None:
            return pick(sweep, variant, paper_hidden)
        models = sweep.get(variant) or {}
        return (self.n_hidden, models[self.n_hidden]) if self.n_hidden in models else None


def runs(sweep: Path, source: str = "tap/figure-3") -> dict[str, dict[int, list[Path]]]:
    """variant → n_hidden → run directories (by seed), for the completed runs of the sweep."""
    found: dict[str, dict[int, list[tuple[int, Path]]]] = {}
    for summary in sorted(Path(sweep).glob("*/*/summary.json")):
        run = summary.parent
        if read_summary(summary).get("status") != "completed":  # unreadable: one line naming it
            continue
        config = yaml.safe_load((run / "config.yaml").read_text())
        found.setdefault(run.parent.name, {}).setdefault(int(config["model"]["n_hidden"]), []).append(
            (int(config["seed"]), run)
        )
    found = {
        v: {n: [run for _, run in sorted(seeds)] for n, seeds in models.items()}
        for v, models in found.items()
    }
    if not found:
        raise RbmlabError(
            f"sweep: no completed runs under {sweep}; run `rbmlab experiment {source} scale=...` first"
        )
    return found


def canvas_runs(canvas) -> dict[str, dict[int, list[Path]]]:
    """:func:`runs` of a canvas's sweep."""
    return runs(canvas.sweep, canvas.source)


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


def sizes(sweep: dict) -> str:
    return "; ".join(f"{variant} {', '.join(map(str, sorted(models)))}" for variant, models in sweep.items())


def run_data(run: Path):
    """(training images, labels, image shape, snapshot epochs) of a run's dataset."""
    options = yaml.safe_load((run / "config.yaml").read_text())["dataset"]
    data = load_dataset(**options)
    epochs = sorted(int(p.stem.split("_")[1]) for p in (run / "snapshots").glob("epoch_*.npz"))
    return data.train, data.train_labels, data.image_shape, epochs


def snapshot(run_dir: Path, epoch: int):
    """The model a run saved after ``epoch`` (snapshots/epoch_<e>.npz)."""
    return load_checkpoint(Path(run_dir) / "snapshots" / f"epoch_{epoch}.npz")[0]


def tap_config(cfg: FigureConfig) -> TapEvalConfig:
    return TapEvalConfig(tol=cfg.tol, max_iter=cfg.max_iter, unique_tol=cfg.unique_tol)


def pm(values, digits: int) -> str:
    """``mean ± std`` (ddof=1) over seeds, or the value alone for one seed."""
    values = np.asarray(values, dtype=float)
    if values.size == 1:
        return f"{values[0]:.{digits}f}"
    return f"{values.mean():.{digits}f} ± {values.std(ddof=1):.{digits}f}"
