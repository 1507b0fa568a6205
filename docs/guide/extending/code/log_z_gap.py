"""The ``log_z_gap`` experiment kind (the kind of docs/guide/extending/experiment-kind.md).

In rbmlab this file would be ``rbmlab/experiment/log_z_gap.py``. An experiment file with a
``log_z_gap:`` section draws random small RBMs, W_ij ~ N(0, s²) for each coupling scale s and
biases ~ N(0, 1), and sets each solver's estimate of log Z against the exact value (enumeration
of the smaller layer): naive mean field's is a lower bound (rbmlab.inference.mean_field; crbm_bp
Secs. 2 and 6 name the method), sum-product BP's the Bethe approximation, exact on trees.

    log_z_gap: {n_visible, n_hidden, couplings, instances, solvers, seed}
    scales: {smoke | reduced | paper: {<options>}}     each tier's options over the section's

``key=value`` on the command line sets an option over the tier's. The table goes to
results/<paper>/<artefact>_<scale>.md: per coupling and solver, the mean signed error
(estimate − exact) and the largest absolute one.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rbmlab.errors import RbmlabError
from rbmlab.experiment.spec import _parse_argv
from rbmlab.inference.solvers import SOLVERS
from rbmlab.limits import ENUMERATION_UNITS
from rbmlab.models.rbm import RBM, log_partition
from rbmlab.validation import Config, invalid, key_values, merged, option, parse_options


@dataclass
class LogZGapConfig(Config):
    n_visible: int = option(8, "visible units of each RBM", lo=1, hi=ENUMERATION_UNITS)
    n_hidden: int = option(4, "hidden units of each RBM", lo=1, hi=ENUMERATION_UNITS)
    couplings: list[float] = option([0.1, 0.5, 1.0], "standard deviations s of the weights", lo=0)
    instances: int = option(10, "random RBMs per coupling scale", lo=1, hi=10_000)
    solvers: list[str] = option(["mean_field", "bp_sum"], "solvers whose log Z estimate is compared")
    seed: int = option(0, "seed of the random RBMs", lo=0)

    def check(self) -> None:
        unknown = [s for s in self.solvers if s not in SOLVERS]
        if unknown:
            known = ", ".join(SOLVERS.names())
            raise invalid("solvers", f"unknown solver(s) {', '.join(unknown)}; choose one of {known}")


class LogZGap:
    name = "log_z_gap"
    section = "log_z_gap"
    keys = frozenset({"log_z_gap"})
    arguments = frozenset({"overrides"})  # key=value: an option over the tier's

    def run(self, name: str, spec: dict[str, Any], argv: list[str], results_root, outputs_root) -> dict:
        scale, extra, _ = _parse_argv(argv)
        tiers = spec.get("scales") or {}
        if scale not in tiers:
            defined = ", ".join(tiers)
            raise RbmlabError(f"experiment {name}: no settings for scale {scale!r}; defined: {defined}")
        given = merged(merged(spec["log_z_gap"] or {}, tiers[scale] or {}), key_values(extra))
        try:
            config = parse_options(LogZGapConfig, given, "log_z_gap")
        except RbmlabError as e:
            raise RbmlabError(f"experiment {name}: {e}") from None
        paper, artefact = name.split("/", 1)
        out = Path(results_root) / paper / f"{artefact}_{scale}.md"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(table(name, scale, config, gaps(config)))
        print(f"rbmlab experiment {name}: wrote {out}")
        return {"table": out}


def gaps(config: LogZGapConfig) -> dict[tuple[float, str], np.ndarray]:
    """{(coupling, solver): estimate − exact log Z over the instances}."""
    rng = np.random.default_rng(config.seed)
    solvers = {s: SOLVERS.build(SOLVERS.parse(s, "log_z_gap.solvers")) for s in config.solvers}
    found: dict[tuple[float, str], list[float]] = {}
    for s in config.couplings:
        for _ in range(config.instances):
            W = s * rng.standard_normal((config.n_visible, config.n_hidden))
            model = RBM(W, rng.standard_normal(config.n_visible), rng.standard_normal(config.n_hidden))
            exact = log_partition(model)
            for solver_name, solver in solvers.items():
                log_z = solver.solve(model).log_z  # the model alone: one instance
                if log_z is None:
                    raise RbmlabError(f"log_z_gap.solvers: {solver_name} gives no log Z estimate")
                found.setdefault((s, solver_name), []).append(float(log_z[0]) - exact)
    return {key: np.array(values) for key, values in found.items()}


def table(name: str, scale: str, config: LogZGapConfig, found: dict) -> str:
    lines = [
        f"# {name} (scale: {scale})",
        "",
        f"{config.instances} random RBMs of {config.n_visible}x{config.n_hidden} units per coupling "
        f"scale s (W ~ N(0, s²), biases ~ N(0, 1), seed {config.seed}); estimate − exact log Z.",
        "",
        "| s | solver | mean error | largest abs. error |",
        "|---|---|---|---|",
    ]
    for (s, solver), gap in found.items():
        lines.append(f"| {s:g} | {solver} | {gap.mean():+.4f} | {np.abs(gap).max():.4f} |")
    return "\n".join(lines) + "\n"
