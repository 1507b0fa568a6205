"""Re-record the smoke-tier metrics fixtures after an intended change in results.

    python -m tests.record_smoke_metrics [experiment ...]     (default: every fixture)

Re-runs each experiment at ``scale=smoke`` with the current code and rewrites the rows of its
fixture (job set and overrides must be unchanged); ``source`` becomes the current commit, so
commit the code first. Prints, per column, the largest change against the old recording, as a
check that the change is the one intended (a new random stream moves every stochastic column a
little; a bug usually moves one a lot).
"""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

from rbmlab.experiment import run_experiment
from tests.test_regression_smoke import FIXTURES, _read_metrics


def _largest_changes(old: dict, new: dict) -> dict[str, float]:
    changes: dict[str, float] = {}
    for column in old["columns"]:
        i, j = old["columns"].index(column), new["columns"].index(column)
        for a, b in zip(old["rows"], new["rows"]):
            if isinstance(a[i], (int, float)) and isinstance(b[j], (int, float)):
                delta = abs(float(b[j]) - float(a[i]))
                if delta == delta:   # NaN rows compare as no change
                    changes[column] = max(changes.get(column, 0.0), delta)
    return changes


def record(path: Path, commit: str) -> None:
    fixture = json.loads(path.read_text())
    name = fixture["experiment"]
    with tempfile.TemporaryDirectory() as tmp:
        outputs = Path(tmp) / "outputs"
        run_experiment(name, ["scale=smoke"], results_root=Path(tmp) / "results", outputs_root=outputs)
        sweep = outputs / name / "smoke"
        runs = {p.parent.relative_to(sweep).as_posix(): p for p in sweep.rglob("metrics.csv")}
        if sorted(runs) != sorted(fixture["jobs"]):
            sys.exit(f"{name}: the job set changed ({sorted(runs)}); record this fixture by hand")
        for job, old in fixture["jobs"].items():
            columns, rows = _read_metrics(runs[job])
            new = {"overrides": old["overrides"], "columns": columns, "rows": rows}
            changes = _largest_changes(old, new)
            print(f"{name} job {job}: largest change " +
                  ", ".join(f"{c} {d:.3g}" for c, d in changes.items()))
            fixture["jobs"][job] = new
    fixture["source"] = commit
    path.write_text(_format(fixture))


def _format(fixture: dict) -> str:
    """The fixtures' layout: indented keys, one line per list (one per metrics row)."""
    one = json.dumps
    jobs = []
    for job, rec in fixture["jobs"].items():
        rows = ",\n".join(f"    {one(r)}" for r in rec["rows"])
        jobs.append(f'  {one(job)}: {{\n   "overrides": {one(rec["overrides"])},\n'
                    f'   "columns": {one(rec["columns"])},\n   "rows": [\n{rows}\n   ]\n  }}')
    return (f'{{\n "experiment": {one(fixture["experiment"])},\n "source": {one(fixture["source"])},\n'
            f' "jobs": {{\n' + ",\n".join(jobs) + "\n }\n}\n")


def main(names: list[str]) -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()
    for path in sorted(FIXTURES.glob("*.json")):
        if not names or json.loads(path.read_text())["experiment"] in names:
            record(path, commit)


if __name__ == "__main__":
    main(sys.argv[1:])
