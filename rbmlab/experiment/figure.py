"""The ``figure`` experiment kind (``figure:`` in the file): a figure drawn from the runs of another
experiment at the same scale, by a drawing of rbmlab.experiment.figures.FIGURES:

    figure:
      draw: tap-figure-5          # a FIGURES name
      source: tap/figure-3        # the experiment whose runs it reads (one the drawing accepts)
      options: {n_init: 1000}     # the drawing's options (its rbmlab.validation Config class)
    scales:                       # every tier, with its options over the section's
      smoke: {}
      reduced: {epochs: [1, 2, 3]}
      paper: {}

The source experiment runs first when it has no runs at this scale (or with resume=true), as for
``gallery`` and ``runs_of``; the drawing writes its own files to results/<paper>/ (tap Figure 5:
results/tap/figure-5-<dataset>[-seeds][-h<N_h>]_<scale>.{png,md}).

The command line, ``rbmlab experiment tap/figure-5 scale=reduced n_hidden=50``: ``scale``,
``report_only`` (draw from the runs there, never run the source) and ``resume`` as for every
experiment; then each ``key=value`` is, by its key (before any dot):
  * a key of the run configuration (conf/config.yaml: ``train.epochs=3``, ``backend=cupy``,
    ``resume=true``, ...) or a launch setting (``hydra/launcher=joblib``): for the source
    experiment, when it runs first (one line when it does not: its runs exist, report_only=true,
    or sweep= names the runs to draw);
  * ``source``: another source the drawing accepts, ``<paper>/<artefact>`` or an artefact of this
    paper (``source=figure-3-seeds``; its files' names then carry its suffix, ``-seeds``);
  * ``variants=a,b``: both the source's variants (it runs only those) and, where the drawing has
    a ``variants`` option, the datasets drawn;
  * anything else: one of the drawing's options, over the file's and the tier's (an unknown one,
    or a bad value, is a one-line error before anything runs).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import rbmlab.experiment.spec as spec_file
from rbmlab.errors import RbmlabError
from rbmlab.experiment.arguments import is_hydra
from rbmlab.experiment.spec import SCALE_TIERS, _only_variants, _parse_argv, load_spec
from rbmlab.experiment.sweep import _run_if_absent, check_passed_on, passed_on

SECTION_KEYS = ("draw", "source", "options")


class Figure:
    """The ``figure`` experiment kind (``figure:`` in the file): a figure drawn from the runs of another
    experiment at the same scale by a drawing of rbmlab.experiment.figures.FIGURES (``draw``,
    ``source``, ``options``).
    """

    name = "figure"
    section = "figure"
    keys = frozenset({"figure"})
    arguments = frozenset({"outputs_root", "report_only", "variants", "launch", "overrides"})

    def run(
        self,
        name: str,
        spec: dict[str, Any],
        argv: list[str],
        results_root: Path | str,
        outputs_root: Path | str,
    ) -> dict[str, Any]:
        """Check everything, run the source when absent, draw; returns {"files": [the paths written]}."""
        from rbmlab.experiment.figures import Canvas  # noqa: PLC0415

        plan = figure_plan(name, spec, argv)
        scale, source = plan.scale, plan.source
        sweep = Path(plan.options.sweep) if plan.options.sweep else Path(outputs_root) / source / scale
        passed = passed_on(plan.source_argv, variants=False)  # variants=: the drawing's too
        if plan.options.sweep is not None and passed:
            raise RbmlabError(
                f"{passed[0].split('=', 1)[0]}: {passed[0]} is for the runs of {source}, but "
                f"sweep={plan.options.sweep} draws from the runs there as they are; leave it out"
            )
        check_passed_on(name, [source], passed, scale, plan.source_argv[1:], plan.report_only, outputs_root)
        if plan.options.sweep is None:
            if plan.report_only and not sweep.is_dir():
                raise RbmlabError(f"report_only: no runs of {source} at scale {scale} in {sweep}")
            if plan.report_only or not _run_if_absent(
                source, plan.source_argv, scale, plan.source_argv[1:], results_root, outputs_root
            ):
                print(f"rbmlab experiment {name}: drawing from the runs of {source} in {sweep}")
        paper = name.split("/", 1)[0]
        canvas = Canvas(
            source,
            plan.drawing.sources[source],
            sweep,
            scale,
            Path(results_root) / paper,
            Path(outputs_root) / paper,
        )
        plan.drawing.draw(canvas, plan.options)
        return {"files": canvas.written}


@dataclass
class FigurePlan:
    """A figure experiment at one scale, checked: its drawing, source, options (the drawing's
    Config), the arguments for the source experiment, report_only."""

    scale: str
    drawing: Any
    draw: str
    source: str
    options: Any
    source_argv: list[str]
    report_only: bool


def figure_plan(name: str, spec: dict[str, Any], argv: list[str]) -> FigurePlan:
    """The checked plan of figure experiment ``name`` for the command line ``argv``; a bad section,
    source or option is a one-line RbmlabError (the file's naming the file, the command line's
    naming the key)."""
    from rbmlab.experiment.figures import FIGURES  # noqa: PLC0415
    from rbmlab.validation import key_values, parse_options  # noqa: PLC0415

    scale, extra, report_only = _parse_argv(argv)
    where = f"experiment: {spec_file.EXPERIMENTS_DIR / name}.yaml"
    section = spec["figure"]
    if (
        not isinstance(section, dict)
        or set(section) - set(SECTION_KEYS)
        or not {"draw", "source"} <= set(section)
    ):
        raise RbmlabError(
            f"{where}: figure must be {{draw: <figure>, source: <paper>/<artefact>, "
            f"options: {{...}}}}, got {section!r}"
        )
    try:
        drawing = FIGURES.get(section["draw"], "figure.draw")
    except RbmlabError as e:
        raise RbmlabError(f"{where}: {e}") from None
    what = f"figure {section['draw']}"
    file_options = _options(section.get("options"), f"{where}: figure.options")
    parse_options(drawing.options, file_options, f"{where}: figure.options", what)
    tiers = spec.get("scales") or {}
    if scale not in tiers:
        raise RbmlabError(f"{where}: no settings for scale {scale!r}; defined: {', '.join(tiers)}")
    file_options |= _options(tiers[scale], f"{where}: scales.{scale}")
    parse_options(drawing.options, file_options, f"{where}: scales.{scale}", what)
    source = _source(section["source"], drawing, section["draw"], name, f"{where}: figure.source")

    run_keys = _run_keys()
    own, to_source = {}, [f"scale={scale}"]
    only = _only_variants(argv)
    if only is not None:
        to_source.append(f"variants={','.join(only)}")
        if "variants" in _fields(drawing.options):
            own["variants"] = only
    for arg in extra:
        key = arg.split("=", 1)[0].lstrip("+~").split(".", 1)[0].strip()
        if key in run_keys or is_hydra(key):  # a launch setting: for the source's jobs
            to_source.append(arg)
        elif key == "source":
            source = _source(key_values([arg])["source"], drawing, section["draw"], name, "source")
        else:
            own.update(key_values([arg]))
    options = parse_options(drawing.options, {**file_options, **own}, "figure", what)
    drawing.refuse_unread(options, section["draw"])
    return FigurePlan(scale, drawing, section["draw"], source, options, to_source, report_only)


def _options(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RbmlabError(f"{where}: expected a mapping of options, got {value!r}")
    return dict(value)


def _fields(cls: type) -> set[str]:
    import dataclasses  # noqa: PLC0415

    return {f.name for f in dataclasses.fields(cls)}


def _source(value: Any, drawing: Any, draw: str, name: str, key: str) -> str:
    """``value`` as a source of ``drawing``: <paper>/<artefact>, or an artefact of ``name``'s paper."""
    source = value if isinstance(value, str) and "/" in value else f"{name.split('/', 1)[0]}/{value}"
    if source not in drawing.sources:
        raise RbmlabError(
            f"{key}: {draw} is drawn from the runs of {', '.join(drawing.sources)}; got {value!r}"
        )
    load_spec(source)  # a known experiment, or a one-line error naming it
    return source


def _run_keys() -> set[str]:
    """The top-level keys and config groups of the run configuration (conf/config.yaml)."""
    import yaml  # noqa: PLC0415

    from rbmlab.hydra_app import CONF_DIR  # noqa: PLC0415

    config = yaml.safe_load((CONF_DIR / "config.yaml").read_text())
    groups = {next(iter(d)) for d in config.get("defaults", []) if isinstance(d, dict)}
    return (set(config) - {"defaults"}) | groups | {p.name for p in CONF_DIR.iterdir() if p.is_dir()}


def check_figure(name: str, spec: dict[str, Any]) -> list[FigurePlan]:
    """Every tier's plan of figure experiment ``name`` (its file checked; nothing runs)."""
    return [figure_plan(name, spec, [f"scale={tier}"]) for tier in SCALE_TIERS]
