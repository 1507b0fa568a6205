"""The command line of ``rbmlab experiment PAPER/ARTEFACT [args]``, checked in one place before any
kind runs: every argument is of one class below, each kind declares the classes it takes (its
``arguments``), and an argument of any other class is one line naming it, never ignored.

    scale=smoke|reduced|paper     every kind; at most once (default reduced)
    results_root=DIR              every kind: its results under DIR/<paper>/ (default results;
                                  scale=smoke: outputs/results, never the committed folder)
    outputs_root=DIR              the runs under DIR/<paper>/<artefact>/<scale>/ (default
                                  outputs/experiments), and the runs of the experiments it reads
    report_only=true|false        report (draw) from the runs there, running nothing
    variants=a,b                  only these variants
    hydra/launcher=NAME, hydra.launcher.<option>=..., hydra/job_logging=..., hydra/hydra_logging=...,
    hydra.verbose=...             how the Hydra jobs are launched and log (the launch class)
    key=value                     the kind's own: a run override (sweep), an option (inference,
                                  figure: its options, or a run override for its source)

Refused for every kind: flags (``-m``: an experiment runs its sweeps as multiruns itself;
``--cfg``, ``--info``, ...; ``--help`` and ``-h`` print the command's help before any of this),
``hydra.run.dir`` / ``hydra.sweep.dir`` / ``hydra.sweep.subdir``
(an experiment places its runs itself: ``outputs_root=DIR`` moves them), and every other
``hydra.*`` setting (``hydra.job.chdir``, ``hydra.mode``, ...), as ``rbmlab run`` refuses them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from rbmlab.errors import RbmlabError

SCALE_TIERS = ("smoke", "reduced", "paper")
ROOTS = ("results_root", "outputs_root")
# every class a kind may take (besides scale and results_root, which every kind takes)
CLASSES = ("outputs_root", "report_only", "variants", "launch", "overrides")
PLACES = ("hydra.run.dir", "hydra.sweep.dir", "hydra.sweep.subdir", "hydra.output_subdir")
FLAGS = {
    "-m": "rbmlab experiment runs its sweeps as Hydra multiruns itself; leave -m out",
    "--multirun": "rbmlab experiment runs its sweeps as Hydra multiruns itself; leave it out",
}
TRUE, FALSE = ("true", "1", "yes"), ("false", "0", "no")
NOT_TAKEN = {  # why a kind without a class among its arguments refuses an argument of it
    "outputs_root": "runs no jobs (its files go under results_root)",
    "report_only": "has no runs to report from (it writes its results in one go)",
    "variants": "has no variants",
    "launch": "launches no Hydra jobs",
    "overrides": "takes no key=value (its settings are the file's tiers: choose one with scale=)",
}


def launch_keys() -> tuple[str, ...]:
    """The hydra.* settings of how jobs are launched and log: those ``rbmlab run`` takes, less the
    output directories (rbmlab.hydra_app.HYDRA_KEYS)."""
    from rbmlab.hydra_app import HYDRA_KEYS  # noqa: PLC0415

    return tuple(k for k in HYDRA_KEYS if k not in PLACES)


@dataclass
class CommandLine:
    """The arguments after PAPER/ARTEFACT, by class; ``rest``: all but the roots, in order (what
    the kinds read, and pass on to the experiments they run first)."""

    scale: str = "reduced"
    report_only: bool = False
    variants: list[str] | None = None
    roots: dict[str, str] = field(default_factory=dict)
    launch: list[str] = field(default_factory=list)
    overrides: list[str] = field(default_factory=list)
    rest: list[str] = field(default_factory=list)
    given: dict[str, str] = field(default_factory=dict)  # class -> its first argument, for messages

    @property
    def extra(self) -> list[str]:
        """The launch settings and overrides in command-line order (the sweep kind's extra)."""
        return [a for a in self.rest if a in self.launch or a in self.overrides]


def key_of(arg: str) -> str:
    """The key of ``key=value`` (``+``, ``~`` and spaces dropped); a flag is its own key."""
    return arg.split("=", 1)[0].strip().lstrip("+~").strip()


def is_hydra(key: str) -> bool:
    """Is ``key`` one of Hydra's own settings (``hydra``, ``hydra.*``, ``hydra/<group>``)?"""
    return key == "hydra" or key.startswith(("hydra.", "hydra/"))


def parse_command_line(argv: list[str]) -> CommandLine:
    """Every argument classified and checked on its own (a one-line RbmlabError naming a bad one):
    scale strict and once, report_only a boolean, no flag, no hydra.* setting but the launch
    class."""
    line = CommandLine()
    once: set[str] = set()
    for arg in argv:
        key = key_of(arg)
        value = arg.split("=", 1)[1].strip() if "=" in arg else None
        if arg.startswith("-"):
            raise RbmlabError(
                f"{key}: "
                + FLAGS.get(
                    key,
                    "not an option of rbmlab experiment (it takes "
                    "scale=, variants=, report_only=, key=value; "
                    "`rbmlab run --cfg job <overrides>` shows a job's "
                    "configuration)",
                )
            )
        if key in ("scale", "report_only", "variants", *ROOTS):
            if key in once:
                raise RbmlabError(f"{key}: given twice ({line.given[key]}, {arg}); give it once")
            once.add(key)
            line.given[key] = arg
            if value is None or not arg.startswith(f"{key}="):
                raise RbmlabError(f"{key}: expected {key}=VALUE, got {arg!r}")
        if key == "scale":
            if value not in SCALE_TIERS:
                raise RbmlabError(f"scale: unknown scale {value!r}; choose one of {', '.join(SCALE_TIERS)}")
            line.scale = value
        elif key == "report_only":
            if value.lower() not in TRUE + FALSE:
                raise RbmlabError(f"report_only: expected true or false, got {value!r}")
            line.report_only = value.lower() in TRUE
        elif key == "variants":
            line.variants = [v.strip() for v in value.strip("[]").split(",") if v.strip()]
            if not line.variants:
                raise RbmlabError("variants: name at least one variant, e.g. variants=mle_bp,cd10")
        elif key in ROOTS:
            if not value:
                raise RbmlabError(f"{key}: empty; give a directory, {key}=DIR")
            line.roots[key] = value
            continue  # not passed on: the roots travel as arguments
        elif is_hydra(key):
            line.launch.append(_launch(key, arg))
            line.given.setdefault("launch", arg)
        else:
            line.overrides.append(arg)
            line.given.setdefault("overrides", arg)
        line.rest.append(arg)
    return line


def _launch(key: str, arg: str) -> str:
    """A hydra.* argument of the launch class, or one line saying why rbmlab experiment refuses it."""
    if key.startswith(PLACES):
        raise RbmlabError(
            f"{key}: rbmlab experiment places its runs itself, in <outputs_root>/<paper>/"
            "<artefact>/<scale>/ (job by job in numbered directories), and its results "
            "in <results_root>/<paper>/; use outputs_root=DIR / results_root=DIR"
        )
    if not key.startswith(launch_keys()):
        taken = ", ".join(f"{k}<option>" if k.endswith(".") else k for k in launch_keys())
        raise RbmlabError(f"{key}: not supported by rbmlab experiment (hydra settings it takes: {taken})")
    return arg


def check_command_line(name: str, kind: Any, argv: list[str]) -> CommandLine:
    """``argv`` parsed, and each class of argument given checked against ``kind.arguments`` (the
    classes the kind takes; a kind without the declaration takes scale and results_root only);
    the launch settings composed once with Hydra's own configuration (an unknown launcher or
    launcher option is one line here, before any run)."""
    line = parse_command_line(argv)
    takes = getattr(kind, "arguments", frozenset())
    for cls in CLASSES:
        arg = line.given.get(cls)
        if arg is not None and cls not in takes and (cls != "report_only" or line.report_only):
            kind_name = getattr(kind, "name", "such")
            raise RbmlabError(
                f"{key_of(arg)}: {name} is {'an' if kind_name[0] in 'aeiou' else 'a'} "
                f"{kind_name} experiment, which {NOT_TAKEN[cls]}; leave {arg} out"
            )
    if line.launch:
        from rbmlab.hydra_app import compose  # noqa: PLC0415
        from rbmlab.run.cluster import check_can_submit  # noqa: PLC0415

        compose("config", line.launch, hydra_config=True)
        if not line.report_only:
            check_can_submit(line.launch)
    return line


def usage() -> str:
    """``rbmlab experiment --help``: the forms of the command and the arguments it takes (as
    this module's docstring declares them)."""
    taken = [ln for ln in (__doc__ or "").splitlines() if ln.startswith("    ")]
    return "\n".join(
        [
            "usage: rbmlab experiment PAPER/ARTEFACT [scale=smoke|reduced|paper] [KEY=VALUE ...]",
            "       rbmlab experiment list [PAPER] [--targets]",
            "",
            "Run one paper table or figure end to end (experiments/<paper>/<artefact>.yaml): its runs",
            "under outputs/experiments/<paper>/<artefact>/<scale>/, its table and plot under",
            "results/<paper>/<artefact>_<scale>.* (scale=smoke: outputs/results/, a pipeline check",
            "kept out of the committed results); it prints each path it wrote. Without scale= it runs",
            "the reduced tier and says what that was measured to cost; scale=smoke takes seconds.",
            "",
            "  list [PAPER]     every experiment (of PAPER): what it reproduces, its make target, and",
            "                   the wall time each tier took, from results/<paper>/README.md",
            "  list --targets   one line per make target (what `make experiments` prints)",
            "",
            "Arguments after PAPER/ARTEFACT:",
            *taken,
            "",
            "`make <paper>-<artefact> [SCALE=...]` runs the same; `make experiments` lists the targets.",
        ]
    )
