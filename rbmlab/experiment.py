"""``rbmlab experiment PAPER/ARTEFACT [scale=...]``: one paper table or figure, end to end.

An experiment file ``experiments/<paper>/<artefact>.yaml`` declares:
    title, description    what the artefact is
    overrides             applied to every run (Hydra override strings)
    grid                  key → list of values, swept (cartesian product)
    variants              optional: name → list of overrides (e.g. one per learner with its own
                          k and d); each variant is swept over the grid into a sub-directory
    seeds                 list of seeds (trials)
    scales                smoke / reduced / paper → {overrides: [...], and optionally seeds: [...],
                          grid: {key: values} (replaces those keys of the grid), variants:
                          [names] (runs only these variants)}
    report                metric, x (epoch, updates, or a config key such as model.n_hidden:
                          final values against it), lines, panels, hlines, markers, paper (the
                          paper's own numbers)
    runs_of               optional: <paper>/<artefact> whose runs this one reports (no sweep)
The sweep runs as a Hydra multirun into outputs/experiments/<paper>/<artefact>/<scale>/, then the
report is written to results/<paper>/<artefact>_<scale>.{md,png,_curves.csv,_runs.csv}.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from rbmlab.errors import RbmlabError

EXPERIMENTS_DIR = Path(__file__).resolve().parent.parent / "experiments"
SCALE_TIERS = ("smoke", "reduced", "paper")
SPEC_KEYS = {"title", "description", "overrides", "variants", "grid", "seeds", "scales", "report",
             "runs_of"}


def available() -> list[str]:
    return sorted(f"{p.parent.name}/{p.stem}" for p in EXPERIMENTS_DIR.glob("*/*.yaml"))


def load_spec(name: str) -> dict[str, Any]:
    """The checked spec of ``name``: exactly ``<paper>/<artefact>`` (no path), a file under experiments/."""
    parts = name.split("/")
    if len(parts) != 2 or not all(
        part not in ("", ".", "..") and all(c.isascii() and (c.isalnum() or c in "_.-") for c in part)
        for part in parts
    ):
        raise RbmlabError(f"experiment: {name!r} is not of the form PAPER/ARTEFACT (two names of letters, "
                          f"digits, _ . -); available: {', '.join(available())}")
    path = EXPERIMENTS_DIR / f"{name}.yaml"
    if not path.is_file():
        raise RbmlabError(f"experiment: unknown experiment {name!r}; available: {', '.join(available())}")
    try:
        spec = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as e:
        raise RbmlabError(f"experiment: {path} is not valid YAML ({str(e).splitlines()[0]})") from None
    unknown = set(spec) - SPEC_KEYS
    if unknown:
        raise RbmlabError(f"experiment: {path}: unknown key(s) {', '.join(sorted(unknown))}")
    for tier in spec.get("scales", {}):
        if tier not in SCALE_TIERS:
            raise RbmlabError(f"experiment: {path}: unknown scale {tier!r}; tiers: {', '.join(SCALE_TIERS)}")
    return spec


def sweep_overrides(spec: dict[str, Any], scale: str, extra: list[str],
                    variant: list[str] = ()) -> list[str]:
    """The ``rbmlab run -m`` arguments of one experiment (variant) at one scale."""
    tier = spec.get("scales", {}).get(scale)
    if tier is None:
        raise RbmlabError(f"experiment: no settings for scale {scale!r}; "
                          f"defined: {', '.join(spec.get('scales', {}))}")
    seeds = tier.get("seeds", spec.get("seeds", [0]))
    grid = {**spec.get("grid", {}), **tier.get("grid", {}), "seed": seeds}
    swept = [f"{k}={','.join(str(v) for v in values)}" for k, values in grid.items()]
    return [*spec.get("overrides", []), *variant, *tier.get("overrides", []), *extra, *swept,
            f"scale={scale}"]


def _parse_argv(argv: list[str]) -> tuple[str, list[str], bool]:
    """(scale, other overrides, report_only) of ``rbmlab experiment NAME [args]``."""
    scale, extra, report_only = "reduced", [], False
    for arg in argv:
        if arg.startswith("scale="):
            scale = arg.split("=", 1)[1]
        elif arg.replace(" ", "").lower() in ("report_only=true", "report_only=1"):
            report_only = True   # re-render results/ from the runs already in outputs/
        else:
            extra.append(arg)
    if scale not in SCALE_TIERS:
        raise RbmlabError(f"scale: unknown scale {scale!r}; choose one of {', '.join(SCALE_TIERS)}")
    return scale, extra, report_only


def _is_resume(extra: list[str]) -> bool:
    return any(a.replace(" ", "").lower() in ("resume=true", "resume=1", "resume=yes") for a in extra)


def _set_aside(sweep_dir: Path) -> Path:
    """Rename a previous sweep to ``<scale>.<n>`` (first free n) so a fresh one loses nothing."""
    n = 1
    while (kept := sweep_dir.with_name(f"{sweep_dir.name}.{n}")).exists():
        n += 1
    sweep_dir.rename(kept)
    return kept


def _sweep(name: str, spec: dict[str, Any], scale: str, extra: list[str], sweep_dir: Path) -> list[str]:
    """Run every variant of the experiment's sweep at ``scale`` into ``sweep_dir``; returns what
    went wrong in failed jobs (empty when none failed).

    Every job's configuration is validated first; then the sweep is locked (a second experiment
    on it gets one line naming the holder) and, under the lock, an earlier sweep in
    ``sweep_dir`` (when not resuming) is moved aside to ``<scale>.<n>``, so a typo costs nothing.
    """
    from rbmlab.hydra_app import expand_overrides, failed_jobs, run_hydra, validate_jobs  # noqa: PLC0415
    from rbmlab.locking import DirectoryLock, sweep_lock_path  # noqa: PLC0415

    variants = spec.get("variants") or {"": []}
    chosen = spec.get("scales", {}).get(scale, {}).get("variants")
    if chosen is not None:
        unknown = [v for v in chosen if v not in variants]
        if unknown:
            raise RbmlabError(f"experiment: {name}: scale {scale} names unknown variant(s) "
                              f"{', '.join(unknown)}; defined: {', '.join(variants)}")
        variants = {v: variants[v] for v in chosen}
    jobs = {variant: sweep_overrides(spec, scale, extra, overrides)
            for variant, overrides in variants.items()}
    configs = {variant: validate_jobs(expand_overrides(overrides)) for variant, overrides in jobs.items()}
    lock_wait = next(iter(configs.values()))[0].lock_wait
    problems: list[str] = []
    with DirectoryLock(sweep_lock_path(sweep_dir), f"experiment {name}", lock_wait):
        if sweep_dir.exists() and not _is_resume(extra):
            kept = _set_aside(sweep_dir)
            print(f"rbmlab experiment {name}: earlier runs moved to {kept}; this sweep starts afresh "
                  f"(resume=true would have continued them in place)")
        for variant, overrides in jobs.items():
            print(f"rbmlab experiment {name} (scale={scale}): {' '.join(overrides)}")
            # validated above: straight to Hydra (``rbmlab run -m`` would compose every job again)
            variant_dir = sweep_dir / variant if variant else sweep_dir
            run_hydra(["-m", *overrides, f"hydra.sweep.dir={variant_dir}"])
            problems += failed_jobs(variant_dir, len(configs[variant]))
    return problems


def run_experiment(name: str, argv: list[str], results_root: Path | str = "results",
                   outputs_root: Path | str = "outputs/experiments") -> dict[str, Any]:
    """Sweep (unless ``report_only=true``) and report one experiment; returns make_report's dict.

    An experiment with ``runs_of: <paper>/<artefact>`` has no sweep of its own: it reports over
    that experiment's runs (running them first if they are not there), e.g. a table drawn from
    the runs of a figure.
    """
    from rbmlab.report import make_report  # noqa: PLC0415

    spec = load_spec(name)
    scale, extra, report_only = _parse_argv(argv)
    paper, artefact = name.split("/", 1)
    source = spec.get("runs_of") or name
    sweep_dir = Path(outputs_root) / source / scale
    if report_only and not sweep_dir.is_dir():
        raise RbmlabError(f"report_only: no runs of {source} at scale {scale} in {sweep_dir}")
    if source != name:
        if not report_only and (not sweep_dir.is_dir() or _is_resume(extra)):
            run_experiment(source, argv, results_root, outputs_root)
        else:
            print(f"rbmlab experiment {name}: reporting the runs of {source} in {sweep_dir}")
    problems = _sweep(name, spec, scale, extra, sweep_dir) if source == name and not report_only else []
    report = spec.get("report", {})
    result = make_report(sweep_dir, Path(results_root) / paper, metric=report.get("metric"),
                         x=report.get("x", "epoch"), lines=report.get("lines"),
                         panels=report.get("panels"), title=f"{spec.get('title', name)} (scale: {scale})",
                         paper=report.get("paper"), hlines=report.get("hlines"),
                         markers=report.get("markers"), filename_stem=f"{artefact}_{scale}",
                         logx=bool(report.get("logx", False)))
    if problems:
        raise RbmlabError(f"{len(problems)} job(s) of the sweep failed (the report leaves them out); "
                          f"first: {problems[0]}")
    return result
