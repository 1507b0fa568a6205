"""scripts/tap_figures.py figure-12 end to end on a tiny TAP-trained run: TAP log-likelihoods from
both combinations of the solutions (the gap between them is the gap between the two ln Z), AIS and
PL on the same checkpoints, and a summary that names the images and AIS settings actually used."""
from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from rbmlab.cli import main
from rbmlab.errors import RbmlabError
from rbmlab.models.rbm import log_partition
from rbmlab.run.checkpoint import load_checkpoint, save_checkpoint
from tests.test_bad_input import script_main


def test_figure_12_scores_every_snapshot_both_ways(tmp_path):
    run = tmp_path / "sweep" / "binary" / "0"
    main(["run", "dataset=bars_stripes", "model=rbm", "model.n_hidden=6", "learner=tap",
          "learner.batch_size=full", "evaluator=tap", "evaluator.splits=[train]",
          "evaluator.n_init=0", "train.epochs=2", "train.snapshot_every=1", "train.eval_every=1",
          "train.progress=false", "evaluator.progress=false", f"hydra.run.dir={run}"])
    for snapshot in sorted((run / "snapshots").glob("epoch_*.npz")):
        # a ferromagnet of {0, 1} units (W = 2, biases at the all-on / all-off symmetry point): two
        # TAP solutions of equal F, all-on and all-off, both reached from bars and stripes
        model, meta, _ = load_checkpoint(snapshot)
        W = np.full_like(model.W, 2.0)
        save_checkpoint(snapshot, model.replace(W=W, b_v=-W.sum(1) / 2, b_h=-W.sum(0) / 2), meta=meta)
    script_main("tap_figures")
    figures = sys.modules["tap_figures"]      # registered by script_main
    figures.figure_12(figures.runs(tmp_path / "sweep"), figures.FigureConfig(), tmp_path, "smoke")
    table = pd.read_csv(tmp_path / "figure-12_smoke.csv")
    assert table["epoch"].tolist() == [1, 2]
    assert table["tap_solutions"].tolist() == [2, 2]
    gap = table["tap_logsumexp_log_z"] - table["tap_log_z"]
    np.testing.assert_allclose(gap, np.log(2), atol=1e-9)     # two equal F: ln 2 apart
    np.testing.assert_allclose(table["tap"] - table["tap_logsumexp"], gap, atol=1e-9)
    assert np.isfinite(table[["ais", "ais_log_z", "pseudo"]].to_numpy()).all()
    text = (tmp_path / "figure-12_smoke.md").read_text()
    assert "the first 14 training images" in text and "PL: 9 of 9 pixels" in text
    exact = float(log_partition(load_checkpoint(run / "snapshots" / "epoch_1.npz")[0]))
    assert abs(table["tap_logsumexp_log_z"][0] - exact) < abs(table["tap_log_z"][0] - exact)
    assert "16 chains, 500 linear temperatures" in text
    assert (tmp_path / "figure-12_smoke.png").stat().st_size > 0


def test_figures_5_and_12_over_seeds_give_mean_and_spread_of_the_per_seed_values(tmp_path, monkeypatch, capsys):
    sweep = tmp_path / "sweep"
    for seed in (0, 1):
        main(["run", "dataset=bars_stripes", "model=rbm", "model.n_hidden=6", "learner=tap",
              "learner.batch_size=full", "learner.lr=0.5", "evaluator=tap", "evaluator.splits=[train]",
              "evaluator.n_init=0", "train.epochs=2", "train.snapshot_every=1", "train.eval_every=1",
              "train.progress=false", "evaluator.progress=false", f"seed={seed}",
              f"hydra.run.dir={sweep / 'binary' / str(seed)}"])
    script_main("tap_figures")
    figures = sys.modules["tap_figures"]
    monkeypatch.setattr(figures, "ROOT", tmp_path)          # Fig. 5's solution cache goes under it
    cfg = figures.FigureConfig(source="figure-3-seeds", n_init=14)
    found = figures.runs(sweep)
    assert [run.name for run in found["binary"][6]] == ["0", "1"]
    figures.figure_12(found, cfg, tmp_path, "smoke")
    table = pd.read_csv(tmp_path / "figure-12-seeds_smoke.csv")
    assert sorted(table["seed"]) == [0, 0, 1, 1]
    assert table.groupby("seed")["tap"].apply(lambda v: v.nunique()).tolist() == [2, 2]
    rows = [line.split(" | ") for line in (tmp_path / "figure-12-seeds_smoke.md").read_text().splitlines()
            if line.startswith("| 1 |")]
    tap = table[table["epoch"] == 1]["tap"]
    assert rows[0][1] == f"{tap.mean():.2f} ± {tap.std(ddof=1):.2f}" and tap.std() > 0
    assert "2 seeds" in (tmp_path / "figure-12-seeds_smoke.md").read_text()
    figures.figure_5(found, cfg, tmp_path, "smoke")
    text = (tmp_path / "figure-5-binary-seeds_smoke.md").read_text()
    assert "Mean ± std (ddof=1) over the 2 seeds' runs" in text and "tap/figure-3-seeds" in text
    per_seed = [figures.solutions("binary", run, cfg, "smoke") for run in found["binary"][6]]
    row = next(line for line in text.splitlines() if line.startswith("| 2 |")).split(" | ")
    counts = [s["n_unique"][list(s["epochs"]).index(2)] for s in per_seed]
    assert row[1] == f"{np.mean(counts):.1f} ± {np.std(counts, ddof=1):.1f}"
    assert (tmp_path / "figure-5-binary-seeds_smoke.png").stat().st_size > 0
    # a size asked for by n_hidden: exactly that size, its own files and its own solution cache
    sized = figures.FigureConfig(source="figure-3-seeds", n_init=14, n_hidden=6)
    figures.figure_5(found, sized, tmp_path, "smoke")
    assert (tmp_path / "figure-5-binary-seeds-h6_smoke.md").read_text().splitlines()[2:] == text.splitlines()[2:]
    assert len(list((tmp_path / "outputs").rglob("binary-seeds-h6-*.npz"))) == 2
    for figure in (figures.figure_5, figures.figure_12):
        with pytest.raises(RbmlabError, match=r"n_hidden: no completed .*N_h = 7 .*binary 6\)"):
            figure(found, figures.FigureConfig(source="figure-3-seeds", n_hidden=7), tmp_path, "smoke")
    with pytest.raises(RbmlabError, match=r"^variants: none of \['cbcl'\] ran in tap/figure-3-seeds \(ran: binary\)$"):
        figures.figure_5(found, figures.FigureConfig(source="figure-3-seeds", variants=["cbcl"]), tmp_path, "smoke")
    with pytest.raises(SystemExit) as stop:      # the other figures take no size: one line, exit 2
        figures.main(["figure-6", "smoke", "n_hidden=6"])
    assert stop.value.code == 2
    assert capsys.readouterr().err == ("rbmlab: error: n_hidden: only figure-5 and figure-12 take a model "
                                       "size, not figure-6\n")


def test_figure_8_over_seeds_tabulates_each_method_as_mean_and_spread(tmp_path, monkeypatch):
    """Fig. 8's table from tap/figure-8-denoising-seeds: TAP's MCC per size and p as mean ± std
    over the seeds' runs, the model-free OPE, 1-NN and constant from one size's runs."""
    import json

    import yaml
    script_main("tap_figures")
    figures = sys.modules["tap_figures"]
    monkeypatch.setattr(figures, "ROOT", tmp_path)
    sweep = tmp_path / "outputs" / "experiments" / "tap" / "figure-8-denoising-seeds" / "smoke"
    rng = np.random.default_rng(0)
    values = {}
    for k, (n, p, seed) in enumerate((n, p, s) for n in (8, 12) for p in (0.0, 0.5) for s in (0, 1, 2)):
        run = sweep / str(k)
        run.mkdir(parents=True)
        final = {"test_mcc_tap": rng.random(), "test_mcc_ope": 0.1 * seed + p, "test_mcc_nn": 0.2 + seed,
                 "test_mcc_const": 0.3, "test_tap_distinct": 1.0}
        values[n, p, seed] = final
        (run / "summary.json").write_text(json.dumps({"status": "completed", "final": final}))
        (run / "config.yaml").write_text(yaml.safe_dump({"model": {"n_hidden": n}, "evaluator": {"flip": p},
                                                          "seed": seed}))
    figures.figure_8({}, figures.FigureConfig(source="figure-3-seeds"), tmp_path, "smoke")
    row = next(line for line in (tmp_path / "figure-8-mcc-seeds_smoke.md").read_text().splitlines()
               if line.startswith("| 0.5 |")).split(" | ")
    tap12 = [values[12, 0.5, s]["test_mcc_tap"] for s in range(3)]
    assert row[2] == f"{np.mean(tap12):.3f} ± {np.std(tap12, ddof=1):.3f} (1)"
    assert row[3] == "0.600 ± 0.100" and row[4] == "1.200 ± 1.000" and row[5].startswith("0.300 ± 0.000")
    assert (tmp_path / "figure-8-mcc-seeds_smoke.png").stat().st_size > 0
