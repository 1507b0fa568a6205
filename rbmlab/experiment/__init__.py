"""``rbmlab experiment PAPER/ARTEFACT [scale=...]``: one paper table or figure, end to end.

An experiment file ``experiments/<paper>/<artefact>.yaml`` declares:
    title, description    what the artefact is
    overrides             applied to every run (Hydra override strings)
    grid                  key → list of values, swept (cartesian product)
    variants              optional: name → list of overrides (e.g. one per learner with its own
                          k and d); each variant is swept over the grid into a sub-directory.
                          A variant may instead be a mapping {overrides, grid, seeds, after,
                          scales: {tier: {overrides, grid, seeds}}}: its own grid and seeds
                          replace the experiment's, and ``after: <variant>`` runs it once that
                          variant's sweep is done (its jobs are checked then: they may read that
                          variant's files, e.g. model.init={sweep}/fw/0/snapshots/epoch_100.npz;
                          ``{sweep}`` in an override is the experiment's sweep directory)
    seeds                 list of seeds (trials), or a count N for seeds 0 … N − 1
    scales                smoke / reduced / paper → {overrides: [...], and optionally seeds: [...],
                          grid: {key: values} (replaces those keys of the grid), variants:
                          [names] (runs only these variants)}
    report                metric, x (epoch, updates, or a config key such as model.n_hidden:
                          final values against it), lines (``variant``: one line per variant),
                          panels, hlines, markers, paper (the paper's own numbers); over a config
                          key also select (a metric: best run per point, e.g. on validation),
                          vlines ([{x: n | summary: early_stopping.n_hidden, label}]), table_x,
                          ratios ([{label, of: [line, ...], to: line}]: summed lines over a line),
                          where ({key: value}: only the runs with these values), derive
                          ({column: [{where: {key: value}, key, values}]}: a column made from
                          another key per group of runs, e.g. a shared x axis)
    bench                 instead of a sweep, a timing: {part: <rbmlab.bench.EXPERIMENT_PARTS name>,
                          rounds, scales: {tier: keyword arguments}}; the table of its rows goes
                          to results/<paper>/<artefact>_<scale>.md, with report.paper ([{row:
                          the start of a row's name, value}]) beside them
    gallery               instead of a sweep, an image grid of other experiments' runs (crbm_bp
                          Figure 2): {split, examples, rows: [{label, show: input | target |
                          prediction, run: {experiment: <paper>/<artefact>, variant, <key>:
                          value}}]} (rbmlab.report.gallery), those experiments run first when
                          absent; to results/<paper>/<artefact>_<scale>.{png,md}
    inference             instead of a sweep, a sampler or solver on a fixed model, nothing trained
                          (pmp Sec. 5.6's deconvolution): {problem: <rbmlab.experiment.inference.
                          PROBLEMS name>, its options}, each tier's options under scales: {tier:
                          {options}}, ``key=value`` on the command line over them; to
                          results/<paper>/<artefact>_<scale>/ (rbmlab.experiment.inference)
    figure                instead of a sweep, a figure drawn from another experiment's runs (tap
                          Figs. 4-9, 12): {draw: <rbmlab.experiment.figures.FIGURES name>, source:
                          <paper>/<artefact> (run first when absent), options}, each tier's
                          options under scales: {tier: {options}}; the drawing names its own files
                          (rbmlab.experiment.figure); on the command line a plain key=value is
                          one of its options, source=<artefact> another source, and a key of the
                          run configuration (train.epochs=3, resume=true) goes to the source
    runs_of               optional: <paper>/<artefact> (or a list of them) whose runs this one
                          reports (no sweep); with several, each run has an ``experiment`` key
    extends               optional: <paper>/<artefact> whose spec this file starts from; its own keys
                          are merged in (mappings key by key, at every depth; lists and values
                          replace): a variant of an artefact at other settings without a copy
    needs                 optional: [<paper>/<artefact>] run first (when absent at this scale, or
                          with resume=true); ``{sweep:<paper>/<artefact>}`` in an override is that
                          experiment's sweep directory at the same scale
Each file is of one kind (``KINDS``, rbmlab.experiment.<kind>), chosen by the section it has:
``bench`` (timing), ``gallery``, ``inference``, ``figure``, or none of them (sweep); a kind is its module, its
section and keys, and one line in ``KINDS``.
The sweep runs as a Hydra multirun into outputs/experiments/<paper>/<artefact>/<scale>/, then the
report is written to results/<paper>/<artefact>_<scale>.{md,png,_curves.csv,_runs.csv}, over every
run there (a smoke tier's to outputs/results/: a pipeline check is never committed).
``variants=a,b`` on the command line runs only those variants (of this experiment and
of those it runs first); with resume=true, into the sweep that holds the others. A swept key given
on the command line (``task.rate=0.1``, ``seed=0,1``) replaces its values in the sweep.
``outputs_root=DIR`` and ``results_root=DIR`` move the runs and the results (default
outputs/experiments, and results or, for smoke, outputs/results);
``hydra/launcher=joblib hydra.launcher.n_jobs=2`` launches the
jobs; every other argument a kind cannot honour (hydra.sweep.dir, -m, a run override for runs that
exist already, ...) is one line (rbmlab.experiment.arguments), never ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rbmlab.experiment.arguments import check_command_line
from rbmlab.experiment.kinds import KINDS, kind_of
from rbmlab.experiment.spec import (
    EXPERIMENTS_DIR,
    SCALE_TIERS,
    _only_variants,
    _parse_argv,
    _variants,
    available,
    load_spec,
    seed_list,
    sweep_overrides,
    variant_spec,
)

__all__ = [
    "EXPERIMENTS_DIR",
    "KINDS",
    "SCALE_TIERS",
    "available",
    "kind_of",
    "load_spec",
    "run_experiment",
    "seed_list",
    "sweep_overrides",
    "variant_spec",
    "_only_variants",
    "_parse_argv",
    "_variants",
]

RESULTS_ROOT = "results"  # the committed results: reduced and paper tiers
SMOKE_RESULTS_ROOT = "outputs/results"  # a smoke tier's files: a pipeline check, never committed


def results_root_for(scale: str) -> str:
    """Where a tier's tables and figures go unless ``results_root=`` says: the tracked results/
    folder for the reduced and paper tiers, outputs/results/ for smoke."""
    return SMOKE_RESULTS_ROOT if scale == "smoke" else RESULTS_ROOT


def run_experiment(
    name: str,
    argv: list[str],
    results_root: Path | str | None = None,
    outputs_root: Path | str = "outputs/experiments",
) -> dict[str, Any]:
    """Run one experiment of any kind at the scale ``argv`` names; returns its kind's result
    (a sweep's: make_report's dict). ``results_root=`` and ``outputs_root=`` in ``argv`` replace
    the roots given here (``results_root`` None: :func:`results_root_for` the scale); every
    argument is checked against the kind first."""
    spec = load_spec(name)
    kind = kind_of(spec, name)
    line = check_command_line(name, kind, argv)
    results_root = line.roots.get("results_root", results_root or results_root_for(line.scale))
    outputs_root = line.roots.get("outputs_root", outputs_root)
    return kind().run(name, spec, line.rest, results_root, outputs_root)
