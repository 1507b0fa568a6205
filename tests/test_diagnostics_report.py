"""Training diagnostics end to end: `rbmlab run` with evaluator=combined of spectrum, moments and
overlap writes their columns to metrics.csv (the spectrum equal to the SVD of the checkpoint's W),
and `rbmlab report diagnostics RUN_DIR` draws them over training."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from rbmlab.cli import main
from rbmlab.errors import RbmlabError
from rbmlab.report.diagnostics import diagnostics_figure, panel_columns
from rbmlab.run.checkpoint import load_checkpoint

PARTS = (
    "[{name: spectrum, k: 4}, {name: moments, n_samples: 50, sweeps: 5}, "
    "{name: overlap, n_samples: 10, sweeps: 5}]"
)
RUN = [
    "train.eval_every=1",
    "dataset=bars_stripes",
    "model.n_hidden=8",
    "learner=pcd",
    "learner.batch_size=4",
    "train.epochs=3",
    "seed=3",
    "scale=smoke",
    "evaluator=combined",
    f"evaluator.parts={PARTS}",
    "train.progress=false",
]
COLUMNS = {
    "sv_1",
    "sv_2",
    "sv_3",
    "sv_4",
    "test_moments.moment1_rmse",
    "test_moments.moment2_rmse",
    "test_moments.moment2_corr",
    "train_overlap.aa",
    "test_overlap.aa",
    "test_overlap.privacy_loss",
    "train_overlap.nn_distance",
    "test_overlap.nn_distance",
    "test_overlap.data_nn_distance",
}


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("diag") / "run"
    main(["run", *RUN, f"hydra.run.dir={out}"])
    return out


def test_the_diagnostics_land_in_metrics_csv(run_dir):
    metrics = pd.read_csv(run_dir / "metrics.csv")
    assert COLUMNS <= set(metrics.columns) and metrics["epoch"].tolist() == [0, 1, 2, 3]
    model, _, _ = load_checkpoint(run_dir / "checkpoint.npz")
    last = metrics.iloc[-1][["sv_1", "sv_2", "sv_3", "sv_4"]].to_numpy(dtype=np.float64)
    np.testing.assert_allclose(
        last, np.linalg.svd(np.asarray(model.W, np.float64), compute_uv=False)[:4], rtol=1e-12
    )
    assert metrics[[c for c in COLUMNS if c.endswith(".aa")]].stack().between(0, 1).all()


def test_report_diagnostics_draws_them_over_training(run_dir, capsys):
    main(["report", "diagnostics", str(run_dir)])
    path = run_dir / "report" / "diagnostics.png"
    assert capsys.readouterr().out.strip() == str(path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    panels = panel_columns(pd.read_csv(run_dir / "metrics.csv").columns)
    assert [(t.split()[0], cs) for t, cs, _ in panels] == [
        ("singular", ["sv_1", "sv_2", "sv_3", "sv_4"]),
        ("moment", ["test_moments.moment1_rmse", "test_moments.moment2_rmse"]),
        ("correlation", ["test_moments.moment2_corr"]),
        ("adversarial", ["test_overlap.aa", "test_overlap.privacy_loss", "train_overlap.aa"]),
    ]


def test_columns_of_the_evaluators_alone_and_a_run_without_diagnostics():
    assert [
        cs
        for _, cs, _ in panel_columns(
            ["epoch", "sv_10", "sv_2", "test_moment2_corr", "valid_aa", "test_log_likelihood"]
        )
    ] == [["sv_2", "sv_10"], ["test_moment2_corr"], ["valid_aa"]]
    with pytest.raises(RbmlabError, match="^report diagnostics: no diagnostic metrics"):
        diagnostics_figure(pd.DataFrame({"epoch": [0, 1], "test_log_likelihood": [-3.0, -2.0]}))


def test_a_bad_option_is_one_error_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "dataset=bars_stripes", "evaluator=spectrum", "evaluator.k=100"])
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and err.startswith("rbmlab: error: evaluator.k: ") and "\n" not in err
