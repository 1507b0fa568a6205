"""Why crbm_bp's methods share their early-stopping epoch within a seed (Table 3 right): the
validation curves of several methods under the committed mini-batch order and under a moved one.

    python scripts/crbm_bp_shared_stop.py OUT [key=value ...]

Each run is one ``rbmlab run`` of an experiment's variant at its reduced tier (the overrides of
experiments/crbm_bp/<experiment>.yaml, its reduced scale, seed and task.seed = the seed), twice:
with the shuffle stream the committed runs used (rbmlab.run.training.SHUFFLE_STREAM) and with
``shuffle_stream`` instead: the same initialisation, corruption, training and validation sets,
only the order of the mini-batches changed. Keys (defaults in DEFAULTS): experiment (table-3a,
table-3b, table-1, table-2), methods and seeds (comma-separated), epochs (train.epochs),
shuffle_stream, extra (comma-separated overrides appended, e.g. task.rate=0.2 for a grid
experiment; every grid axis needs one). OUT (a new or empty directory) receives the run
directories and report.md: per seed, each run's validation pixel error per epoch, the epoch
early stopping selected, and the correlation between runs of their epoch-to-epoch changes
(from epoch 3), within one order and across the two.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from rbmlab.errors import RbmlabError, fail
from rbmlab.run.training import SHUFFLE_STREAM
from rbmlab.validation import typed_key_values

ROOT = Path(__file__).resolve().parents[1]
DEFAULTS = {
    "experiment": "table-3b",
    "methods": "lr,cd1,mle_mf",
    "seeds": "0,1,2",
    "epochs": 40,
    "shuffle_stream": 99,
    "extra": "",
}
LISTS = {"methods": str, "seeds": int, "extra": str}
# rbmlab run with the shuffle stream set (argv[1]); the rest of argv is rbmlab's
RUN = (
    "import sys, rbmlab.run.training as t; t.SHUFFLE_STREAM = int(sys.argv[1]); "
    "from rbmlab.cli import main; sys.argv = ['rbmlab'] + sys.argv[2:]; main()"
)


def parse(argv):
    """(OUT, options), checked; a bad one ends the run with ``rbmlab: error: <key>: <problem>``."""
    if not argv or "=" in argv[0]:
        fail("OUT: the first argument, a new or empty directory for the runs and report.md")
    out = Path(argv[0])
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        fail(f"OUT: not a new or empty directory: {out}")
    try:
        opts = typed_key_values(argv[1:], DEFAULTS, LISTS)
    except RbmlabError as error:
        fail(str(error))
    if opts["epochs"] < 1:
        fail(f"epochs: must be ≥ 1, got {opts['epochs']}")
    if opts["shuffle_stream"] < 0 or opts["shuffle_stream"] == SHUFFLE_STREAM:
        fail(
            f"shuffle_stream: must be ≥ 0 and not the committed stream {SHUFFLE_STREAM}, "
            f"got {opts['shuffle_stream']}"
        )
    if not opts["seeds"] or min(opts["seeds"]) < 0:
        fail("seeds: give one or more seeds ≥ 0")
    spec = experiment(opts["experiment"])
    unknown = [m for m in opts["methods"] if m not in spec["variants"]]
    if not opts["methods"] or unknown:
        fail(f"methods: expected some of {', '.join(spec['variants'])}, got {','.join(unknown) or 'none'}")
    missing = [k for k in spec.get("grid") or {} if not any(e.startswith(f"{k}=") for e in opts["extra"])]
    if missing:
        fail(
            f"extra: {opts['experiment']} sweeps {', '.join(missing)}; set one value, e.g. "
            f"extra={missing[0]}={spec['grid'][missing[0]][0]}"
        )
    return out, {**opts, "spec": spec}


def experiment(name: str) -> dict:
    import yaml  # noqa: PLC0415

    path = ROOT / "experiments" / "crbm_bp" / f"{name}.yaml"
    if name not in ("table-1", "table-2", "table-3a", "table-3b") or not path.exists():
        fail(f"experiment: expected table-1, table-2, table-3a or table-3b, got {name!r}")
    return yaml.safe_load(path.read_text())


def overrides(spec: dict, method: str, seed: int, epochs: int, extra: list[str]) -> list[str]:
    """The reduced-tier overrides of one run of ``method`` (the experiment's, its variant's, its
    reduced scale's), seed and task.seed = ``seed``, then train.epochs and ``extra``."""
    variant = spec["variants"][method]
    own = variant["overrides"] if isinstance(variant, dict) else variant
    base = [o.replace("${seed}", str(seed)) for o in spec["overrides"]]
    return [
        *base,
        *own,
        *spec["scales"]["reduced"]["overrides"],
        f"seed={seed}",
        f"train.epochs={epochs}",
        *extra,
    ]


def run(out: Path, name: str, stream: int, args: list[str]) -> dict:
    """One run; its validation curve and early-stopping record."""
    directory = out / name
    done = subprocess.run(
        [sys.executable, "-c", RUN, str(stream), "run", *args, f"hydra.run.dir={directory}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    if done.returncode:
        fail(f"{name}: rbmlab run failed: {(done.stderr or done.stdout).strip().splitlines()[-1:]}")
    import pandas as pd  # noqa: PLC0415

    rows = pd.read_csv(directory / "metrics.csv").set_index("epoch")
    stopping = json.loads((directory / "summary.json").read_text()).get("early_stopping") or {}
    return {
        "valid": rows["valid_pixel_error"],
        "epoch": stopping.get("epoch"),
        "test": stopping.get("test_pixel_error"),
    }


def report(opts: dict, results: dict) -> str:
    import pandas as pd  # noqa: PLC0415

    lines = [
        f"# crbm_bp {opts['experiment']}: shared early-stopping epochs and the mini-batch order",
        "",
        f"Reduced tier, methods {', '.join(opts['methods'])}, up to {opts['epochs']} epochs"
        f"{', ' + ', '.join(opts['extra']) if opts['extra'] else ''}; order *committed*: shuffle "
        f"stream {SHUFFLE_STREAM} (as the committed runs), *moved*: stream {opts['shuffle_stream']} "
        "(same initialisation, corruption and data). Valid pixel error (%) per epoch; "
        "*selected*: early stopping's epoch (test pixel error there).",
        "",
    ]
    for seed in opts["seeds"]:
        curves = {
            f"{m} {o}": results[seed, m, o]["valid"] for o in ("committed", "moved") for m in opts["methods"]
        }
        table = pd.DataFrame(curves)
        lines += [
            f"## seed {seed}",
            "",
            "| run | selected | " + " | ".join(str(e) for e in table.index) + " |",
            "|---|---|" + "---|" * len(table.index),
        ]
        for key in curves:
            m, o = key.split()
            r = results[seed, m, o]
            lines.append(
                f"| {key} | {r['epoch']} ({r['test']:.3f}) | "
                + " | ".join("" if np.isnan(v) else f"{v:.3f}" for v in table[key])
                + " |"
            )
        changes = table.loc[3:].diff().iloc[1:].corr()
        lines += [
            "",
            "Correlation of the epoch-to-epoch changes (from epoch 3, over the epochs both ran):",
            "",
            "| | " + " | ".join(changes.columns) + " |",
            "|---|" + "---|" * len(changes.columns),
        ]
        lines += [f"| {k} | " + " | ".join(f"{v:.2f}" for v in changes.loc[k]) + " |" for k in changes.index]
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str]) -> None:
    out, opts = parse(argv)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for seed in opts["seeds"]:
        for order, stream in (("committed", SHUFFLE_STREAM), ("moved", opts["shuffle_stream"])):
            for method in opts["methods"]:
                args = overrides(opts["spec"], method, seed, opts["epochs"], opts["extra"])
                results[seed, method, order] = run(out, f"{method}_s{seed}_{order}", stream, args)
                print(
                    f"seed {seed} {method} {order}: selected epoch {results[seed, method, order]['epoch']}",
                    flush=True,
                )
    (out / "report.md").write_text(report(opts, results))
    print(f"report: {out / 'report.md'}")


if __name__ == "__main__":
    main(sys.argv[1:])
