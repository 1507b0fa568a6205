"""scripts/tap_figures.py figure-12 end to end on a tiny TAP-trained run: TAP log-likelihoods from
both combinations of the solutions (the gap between them is the gap between the two ln Z), AIS and
PL on the same checkpoints, and a summary that names the images and AIS settings actually used."""
from __future__ import annotations

import sys

import numpy as np
import pandas as pd

from rbmlab.checkpoint import load_checkpoint, save_checkpoint
from rbmlab.cli import main
from rbmlab.models.rbm import log_partition
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
