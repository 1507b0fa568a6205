"""frank_wolfe: is there a unit left to add? The oracle's gain on its own samples against its gain
on independent samples of the same model.

    python scripts/frank_wolfe_oracle_gain.py OUT.md checkpoints=[a.npz,b.npz] [key=value ...]

Keys (OracleGainConfig; lists as [a,b]): checkpoints (FW checkpoints or snapshots; λ, the
penalty's form and the dataset are read from each one's config), n_fresh, burn_in, seed.

The oracle (Alg. 1 line 4) maximises the linear gain
    g(w) = (1/N) Σ_n softplus(w·v_n) − E_p softplus(w·v) − (λ/2)‖w‖²
with E_p replaced by S model samples. Fitted to those samples, its value is biased upward; the
same unit scored on samples it did not see is not. For each checkpoint the script draws two
independent pools of ``n_fresh`` model samples (block-Gibbs chains started at training images,
``burn_in`` sweeps), solves the oracle on (a) the checkpoint's own persistent chains (what the
learner used for its next unit, S = 1,000), (b) 1,000 of pool A, (c) all of pool A, and scores
each unit on pool B. The best unit's true gain lies between (c) on pool B (a unit's unbiased gain
is a lower bound on the best) and (c) on pool A (biased upward) — provided the pools are samples of
the model. Chains started at the data may not reach modes the model has away from the data (the
persistent chains may have), so the script also reports where each set of states sits in the
model's unnormalised log-probability −F (mean and 90th percentile) and its count of on-pixels
Σ_j v_j (mean ± standard deviation), beside the data's: persistent chains far above the data and
the pools in −F are in modes the pools have not reached, and then (c) is no bound.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rbmlab.data.registry import load_dataset
from rbmlab.errors import RbmlabError, fail
from rbmlab.inference.block_gibbs import gibbs_chain
from rbmlab.learners.frank_wolfe import oracle_pool
from rbmlab.learners.frank_wolfe_oracle import LinearOracle, solve
from rbmlab.models.rbm import free_energy
from rbmlab.report.render import markdown_rows
from rbmlab.run.checkpoint import load_checkpoint
from rbmlab.storage.portable import portable_path, portable_text
from rbmlab.storage.provenance import source_revision
from rbmlab.validation import Config, option, script_arguments


@dataclass
class OracleGainConfig(Config):
    checkpoints: list[str] = option([], "FW checkpoints or snapshots (.npz) written by rbmlab")
    n_fresh: int = option(10000, "samples per independent pool", lo=1000, hi=10**6)
    burn_in: int = option(300, "block-Gibbs sweeps from the training images before a pool is drawn", lo=1)
    seed: int = option(0, "seed of the pools and the oracle's starts", lo=0)


def parse(argv: list[str]) -> tuple[Path, OracleGainConfig]:
    """OUT.md and the options, checked; a bad one ends the run with one error line."""
    try:
        out, opts = script_arguments(
            argv, OracleGainConfig, "oracle_gain", "results/frank_wolfe/oracle-gain_reduced.md"
        )
    except RbmlabError as error:
        fail(str(error))
    if not opts.checkpoints:
        fail(
            "oracle_gain.checkpoints: give at least one FW checkpoint, e.g. checkpoints=[run/checkpoint.npz]"
        )
    return out, opts


def counts(v) -> str:
    c = v.sum(axis=1)
    return f"{c.mean():.1f} ± {c.std():.1f}"


def neg_free_energy(model, v) -> str:
    """Mean [90th percentile] of −F(v) (Eq. 3): where the states sit in the model's unnormalised
    log-probability."""
    f = -free_energy(model, v)
    return f"{f.mean():.1f} [{np.quantile(f, 0.9):.1f}]"


def measure(path: str, opts: OracleGainConfig) -> list[dict]:
    try:
        model, meta, state = load_checkpoint(path)
    except RbmlabError as error:
        fail(f"oracle_gain.checkpoints: {error}")
    config = meta.get("config", {})
    learner = config.get("learner", {})
    pool = oracle_pool(learner.get("chain_pool", "two"))
    if learner.get("name") != "frank_wolfe" or pool not in state:
        fail(f"oracle_gain.checkpoints: {path} is not a frank_wolfe checkpoint with its oracle chains")
    lam = learner["lam"] / (model.n_hidden + 1 if learner["lambda_scaling"] == "over_t" else 1)
    dataset = {k: v for k, v in config["dataset"].items() if k != "name"}
    x = np.asarray(load_dataset(config["dataset"]["name"], **dataset).train, dtype=np.float32)
    model = model.map(lambda a: np.asarray(a, dtype=np.float32))
    rng = np.random.default_rng(opts.seed)
    pool_a, pool_b = (
        gibbs_chain(model, x[rng.integers(0, len(x), opts.n_fresh)], rng, opts.burn_in) for _ in range(2)
    )
    own = np.asarray(state[pool], dtype=np.float32)
    rows = []
    for name, states in (
        (f"its own persistent chains (S = {len(own)})", own),
        ("pool A, S = 1,000", pool_a[:1000]),
        (f"pool A, S = {opts.n_fresh:,}", pool_a),
    ):
        oracle = LinearOracle(x, states, lam=lam, penalize_bias=learner["penalize_bias"])
        w = solve(oracle, rng, restarts=learner["restarts"]).w
        fresh = LinearOracle(x, pool_b, lam=lam, penalize_bias=learner["penalize_bias"])
        rows.append(
            {
                "checkpoint": portable_path(path, [Path.cwd()]),
                "units": model.n_hidden,
                "λ": f"{lam:g}",
                "oracle's samples": name,
                "gain on them": oracle.gain(w),
                "gain on pool B": fresh.gain(w),
                "‖w‖": float(np.linalg.norm(w)),
                "on-pixels: data": counts(x),
                "own chains": counts(own),
                "pool B": counts(pool_b),
                "−F: data": neg_free_energy(model, x),
                "−F: own chains": neg_free_energy(model, own),
                "−F: pool B": neg_free_energy(model, pool_b),
            }
        )
        print(rows[-1], flush=True)
    return rows


def main(argv: list[str]) -> None:
    out, opts = parse(argv)
    rows = [row for path in opts.checkpoints for row in measure(path, opts)]
    command = portable_text(" ".join(argv), [Path.cwd()])  # no path of this machine (rbmlab.storage.portable)
    header = (
        "# frank_wolfe: the oracle's gain on its own samples and on independent ones\n\n"
        f"`python scripts/frank_wolfe_oracle_gain.py {command}` at {source_revision()}; "
        f"pools of {opts.n_fresh:,} samples after {opts.burn_in} block-Gibbs sweeps from training "
        f"images, seed {opts.seed}; the oracle as the learner runs it (L-BFGS-B, its restarts).\n\n"
    )
    out.write_text(header + markdown_rows(rows) + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
