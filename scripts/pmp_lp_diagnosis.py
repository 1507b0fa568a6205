"""Why perturb-and-LP learning breaks on pmp/lp-small: each trained RBM's perturbed MAP problems
solved three ways, against the exact perturbed MAP.

    python scripts/pmp_lp_diagnosis.py OUT.md [key=value ...]

Keys (DiagnosisConfig): sweep (the pmp/lp-small sweep; default its reduced tier), perturbations,
sweeps (PMP's), seed. For the final model of every completed run of the sweep, ``perturbations``
draws of Logistic(0, 1) noise on the unary log-odds (as inference=pmap_lp and inference=pmp draw
them), each problem solved by the LP relaxation (rbmlab.inference.lp_map, HiGHS), by PMP's
max-product (the same noise) and exactly: an RBM's perturbed MAP is found by enumerating the
hidden states (2^n_h), the best visible state given each being a sign per unit. Reported per
model: the largest |W|, the share of LP entries left fractional, how often each method returns
the exact MAP, the mean objective each loses to it, and the mean share of visible ones in the
exact, LP-rounded (½ → 0) and PMP samples.
"""

from __future__ import annotations

import itertools
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rbmlab.errors import RbmlabError, fail
from rbmlab.inference.lp_map import lp_map
from rbmlab.inference.max_product import decode, logistic_noise, max_product
from rbmlab.report.render import markdown_rows
from rbmlab.run.checkpoint import load_checkpoint
from rbmlab.storage.portable import portable_text
from rbmlab.storage.provenance import source_revision
from rbmlab.validation import Config, option, script_arguments

ROOT = Path(__file__).resolve().parent.parent
MAX_HIDDEN = 16  # the exact MAP enumerates 2^n_h hidden states


@dataclass
class DiagnosisConfig(Config):
    sweep: str = option(
        str(ROOT / "outputs" / "experiments" / "pmp" / "lp-small" / "reduced"),
        "the pmp/lp-small sweep directory (<variant>/<seed>/)",
    )
    perturbations: int = option(100, "perturbed MAP problems per model", lo=1)
    sweeps: int = option(200, "PMP max-product sweeps", lo=1)
    seed: int = option(0, "seed of the perturbations", lo=0)


def exact_map(W, unary) -> np.ndarray:
    """argmax over (v, h) of uᵀ[v, h] + vᵀWh for each row of ``unary`` (B, n_v + n_h)."""
    n_v, n_h = W.shape
    H = np.array(list(itertools.product([0.0, 1.0], repeat=n_h)))  # (2^n_h, n_h)
    out = np.empty_like(unary)
    for b, u in enumerate(unary):
        field = u[None, :n_v] + H @ W.T  # best v given each h
        value = np.maximum(field, 0.0).sum(axis=1) + H @ u[n_v:]
        k = int(np.argmax(value))
        out[b] = np.concatenate([(field[k] > 0).astype(float), H[k]])
    return out


def objective(W, x, unary) -> np.ndarray:
    n_v = W.shape[0]
    return (x * unary).sum(axis=1) + np.einsum("bi,ij,bj->b", x[:, :n_v], W, x[:, n_v:])


def diagnose(run: Path, opts: DiagnosisConfig) -> dict:
    model, meta, _ = load_checkpoint(run / "checkpoint.npz")
    W = np.asarray(model.W, dtype=np.float64)
    if W.ndim != 2 or W.shape[1] > MAX_HIDDEN:
        raise RbmlabError(f"sweep: {run} is not a single RBM with at most {MAX_HIDDEN} hidden units")
    graph = model.factor_graph()
    rng = np.random.default_rng(opts.seed)
    unary = np.asarray(graph.unary, dtype=np.float64)[None, :] + logistic_noise(
        rng, (opts.perturbations, graph.n), np.float64
    )
    exact = exact_map(W, unary)
    lp, relaxed = lp_map(graph, unary)
    pmp = decode(max_product(graph, unary.astype(graph.unary.dtype), opts.sweeps).beliefs)
    best, n_v = objective(W, exact, unary), W.shape[0]
    return {
        "run": f"{run.parent.name}/{run.name}",
        "epoch": meta.get("epoch"),
        "max |W|": float(np.abs(W).max()),
        "LP entries fractional": float(np.mean(np.abs(relaxed - np.round(relaxed)) > 1e-6)),
        "LP = exact MAP": float(np.mean((lp == exact).all(axis=1))),
        "PMP = exact MAP": float(np.mean((pmp == exact).all(axis=1))),
        "objective lost, LP": float(np.mean(best - objective(W, lp, unary))),
        "objective lost, PMP": float(np.mean(best - objective(W, pmp, unary))),
        "visible ones: exact": float(exact[:, :n_v].mean()),
        "LP": float(lp[:, :n_v].mean()),
        "PMP": float(pmp[:, :n_v].mean()),
    }


def completed_runs(sweep: Path) -> list[Path]:
    runs = [
        s.parent
        for s in sorted(sweep.glob("*/*/summary.json"))
        if json.loads(s.read_text()).get("status") == "completed"
    ]
    if not runs:
        raise RbmlabError(
            f"sweep: no completed runs under {sweep}; run `rbmlab experiment pmp/lp-small scale=...` first"
        )
    return runs


def main(argv: list[str]) -> None:
    try:
        out, opts = script_arguments(
            argv, DiagnosisConfig, "diagnosis", "results/pmp/lp-small-diagnosis_reduced.md"
        )
        rows = [diagnose(run, opts) for run in completed_runs(Path(opts.sweep))]
    except RbmlabError as e:
        fail(str(e))
    command = portable_text(" ".join(argv), [Path.cwd()])  # no path of this machine (rbmlab.storage.portable)
    header = (
        "# pmp/lp-small: each trained RBM's perturbed MAP problems by the LP, by PMP and exactly\n\n"
        f"`python scripts/pmp_lp_diagnosis.py {command}` at {source_revision()}; "
        f"{opts.perturbations} Logistic(0, 1) perturbations of the unary log-odds per model "
        f"(seed {opts.seed}); PMP {opts.sweeps} damped max-product sweeps; the exact MAP by "
        "enumerating the hidden states; LP solutions rounded half to even (½ → 0) as "
        "inference=pmap_lp does.\n\n"
    )
    out.write_text(header + markdown_rows(rows) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
