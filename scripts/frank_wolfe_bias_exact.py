"""frank_wolfe's visible-bias loop on exactly enumerable toys: how far each form of Alg. 1's
"repeat ... until" (lines 7–10) leaves b from its optimum, and how far the whole run is from
Frank-Wolfe with exact expectations.

    python scripts/frank_wolfe_bias_exact.py OUT.md [key=value ...]

Keys (BiasExactConfig; lists as [a,b]): seeds, units, forms (among fixed500, fixed5000, converge:
learner.bias_fit=fixed with 500 or 5,000 plain steps of η = 0.02, or the default
learner.bias_fit=converge), n_samples, lams (λ of the constant scaling; λ/t runs at 0.1).

For the shifting bar (n = 9, bar = 3) and bars & stripes 3 × 3, each λ and each form, rbmlab's
learner is run (``rbmlab run``, a subprocess, exact evaluation) and after each unit the script
records (rbmlab.learners.frank_wolfe_exact, by enumeration):
  - the shortfall: the mean log-likelihood of the same units with the exactly fitted bias minus
    rbmlab's (≥ 0; 0 = b at its optimum);
  - the distance of rbmlab's curve from exact Frank-Wolfe's (exact oracle, exact bias, 10 starts),
    and that exact curve's own spread over 3 seeds of its oracle's starts (where the oracle has
    near-equal local optima the exact algorithm is not one curve).
Writes a markdown table with the worst value over the units and seeds of each cell.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from rbmlab.errors import RbmlabError, fail
from rbmlab.learners.frank_wolfe_exact import DATA, exact_bias, exact_frank_wolfe, mean_log_likelihood
from rbmlab.report.render import markdown_rows
from rbmlab.storage.portable import portable_text
from rbmlab.storage.provenance import source_revision
from rbmlab.validation import Config, option, script_arguments

FORMS = {
    "fixed500": ["learner.bias_fit=fixed", "learner.bias_steps=500"],
    "fixed5000": ["learner.bias_fit=fixed", "learner.bias_steps=5000"],
    "converge": ["learner.bias_fit=converge"],
}


@dataclass
class BiasExactConfig(Config):
    seeds: list[int] = option([0, 1, 2], "seeds of rbmlab's runs", lo=0)
    units: int = option(8, "FW iterations", lo=1, hi=50)
    forms: list[str] = option(list(FORMS), "the bias loops compared", choices=tuple(FORMS))
    n_samples: int = option(1000, "S, the oracle's model samples (the learner's default: 1,000)", lo=1)
    lams: list[float] = option(
        [0.1, 0.05, 0.01], "λ of the constant scaling (λ/t runs at 0.1)", lo=0, open_lo=True
    )


def parse(argv: list[str]) -> tuple[Path, BiasExactConfig]:
    """OUT.md and the options, checked; a bad one ends the run with one error line."""
    try:
        return script_arguments(
            argv, BiasExactConfig, "bias_exact", "results/frank_wolfe/bias-fit_reduced.md"
        )
    except RbmlabError as error:
        fail(str(error))


def run(data: str, lam: float, scaling: str, form: str, seed: int, opts: BiasExactConfig, root: Path):
    """rbmlab's FW: each size's (W, b_h, b_v) and its recorded train log-likelihood curve."""
    out = root / f"{data}-{lam}-{scaling}-{form}-{seed}"
    command = [
        sys.executable,
        "-m",
        "rbmlab",
        "run",
        *DATA[data][1],
        "learner=frank_wolfe",
        f"learner.lam={lam}",
        f"learner.lambda_scaling={scaling}",
        f"learner.n_samples={opts.n_samples}",
        *FORMS[form],
        "evaluator=exact",
        "evaluator.splits=[train]",
        f"train.epochs={opts.units}",
        "train.snapshot_every=1",
        "train.progress=false",
        f"seed={seed}",
        f"hydra.run.dir={out}",
    ]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode:
        fail(f"rbmlab run: {proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else 'failed'}")
    snapshots = [np.load(out / "snapshots" / f"epoch_{t}.npz") for t in range(1, opts.units + 1)]
    models = [(s["W"].astype(float), s["b_h"].astype(float), s["b_v"].astype(float)) for s in snapshots]
    return models, pd.read_csv(out / "metrics.csv")["train_log_likelihood"].to_numpy()[1:]


def main(argv: list[str]) -> None:
    out, opts = parse(argv)
    settings = [(lam, "constant") for lam in opts.lams] + [(0.1, "over_t")]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for data, (x, _) in DATA.items():
            for lam, scaling in settings:
                reference = exact_frank_wolfe(x, lam, opts.units, scaling)
                spread = np.ptp(
                    [exact_frank_wolfe(x, lam, opts.units, scaling, restarts=3, seed=s) for s in range(3)],
                    axis=0,
                ).max()
                for form in opts.forms:
                    shortfall, distance, last = [], [], []
                    for seed in opts.seeds:
                        models, curve = run(data, lam, scaling, form, seed, opts, Path(tmp))
                        shortfall.append(
                            max(
                                mean_log_likelihood(x, W, c, exact_bias(x, W, c, b))
                                - mean_log_likelihood(x, W, c, b)
                                for W, c, b in models
                            )
                        )
                        distance.append(np.abs(curve - reference).max())
                        last.append(curve[-1])
                    rows.append(
                        {
                            "data": data,
                            "λ": f"{lam:g}" + ("/t" if scaling == "over_t" else ""),
                            "bias loop": form,
                            "worst shortfall of b (nats)": max(shortfall),
                            "worst distance to exact FW (nats)": max(distance),
                            "exact FW's spread over its starts": spread,
                            f"LL at {opts.units} units, min … max over seeds": (
                                f"{min(last):.3f} … {max(last):.3f}"
                            ),
                            f"exact FW at {opts.units} units": f"{reference[-1]:.3f}",
                        }
                    )
                    print(rows[-1], flush=True)
    table = markdown_rows(rows)
    command = portable_text(" ".join(argv), [Path.cwd()])  # no path of this machine (rbmlab.storage.portable)
    header = (
        "# frank_wolfe: the visible-bias loop against exact answers "
        "(shifting bar 9/3, bars & stripes 3 × 3)\n\n"
        f"`python scripts/frank_wolfe_bias_exact.py {command}` at {source_revision()}; "
        f"{opts.units} units, seeds {opts.seeds}, S = {opts.n_samples} oracle samples, "
        "every other learner option at its default. Worst over the units and seeds.\n\n"
    )
    out.write_text(header + table + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
