"""Record the smoke-tier metrics fixtures, or re-record them after an intended change in results.

    python -m tests.record_smoke_metrics [experiment ...]     (default: every fixture)
    python -m tests.record_smoke_metrics --new experiment ...

Re-runs each experiment at ``scale=smoke`` with the current code and rewrites the rows of its
fixture (job set and overrides must be unchanged); ``source`` becomes the current commit, so
commit the code first. Prints, per column, the largest change against the old recording, as a
check that the change is the one intended (a new random stream moves every stochastic column a
little; a bug usually moves one a lot). With ``--new``, writes the fixture of an experiment that
has none yet: every job of its own smoke sweep with the overrides it ran with (the temporary
outputs directory written ``<outputs>``), and its report's runs table. Runs under the dispatch
tests/dispatch.py pins (as pytest does), which each fixture records.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from tests import dispatch

dispatch.pin()  # before anything loads numpy

import yaml  # noqa: E402

from rbmlab.experiment import run_experiment  # noqa: E402
from tests.test_regression_smoke import (  # noqa: E402
    FIXTURES,
    _read_metrics,
    _read_runs,
    library_versions,
    one_blas_thread,
    threads_beyond_one,
)


def _largest_changes(old: dict, new: dict) -> dict[str, float]:
    changes: dict[str, float] = {}
    for column in old["columns"]:
        if column not in new["columns"]:  # a column the new code no longer writes
            changes[column] = float("nan")
            continue
        i, j = old["columns"].index(column), new["columns"].index(column)
        for a, b in zip(old["rows"], new["rows"]):
            if isinstance(a[i], (int, float)) and isinstance(b[j], (int, float)):
                delta = abs(float(b[j]) - float(a[i]))
                if delta == delta:  # NaN rows compare as no change
                    changes[column] = max(changes.get(column, 0.0), delta)
    return changes


def _run_smoke(name: str, tmp: str) -> tuple[dict[str, Path], dict | None]:
    """The experiment at the smoke tier, run into ``tmp``: job (its directory relative to the
    sweep, e.g. ``cd/0``) → metrics.csv of its own sweep; and its report's runs table (columns,
    rows), None when it writes none."""
    outputs = Path(tmp) / "outputs"
    with one_blas_thread():  # the summation order the test runs with
        run_experiment(name, ["scale=smoke"], results_root=Path(tmp) / "results", outputs_root=outputs)
        unlimited = threads_beyond_one()
        if unlimited:
            sys.exit(f"{name}: ran beside runtimes not limited to one thread: {unlimited}")
        unpinned = dispatch.problems()
        if unpinned:
            sys.exit(f"{name}: ran outside tests/dispatch.py's pin: {unpinned}")
    sweep = outputs / name / "smoke"
    paper, artefact = name.split("/")
    path = Path(tmp) / "results" / paper / f"{artefact}_smoke_runs.csv"
    table = dict(zip(("columns", "rows"), _read_runs(path))) if path.is_file() else None
    return {p.parent.relative_to(sweep).as_posix(): p for p in sweep.rglob("metrics.csv")}, table


def fixture_path(name: str) -> Path:
    return FIXTURES / f"{name.replace('/', '__')}.json"


def create(name: str, commit: str) -> None:
    """Write the fixture of experiment ``name``, which has none yet."""
    path = fixture_path(name)
    if path.exists():
        sys.exit(f"{name}: {path} exists; re-record it without --new")
    with tempfile.TemporaryDirectory() as tmp:
        metrics, table = _run_smoke(name, tmp)
        if not metrics and not table:
            sys.exit(f"{name}: writes neither metrics.csv nor a runs table; nothing to record")
        jobs = {}
        for job, csv_path in sorted(metrics.items()):
            columns, rows = _read_metrics(csv_path)
            overrides = [
                o.replace(str(Path(tmp).resolve() / "outputs"), "<outputs>")
                for o in yaml.safe_load((csv_path.parent / "overrides.yaml").read_text())
            ]
            jobs[job] = {"overrides": overrides, "columns": columns, "rows": rows}
    fixture = {
        "experiment": name,
        "source": commit,
        "dispatch": dispatch.PINNED,
        "versions": library_versions(),
        "jobs": jobs,
        **({"runs": table} if table else {}),
    }
    path.write_text(_format(fixture))
    print(f"{name}: {len(jobs)} job(s){' and the runs table' if table else ''} recorded in {path}")


def record(path: Path, commit: str) -> None:
    fixture = json.loads(path.read_text())
    name = fixture["experiment"]
    with tempfile.TemporaryDirectory() as tmp:
        metrics, table = _run_smoke(name, tmp)
        if sorted(metrics) != sorted(fixture["jobs"]) or ("runs" in fixture and table is None):
            sys.exit(
                f"{name}: the job set changed ({sorted(metrics)}, runs table "
                f"{'written' if table else 'absent'}); record this fixture by hand"
            )
        for job, old in fixture["jobs"].items():
            columns, rows = _read_metrics(metrics[job])
            new = {"overrides": old["overrides"], "columns": columns, "rows": rows}
            changes = _largest_changes(old, new)
            print(
                f"{name} job {job}: largest change " + ", ".join(f"{c} {d:.3g}" for c, d in changes.items())
            )
            fixture["jobs"][job] = new
        if "runs" in fixture:
            changes = _largest_changes(fixture["runs"], table)
            print(
                f"{name} runs table: largest change " + ", ".join(f"{c} {d:.3g}" for c, d in changes.items())
            )
            fixture["runs"] = table
    fixture["source"] = commit
    fixture.pop("machine", None)  # the key of fixtures recorded before the pin
    fixture["dispatch"] = dispatch.PINNED
    fixture["versions"] = library_versions()
    path.write_text(_format(fixture))


def _format(fixture: dict) -> str:
    """The fixtures' layout: indented keys, one line per list (one per metrics or runs-table row)."""
    one = json.dumps
    jobs = []
    for job, rec in fixture["jobs"].items():
        rows = ",\n".join(f"    {one(r)}" for r in rec["rows"])
        jobs.append(
            f'  {one(job)}: {{\n   "overrides": {one(rec["overrides"])},\n'
            f'   "columns": {one(rec["columns"])},\n   "rows": [\n{rows}\n   ]\n  }}'
        )
    runs = ""
    if "runs" in fixture:
        rows = ",\n".join(f"   {one(r)}" for r in fixture["runs"]["rows"])
        runs = (
            f',\n "runs": {{\n  "columns": {one(fixture["runs"]["columns"])},\n  "rows": [\n{rows}\n  ]\n }}'
        )
    pinned = f' "dispatch": {one(fixture["dispatch"])},\n "versions": {one(fixture["versions"])},\n'
    return (
        f'{{\n "experiment": {one(fixture["experiment"])},\n "source": {one(fixture["source"])},\n'
        + pinned
        + ' "jobs": {'
        + (("\n" + ",\n".join(jobs) + "\n ") if jobs else "")
        + "}"
        + runs
        + "\n}\n"
    )


def main(names: list[str]) -> None:
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    if names[:1] == ["--new"]:
        if len(names) == 1:
            sys.exit("--new: name the experiment(s) to record")
        for name in names[1:]:
            create(name, commit)
        return
    for path in sorted(FIXTURES.glob("*.json")):
        if not names or json.loads(path.read_text())["experiment"] in names:
            record(path, commit)


if __name__ == "__main__":
    main(sys.argv[1:])
