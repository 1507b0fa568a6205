"""The figures that the ``figure`` experiment kind draws, by name: ``draw: <name>`` in an experiment
file's ``figure:`` section picks one. Each entry is a :class:`Drawing` (its draw function, its
options class and the experiments whose runs it may read), in a module of this package; adding a
figure is its module (or a function in one) and one line here.

A drawing reads the runs of its *source* experiment at one scale through a :class:`Canvas` and
writes its files into the paper's results folder under names of its own, e.g.
results/tap/figure-5-binary-seeds_reduced.{png,md}."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from rbmlab.errors import RbmlabError
from rbmlab.registry import Registry
from rbmlab.validation import Config, option

FIGURES = Registry(
    "figure",
    {
        "tap-figure-4": "rbmlab.experiment.figures.tap_fields:FIGURE_4",
        "tap-figure-4-localisation": "rbmlab.experiment.figures.tap_localisation:LOCALISATION",
        "tap-figure-4-features": "rbmlab.experiment.figures.tap_features:FEATURES",
        "tap-figure-5": "rbmlab.experiment.figures.tap_solutions:FIGURE_5",
        "tap-figure-5-counting": "rbmlab.experiment.figures.tap_counting:COUNTING_RULES",
        "tap-figure-6": "rbmlab.experiment.figures.tap_solutions:FIGURE_6",
        "tap-figure-7": "rbmlab.experiment.figures.tap_solutions:FIGURE_7",
        "tap-figure-7-attractors": "rbmlab.experiment.figures.tap_attractors:ATTRACTORS",
        "tap-figure-8": "rbmlab.experiment.figures.tap_denoising:FIGURE_8",
        "tap-figure-9": "rbmlab.experiment.figures.tap_denoising:FIGURE_9",
        "tap-figure-9-structure": "rbmlab.experiment.figures.tap_structure:STRUCTURE",
        "tap-figure-12": "rbmlab.experiment.figures.tap_log_z:FIGURE_12",
    },
)


@dataclass
class FigureOptions(Config):
    """Every figure's options: where the source's runs are (a drawing's own options extend it)."""

    sweep: str | None = option(
        None,
        "the runs' sweep directory (default outputs/experiments/<source>/"
        "<scale>; given, the source experiment is not run)",
    )


@dataclass(frozen=True)
class Drawing:
    """One figure: ``draw(canvas, options)``; ``options``, the rbmlab.validation Config class of
    its options (``figure.options``, the tiers' ``options`` and the command line's key=value);
    ``sources``, the experiments whose runs it can read → the suffix its files' names then carry
    (e.g. ``{"tap/figure-3": "", "tap/figure-3-seeds": "-seeds"}``)."""

    draw: Callable[[Canvas, Any], None]
    options: type
    sources: dict[str, str]
    reads: frozenset[str] | None = None  # the options it reads, when its class is shared: the rest refused

    def refuse_unread(self, options: Any, name: str) -> None:
        """A one-line error for an option set away from its default that this drawing does not read
        (``reads``; ``sweep`` is every drawing's)."""
        if self.reads is None:
            return
        for f in fields(options):
            if f.name not in self.reads | {"sweep"} and getattr(options, f.name) != f.default:
                raise RbmlabError(
                    f"figure.{f.name}: figure {name} does not read it (it reads "
                    f"{', '.join(sorted(self.reads)) or 'no option'} and sweep)"
                )


@dataclass
class Canvas:
    """What a drawing reads and where it writes: the runs of ``source`` in ``sweep`` at ``scale``;
    its files go to ``out`` (results/<paper>), their names ending in ``suffix`` then _<scale>;
    work worth keeping between drawings (Fig. 5's TAP solutions) goes under ``cache``
    (outputs/experiments/<paper>)."""

    source: str
    suffix: str
    sweep: Path
    scale: str
    out: Path
    cache: Path
    written: list[Path] = field(default_factory=list)

    def name(self, stem: str) -> str:
        """The file stem of a figure drawn from this source (``figure-5-binary`` →
        ``figure-5-binary-seeds``)."""
        return stem + self.suffix

    def save_png(self, fig: Any, stem: str) -> Path:
        """``fig`` to <out>/<stem>_<scale>.png (stem as given: :meth:`name` it first)."""
        from rbmlab.report.plot import png_bytes  # noqa: PLC0415
        from rbmlab.storage.publish import publish  # noqa: PLC0415

        path = self.out / f"{stem}_{self.scale}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        publish({path: png_bytes(fig, 110)}, what="figure")
        return self._wrote(path)

    @property
    def header(self) -> str:
        """The header line (rbmlab.report.header) of the runs it draws from (the tier alone when
        a drawing reads no run directory there)."""
        import pandas as pd  # noqa: PLC0415

        from rbmlab.errors import RbmlabError  # noqa: PLC0415
        from rbmlab.report.header import report_header  # noqa: PLC0415
        from rbmlab.report.load import load_runs  # noqa: PLC0415

        try:
            runs = load_runs(self.sweep)[0]
        except RbmlabError:
            runs = pd.DataFrame({"run_dir": []})
        return report_header(runs, self.scale)

    def save_text(self, stem: str, suffix: str, text: str) -> Path:
        """``text`` to <out>/<stem>_<scale>.<suffix> (md, csv); a markdown note begins with the
        header line of the runs it was drawn from."""
        from rbmlab.storage.publish import publish  # noqa: PLC0415

        if suffix == "md":
            text = f"_{self.header}_\n\n{text}"
        path = self.out / f"{stem}_{self.scale}.{suffix}"
        path.parent.mkdir(parents=True, exist_ok=True)
        publish({path: text}, what="figure")
        return self._wrote(path)

    def _wrote(self, path: Path) -> Path:
        self.written.append(path)
        print(f"wrote {path}")
        return path
