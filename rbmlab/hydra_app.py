"""``rbmlab run``: composing and validating configurations, expanding sweeps, owning the output
directory, and running the Hydra application that trains one job (or each job of a sweep).

Before Hydra starts (:func:`run_command`): every job of a sweep is composed and validated as a
whole configuration, with the feasibility checks a run makes before training; the output
directory is resolved, locked (one owner; rbmlab.storage.locking) and checked for earlier work that only
``resume=true`` or ``overwrite=true`` may touch. After a sweep, the jobs' summary.json files say
whether any failed (exit 2), whichever launcher ran them. Every user error is a one-line
:class:`RbmlabError`.
"""

from __future__ import annotations

import copy
import functools
import itertools
import logging
import os
import re
import sys
from pathlib import Path

from omegaconf import OmegaConf

from rbmlab.errors import RbmlabError, fail
from rbmlab.help import help_section
from rbmlab.resources import conf_dir
from rbmlab.run import cluster
from rbmlab.storage.locking import DirectoryLock

CONF_DIR = conf_dir()
# Cached: every job of a sweep (also in launcher worker processes) sees the launching process's pid.
OmegaConf.register_new_resolver("rbmlab_pid", os.getpid, replace=True, use_cache=True)
# conf/hydra/help/rbmlab.yaml: the help's parts read from conf/ and the option declarations
OmegaConf.register_new_resolver("rbmlab_help", help_section, replace=True)
HELP_FLAGS = ("-h", "--help", "--hydra-help", "--cfg", "-c", "--info")


def _one_line(e: Exception) -> str:
    """Hydra's multi-line composition errors, condensed to the line a user needs."""
    text = str(e)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return type(e).__name__
    missing = re.search(r"Could not find '([^']+)/([^'/]+)'", text)  # group: up to the last /
    if missing:
        group, option = missing.groups()
        options = []
        if "Available options" in text:
            after = lines[next(i for i, ln in enumerate(lines) if ln.startswith("Available options")) + 1 :]
            options = [
                ln
                for ln in after[
                    : next(
                        (i for i, ln in enumerate(after) if ln.startswith("Config search path")), len(after)
                    )
                ]
                if not ln.startswith("_")
            ]  # a schema (rbmlab.run.cluster), no choice
        return f"{group}={option}: no such option; available: {', '.join(options) or 'none'}"
    unknown = re.search(r"Could not override '([^']+)'", text)
    if unknown and "not in struct" in f"{text} {e.__cause__}":
        key = unknown.group(1)
        if key.startswith("dataset.path"):  # the first guess at one's own data
            return (
                f"{key}: the chosen dataset has no path; "
                "a file of your own is dataset=file dataset.path=X.npy"
            )
        return f"{key}: unknown config key (`rbmlab run --cfg job` shows the known ones)"
    merging = re.search(r"Error merging override (\S+)", text)
    if merging and e.__cause__ is not None and str(e.__cause__).strip():  # a value of the wrong type
        key = merging.group(1).split("=", 1)[0].lstrip("+~")
        return f"{key}: {str(e.__cause__).strip().splitlines()[0]}"
    if unknown and unknown.group(1).startswith("hydra.launcher."):
        return (
            f"{unknown.group(1)}: not an option of the launcher chosen (choose one that has it first, "
            "e.g. hydra/launcher=joblib hydra.launcher.n_jobs=2)"
        )
    if unknown and "default list" in text:  # a group this configuration does not choose (or chooses itself)
        return (
            f"{unknown.group(1)}: not a choice of this configuration (`rbmlab run --help` lists the groups)"
        )
    return lines[0] if len(lines) == 1 else f"{lines[0]} ({lines[-1]})"


def compose(config_name: str, overrides: list[str], hydra_config: bool = False):
    """Compose ``conf/<config_name>.yaml`` with overrides (no sweeps); one-line errors.
    ``hydra_config``: include the ``hydra`` node (launcher, run and sweep directories).

    Without the ``hydra`` node, the composition of the overrides that choose (config groups,
    ``hydra.*``) is kept per process and copied, and the value overrides are applied to
    the copy by Hydra's own override step, the one Hydra runs after composing the defaults list
    (``ConfigLoaderImpl._apply_overrides_to_config``): the same configuration and the same errors,
    in ~2 ms instead of ~90 ms for the jobs of a sweep, which differ in values."""
    parsed = parse_overrides(overrides)
    cluster.check_installed(overrides)
    check_plugins(overrides)
    cluster.store_schema()
    if hydra_config:
        cfg = _hydra_compose(CONF_DIR, config_name, tuple(overrides), hydra_config=True)
        cluster.check_launcher(cfg.hydra.launcher)
        check_packed_launcher(cfg.hydra.launcher)
        return cfg
    from hydra._internal.config_loader_impl import ConfigLoaderImpl  # noqa: PLC0415

    values, choices = [], []
    for o in parsed:
        (values if _is_value_override(o) else choices).append(o)
    choices = tuple(o.input_line for o in choices)
    cfg = copy.deepcopy(_composed_choices(CONF_DIR, config_name, choices, _stamp(CONF_DIR)))
    OmegaConf.clear_cache(cfg)  # resolved while composing (${now:}): resolved afresh, as Hydra would
    try:
        ConfigLoaderImpl._apply_overrides_to_config(values, cfg)
    except Exception as e:  # noqa: BLE001 - Hydra's ConfigCompositionException, as in a full compose
        raise RbmlabError(_one_line(e)) from None
    return cfg


# Hydra plugins a choice needs: (group, option) -> (the plugin's module, rbmlab's pip extra)
PLUGINS = {
    ("hydra/launcher", "joblib"): ("hydra_plugins.hydra_joblib_launcher", "parallel"),
    ("hydra/launcher", "submitit_local"): ("hydra_plugins.hydra_submitit_launcher", "slurm"),
    ("hydra/launcher", "submitit_slurm"): ("hydra_plugins.hydra_submitit_launcher", "slurm"),
    ("hydra/sweeper", "optuna"): ("hydra_plugins.hydra_optuna_sweeper", "optuna"),
}


def check_plugins(overrides: list[str]) -> None:
    """A launcher or sweeper chosen without the Hydra plugin that provides it: one line naming the
    pip extra that installs it (Hydra would say only that the option does not exist)."""
    import importlib.util  # noqa: PLC0415

    for o in overrides:
        key, _, value = o.partition("=")
        key = key.lstrip("+~")
        plugin = PLUGINS.get((key, value))
        if plugin is not None and importlib.util.find_spec(plugin[0]) is None:
            raise RbmlabError(f"{key}={value}: needs {plugin[0]}; pip install 'rbmlab[{plugin[1]}]'")


def _is_value_override(override) -> bool:
    """Whether Hydra applies ``override`` to the composed values rather than to the defaults list,
    as Hydra decides it: a dict value, or a key that is not a config group (a directory of conf/;
    Hydra's own groups are all under ``hydra/``). A sweep is left to Hydra's compose, which refuses
    it in its own words."""
    if override.is_sweep_override() or override.is_hydra_override():
        return False
    return isinstance(override.value(), dict) or not (CONF_DIR / override.key_or_group).is_dir()


def _stamp(conf: Path) -> int:
    """The newest modification time in ``conf`` (an edited configuration is composed again)."""
    return max(entry.stat().st_mtime_ns for entry in conf.rglob("*"))


@functools.lru_cache(maxsize=128)
def _composed_choices(conf: Path, config_name: str, choices: tuple[str, ...], stamp: int):
    return _hydra_compose(conf, config_name, choices, hydra_config=False)


def _hydra_compose(conf: Path, config_name: str, overrides: tuple[str, ...], hydra_config: bool):
    from hydra import compose as hydra_compose  # noqa: PLC0415
    from hydra import initialize_config_dir  # noqa: PLC0415
    from hydra.core.global_hydra import GlobalHydra  # noqa: PLC0415

    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(conf), version_base="1.3"):
            return hydra_compose(
                config_name=config_name, overrides=list(overrides), return_hydra_config=hydra_config
            )
    except Exception as e:  # hydra raises several unrelated types for bad overrides
        raise RbmlabError(_one_line(e)) from None
    finally:
        GlobalHydra.instance().clear()


def parse_overrides(overrides: list[str]) -> list:
    """Hydra's parsed overrides; an override its grammar rejects is named in one line."""
    from hydra.core.override_parser.overrides_parser import OverridesParser  # noqa: PLC0415

    parser, parsed = OverridesParser.create(), []
    for override in overrides:  # one at a time, so that an error names the bad one
        try:
            parsed += parser.parse_overrides([override])
        except Exception:  # noqa: BLE001 - hydra's grammar errors (antlr exceptions, several types)
            raise RbmlabError(
                f"{override}: not a valid override; quote a value with unusual "
                "characters (key='value'); grammar: "
                "https://hydra.cc/docs/advanced/override_grammar/basic"
            ) from None
    return parsed


def expand_overrides(overrides: list[str]) -> list[list[str]]:
    """The override list of every job of a sweep (the cartesian product of the swept values, in
    Hydra's order); hydra.* overrides left out."""
    parsed = parse_overrides(overrides)
    options = []
    for o in parsed:
        if o.is_hydra_override():
            continue
        if o.is_sweep_override():
            key = o.get_key_element()
            try:
                options.append([f"{key}={v}" for v in o.sweep_string_iterator()])
            except Exception:  # noqa: BLE001 - interval(), glob(): sweeps without a list of values
                raise RbmlabError(
                    f"{o.input_line}: the basic sweeper runs a list of values (a,b,c) "
                    "or range(start,stop,step); a sweeper samples this one "
                    "(-m hydra/sweeper=optuna)"
                ) from None
        else:
            options.append([o.input_line])
    return [list(combo) for combo in itertools.product(*options)]


def validated_run_config(overrides: list[str]):
    from rbmlab.config import parse_run_config  # noqa: PLC0415

    return parse_run_config(compose("config", overrides))


def validate_jobs(combos: list[list[str]]) -> list:
    """Each job's RunConfig, validated whole and checked for feasibility (sizes the evaluator
    can handle, memory) before any job starts; an error names the job's swept values. Cheapest
    first: every job's configuration and the checks that need no data, then each job's data."""
    from rbmlab.run.runner import check_feasible  # noqa: PLC0415

    swept = [i for i in range(len(combos[0])) if len({c[i] for c in combos}) > 1]

    def checked(combo: list[str], check):
        try:
            return check(combo)
        except (RbmlabError, MemoryError) as e:
            message = (
                str(e)
                if isinstance(e, RbmlabError)
                else "dataset: does not fit in memory (MemoryError while building it)"
            )
            job = " ".join(combo[i] for i in swept)
            raise RbmlabError(f"{message} (sweep job {job})" if job else message) from None

    def without_data(combo: list[str]):
        cfg = validated_run_config(combo)
        check_feasible(cfg, read_data=False)
        return cfg

    configs = [checked(combo, without_data) for combo in combos]
    for combo, cfg in zip(combos, configs):
        checked(combo, lambda _, cfg=cfg: check_feasible(cfg))
    return configs


# ---------------------------------------------------------------- run (Hydra app)
def _hydra_task(cfg) -> float | None:
    """Body of one Hydra job (single run or one job of a sweep); returns the run's headline metric
    (what a sampling sweeper optimises; rbmlab.run.sweepers). A failure is recorded in the run's
    summary.json by the runner; a sweep goes on, a single run ends with the error. A sweep's job
    prefixes its lines with its tag: its number and swept values."""
    from hydra.core.hydra_config import HydraConfig  # noqa: PLC0415
    from hydra.types import RunMode  # noqa: PLC0415

    from rbmlab.backend.allocator import keep_freed_memory  # noqa: PLC0415
    from rbmlab.config import parse_run_config  # noqa: PLC0415
    from rbmlab.run.runner import train  # noqa: PLC0415
    from rbmlab.run.signals import end_as_signalled, ends_when_interrupted, interruption_of  # noqa: PLC0415
    from rbmlab.run.sweepers import returned_value  # noqa: PLC0415

    keep_freed_memory()  # a joblib worker is a process of its own

    hc = HydraConfig.get()
    multirun = hc.mode == RunMode.MULTIRUN
    tag = job_tag(hc.job.num, hc.job.override_dirname) if multirun else ""
    log = logging.getLogger("rbmlab.run")  # <run dir>/rbmlab.log (conf/hydra/job_logging/rbmlab.yaml)

    def echo(line: str) -> None:
        print(f"{tag} {line}" if tag else line, flush=True)
        log.info(line)

    try:
        run_cfg = parse_run_config(cfg)
        if multirun:
            run_cfg = without_auto_bars(run_cfg)
        return returned_value(
            run_cfg, train(run_cfg, Path(hc.runtime.output_dir), list(hc.overrides.task), echo=echo)
        )
    except (RbmlabError, MemoryError) as e:
        message = str(e) if isinstance(e, RbmlabError) else "out of memory (MemoryError)"
        if not multirun:
            fail(message)
        print(f"{tag} failed: {message}", file=sys.stderr, flush=True)
    except Exception as e:  # noqa: BLE001 - a bug: recorded by the runner; the sweep goes on
        if not multirun:
            raise
        print(f"{tag} failed: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
    except BaseException as e:  # a signal, recorded by the runner: a worker ends as signalled
        stop = interruption_of(e)
        if stop is not None and multirun and ends_when_interrupted():
            end_as_signalled(stop)  # the command's one line comes from the launching process
        raise
    return None


def packed_job(cfg):
    """A job of ``hydra/launcher=packed`` (rbmlab.run.packed), collected where the basic launcher
    would run :func:`_hydra_task`: its run configuration, directory, overrides and tagged output
    lines; None (its failure printed) when its configuration is refused."""
    from hydra.core.hydra_config import HydraConfig  # noqa: PLC0415

    from rbmlab.config import parse_run_config  # noqa: PLC0415
    from rbmlab.run.packed import Job  # noqa: PLC0415

    hc = HydraConfig.get()
    tag = job_tag(hc.job.num, hc.job.override_dirname)
    try:
        run_cfg = parse_run_config(cfg)
    except RbmlabError as e:
        print(f"{tag} failed: {e}", file=sys.stderr, flush=True)
        return None
    echo = lambda line: print(f"{tag} {line}", flush=True)  # noqa: E731
    return Job(without_auto_bars(run_cfg), Path(hc.runtime.output_dir), list(hc.overrides.task), echo, tag)


def without_auto_bars(run_cfg):
    """A sweep job's configuration: ``progress=auto`` draws no bars there (the jobs' lines carry
    their tags; the bars of jobs side by side, or one after another, would interleave with them);
    ``true`` is kept. Progress is not part of a run's identity."""
    import dataclasses  # noqa: PLC0415

    def quiet(part):
        return dataclasses.replace(part, progress=False) if part.progress == "auto" else part

    return dataclasses.replace(run_cfg, train=quiet(run_cfg.train), evaluator=quiet(run_cfg.evaluator))


def train_packed_jobs(jobs: list, max_runs: int) -> list:
    """Train the collected jobs (None: refused already), packed where they allow; each job's
    headline value (what a sampling sweeper optimises), None for a job that failed (printed, as
    :func:`_hydra_task` prints a sweep job's failure; its summary.json says failed)."""
    from rbmlab.run.packed import train_jobs  # noqa: PLC0415
    from rbmlab.run.sweepers import returned_value  # noqa: PLC0415

    trained = iter(train_jobs([j for j in jobs if j is not None], max_runs))
    values = []
    for job in jobs:
        result = None if job is None else next(trained)
        if isinstance(result, BaseException):
            message = str(result) if isinstance(result, RbmlabError) else f"{type(result).__name__}: {result}"
            print(f"{job.tag} failed: {message}", file=sys.stderr, flush=True)
            result = None
        values.append(None if result is None else returned_value(job.cfg, result))
    return values


def job_tag(num: int, swept: str) -> str:
    """``[job 3 learner=pcd learner.lr=0.05]``: a sweep job's number and swept values (Hydra's
    override_dirname, limited to the swept keys by rbmlab.run.sweepers.tag_overrides)."""
    return f"[job {num}{' ' + swept if swept else ''}]"


def app_help(cfg) -> str:
    """``rbmlab run [overrides] --help``: conf/hydra/help/rbmlab.yaml's template, filled from the
    composed ``cfg`` as Hydra fills it. Hydra's own help would first list every config group's
    options through a copy of its config repository per group (113 copies, most of a second); the
    template names none of Hydra's lists, only the sections rbmlab.help writes."""
    import string  # noqa: PLC0415

    return string.Template(cfg.hydra.help.template).substitute()


def run_hydra(argv: list[str]) -> None:
    import hydra  # noqa: PLC0415

    cluster.store_schema()
    cluster.register_launchers()
    app = hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")(_hydra_task)
    saved, saved_env = sys.argv, os.environ.get("HYDRA_FULL_ERROR")
    sys.argv = ["rbmlab run", *argv]
    os.environ["HYDRA_FULL_ERROR"] = "1"  # errors reach rbmlab (one line), not Hydra's printer
    try:
        app()
    finally:
        sys.argv = saved
        if saved_env is None:
            os.environ.pop("HYDRA_FULL_ERROR")
        else:
            os.environ["HYDRA_FULL_ERROR"] = saved_env


def output_dir(job: list[str], hydra_overrides: list[str], key: str) -> Path:
    """``hydra.run.dir`` or ``hydra.sweep.dir`` as this invocation resolves it (the default holds
    the time and pid), so that it can be locked and checked before Hydra starts: ``job``, the
    first job's overrides, with ``hydra_overrides`` (:func:`check_hydra_overrides`). Given as a
    plain string and with no other hydra.* override, it is that string (the job composed already:
    nothing is left to check, and a composition less is a tenth of a second)."""
    if len(hydra_overrides) == 1 and hydra_overrides[0].startswith(f"{key}="):
        (given,) = parse_overrides(hydra_overrides)
        value = given.value()
        if isinstance(value, str) and value and "${" not in value:
            return Path(value)
    cfg = compose("config", job + hydra_overrides, hydra_config=True)
    try:
        value = OmegaConf.select(cfg, key)
    except Exception as e:  # noqa: BLE001 - omegaconf's interpolation errors
        raise RbmlabError(f"{key}: cannot resolve ({str(e).splitlines()[0]})") from None
    if not value:
        raise RbmlabError(f"{key}: empty")
    return Path(str(value))


# hydra.* overrides rbmlab run accepts: where outputs go, the launcher and its options, logging.
HYDRA_KEYS = (
    "hydra.run.dir",
    "hydra.sweep.dir",
    "hydra/launcher",
    "hydra.launcher.",
    "hydra/job_logging",
    "hydra/hydra_logging",
    "hydra.verbose",
)


SWEEP_LAUNCHERS = (*cluster.LAUNCHERS, "packed")  # rbmlab's launchers, refused without -m


def check_packed_launcher(launcher) -> None:
    """``hydra/launcher=packed``'s one option, checked where the sweep is launched."""
    if launcher is None or not str(launcher.get("_target_", "")).endswith(".PackedLauncher"):
        return
    value = launcher.get("max_runs")
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise RbmlabError(f"hydra.launcher.max_runs: runs in one pack, an integer >= 1 (got {value!r})")


def check_hydra_overrides(overrides: list[str], multirun: bool = False) -> list[str]:
    """The hydra.* overrides, refusing those that would move jobs outside their owned
    directories or change the run mode behind rbmlab's back (hydra.mode, hydra.sweep.subdir ...).
    The sweeper (rbmlab.run.sweepers) is a setting of a sweep (-m)."""
    from rbmlab.run.sweepers import SWEEPER_KEYS  # noqa: PLC0415

    chosen = []
    for o in overrides:
        key = o.split("=", 1)[0].lstrip("+~")
        if key.startswith("hydra"):
            if key.startswith(SWEEPER_KEYS) and not multirun:
                raise RbmlabError(f"{key}: a setting of a sweep; add -m")
            if key == "hydra/launcher" and o.split("=", 1)[-1] in SWEEP_LAUNCHERS and not multirun:
                raise RbmlabError(
                    f"{o}: launches a sweep's jobs (without -m the run trains here); add -m, also for one job"
                )
            if not key.startswith(HYDRA_KEYS + SWEEPER_KEYS):
                raise RbmlabError(
                    f"{key}: not supported by rbmlab run (use -m for a sweep; "
                    f"hydra settings it takes: {', '.join(HYDRA_KEYS + SWEEPER_KEYS)})"
                )
            chosen.append(o)
    return chosen


def launch(argv: list[str], out: Path, key: str, multirun: bool) -> None:
    """Run Hydra into ``out``. A sweep whose launcher stops (a worker killed) goes on to the
    reading of its jobs' records, which says what was lost. A termination signal to this process
    is passed on to the launcher's workers (rbmlab.run.signals.forward), which record their runs
    as interrupted, before it ends the command."""
    from rbmlab.run.signals import forward, interruptible  # noqa: PLC0415

    try:
        with interruptible(first=forward):
            run_hydra(argv)
    except OSError as e:  # Hydra's own files (multirun.yaml, logs) on a full or read-only disk
        raise RbmlabError(f"{key}: cannot write in {out} ({e.strerror or type(e).__name__})") from None
    except Exception as e:  # noqa: BLE001 - a launcher that lost a worker (killed, out of memory)
        if not multirun:
            raise
        print(f"rbmlab: the launcher stopped: {type(e).__name__}: {str(e).splitlines()[0]}", file=sys.stderr)


def run_command(argv: list[str]) -> None:
    """``rbmlab run [-m] [key=value ...]``: validate every job (for a sampling sweeper, what it
    can sample; rbmlab.run.sweepers), own the output directory, run Hydra, and (for a sweep) exit
    2 when any job failed."""
    from rbmlab.run import sweepers  # noqa: PLC0415
    from rbmlab.run.outputs import failed_jobs, find_run_to_resume, take_over_sweep  # noqa: PLC0415

    if any(a in HELP_FLAGS or a.startswith("--cfg") for a in argv):
        overrides = [a for a in overrides_of(argv) if "=" in a]
        cfg = compose("config", overrides, hydra_config=True)  # a bad override: one line, not Hydra's
        if set(argv) - set(overrides) <= {"-h", "--help"}:
            return print(app_help(cfg))
        return run_hydra(argv)
    flag = next((a.split("=")[0] for a in argv if a.split("=")[0] in HYDRA_OPTIONS_WITH_VALUE), None)
    if flag:
        raise RbmlabError(
            f"{flag}: not supported; rbmlab run composes conf/config.yaml, "
            "choose components with overrides (e.g. learner=pcd)"
        )
    multirun = any(a in ("-m", "--multirun") for a in argv)
    overrides = overrides_of(argv)
    hydra_overrides = check_hydra_overrides(overrides, multirun)
    sweep = plan_sweep(overrides, hydra_overrides) if multirun else None
    combos = sweep.jobs if sweep else expand_overrides(overrides)
    if len(combos) > 1 and not multirun:
        raise RbmlabError("an override lists several values (a sweep); add -m to run them all")
    chosen = chosen_by_data(combos)
    if chosen:
        combos, argv = [c + chosen for c in combos], argv + chosen
    configs = validate_jobs(combos)
    cfg = configs[0]
    key = "hydra.sweep.dir" if multirun else "hydra.run.dir"
    out = None
    if not multirun and cfg.resume and not any(o.startswith(f"{key}=") for o in overrides):
        out = find_run_to_resume(cfg.hash())
        if out is None:
            print(
                "rbmlab: resume=true but no unfinished run with this configuration under "
                "outputs/runs; starting a new run",
                file=sys.stderr,
            )
    out = out or output_dir(combos[0], hydra_overrides, key)  # composes the launcher: its options checked
    if multirun:
        cluster.check_can_submit(hydra_overrides)
    argv = [a for a in argv if not a.startswith(f"{key}=")] + [f"{key}={out}"]
    if out.exists() and not out.is_dir():
        raise RbmlabError(f"{key}: {out} is a file, not a directory")
    if not multirun:  # locked before Hydra creates anything; the run checks earlier work itself
        with DirectoryLock.for_run(out, key, cfg.lock_wait):
            return launch(argv, out, key, multirun)
    argv += sweepers.launch_overrides(sweep, configs, hydra_overrides)
    if sweep.sampler:
        sweepers.quiet_imports()
    with DirectoryLock.for_sweep(out, key, cfg.lock_wait):
        take_over_sweep(out, key, cfg.resume, cfg.overwrite)
        launch(argv, out, key, multirun)
        problems = failed_jobs(out, sweep.n_jobs or 0)
    best = sweepers.best_line(out, configs) if sweep.sampler else None
    if best:
        print(best)
    if problems:
        raise RbmlabError(
            f"{len(problems)} of {sweep.n_jobs or 'the'} job(s) of the sweep failed; first: {problems[0]}"
        )
    if sweep.sampler and not best:
        raise sweepers.no_result(sweep, out, configs)


OWN_DATA_HIDDEN = 500  # conf/model/rbm.yaml's n_hidden, sized for MNIST's 784 columns


def chosen_by_data(combos: list[list[str]]) -> list[str]:
    """Settings a run on one's own data (``dataset=file``) takes from the data where the command
    line gives none, printed before the run: an RBM's hidden units as many as the data's columns
    (at least 16, at most conf's 500) and its log-likelihood exact where enumeration is cheap
    (rbmlab.evaluators.applicable.cheapest_likelihood, as the estimators score), instead of the
    defaults sized for MNIST (500 hidden units, a 14,500-temperature AIS). The same for every job
    of a sweep, or none."""
    from rbmlab.data import dataset_dimension  # noqa: PLC0415
    from rbmlab.evaluators.applicable import cheapest_likelihood  # noqa: PLC0415
    from rbmlab.models import MODELS  # noqa: PLC0415

    choices = []
    for combo in combos:
        keys = {o.lstrip("+~").split("=", 1)[0] for o in combo}
        try:
            cfg = validated_run_config(combo)
            if cfg.dataset["name"] != "file" or cfg.model.name != "rbm" or cfg.model.init:
                return []
            columns = dataset_dimension(cfg.dataset)
        except RbmlabError:  # said by validate_jobs next, with the sweep job it is in
            return []
        made = []
        if "model.n_hidden" not in keys:
            made.append(f"model.n_hidden={min(OWN_DATA_HIDDEN, max(16, columns))}")
        hidden = int(made[0].split("=")[1]) if made else cfg.model.n_hidden
        sizes = {"n_visible": columns, "n_hidden": hidden}
        if not any(k == "evaluator" or k.startswith("evaluator.") for k in keys):
            made.append(f"evaluator={cheapest_likelihood(MODELS.get('rbm'), sizes)}")
        choices.append(made)
    if not choices or any(c != choices[0] for c in choices):
        return []
    if choices[0]:
        print(f"rbmlab: dataset=file: chosen for its data (give them to choose): {' '.join(choices[0])}")
    return choices[0]


def plan_sweep(overrides: list[str], hydra_overrides: list[str]):
    """The sweep (-m) that the command line asks for (rbmlab.run.sweepers.Sweep): every job of the
    basic sweeper's product, or the configurations checked ahead of a sampling sweeper's trials."""
    from rbmlab.run import sweepers  # noqa: PLC0415

    node = None
    if sweepers.touches_sweeper(hydra_overrides):
        try:
            node = compose("config", hydra_overrides, hydra_config=True).hydra.sweeper
        except RbmlabError as e:
            raise sweepers.explain(e) from None
    plain = [o for o in overrides if not o.lstrip("+~").startswith("hydra")]
    lines = sweepers.param_overrides(node) + plain
    parsed = parse_overrides(lines)
    if not sweepers.is_basic(node):
        return sweepers.sampled_sweep(node, parsed)
    jobs = expand_overrides(lines)
    return sweepers.Sweep(None, jobs, len(jobs), sweepers.tag_overrides(parsed))


HYDRA_OPTIONS_WITH_VALUE = (
    "--config-name",
    "-cn",
    "--config-path",
    "-cp",
    "--config-dir",
    "-cd",
    "--experimental-rerun",
)


def overrides_of(argv: list[str]) -> list[str]:
    """The key=value arguments of a Hydra command line (flags and their values left out)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a.startswith("-"):
            skip = a in HYDRA_OPTIONS_WITH_VALUE
        else:
            out.append(a)
    return out


# ---------------------------------------------------------------- shell completion
COMPLETION_FLAGS = ("-sc", "--shell-completion")
COMPLETION_SHELLS = ("bash", "zsh")  # zsh through bashcompinit, as Hydra's zsh completion
# Hydra's own install script completes a command line's first word as the application, which for
# ``rbmlab run`` is ``rbmlab``; this one completes the subcommand and sends ``rbmlab run`` lines to
# Hydra's query (``rbmlab run -sc query=bash``).
COMPLETION_SCRIPT = """_rbmlab_completion()
{
    local words=($COMP_LINE)
    if (( COMP_CWORD < 2 )); then
        COMPREPLY=($(compgen -W "%(commands)s" -- "${COMP_WORDS[COMP_CWORD]}"))
    elif [ "${words[1]}" == "run" ]; then
        local choices=$(COMP_POINT=$COMP_POINT COMP_LINE=$COMP_LINE ${words[0]} run -sc query=bash \\
                        2>/dev/null)
        COMPREPLY=($(compgen -o nospace -o default -W "$choices" -- "${words[$COMP_CWORD]}"))
    fi
}
COMP_WORDBREAKS=${COMP_WORDBREAKS//=}
complete -o nospace -o default -F _rbmlab_completion rbmlab"""


def shell_completion(argv: list[str], commands: list[str]) -> None:
    """``rbmlab run -sc install=bash|zsh`` prints the script to eval (completing ``commands``, then
    ``rbmlab run``'s groups, options and keys); ``uninstall=`` the lines that remove it;
    ``query=bash`` (asked by the script) Hydra's completions of ``$COMP_LINE``."""
    asked = [a for a in argv if a.split("=", 1)[0] in ("install", "uninstall", "query") and "=" in a]
    if len(asked) != 1:
        raise RbmlabError(
            "--shell-completion: give one of install=SHELL, uninstall=SHELL, "
            f"query=SHELL (shells: {', '.join(COMPLETION_SHELLS)}); "
            'e.g. eval "$(rbmlab run -sc install=bash)"'
        )
    action, shell = asked[0].split("=", 1)
    if shell not in COMPLETION_SHELLS:
        raise RbmlabError(f"--shell-completion: {shell}: rbmlab completes in {', '.join(COMPLETION_SHELLS)}")
    if action == "install":
        zsh = "autoload -Uz bashcompinit && bashcompinit\n" if shell == "zsh" else ""
        print(zsh + COMPLETION_SCRIPT % {"commands": " ".join(commands)})
    elif action == "uninstall":
        print("complete -r rbmlab 2> /dev/null\nunset -f _rbmlab_completion")
    else:  # Hydra answers for the line as of an application ``rbmlab``: ``run`` left out
        line = os.environ.get("COMP_LINE") or ""
        match = re.match(r"\s*(\S+)\s+run\b(.*)$", line, re.DOTALL)
        if match is None:
            raise RbmlabError(
                "--shell-completion: query=: COMP_LINE must hold an `rbmlab run ...` "
                "line (the installed completion script sets it)"
            )
        os.environ["COMP_LINE"] = match.group(1) + match.group(2)
        try:
            run_hydra(["-sc", "query=bash"])
        finally:
            os.environ["COMP_LINE"] = line
