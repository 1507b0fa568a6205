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
    runs_of               optional: <paper>/<artefact> (or a list of them) whose runs this one
                          reports (no sweep); with several, each run has an ``experiment`` key
    extends               optional: <paper>/<artefact> whose spec this file starts from; its own keys
                          are merged in (mappings key by key, at every depth; lists and values
                          replace): a variant of an artefact at other settings without a copy
    needs                 optional: [<paper>/<artefact>] run first (when absent at this scale, or
                          with resume=true); ``{sweep:<paper>/<artefact>}`` in an override is that
                          experiment's sweep directory at the same scale
The sweep runs as a Hydra multirun into outputs/experiments/<paper>/<artefact>/<scale>/, then the
report is written to results/<paper>/<artefact>_<scale>.{md,png,_curves.csv,_runs.csv}, over every
run there. ``variants=a,b`` on the command line runs only those variants (of this experiment and
of those it runs first); with resume=true, into the sweep that holds the others. A swept key given
on the command line (``task.rate=0.1``, ``seed=0,1``) replaces its values in the sweep.
"""
from __future__ import annotations

import inspect
import re
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import yaml

from rbmlab.errors import RbmlabError

EXPERIMENTS_DIR = Path(__file__).resolve().parent.parent / "experiments"
SCALE_TIERS = ("smoke", "reduced", "paper")
SPEC_KEYS = {"title", "description", "overrides", "variants", "grid", "seeds", "scales", "report", "bench",
             "gallery", "runs_of", "needs", "extends"}
OTHER_SWEEP = re.compile(r"\{sweep:([^}]+)\}")   # {sweep:<paper>/<artefact>}: that one's sweep dir


def available() -> list[str]:
    return sorted(f"{p.parent.name}/{p.stem}" for p in EXPERIMENTS_DIR.glob("*/*.yaml"))


def load_spec(name: str, _extending: tuple[str, ...] = ()) -> dict[str, Any]:
    """The checked spec of ``name``: exactly ``<paper>/<artefact>`` (no path), a file under experiments/,
    merged onto the spec it ``extends``."""
    from rbmlab.report.spec import ReportSpec  # noqa: PLC0415

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
    if (base := spec.pop("extends", None)) is not None:
        if not isinstance(base, str):
            raise RbmlabError(f"experiment: {path}: extends must name one experiment, got {base!r}")
        if base in (*_extending, name):
            chain = " -> ".join((*_extending, name, base))
            raise RbmlabError(f"experiment: {path}: extends {base!r}, a cycle ({chain})")
        try:
            base_spec = load_spec(base, (*_extending, name))
        except RbmlabError as e:
            raise RbmlabError(f"experiment: {path}: extends {base!r}: {e}") from None
        spec = _merged(base_spec, spec)
    ReportSpec.parse(spec.get("report") or {}, f"experiment: {path}")   # checked before any run
    for tier in spec.get("scales", {}):
        if tier not in SCALE_TIERS:
            raise RbmlabError(f"experiment: {path}: unknown scale {tier!r}; tiers: {', '.join(SCALE_TIERS)}")
    return spec


def _merged(base: dict[str, Any], own: dict[str, Any]) -> dict[str, Any]:
    """``own`` over ``base``: mappings merged key by key at every depth, anything else replaced."""
    merged = dict(base)
    for key, value in own.items():
        both = isinstance(value, dict) and isinstance(base.get(key), dict)
        merged[key] = _merged(base[key], value) if both else value
    return merged


VARIANT_KEYS = {"overrides", "grid", "seeds", "after", "scales"}


def variant_spec(value: Any, name: str = "") -> dict[str, Any]:
    """A variant as a mapping (a plain list is its overrides), its keys checked."""
    if isinstance(value, dict):
        unknown = set(value) - VARIANT_KEYS
        if unknown:
            raise RbmlabError(f"experiment: variant {name!r}: unknown key(s) {', '.join(sorted(unknown))}; "
                              f"known: {', '.join(sorted(VARIANT_KEYS))}")
        return value
    return {"overrides": list(value or [])}


def seed_list(seeds: Any) -> list[Any]:
    """An experiment's ``seeds``: a list, or a count N standing for 0 … N − 1."""
    if isinstance(seeds, bool) or isinstance(seeds, float):
        raise RbmlabError(f"experiment: seeds must be a positive count or a list of integers, "
                          f"got {seeds!r}")
    if isinstance(seeds, int):
        if seeds < 1:
            raise RbmlabError(f"experiment: seeds as a count must be at least 1, got {seeds}")
        return list(range(seeds))
    if isinstance(seeds, str) or not hasattr(seeds, "__iter__"):
        raise RbmlabError(f"experiment: seeds must be a positive count or a list of integers, "
                          f"got {seeds!r}")
    listed = list(seeds)
    if not listed or not all(isinstance(s, int) and not isinstance(s, bool) for s in listed):
        raise RbmlabError(f"experiment: seeds must be a non-empty list of integers, got {listed!r}")
    return listed


def sweep_overrides(spec: dict[str, Any], scale: str, extra: list[str],
                    variant: list[str] | dict[str, Any] = ()) -> list[str]:
    """The ``rbmlab run -m`` arguments of one experiment (variant) at one scale."""
    tier = spec.get("scales", {}).get(scale)
    if tier is None:
        raise RbmlabError(f"experiment: no settings for scale {scale!r}; "
                          f"defined: {', '.join(spec.get('scales', {}))}")
    own = variant_spec(variant)
    own_tier = own.get("scales", {}).get(scale, {})
    if "grid" in own or "seeds" in own:   # the variant's own sweep, narrowed by its own tiers
        seeds = own_tier.get("seeds", own.get("seeds", tier.get("seeds", spec.get("seeds", [0]))))
        grid = {**own.get("grid", {}), **own_tier.get("grid", {})}
    else:
        seeds = tier.get("seeds", spec.get("seeds", [0]))
        grid = {**spec.get("grid", {}), **tier.get("grid", {})}
    swept = {k: f"{k}={','.join(str(v) for v in values)}"
             for k, values in {**grid, "seed": seed_list(seeds)}.items()}
    for override in extra:   # a swept key given on the command line narrows the sweep to it
        key = override.split("=", 1)[0]
        if key in swept:
            swept[key] = override
    extra = [o for o in extra if o.split("=", 1)[0] not in swept]
    return [*spec.get("overrides", []), *own.get("overrides", []), *tier.get("overrides", []),
            *own_tier.get("overrides", []), *extra, *swept.values(), f"scale={scale}"]


def _parse_argv(argv: list[str]) -> tuple[str, list[str], bool]:
    """(scale, other overrides, report_only) of ``rbmlab experiment NAME [args]``."""
    scale, extra, report_only = "reduced", [], False
    for arg in argv:
        if arg.startswith("scale="):
            scale = arg.split("=", 1)[1]
        elif arg.startswith("variants="):
            continue   # _only_variants reads it
        elif arg.replace(" ", "").lower() in ("report_only=true", "report_only=1"):
            report_only = True   # re-render results/ from the runs already in outputs/
        else:
            extra.append(arg)
    if scale not in SCALE_TIERS:
        raise RbmlabError(f"scale: unknown scale {scale!r}; choose one of {', '.join(SCALE_TIERS)}")
    return scale, extra, report_only


def _only_variants(argv: list[str]) -> list[str] | None:
    """The variants named by ``variants=a,b`` (or ``[a,b]``) on the command line, or None."""
    for arg in argv:
        if arg.startswith("variants="):
            names = [v.strip() for v in arg.split("=", 1)[1].strip("[]").split(",") if v.strip()]
            if not names:
                raise RbmlabError("variants: name at least one variant, e.g. variants=mle_bp,cd10")
            return names
    return None


def _known_variants(name: str, names: list[str], variants: dict[str, Any], where: str) -> None:
    unknown = [v for v in names if v not in variants]
    if unknown:
        raise RbmlabError(f"experiment: {name}: {where} unknown variant(s) {', '.join(unknown)}; "
                          f"defined: {', '.join(variants)}")


def _variants(name: str, spec: dict[str, Any], scale: str, extra: list[str],
              sweep_dir: Path | None = None, only: list[str] | None = None) -> dict[str, list[str]]:
    """Variant name ("" when there are none) → its ``rbmlab run -m`` overrides at ``scale``
    (``{sweep}`` replaced by ``sweep_dir``), in the order they run; ``only``: just these."""
    variants = {v: variant_spec(value, v) for v, value in (spec.get("variants") or {"": []}).items()}
    chosen = spec.get("scales", {}).get(scale, {}).get("variants")
    if chosen is not None:
        _known_variants(name, chosen, variants, f"scale {scale} names")
        variants = {v: variants[v] for v in chosen}
    if only is not None:
        _known_variants(name, only, variants, "variants= names")
        variants = {v: value for v, value in variants.items() if v in only}
    for v, value in variants.items():
        after = value.get("after")
        if after is not None and (after not in variants or list(variants).index(after) > list(variants).index(v)):
            raise RbmlabError(f"experiment: {name}: variant {v!r} runs after {after!r}, which is not a "
                              "variant listed before it at this scale")
    def place(override: str) -> str:
        """``{sweep}`` and ``{sweep:<paper>/<artefact>}`` as directories (outputs/<name>/<scale>)."""
        if sweep_dir is None:
            return override
        root = Path(sweep_dir).resolve()
        outputs = root.parents[2]

        def other(match: re.Match) -> str:
            load_spec(match.group(1))          # a known experiment, or a one-line error
            return str(outputs / match.group(1) / scale)
        return OTHER_SWEEP.sub(other, override).replace("{sweep}", str(root))
    return {v: [place(o) for o in sweep_overrides(spec, scale, extra, value)] for v, value in variants.items()}


def _deferred(spec: dict[str, Any]) -> set[str]:
    """Variants whose jobs are checked just before they run (they read an earlier variant's files)."""
    return {v for v, value in (spec.get("variants") or {}).items() if variant_spec(value, v).get("after")}


def _first_job(name: str, spec: dict[str, Any], scale: str, extra: list[str]):
    """The validated RunConfig of the experiment's first job (resume, lock_wait, ...)."""
    from rbmlab.hydra_app import expand_overrides, validated_run_config  # noqa: PLC0415

    return validated_run_config(expand_overrides(next(iter(_variants(name, spec, scale, extra).values())))[0])


def _sweep(name: str, jobs: dict[str, list[str]], n_jobs: dict[str, int], sweep_dir: Path,
           resume: bool, deferred: set[str] = frozenset()) -> list[str]:
    """Run every variant's sweep into ``sweep_dir`` (its lock held); returns what went wrong in
    failed jobs. Without resume, an earlier sweep there is first moved aside to ``<scale>.<n>``.
    A ``deferred`` variant's jobs are checked when its turn comes (after the ones it reads)."""
    from rbmlab.hydra_app import expand_overrides, run_hydra, validate_jobs  # noqa: PLC0415
    from rbmlab.run.outputs import failed_jobs, move_aside  # noqa: PLC0415

    if sweep_dir.exists() and not resume:
        kept = move_aside(sweep_dir, f"experiment {name}")
        print(f"rbmlab experiment {name}: earlier runs moved to {kept}; this sweep starts afresh "
              f"(resume=true would have continued them in place)")
    problems: list[str] = []
    for variant, overrides in jobs.items():
        print(f"rbmlab experiment {name}: {' '.join(overrides)}")
        # validated already: straight to Hydra (``rbmlab run -m`` would compose every job again)
        variant_dir = sweep_dir / variant if variant else sweep_dir
        if variant in deferred:
            n_jobs = {**n_jobs, variant: len(validate_jobs(expand_overrides(overrides)))}
        run_hydra(["-m", *overrides, f"hydra.sweep.dir={variant_dir}"])
        problems += failed_jobs(variant_dir, n_jobs[variant])
    return problems


def _resume_requested(name: str, scale: str, extra: list[str]) -> bool:
    """Does the command line (or the experiment's own overrides) ask for resume=true? Read from the
    overrides themselves: the command line may carry keys that another experiment does not
    have (task.rate for an occlusion table), which composing its job would refuse."""
    values = [o.split("=", 1)[1].strip().lower() for o in
              (*sweep_overrides(load_spec(name), scale, []), *extra) if o.split("=", 1)[0].strip() == "resume"]
    return bool(values) and values[-1] in ("true", "1", "yes")


def _run_if_absent(other: str, argv: list[str], scale: str, extra: list[str],
                   results_root: Path | str, outputs_root: Path | str) -> bool:
    """Run experiment ``other`` (whose runs this one reports or starts from) when it has no sweep
    at ``scale`` yet, or with resume=true; True when it ran."""
    if (Path(outputs_root) / other / scale).is_dir() and not _resume_requested(other, scale, extra):
        return False
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
        raise RbmlabError(f"experiment: {EXPERIMENTS_DIR / name}.yaml: runs_of must be <paper>/<artefact> "
                          f"or a list of them, other experiments (with their own runs), got {value!r}")
    specs = {other: load_spec(other) for other in dict.fromkeys(names)}   # known, or a one-line error
    nested = [other for other, other_spec in specs.items() if other_spec.get("runs_of") is not None]
    if nested:
        raise RbmlabError(f"experiment: {EXPERIMENTS_DIR / name}.yaml: runs_of names {nested[0]}, which "
                          "has no runs of its own (it reports others')")
    return specs


def _run_timing(name: str, spec: dict[str, Any], scale: str, stem: Path) -> dict[str, Any]:
    """A timing artefact (``bench:``): its bench part at the tier's sizes, as a markdown table
    (rbmlab.bench.render, the machine's facts at its head) with the paper's numbers beside."""
    from rbmlab import bench  # noqa: PLC0415
    from rbmlab.backend.machine import facts  # noqa: PLC0415
    from rbmlab.run.fileio import atomic_write  # noqa: PLC0415

    timing = spec["bench"]
    part = bench.EXPERIMENT_PARTS.get(timing.get("part"), f"experiment {name}: bench.part")
    options = (timing.get("scales") or {}).get(scale) or {}
    known = [p for p in inspect.signature(part).parameters if p != "rounds"]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise RbmlabError(f"experiment {name}: bench.scales.{scale}: unknown option(s) {', '.join(unknown)} "
                          f"of part {timing['part']}; known: {', '.join(known)}")
    rows = part(int(timing.get("rounds", 5)), **{k: tuple(v) if isinstance(v, list) else v
                                                 for k, v in options.items()})
    for entry in (spec.get("report") or {}).get("paper") or []:
        for r in rows:
            if r["name"].startswith(entry["row"]):
                r["target"] = f"paper: {entry['value']}"
    result = {"rounds": int(timing.get("rounds", 5)), "command": f"rbmlab experiment {name} scale={scale}",
              "experiment": True, "machine": facts(), "rows": rows}
    text = f"# {spec.get('title', name)} (scale: {scale})\n\n" + bench.render(result).split("\n", 2)[2]
    stem.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(stem.with_suffix(".md"), text)
    print(text)
    return {"table": stem.with_suffix(".md"), "rows": rows}


def _run_gallery(name: str, spec: dict[str, Any], argv: list[str], parsed: tuple[str, list[str], bool],
                 results_root: Path | str, outputs_root: Path | str) -> dict[str, Path]:
    """An image grid (``gallery:``) of the runs of other experiments at the same scale."""
    from rbmlab.report.gallery import Row, check_gallery, find_run, make_gallery  # noqa: PLC0415

    scale, extra, report_only = parsed
    split, examples, rows = check_gallery(spec["gallery"], f"experiment: {EXPERIMENTS_DIR / name}.yaml")
    sources = list(dict.fromkeys(row["run"]["experiment"] for row in rows))
    for source in sources:
        load_spec(source)   # known, or one line naming it
        if not report_only:
            _run_if_absent(source, argv, scale, extra, results_root, outputs_root)
    found = [Row(row["label"], find_run(Path(outputs_root) / row["run"]["experiment"] / scale,
                                        {k: v for k, v in row["run"].items() if k != "experiment"}),
                 row["show"], row.get("sweeps"), row.get("sampler")) for row in rows]
    paper, artefact = name.split("/", 1)
    paths = make_gallery(found, split, examples, f"{spec.get('title', name)} (scale: {scale})",
                         Path(results_root) / paper / f"{artefact}_{scale}",
                         f"rbmlab experiment {name} scale={scale}")
    print(f"rbmlab experiment {name}: wrote {paths['plot']} and {paths['table']}")
    return paths


def run_experiment(name: str, argv: list[str], results_root: Path | str = "results",
                   outputs_root: Path | str = "outputs/experiments") -> dict[str, Any]:
    """Sweep (unless ``report_only=true``) and report one experiment; returns make_report's dict.

    Every job's configuration is validated first; then the sweep directory is locked (a second
    experiment on it gets one line naming the holder) for the sweep and the report. An
    experiment with ``runs_of: <paper>/<artefact>`` has no sweep of its own: it reports over that
    experiment's runs (running them first if they are not there), e.g. a table drawn from the
    runs of a figure.
    """
    from rbmlab.hydra_app import expand_overrides, validate_jobs  # noqa: PLC0415
    from rbmlab.report import make_report  # noqa: PLC0415
    from rbmlab.report.spec import ReportSpec  # noqa: PLC0415
    from rbmlab.run.locking import DirectoryLock  # noqa: PLC0415

    spec = load_spec(name)
    scale, extra, report_only = _parse_argv(argv)
    paper, artefact = name.split("/", 1)
    if "bench" in spec:
        return _run_timing(name, spec, scale, Path(results_root) / paper / f"{artefact}_{scale}")
    if "gallery" in spec:
        return _run_gallery(name, spec, argv, (scale, extra, report_only), results_root, outputs_root)
    sources = _runs_of(name, spec)
    sweeps = {source: Path(outputs_root) / source / scale for source in sources}
    for source, sweep in sweeps.items():
        if report_only and not sweep.is_dir():
            raise RbmlabError(f"report_only: no runs of {source} at scale {scale} in {sweep}")
    if not report_only:
        for need in spec.get("needs") or []:   # experiments whose runs this one's jobs start from
            _run_if_absent(need, argv, scale, extra, results_root, outputs_root)
    own = name in sources
    jobs = (_variants(name, spec, scale, extra, sweeps[name], _only_variants(argv))
            if own and not report_only else {})
    deferred = _deferred(spec)
    configs = {variant: validate_jobs(expand_overrides(overrides)) for variant, overrides in jobs.items()
               if variant not in deferred}
    for source, sweep in sweeps.items():
        if not own and (report_only or not _run_if_absent(source, argv, scale, extra, results_root,
                                                          outputs_root)):
            print(f"rbmlab experiment {name}: reporting the runs of {source} in {sweep}")
    first = (next(iter(configs.values()))[0] if configs else
             _first_job(*next(iter(sources.items())), scale, extra))
    report = spec.get("report") or {}
    with ExitStack() as locks:
        for source, sweep in sorted(sweeps.items(), key=lambda item: str(item[1].resolve())):
            locks.enter_context(DirectoryLock.for_sweep(sweep, f"experiment {source}", first.lock_wait))
        problems = _sweep(name, jobs, {v: len(c) for v, c in configs.items()}, sweeps[name],
                          first.resume, deferred) if jobs else []
        roots = sweeps if len(sweeps) > 1 else next(iter(sweeps.values()))
        variants = {v for source_spec in sources.values() for v in source_spec.get("variants") or []}
        result = make_report(roots, Path(results_root) / paper, ReportSpec.parse(report, name),
                             title=f"{spec.get('title', name)} (scale: {scale})",
                             filename_stem=f"{artefact}_{scale}", variants=sorted(variants))
    if problems:
        raise RbmlabError(f"{len(problems)} job(s) of the sweep failed (the report leaves them out); "
                          f"first: {problems[0]}")
    return result
