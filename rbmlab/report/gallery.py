"""Image galleries of trained runs: a conditional model's predictions (crbm_bp Figure 2), a
generative model's samples (pmp Figures 3, 6, 7).

A gallery is rows of images, ``examples`` of them: each row shows the corrupted inputs, the clean
targets or a trained run's predictions of the first examples of one split (from the inference its
evaluator names, the one it trained with); or the split's first examples as they are (``data``),
or ``samples`` of the run's model by the row's ``sampler`` (default: the one its ``mmd`` evaluator
names), from fresh states, after the row's ``sweeps`` (default: the evaluator's), with a fixed seed.
A row names its run by experiment, variant and config values, e.g.
``{experiment: crbm_bp/table-1, variant: mle_bp, task.rate: 0.1}``; the run's own config.yaml
rebuilds its data and task, and its selected.npz (the early-stopped model the tables score, with
its inference budget) predicts, or its checkpoint.npz (the last epoch trained) when it has none. The PNG
comes with a markdown note naming each row's run, epoch and pixel error on the examples shown.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from omegaconf import OmegaConf

from rbmlab.errors import RbmlabError
from rbmlab.report.figure_text import top_texts
from rbmlab.report.plot import png_bytes
from rbmlab.storage.portable import portable_path
from rbmlab.validation import identity_neutral

SHOWS = ("input", "target", "prediction", "data", "samples")
GENERATIVE = ("data", "samples")  # rows of any trained run; the others need a conditional one
ROW_KEYS = {"label", "run", "show"}
OPTIONAL_ROW_KEYS = {"sweeps", "sampler"}
SAMPLE_SEED = 0
GALLERY_KEYS = {"split", "examples", "rows"}


@dataclass(frozen=True)
class Row:
    label: str
    run_dir: Path
    show: str
    sweeps: int | None = None  # show=samples: sampler steps (None: the run's evaluator.sweeps)
    sampler: Any = None  # show=samples: an inference config (None: the run's evaluator.sampler)

    @property
    def key(self) -> tuple:
        """What one set of images is computed for: a run (predictions), or a run's samples."""
        if self.show not in GENERATIVE:
            return (self.run_dir,)
        return (self.run_dir, self.show, self.sweeps, None if self.sampler is None else repr(self.sampler))


@dataclass
class RunImages:
    """One run's first examples of a split: inputs, targets, predictions, and where they came from."""

    inputs: np.ndarray
    targets: np.ndarray
    predictions: np.ndarray
    image_shape: tuple[int, int]
    epoch: int | None
    early_stopping_epoch: int | None
    inference: str

    def show(self, what: str) -> np.ndarray:
        return {"input": self.inputs, "target": self.targets, "prediction": self.predictions}[what]

    def pixel_error(self, n: int) -> float:
        """Wrong pixels (%) among the first ``n`` examples' predictions."""
        return 100.0 * float((self.predictions[:n] != self.targets[:n]).mean())


def _lookup(config: Any, dotted: str) -> Any:
    node = config
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _config(path: Path) -> dict[str, Any]:
    """A run's config.yaml as a dict, or one line naming the file."""
    try:
        return OmegaConf.to_container(OmegaConf.load(path), resolve=True)
    except Exception as e:  # noqa: BLE001 - YAML, I/O or interpolation errors alike
        raise RbmlabError(
            f"gallery: {path} is not a readable run config "
            f"({str(e).splitlines()[0] if str(e) else type(e).__name__})"
        ) from None


def find_run(sweep: Path, selector: Mapping[str, Any]) -> Path:
    """The one run directory under ``sweep`` (``<variant>/<n>/`` or ``<n>/``) whose config.yaml
    holds every ``key: value`` of ``selector`` (``variant`` picks the sub-directory)."""
    selector = dict(selector)
    variant = selector.pop("variant", None)
    base = sweep / str(variant) if variant is not None else sweep
    if not base.is_dir():
        raise RbmlabError(f"gallery: no runs in {base} (run the experiment at this scale first)")
    matches = []
    configs = [(path.parent, _config(path)) for path in sorted(base.glob("*/config.yaml"))]
    for key in selector:
        if configs and all(_lookup(config, key) is None for _, config in configs):
            raise RbmlabError(f"gallery: no run in {base} has a config key {key!r}")
    for run_dir, config in configs:
        if all(str(_lookup(config, k)) == str(v) for k, v in selector.items()):
            matches.append(run_dir)
    if len(matches) != 1:
        wanted = ", ".join(f"{k}={v}" for k, v in selector.items()) or "any"
        raise RbmlabError(f"gallery: {len(matches)} runs in {base} match {wanted}; name exactly one")
    return matches[0]


def run_images(run_dir: Path, split: str, examples: int) -> RunImages:
    """Rebuild ``run_dir``'s data and task from its config.yaml and predict with its checkpoint."""
    from rbmlab.data import load_dataset  # noqa: PLC0415
    from rbmlab.data.tasks import TASKS  # noqa: PLC0415
    from rbmlab.evaluators import EVALUATORS  # noqa: PLC0415
    from rbmlab.evaluators.pixel_error import predict  # noqa: PLC0415
    from rbmlab.learners import LEARNERS  # noqa: PLC0415
    from rbmlab.run.checkpoint import load_checkpoint  # noqa: PLC0415
    from rbmlab.run.records import read_summary  # noqa: PLC0415

    for name in ("config.yaml", "checkpoint.npz", "summary.json"):
        if not (run_dir / name).is_file():
            raise RbmlabError(f"gallery: {run_dir} has no {name} (a run not started or not finished?)")
    config = _config(run_dir / "config.yaml")
    evaluator = config.get("evaluator") or {}
    if evaluator.get("name") != "pixel_error":
        raise RbmlabError(
            f"gallery: {run_dir} was scored by evaluator={evaluator.get('name')}, not "
            "pixel_error: it is not a structured-prediction run"
        )
    # a config from before an option has its identity-neutral value (what the run did then)
    neutral = identity_neutral(EVALUATORS.get("pixel_error").config_class)
    scorer = EVALUATORS.build(EVALUATORS.parse({**neutral, **evaluator}))
    if (run_dir / "selected.npz").is_file():  # the early-stopped model: the one the tables score
        model, meta, _ = load_checkpoint(run_dir / "selected.npz")
        budget = scorer.budget(meta.get("inference_iterations"))
    else:
        model, meta, state = load_checkpoint(run_dir / "checkpoint.npz")
        budget = scorer.budget(LEARNERS.build(LEARNERS.parse(config["learner"])).inference_iterations(state))
    data = load_dataset(**config["dataset"])
    batch = TASKS.build(TASKS.parse(config.get("task") or "none")).batch(data, split)
    if batch.targets is None:
        raise RbmlabError(f"gallery: {run_dir} has task=none: no corrupted inputs to show")
    n = min(examples, batch.inputs.shape[0])
    x = batch.inputs[:n].astype(model.W.dtype)
    predicted, _ = predict(model, x, scorer.config.inference, budget, scorer.config.tol)
    side = math.isqrt(x.shape[1])
    shape = data.image_shape or ((side, side) if side * side == x.shape[1] else None)
    if shape is None:
        raise RbmlabError(f"gallery: dataset {config['dataset']['name']} has no image shape")
    stopping = read_summary(run_dir / "summary.json").get("early_stopping") or {}
    return RunImages(
        np.asarray(x),
        np.asarray(batch.targets[:n]),
        np.asarray(predicted),
        tuple(shape),
        meta.get("epoch"),
        stopping.get("epoch"),
        evaluator["inference"],
    )


@dataclass
class GenerativeImages:
    """Examples of a split (``data``) or samples of a run's model (``samples``), as {0, 1}."""

    images: np.ndarray
    image_shape: tuple[int, int]
    epoch: int | None
    inference: str

    early_stopping_epoch = None

    @property
    def inputs(self) -> np.ndarray:
        return self.images

    def show(self, what: str) -> np.ndarray:
        return self.images


def generative_images(
    run_dir: Path, split: str, examples: int, show: str, sweeps: int | None, sampler: Any = None
) -> GenerativeImages:
    """``examples`` first images of ``split`` (show=data) or samples of ``run_dir``'s model
    (show=samples) by ``sampler`` (an inference config; None: its mmd evaluator's), ``sweeps`` steps
    from uniform states, seed SAMPLE_SEED."""
    from rbmlab.backend import get_backend, to_numpy  # noqa: PLC0415
    from rbmlab.data import load_dataset  # noqa: PLC0415
    from rbmlab.evaluators.sampling import draw as draw_samples  # noqa: PLC0415
    from rbmlab.evaluators.sampling import parse_sampler, sampler_for  # noqa: PLC0415
    from rbmlab.run.checkpoint import load_checkpoint  # noqa: PLC0415

    for name in ("config.yaml", "checkpoint.npz"):
        if not (run_dir / name).is_file():
            raise RbmlabError(f"gallery: {run_dir} has no {name} (a run not started or not finished?)")
    config = _config(run_dir / "config.yaml")
    data = load_dataset(**config["dataset"])
    side = math.isqrt(data.train.shape[1])
    shape = data.image_shape or ((side, side) if side * side == data.train.shape[1] else None)
    if shape is None:
        raise RbmlabError(f"gallery: dataset {config['dataset']['name']} has no image shape")
    model, meta, _ = load_checkpoint(run_dir / "checkpoint.npz")
    if show == "data":
        x = getattr(data, split)
        if x is None:
            raise RbmlabError(f"gallery: {run_dir}'s dataset has no {split} split")
        return GenerativeImages(np.asarray(x[:examples]), tuple(shape), meta.get("epoch"), "")
    evaluator = config.get("evaluator") or {}
    if sampler is None and evaluator.get("name") != "mmd":
        raise RbmlabError(
            f"gallery: {run_dir} was scored by evaluator={evaluator.get('name')}, not mmd: "
            "its sampler is not named (show=samples)"
        )
    steps = evaluator.get("sweeps") if sweeps is None else sweeps
    if steps is None:
        raise RbmlabError(f"gallery: {run_dir} names no sweeps (set the row's sweeps)")
    if sampler is None:
        sampler = parse_sampler(evaluator.get("sampler"), "evaluator.sampler")
    sampler = sampler_for(sampler, type(model), "gallery")
    rng = get_backend("numpy", str(model.dtype)).rng(SAMPLE_SEED)
    x = to_numpy(draw_samples(model, sampler, examples, int(steps), examples, rng))
    lo, hi = model.visible_units.values
    return GenerativeImages(
        (x - lo) / (hi - lo), tuple(shape), meta.get("epoch"), f"{sampler.config.name}, {steps} sweeps"
    )


def check_gallery(gallery: Any, where: str) -> tuple[str, int, list[dict[str, Any]]]:
    """(split, examples, rows) of a ``gallery:`` spec, each checked with a one-line error."""
    if not isinstance(gallery, dict):
        raise RbmlabError(f"{where}: gallery must be a mapping with keys {', '.join(sorted(GALLERY_KEYS))}")
    unknown = set(gallery) - GALLERY_KEYS
    if unknown:
        raise RbmlabError(
            f"{where}: unknown gallery key(s) {', '.join(sorted(unknown))}; "
            f"known: {', '.join(sorted(GALLERY_KEYS))}"
        )
    split, examples = gallery.get("split", "test"), gallery.get("examples", 7)
    if split not in ("train", "valid", "test"):
        raise RbmlabError(f"{where}: gallery.split must be train, valid or test, got {split!r}")
    if not isinstance(examples, int) or isinstance(examples, bool) or examples < 1:
        raise RbmlabError(f"{where}: gallery.examples must be a positive integer, got {examples!r}")
    return split, examples, check_rows(gallery.get("rows"), where)


def check_rows(rows: Any, where: str) -> list[dict[str, Any]]:
    """The gallery's ``rows`` spec: a list of {label, run: {experiment, ...}, show}, a show=samples
    row's ``sampler`` parsed into its inference config."""
    from rbmlab.evaluators.sampling import parse_sampler  # noqa: PLC0415

    if not isinstance(rows, list) or not rows:
        raise RbmlabError(f"{where}: gallery.rows must be a non-empty list of {{label, run, show}}")
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not ROW_KEYS <= set(row) <= ROW_KEYS | OPTIONAL_ROW_KEYS:
            raise RbmlabError(
                f"{where}: gallery.rows[{i}] must have the keys label, run, show "
                "(and sweeps, sampler, for show=samples)"
            )
        sweeps = row.get("sweeps")
        if sweeps is not None and (
            row["show"] != "samples" or not isinstance(sweeps, int) or isinstance(sweeps, bool) or sweeps < 0
        ):
            raise RbmlabError(
                f"{where}: gallery.rows[{i}].sweeps must be a non-negative integer, on a show=samples row"
            )
        if "sampler" in row:
            if row["show"] != "samples":
                raise RbmlabError(f"{where}: gallery.rows[{i}].sampler is for a show=samples row")
            row = rows[i] = {**row, "sampler": parse_sampler(row["sampler"], f"gallery.rows[{i}].sampler")}
        if row["show"] not in SHOWS:
            raise RbmlabError(
                f"{where}: gallery.rows[{i}].show must be one of {', '.join(SHOWS)}, got {row['show']!r}"
            )
        if not isinstance(row["run"], dict) or not isinstance(row["run"].get("experiment"), str):
            raise RbmlabError(f"{where}: gallery.rows[{i}].run must be a mapping with an experiment key")
    return rows


def draw(
    rows: Sequence[Row], images: Mapping[Path, RunImages], title: str, header: str | None = None
) -> bytes:
    """The grid as PNG bytes: one row per ``rows`` entry, its label at the left; the header line and
    the title, wrapped to the figure's width, on top."""
    from matplotlib.figure import Figure  # noqa: PLC0415 - no pyplot: no global backend

    n = min(images[row.key].inputs.shape[0] for row in rows)
    fig = Figure(figsize=(1.2 + 0.9 * n, 0.6 + 0.9 * len(rows)))
    axes = fig.subplots(len(rows), n, squeeze=False)
    for r, row in enumerate(rows):
        run = images[row.key]
        for c in range(n):
            ax = axes[r][c]
            ax.imshow(
                run.show(row.show)[c].reshape(run.image_shape),
                cmap="gray_r",
                vmin=0,
                vmax=1,
                interpolation="nearest",
            )
            ax.set_xticks([])
            ax.set_yticks([])
        axes[r][0].set_ylabel(row.label, rotation=0, ha="right", va="center", fontsize=8)
    fig.tight_layout()
    top_texts(fig, title, header, title_size=9)
    return png_bytes(fig, dpi=100)


def describe(
    rows: Sequence[Row], images: Mapping[Path, RunImages], title: str, split: str, command: str
) -> str:
    """The markdown note beside the PNG: which run (relative to the working directory, the
    checkout: rbmlab.storage.portable), epoch and inference each row shows."""
    n = min(run.inputs.shape[0] for run in images.values())
    sampled = (
        f"; a samples row: {n} draws from fresh states, seed {SAMPLE_SEED}"
        if any(row.show == "samples" for row in rows)
        else ""
    )
    lines = [
        f"# {title}",
        "",
        f"Made by `{command}`: {n} images per row, the first {n} {split} examples{sampled}.",
        "",
        "| row | shows | run | epoch shown | early-stopping epoch | "
        "inference | pixel error on these images (%) |",
        "|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        run = images[row.key]
        error = f"{run.pixel_error(n):.2f}" if row.show == "prediction" else ""
        lines.append(
            f"| {row.label} | {row.show} | {portable_path(row.run_dir, [Path.cwd()])} | {run.epoch} | "
            f"{'' if run.early_stopping_epoch is None else run.early_stopping_epoch} | "
            f"{run.inference if row.show in ('prediction', 'samples') else ''} | {error} |"
        )
    return "\n".join(lines) + "\n"


def runs_header(run_dirs: Sequence[Path]) -> str:
    """The header line (rbmlab.report.header) of the runs a gallery shows."""
    from rbmlab.report.header import report_header  # noqa: PLC0415
    from rbmlab.report.load import load_runs  # noqa: PLC0415

    distinct = list(dict.fromkeys(Path(d) for d in run_dirs))
    return report_header(load_runs({f"row{i}": d for i, d in enumerate(distinct)})[0])


def make_gallery(
    rows: Sequence[Row],
    split: str,
    examples: int,
    title: str,
    stem: Path,
    command: str,
    header: str | None = None,
) -> dict[str, Path]:
    """Predict once per run, draw (``header``: the figure's first line; default the shown runs'
    header line), and write ``stem``.png and ``stem``.md together."""
    from rbmlab.storage.publish import publish  # noqa: PLC0415

    images = {}
    for row in rows:
        if row.key not in images:
            images[row.key] = (
                generative_images(row.run_dir, split, examples, row.show, row.sweeps, row.sampler)
                if row.show in GENERATIVE
                else run_images(row.run_dir, split, examples)
            )
    header = header or runs_header([row.run_dir for row in rows])  # read after each run is found whole
    paths = {"plot": stem.with_suffix(".png"), "table": stem.with_suffix(".md")}
    stem.parent.mkdir(parents=True, exist_ok=True)
    publish(
        {
            paths["plot"]: draw(rows, images, title, header),
            paths["table"]: f"_{header}_\n\n" + describe(rows, images, title, split, command),
        },
        what="gallery",
    )
    return paths
