"""Mutation run: do the tests catch a one-line bug in the numerical cores?

    python scripts/mutation_run.py OUT.md [key=value ...]

Each mutant of scripts/mutants.yaml is one planted bug: in one module, the text ``find`` (which
occurs exactly once there) becomes ``replace``. The run copies the checkout's tracked files into
``jobs`` scratch directories, plants each mutant in turn into one of them, runs the test files
listed for its module (``tests``: the files that exercise that module's numerics), and puts the
module back. A mutant is *killed* when those tests fail (or do not finish within ``timeout``
seconds), *survives* when they pass. OUT.md receives one row per mutant and the score, killed /
planted. Keys: jobs (parallel scratch copies, each pytest process on one BLAS thread), timeout
(seconds per mutant), only (run the mutants of modules whose path contains this text), baseline
(true: first run each module's tests unmutated, and refuse to score a module whose own tests
fail — a failing baseline would count every mutant killed).

Each pytest process stops at its first failure (``-x``), so a killed mutant costs seconds and a
survivor the whole of its test files. Tests marked ``cluster`` or ``gpu`` are not run. Without
``baseline``, the first module's tests are still run unmutated first (a canary: a copy whose tests
fail for another reason, such as a file they need not being tracked, would count every mutant
killed).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from queue import Queue

import yaml

from rbmlab.errors import RbmlabError, fail
from rbmlab.validation import typed_key_values

ROOT = Path(__file__).resolve().parents[1]
MUTANTS = ROOT / "scripts" / "mutants.yaml"
DEFAULTS = {"jobs": 2, "timeout": 600, "only": "", "baseline": False}


@dataclass(frozen=True)
class Mutant:
    module: str  # path relative to the checkout
    find: str
    replace: str
    why: str
    tests: tuple[str, ...]
    batch: int = 1  # the round of planting it came in (a later round's bugs were written after the
    # earlier round's survivors got their tests: its score is the fresher measure)


def load_mutants(path: Path = MUTANTS, root: Path = ROOT) -> list[Mutant]:
    """The planted bugs, checked against the source: each ``find`` occurs exactly once in its
    module, ``replace`` differs from it, and each listed test file exists. A stale entry is a
    one-line RbmlabError naming the module."""
    entries = yaml.safe_load(path.read_text())
    mutants = []
    for module, entry in entries.items():
        source = (root / module).read_text()
        if "skipped" in entry:  # a module with no numerics of its own: the reason, no mutants
            continue
        tests = tuple(entry["tests"])
        for test in tests:  # a file, or a file::test node
            if not (root / test.partition("::")[0]).is_file():
                raise RbmlabError(f"{module}: test file {test} does not exist")
        for m in entry["mutants"]:
            count = source.count(m["find"])
            if count != 1:
                raise RbmlabError(f"{module}: {m['find']!r} occurs {count} times (expected once)")
            if m["replace"] == m["find"]:
                raise RbmlabError(f"{module}: mutant {m['find']!r} replaces the text with itself")
            mutants.append(Mutant(module, m["find"], m["replace"], m["why"], tests, m.get("batch", 1)))
    return mutants


def scratch_copy(dest: Path) -> Path:
    """The checkout's tracked files (as they are in the working tree) under ``dest``."""
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(
        b"\0"
    )
    for name in filter(None, files):
        src = ROOT / os.fsdecode(name)
        if src.is_file():
            target = dest / os.fsdecode(name)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    return dest


def check_imports_from(copy: Path) -> None:
    """The scratch copy's tests import the copy's rbmlab, not an installed one."""
    found = subprocess.run(
        [sys.executable, "-c", "import rbmlab; print(rbmlab.__file__)"],
        cwd=copy,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if not Path(found).resolve().is_relative_to(copy.resolve()):
        fail(f"jobs: a scratch copy imports rbmlab from {found}, not the copy's: no mutant would be tested")


def run_tests(copy: Path, tests: tuple[str, ...], timeout: float) -> tuple[str, float, str]:
    """('pass' | 'fail' | 'timeout', seconds, the last line pytest printed) for ``tests`` in
    ``copy``. No bytecode or numba cache is kept, so a restored module is never served stale.
    pytest's exit status: 0 pass, 1 a test failed, 2 collection failed (the mutant broke an
    import): both kill; any other is a broken run, a one-line error."""
    numba_cache = copy.with_name(copy.name + "-numba")
    env = {
        **os.environ,
        "PYTHONDONTWRITEBYTECODE": "1",
        "NUMBA_CACHE_DIR": str(numba_cache),  # outside the copy: the tests fail on new files in it
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "RBMLAB_DATA": os.environ.get("RBMLAB_DATA") or str(ROOT.parent / "shared" / "datasets"),
    }
    shutil.rmtree(numba_cache, ignore_errors=True)
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-x",
        "-q",
        "-p",
        "no:cacheprovider",
        "-m",
        "not cluster and not gpu",
    ]
    start = time.perf_counter()
    try:
        done = subprocess.run(
            cmd + list(tests), cwd=copy, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return "timeout", time.perf_counter() - start, f"no result within {timeout:g} s"
    lines = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
    last = (lines or [""])[-1]
    if done.returncode not in (0, 1, 2):
        fail(f"tests: pytest exited {done.returncode} on {' '.join(tests)}: {last}")
    return ("pass" if done.returncode == 0 else "fail"), time.perf_counter() - start, last


def plant(copy: Path, mutant: Mutant) -> str:
    """Plant ``mutant`` in ``copy``; returns the module's original text, to put back."""
    path = copy / mutant.module
    original = path.read_text()
    path.write_text(original.replace(mutant.find, mutant.replace, 1))
    return original


def main(argv: list[str]) -> None:
    if not argv or "=" in argv[0]:
        fail("OUT: the first argument, the report to write (a .md file)")
    out = Path(argv[0])
    commit = subprocess.run(  # the code the copies are made of, named before they are made
        ["git", "describe", "--always", "--dirty=+dirty"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    try:
        opts = typed_key_values(argv[1:], DEFAULTS, {})
        mutants = [m for m in load_mutants() if opts["only"] in m.module]
    except RbmlabError as error:
        fail(str(error))
    if opts["jobs"] < 1 or opts["timeout"] <= 0:
        fail("jobs: must be ≥ 1 (and timeout > 0)")
    if not mutants:
        fail(f"only: no mutant's module contains {opts['only']!r}")
    with tempfile.TemporaryDirectory(prefix="rbmlab-mutants-") as tmp:
        slots: Queue[Path] = Queue()
        for i in range(opts["jobs"]):
            slots.put(scratch_copy(Path(tmp) / f"copy{i}"))
        check_imports_from(Path(tmp) / "copy0")
        canary = mutants[0]  # unmutated, the first module's tests pass: else every mutant would look killed
        if (
            not opts["baseline"]
            and run_tests(Path(tmp) / "copy0", canary.tests, opts["timeout"])[0] != "pass"
        ):
            fail(f"tests: {' '.join(canary.tests)} fail on the unmutated copy; fix them first")

        @contextmanager
        def borrowed():
            """A scratch copy no other job holds, returned when done."""
            copy = slots.get()
            try:
                yield copy
            finally:
                slots.put(copy)

        def baseline(module_tests: tuple[str, tuple[str, ...]]) -> tuple[str, str]:
            with borrowed() as copy:
                return module_tests[0], run_tests(copy, module_tests[1], opts["timeout"])[0]

        def one(mutant: Mutant) -> tuple[str, float, str]:
            with borrowed() as copy:
                original = plant(copy, mutant)
                try:
                    return run_tests(copy, mutant.tests, opts["timeout"])
                finally:
                    (copy / mutant.module).write_text(original)

        with ThreadPoolExecutor(opts["jobs"]) as pool:
            broken = set()
            if opts["baseline"]:
                modules = {m.module: m.tests for m in mutants}
                broken = {mod for mod, result in pool.map(baseline, modules.items()) if result != "pass"}
            scored = [m for m in mutants if m.module not in broken]
            results = []
            for mutant, result in zip(scored, pool.map(one, scored)):
                results.append((mutant, *result))
                print(f"{result[0]:8s} {result[1]:6.1f} s  {mutant.module}: {mutant.why}", flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(report(results, broken, opts, commit))
    killed = sum(r[1] != "pass" for r in results)
    print(f"killed {killed} of {len(results)} mutants ({100 * killed / max(len(results), 1):.0f} %); {out}")


def report(results: list, broken: set, opts: dict, commit: str) -> str:
    """The run as markdown: the score, then one row per mutant (survivors first)."""
    killed = sum(r[1] != "pass" for r in results)
    lines = [
        "# Mutation run",
        "",
        "Do the tests catch a one-line bug in the numerical cores? Each row is one bug of",
        "`scripts/mutants.yaml` planted alone in a scratch copy of the checkout, against the test files",
        "listed for its module (`make mutants`; `scripts/mutation_run.py` says how). Killed: those tests",
        "failed. A survivor is a bug the tests let through: it needs the test that kills it.",
        "",
        f"`python scripts/mutation_run.py` at {commit}, {opts['jobs']} jobs, timeout {opts['timeout']} s"
        + (f", only {opts['only']!r}" if opts["only"] else "")
        + (", every module's tests run unmutated first" if opts["baseline"] else ""),
        "",
        f"**Killed {killed} of {len(results)} ({100 * killed / max(len(results), 1):.1f} %)**"
        f" in {len({r[0].module for r in results})} modules.",
        "",
    ]
    for batch in sorted({r[0].batch for r in results}):
        rows = [r for r in results if r[0].batch == batch]
        n = sum(r[1] != "pass" for r in rows)
        lines.append(f"- batch {batch}: killed {n} of {len(rows)} ({100 * n / len(rows):.1f} %)")
    lines.append("")
    if broken:
        lines += ["Not scored (their own tests fail unmutated): " + ", ".join(sorted(broken)), ""]
    lines += ["| result | batch | s | module | planted bug | tests' last line |", "|---|---|---|---|---|---|"]
    for mutant, result, seconds, last in sorted(results, key=lambda r: (r[1] != "pass", r[0].module)):
        word = {"pass": "**survived**", "fail": "killed", "timeout": "killed (timeout)"}[result]
        why, cell = mutant.why.replace("|", "\\|"), last.replace("|", "\\|")[:80]  # a bar ends a cell
        lines.append(f"| {word} | {mutant.batch} | {seconds:.0f} | {mutant.module} | {why} | {cell} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main(sys.argv[1:])
