"""tap Figure 12: TAP log-likelihood against AIS and pseudo-likelihood over training, on the
snapshots of binary MNIST's N_h = 500 run of Figure 3 (or the size nearest; ``n_hidden``: exactly
that size). results/tap/figure-12[-seeds][-h<N_h>]_<scale>.{png,md,csv}."""

from __future__ import annotations

from pathlib import Path

import yaml

from rbmlab.errors import RbmlabError
from rbmlab.experiment.figures import Canvas, Drawing
from rbmlab.experiment.figures.tap_runs import (
    TAP_RUNS,
    SizedFigureConfig,
    canvas_runs,
    pm,
    run_data,
    seed_of,
    sizes,
    snapshot,
)

AIS_SETTINGS = {  # Fig. 12's AIS per tier: the paper's 100 runs of 14,500 temperatures; smoke: seconds
    "smoke": (
        {"n_chains": 16, "schedule": "linear", "n_temperatures": 500},
        "16 chains, 500 linear temperatures (smoke: not the paper's schedule)",
    ),
    "reduced": ({"n_chains": 100, "schedule": "salakhutdinov"}, "100 chains, 14,500 temperatures"),
    "paper": ({"n_chains": 100, "schedule": "salakhutdinov"}, "100 chains, 14,500 temperatures"),
}


def figure_12(canvas: Canvas, cfg: SizedFigureConfig) -> None:
    """tap Fig. 12: the snapshots of binary MNIST's N_h = 500 run (or the size nearest), each scored
    on the same (first 10,000) training images by TAP (the run's own evaluator settings; log Z from
    the unique solutions both averaged, the paper's rule, and log-sum-exp'd:
    rbmlab.inference.tap.combine_log_z), by AIS (the paper's 100 chains and Salakhutdinov's 14,500
    temperatures, base-rate base model; fewer at smoke, AIS_SETTINGS) and by the stochastic
    pseudo-likelihood (100 random pixels), with the evaluators of ``rbmlab run`` (seeded per
    epoch). Several seeds: every seed's run scored, the table and plot as mean ± std over them."""
    import pandas as pd  # noqa: PLC0415
    from matplotlib.figure import Figure  # noqa: PLC0415 - no pyplot: no global backend

    scale, sweep = canvas.scale, canvas_runs(canvas)
    if "binary" not in sweep:
        raise RbmlabError(f"sweep: Figure 12 needs the binary MNIST runs of {canvas.source}")
    if (found := cfg.size(sweep, "binary", 500)) is None:
        raise RbmlabError(
            f"n_hidden: no completed binary MNIST runs with N_h = {cfg.n_hidden} in "
            f"{canvas.source} (sizes: {sizes({'binary': sweep['binary']})})"
        )
    n_hidden, seeds = found
    rows = [row | {"seed": seed_of(run)} for run in seeds for row in scores(run, cfg, scale)]
    if not rows:
        raise RbmlabError(f"epochs: none of {cfg.epochs} is an evaluated epoch of {seeds[0]}")
    table = pd.DataFrame(rows)
    stem = cfg.sized_name(canvas, "figure-12")
    canvas.save_text(stem, "csv", table.to_csv(index=False))
    columns = [
        "tap",
        "tap_logsumexp",
        "ais",
        "pseudo",
        "tap_solutions",
        "tap_log_z",
        "tap_logsumexp_log_z",
        "ais_log_z",
    ]
    by_epoch = table.groupby("epoch")[columns]
    mean, std = by_epoch.mean(), by_epoch.std(ddof=1)
    fig = Figure(figsize=(6, 7))
    axes = fig.subplots(3, 1, sharex=True)
    for ax, column, style, label in (
        (axes[0], "tap", "o-", "TAP, solutions averaged (the paper's)"),
        (axes[0], "tap_logsumexp", "s-", "TAP, solutions log-sum-exp'd"),
        (axes[0], "ais", "k--", "AIS"),
        (axes[1], "ais", "o-", None),
        (axes[2], "pseudo", "o-", None),
    ):
        ax.plot(mean.index, mean[column], style, ms=3, lw=1, label=label)
        if len(seeds) > 1:
            ax.fill_between(mean.index, mean[column] - std[column], mean[column] + std[column], alpha=0.2)
    axes[0].legend(fontsize=7)
    ylabels = ("log-likelihood (Eq. 39, nats)", "AIS log-likelihood (nats)", "pseudo-log-likelihood (nats)")
    for ax, label in zip(axes, ylabels):
        ax.set_ylabel(label, fontsize=8)
    axes[-1].set_xlabel("epoch")
    images = int(table["images"].iloc[0])
    over = f", mean ± std over {len(seeds)} seeds" if len(seeds) > 1 else ""
    axes[0].set_title(
        f"tap Fig. 12: binary MNIST, N_h = {n_hidden}, {images:,} training images\n({scale}{over})",
        fontsize=9,
    )
    fig.tight_layout()
    canvas.save_png(fig, stem)
    run_tap = yaml.safe_load((seeds[0] / "config.yaml").read_text())["evaluator"]
    starts = f"{run_tap['n_init']:,}" if run_tap["n_init"] else "all"
    pl_units = int(table["pl_units"].iloc[0])
    lines = [
        "# tap Figure 12: TAP log-likelihood, AIS and pseudo-likelihood over training",
        "",
        f"Scale `{scale}`: the snapshots of `rbmlab experiment {canvas.source} scale={scale}` "
        f"(binary MNIST, N_h = {n_hidden}, {len(seeds)} seed{'s' if len(seeds) > 1 else ''}) at "
        f"{'the epochs chosen' if cfg.epochs else 'its evaluated epochs'}; mean over the first "
        f"{images:,} training images (nats). TAP: the run's evaluator ({starts} initialisations), "
        "log Z from the unique solutions averaged (the paper's rule) or log-sum-exp'd. "
        f"AIS: {AIS_SETTINGS[scale][1]}; PL: {pl_units} of {table['pixels'].iloc[0]} pixels."
        + (
            f" Each cell: mean ± std (ddof=1) over the seeds' runs; per seed in `{stem}_{scale}.csv`."
            if len(seeds) > 1
            else ""
        ),
        "",
        "| epoch | TAP | TAP (log-sum-exp) | AIS | PL | solutions | TAP ln Z | TAP ln Z (log-sum-exp) "
        "| AIS ln Z |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    digits = {c: 2 for c in columns} | {"tap_solutions": 1 if len(seeds) > 1 else 0}
    for epoch, row in table.groupby("epoch"):
        lines.append(f"| {epoch} | " + " | ".join(pm(row[c], digits[c]) for c in columns) + " |")
    canvas.save_text(stem, "md", "\n".join(lines) + "\n")


def scores(run: Path, cfg: SizedFigureConfig, scale: str) -> list[dict]:
    """Fig. 12's rows of one run: TAP (both combinations), AIS and PL at each scored epoch."""
    import pandas as pd  # noqa: PLC0415

    from rbmlab.backend import get_backend  # noqa: PLC0415
    from rbmlab.data.batch import Batch  # noqa: PLC0415
    from rbmlab.evaluators import EVALUATORS  # noqa: PLC0415
    from rbmlab.evaluators.base import Context  # noqa: PLC0415

    x, _, _, epochs = run_data(run)
    x = x[:10000]
    evaluated = pd.read_csv(run / "metrics.csv").dropna(subset=["train_log_likelihood"])["epoch"]
    backend = get_backend("numpy", "float32")
    run_tap = yaml.safe_load((run / "config.yaml").read_text())["evaluator"]
    tap = EVALUATORS.build(
        EVALUATORS.parse(
            {**run_tap, "splits": ["train"], "max_examples": 0, "combine": "uniform", "progress": False}
        )
    )
    ais = EVALUATORS.build(
        EVALUATORS.parse({"name": "ais", "splits": ["train"], "progress": False, **AIS_SETTINGS[scale][0]})
    )
    pl_units = min(100, x.shape[1])  # the paper's stochastic PL: 100 random pixels per image
    pl = EVALUATORS.build(EVALUATORS.parse({"name": "pl", "splits": ["train"], "n_units": pl_units}))
    rows = []
    for e in [int(e) for e in evaluated if int(e) in epochs and (not cfg.epochs or int(e) in cfg.epochs)]:
        model = snapshot(run, e)
        t = tap.evaluate(
            model, {"train": Batch(x)}, Context(rng=backend.rng(11, e), final=True, train=Batch(x))
        )
        clamped = t["train_log_likelihood"] + t["log_z"]  # the exact data term of Eq. 39
        context = Context(rng=backend.rng(12, e), final=True, train=Batch(x), data_mean=x.mean(axis=0))
        a = ais.evaluate(model, {"train": Batch(x)}, context)
        p = pl.evaluate(model, {"train": Batch(x)}, Context(rng=backend.rng(13, e), final=True))
        rows.append(
            {
                "epoch": e,
                "tap": clamped - t["log_z_uniform"],
                "tap_log_z": t["log_z_uniform"],
                "tap_logsumexp": clamped - t["log_z_logsumexp"],
                "tap_logsumexp_log_z": t["log_z_logsumexp"],
                "tap_solutions": t["tap_solutions"],
                "ais": a["train_log_likelihood"],
                "ais_log_z": a["log_z"],
                "pseudo": p["train_pseudo_log_likelihood"],
                "images": len(x),
                "pixels": x.shape[1],
                "pl_units": pl_units,
            }
        )
        r = rows[-1]
        print(
            f"{run} epoch {e}: TAP {r['tap']:.2f} (log-sum-exp {r['tap_logsumexp']:.2f}), "
            f"AIS {r['ais']:.2f}, PL {r['pseudo']:.2f}"
        )
    return rows


FIGURE_12 = Drawing(figure_12, SizedFigureConfig, TAP_RUNS)
