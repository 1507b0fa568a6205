"""The ``sweep`` experiment kind: a Hydra multirun of train-then-evaluate jobs (variants × grid ×
seeds at the tier's settings) into outputs/experiments/<paper>/<artefact>/<scale>/, then the report
(rbmlab.report) over its runs; with ``runs_of``, the report over other experiments' runs instead
(they run first when absent), e.g. a table drawn from the runs of a figure."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path
from typing import Any

import rbmlab.experiment.spec as spec_file
from rbmlab.errors import RbmlabError
from rbmlab.experiment.arguments import key_of, parse_command_line
from rbmlab.experiment.spec import (
    _deferred,
    _only_variants,
    _parse_argv,
    _variants,
    load_spec,
    sweep_overrides,
)
from rbmlab.report.tidy import has_tidy_files


class Sweep:
    """The ``sweep`` experiment kind, the default: a Hydra multirun of train-then-evaluate jobs
    (variants × grid × seeds at the tier's settings), then the report over its runs (or, with
    ``runs_of``, over other experiments' runs).
    """

    name = "sweep"
    section = None  # the default kind
    keys = frozenset({"overrides", "variants", "grid", "seeds", "runs_of", "needs"})
    arguments = frozenset({"outputs_root", "report_only", "variants", "launch", "overrides"})

    def run(
        self,
        name: str,
        spec: dict[str, Any],
        argv: list[str],
        results_root: Path | str,
        outputs_root: Path | str,
    ) -> dict[str, Any]:
        """Sweep (unless ``report_only=true``) and report; returns make_report's dict.

        Every job's configuration is validated first; then the sweep directory is locked (a second
        experiment on it gets one line naming the holder) for the sweep and the report."""
        return run_sweep(name, spec, argv, results_root, outputs_root)


def run_sweep(
    name: str,
    spec: dict[str, Any],
    argv: list[str],
    results_root: Path | str,
    outputs_root: Path | str,
    report_with=None,
) -> dict[str, Any]:
    """:meth:`Sweep.run`; ``report_with(sweep_dir)``, when given, makes the report over the runs
    instead of :func:`rbmlab.report.make_report` (another kind's own report: the leaderboard's)."""
    from rbmlab.hydra_app import expand_overrides, validate_jobs  # noqa: PLC0415
    from rbmlab.report import make_report  # noqa: PLC0415
    from rbmlab.report.spec import ReportSpec  # noqa: PLC0415
    from rbmlab.storage.locking import DirectoryLock  # noqa: PLC0415

    scale, extra, report_only = _parse_argv(argv)
    paper, artefact = name.split("/", 1)
    sources = _runs_of(name, spec)
    sweeps = {source: Path(outputs_root) / source / scale for source in sources}
    stem = Path(results_root) / paper / f"{artefact}_{scale}"
    if (
        report_with is None
        and report_only
        and not all(sweep.is_dir() for sweep in sweeps.values())
        and has_tidy_files(stem)
    ):
        return render_committed(name, spec, scale, stem, extra)
    for source, sweep in sweeps.items():
        if report_only and not sweep.is_dir():
            raise RbmlabError(
                f"report_only: no runs of {source} at scale {scale} in {sweep}, and no "
                f"committed {stem.name}_runs.csv to render from"
            )
    check_passed_on(name, list(sources), passed_on(argv), scale, extra, report_only, outputs_root)
    if not report_only:
        for need in spec.get("needs") or []:  # experiments whose runs this one's jobs start from
            _run_if_absent(need, argv, scale, extra, results_root, outputs_root)
    own = name in sources
    jobs = (
        _variants(name, spec, scale, extra, sweeps[name], _only_variants(argv))
        if own and not report_only
        else {}
    )
    deferred = _deferred(spec)
    configs = {
        variant: validate_jobs(expand_overrides(overrides))
        for variant, overrides in jobs.items()
        if variant not in deferred
    }
    for source, sweep in sweeps.items():
        if not own and (
            report_only or not _run_if_absent(source, argv, scale, extra, results_root, outputs_root)
        ):
            print(f"rbmlab experiment {name}: reporting the runs of {source} in {sweep}")
    first = (
        next(iter(configs.values()))[0] if configs else _first_job(*next(iter(sources.items())), scale, extra)
    )
    report = spec.get("report") or {}
    with ExitStack() as locks:
        for source, sweep in sorted(sweeps.items(), key=lambda item: str(item[1].resolve())):
            locks.enter_context(DirectoryLock.for_sweep(sweep, f"experiment {source}", first.lock_wait))
        problems = (
            _sweep(name, jobs, {v: len(c) for v, c in configs.items()}, sweeps[name], first.resume, deferred)
            if jobs
            else []
        )
        roots = sweeps if len(sweeps) > 1 else next(iter(sweeps.values()))
        variants = {v for source_spec in sources.values() for v in source_spec.get("variants") or []}
        result = (
            report_with(roots)
            if report_with is not None
            else make_report(
                roots,
                Path(results_root) / paper,
                ReportSpec.parse(report, name),
                title=f"{spec.get('title', name)} (scale: {scale})",
                filename_stem=f"{artefact}_{scale}",
                variants=sorted(variants),
                outputs_root=outputs_root,
            )
        )
    if problems:
        raise RbmlabError(
            f"{len(problems)} job(s) of the sweep failed (the report leaves them out); first: {problems[0]}"
        )
    return result


def render_committed(
    name: str, spec: dict[str, Any], scale: str, stem: Path, extra: list[str] = ()
) -> dict[str, Any]:
    """``report_only=true`` where the runs are not here but the report's committed tidy files are
    (``stem``: results/<paper>/<artefact>_<scale>): its table and figure rendered again from them
    (rbmlab.report.tidy), nothing run."""
    from rbmlab.report import make_report  # noqa: PLC0415
    from rbmlab.report.spec import ReportSpec  # noqa: PLC0415
    from rbmlab.report.tidy import Committed  # noqa: PLC0415

    print(f"rbmlab experiment {name}: no runs here; rendering from the committed {stem.name}_runs.csv")
    sources = _runs_of(name, spec)
    variants = sorted({v for source_spec in sources.values() for v in source_spec.get("variants") or []})
    committed = Committed(
        stem, _job_constants(sources, scale, list(extra)), tuple(sources) if len(sources) > 1 else ()
    )
    return make_report(
        committed,
        stem.parent,
        ReportSpec.parse(spec.get("report") or {}, name),
        title=f"{spec.get('title', name)} (scale: {scale})",
        filename_stem=stem.name,
        variants=variants,
    )


def _job_constants(sources: dict[str, dict[str, Any]], scale: str, extra: list[str]) -> dict[str, Any]:
    """The header's config keys (rbmlab.report.header.HEADER_KEYS) that take one value over the
    first job of every variant of ``sources``, composed (no data read): what a runs CSV written
    before it listed them lacks."""
    from rbmlab.config import flatten, to_plain  # noqa: PLC0415
    from rbmlab.hydra_app import expand_overrides, validated_run_config  # noqa: PLC0415
    from rbmlab.report.header import HEADER_KEYS  # noqa: PLC0415

    seen: dict[str, set[Any]] = {key: set() for key in HEADER_KEYS}
    for source, source_spec in sources.items():
        for overrides in _variants(source, source_spec, scale, extra).values():
            flat = flatten(to_plain(validated_run_config(expand_overrides(overrides)[0])))
            for key in HEADER_KEYS:
                seen[key].add(flat.get(key))
    return {key: next(iter(values)) for key, values in seen.items() if len(values) == 1}


def _first_job(name: str, spec: dict[str, Any], scale: str, extra: list[str]):
    """The validated RunConfig of the experiment's first job (resume, lock_wait, ...)."""
    from rbmlab.hydra_app import expand_overrides, validated_run_config  # noqa: PLC0415

    return validated_run_config(expand_overrides(next(iter(_variants(name, spec, scale, extra).values())))[0])


def _sweep(
    name: str,
    jobs: dict[str, list[str]],
    n_jobs: dict[str, int],
    sweep_dir: Path,
    resume: bool,
    deferred: set[str] = frozenset(),
) -> list[str]:
    """Run every variant's sweep into ``sweep_dir`` (its lock held); returns what went wrong in
    failed jobs. Without resume, an earlier sweep there is first moved aside to ``<scale>.<n>``.
    A ``deferred`` variant's jobs are checked when its turn comes (after the ones it reads)."""
    from rbmlab.hydra_app import expand_overrides, launch, parse_overrides, validate_jobs  # noqa: PLC0415
    from rbmlab.run.outputs import failed_jobs, move_aside  # noqa: PLC0415
    from rbmlab.run.sweepers import tag_overrides  # noqa: PLC0415

    if sweep_dir.exists() and not resume:
        kept = move_aside(sweep_dir, f"experiment {name}")
        print(
            f"rbmlab experiment {name}: earlier runs moved to {kept}; this sweep starts afresh "
            f"(resume=true would have continued them in place)"
        )
    problems: list[str] = []
    for variant, overrides in jobs.items():
        print(f"rbmlab experiment {name}: {' '.join(overrides)}")
        # validated already: straight to Hydra (``rbmlab run -m`` would compose every job again)
        variant_dir = sweep_dir / variant if variant else sweep_dir
        if variant in deferred:
            n_jobs = {**n_jobs, variant: len(validate_jobs(expand_overrides(overrides)))}
        tags = tag_overrides(parse_overrides(overrides))  # the jobs' lines name their swept values
        launch(
            ["-m", *overrides, *tags, f"hydra.sweep.dir={variant_dir}"],
            variant_dir,
            f"experiment {name}",
            True,
        )
        problems += failed_jobs(variant_dir, n_jobs[variant])
    return problems


# run overrides that apply whether or not the runs they are passed to run again: resume=true is
# what makes them run again, lock_wait how long to wait for their locks
APPLY_ALWAYS = ("resume", "lock_wait")


def passed_on(argv: list[str], variants: bool = True) -> list[str]:
    """The arguments of ``argv`` that only the runs of an experiment take (run overrides, launch
    settings and, with ``variants``, variants=), less those that apply anyway (APPLY_ALWAYS)."""
    line = parse_command_line(argv)
    chosen = [*line.extra, *([line.given["variants"]] if variants and line.variants is not None else [])]
    return [a for a in chosen if key_of(a) not in APPLY_ALWAYS]


def check_passed_on(
    name: str,
    sources: list[str],
    passed: list[str],
    scale: str,
    extra: list[str],
    report_only: bool,
    outputs_root: Path | str,
) -> None:
    """One line when an argument ``passed`` on to the runs of ``sources`` (this experiment's own
    or those it reads) would not reach them: with report_only=true, or where their runs exist
    already and are not run again (another experiment's, without resume=true): never ignored.
    Checked for every source before any runs, so none runs with it and another without."""
    if not passed:
        return
    for source in sources:
        if report_only:
            why = "report_only=true reports the runs there as they are; leave it out"
        elif source != name and not will_run(source, scale, extra, outputs_root):
            why = (
                f"the runs of {source} at scale {scale} exist already "
                f"(in {Path(outputs_root) / source / scale}) "
                "and are not run again; leave it out, or move that sweep aside to run it anew with it"
            )
        else:
            continue
        raise RbmlabError(f"{key_of(passed[0])}: {passed[0]} is for the runs of {source}, but {why}")


def will_run(other: str, scale: str, extra: list[str], outputs_root: Path | str) -> bool:
    """Does experiment ``other`` run when this one reads its runs: when it has no sweep at
    ``scale`` yet, or with resume=true."""
    return not (Path(outputs_root) / other / scale).is_dir() or _resume_requested(other, scale, extra)


def _resume_requested(name: str, scale: str, extra: list[str]) -> bool:
    """Does the command line (or the experiment's own overrides) ask for resume=true? Read from the
    overrides themselves: the command line may carry keys that another experiment does not
    have (task.rate for an occlusion table), which composing its job would refuse."""
    values = [
        o.split("=", 1)[1].strip().lower()
        for o in (*sweep_overrides(load_spec(name), scale, []), *extra)
        if o.split("=", 1)[0].strip() == "resume"
    ]
    return bool(values) and values[-1] in ("true", "1", "yes")


def _run_if_absent(
    other: str,
    argv: list[str],
    scale: str,
    extra: list[str],
    results_root: Path | str,
    outputs_root: Path | str,
) -> bool:
    """Run experiment ``other`` (whose runs this one reports or starts from) when it has no sweep
    at ``scale`` yet, or with resume=true; True when it ran."""
    if not will_run(other, scale, extra, outputs_root):
        return False
    from rbmlab.experiment import run_experiment  # noqa: PLC0415 - any kind, through the package

    run_experiment(other, argv, results_root, outputs_root)
    return True


def _runs_of(name: str, spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """{name: spec} of the experiments whose runs ``name`` reports: its ``runs_of``, one name or a
    list of others (none: {name: spec}, its own runs)."""
    value = spec.get("runs_of")
    if value is None:
        return {name: spec}
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names or not all(isinstance(n, str) and n != name for n in names):
        raise RbmlabError(
            f"experiment: {spec_file.EXPERIMENTS_DIR / name}.yaml: runs_of must be <paper>/<artefact> "
            f"or a list of them, other experiments (with their own runs), got {value!r}"
        )
    specs = {other: load_spec(other) for other in dict.fromkeys(names)}  # known, or a one-line error
    nested = [other for other, other_spec in specs.items() if other_spec.get("runs_of") is not None]
    if nested:
        raise RbmlabError(
            f"experiment: {spec_file.EXPERIMENTS_DIR / name}.yaml: runs_of names {nested[0]}, which "
            "has no runs of its own (it reports others')"
        )
    return specs
