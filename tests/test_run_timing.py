"""Where a run's time goes (training, evaluations at epochs, the final one), the settings of the
per-epoch evaluation's cost, and the progress bar's newest metric."""

from __future__ import annotations

import json
import re

import pandas as pd

from rbmlab.evaluators import ais
from rbmlab.hydra_app import validated_run_config
from rbmlab.run.runner import train
from tests.test_run_identity import RECORDED_UNDER

AIS = [
    "dataset=bars_stripes",
    "model.n_hidden=4",
    "learner.batch_size=full",
    "evaluator=ais",
    "evaluator.n_chains=20",
    "evaluator.schedule=linear",
    "evaluator.n_temperatures=50",
    "evaluator.curve_n_temperatures=10",
    "evaluator.curve_n_chains=5",
    "evaluator.progress=false",
]


def test_time_shares_per_epoch_cost_and_the_bars_metric(tmp_path, monkeypatch, capsys):
    chains = []
    real = ais.ais_log_partition
    monkeypatch.setattr(
        ais,
        "ais_log_partition",
        lambda *a, **k: chains.append((k["n_chains"], k["betas"].size)) or real(*a, **k),
    )
    lines = []
    summary = train(
        validated_run_config([*AIS, "train.epochs=3", "train.eval_every=1", "train.progress=true"]),
        tmp_path / "run",
        echo=lines.append,
    )
    # epochs 0..3 with curve_n_chains chains on the curve schedule, the final one with n_chains
    assert chains == [(5, 11)] * 4 + [(20, 51)]
    record = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert {k: record[k] for k in ("wall_time", "eval_time", "final_eval_time")} == {
        k: summary[k] for k in ("wall_time", "eval_time", "final_eval_time")
    }
    assert all(record[k] > 0 for k in ("wall_time", "eval_time", "final_eval_time"))
    total = record["wall_time"] + record["eval_time"] + record["final_eval_time"]
    (line,) = [ln for ln in lines if ln.startswith("time:")]
    train_s, epochs_s, final_s = (record[k] for k in ("wall_time", "eval_time", "final_eval_time"))
    assert line == (
        f"time: training {train_s:.3g} s ({100 * train_s / total:.0f}%), "
        f"evaluation at epochs {epochs_s:.3g} s ({100 * epochs_s / total:.0f}%; "
        "train.eval_every=1, evaluator.curve_n_temperatures=10, evaluator.curve_n_chains=5), "
        f"final evaluation {final_s:.3g} s ({100 * final_s / total:.0f}%)"
    )
    # the bar shows each evaluation's headline metric as it comes (epoch 0 on the bar's first line);
    # on a loaded machine tqdm may redraw a count before its new metric is set, so each epoch is
    # read at the bar's last draw of it
    metrics = pd.read_csv(tmp_path / "run" / "metrics.csv")
    shown = re.findall(r"(\d)/3 \[[^\]]*test_log_likelihood=(\S+?)\]", capsys.readouterr().err)
    assert [int(e) for e, _ in shown] == sorted(int(e) for e, _ in shown)
    assert sorted({int(e): v for e, v in shown}.items()) == [
        (e, f"{metrics.test_log_likelihood[e]:.4g}") for e in range(4)
    ]


def test_curve_n_chains_keeps_the_run_identity_at_its_neutral_value():
    """0 (the curve on n_chains, the default before issue 56) leaves a run's identity as it was;
    the default 20 and any other value are in it."""
    before = RECORDED_UNDER  # the run defaults of that time
    hashes = [
        validated_run_config([*before, *o]).hash()
        for o in (["evaluator.curve_n_chains=0"], [], ["evaluator.curve_n_chains=10"])
    ]
    assert hashes[0] == "3cb5a7421c576754" and len(set(hashes)) == 3  # tests/test_run_identity.py


def test_epoch_lines_show_the_headline_where_scored_with_the_curve_estimate(tmp_path, caplog):
    caplog.set_level("INFO", logger="rbmlab.run.runner")
    train(validated_run_config([*AIS, "train.epochs=3", "train.eval_every=2"]), tmp_path / "run", echo=print)
    metrics = pd.read_csv(tmp_path / "run" / "metrics.csv")
    assert list(metrics.epoch) == [0, 2, 3]  # every 2 epochs and the last
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("epoch ")]
    assert [ln.partition(": updates")[0] for ln in lines] == ["epoch 1/3", "epoch 2/3", "epoch 3/3"]
    assert "test_log_likelihood" not in lines[0]  # not scored at epoch 1: no stale value
    for line, e in zip(lines[1:], (2, 3), strict=True):
        value = metrics.test_log_likelihood[metrics.epoch == e].item()
        assert line.endswith(f"test_log_likelihood {value:.6g} (AIS, 10 temperatures, 5 chains)")


def test_the_curve_estimate_is_named_only_where_it_differs_from_the_final_one():
    from rbmlab.evaluators import EVALUATORS  # noqa: PLC0415

    def label(*overrides):
        return EVALUATORS.build(
            validated_run_config(["evaluator=ais", *overrides]).evaluator
        ).curve_estimate()

    assert label() == "AIS, 1000 temperatures, 20 chains"
    assert label("evaluator.curve_n_chains=0") == "AIS, 1000 temperatures, 100 chains"
    assert label("evaluator.curve_n_temperatures=0") == "AIS, 14500 temperatures, 20 chains"
    assert label("evaluator.curve_n_temperatures=0", "evaluator.curve_n_chains=0") is None
    assert (
        label("evaluator.schedule=linear", "evaluator.n_temperatures=1000", "evaluator.curve_n_chains=0")
        is None
    )


def test_an_evaluation_only_run_evaluates_once_and_writes_it_as_epoch_0(tmp_path, monkeypatch):
    """train.epochs=0 (pmp/figure-3's sampling of trained models): the final evaluation, on the
    full schedule, is the run's only one, and metrics.csv's epoch-0 row holds its values; with
    train.eval_every=0 nothing is written there."""
    chains = []
    real = ais.ais_log_partition
    monkeypatch.setattr(
        ais,
        "ais_log_partition",
        lambda *a, **k: chains.append((k["n_chains"], k["betas"].size)) or real(*a, **k),
    )
    summary = train(
        validated_run_config([*AIS, "train.epochs=0", "train.progress=false"]),
        tmp_path / "a",
        echo=lambda _: None,
    )
    assert chains == [(20, 51)] and summary["eval_time"] == 0
    rows = pd.read_csv(tmp_path / "a" / "metrics.csv")
    assert rows.epoch.tolist() == [0]
    assert rows.test_log_likelihood[0] == summary["final"]["test_log_likelihood"]
    train(
        validated_run_config([*AIS, "train.epochs=0", "train.eval_every=0", "train.progress=false"]),
        tmp_path / "b",
        echo=lambda _: None,
    )
    assert not (tmp_path / "b" / "metrics.csv").exists() and len(chains) == 2


def test_evaluation_only_runs_with_a_stop_rule_or_trials_and_a_resumed_one(tmp_path):
    """A stop rule judges the epoch-0 row, so with one the run evaluates at epoch 0 as before;
    batched trials write one epoch-0 row each; a run resumed after its final evaluation was cut
    (its rows half written) ends with exactly the final rows, once."""
    from tests.test_stop_rule import RUN  # noqa: PLC0415

    summary = train(
        validated_run_config([*RUN, "train.epochs=0", "train.stop_rule=gap"]),
        tmp_path / "rule",
        echo=lambda _: None,
    )
    assert summary["status"] == "completed" and (tmp_path / "rule" / "selected.npz").is_file()
    trials = train(
        validated_run_config([*AIS, "train.epochs=0", "train.trials=3", "train.progress=false"]),
        tmp_path / "trials",
        echo=lambda _: None,
    )
    rows = pd.read_csv(tmp_path / "trials" / "metrics.csv")
    assert rows.trial.tolist() == [0, 1, 2] and rows.epoch.tolist() == [0, 0, 0]
    assert rows.test_log_likelihood.mean() == trials["final"]["test_log_likelihood"]
    run = tmp_path / "cut"
    train(validated_run_config([*AIS, "train.epochs=0", "train.progress=false"]), run, echo=lambda _: None)
    first = (run / "metrics.csv").read_text()
    (run / "metrics.csv").write_text(first + first.splitlines()[1] + "\n")  # a stale extra row
    record = json.loads((run / "summary.json").read_text())
    (run / "summary.json").write_text(json.dumps({**record, "status": "running"}))
    train(
        validated_run_config([*AIS, "train.epochs=0", "train.progress=false", "resume=true"]),
        run,
        echo=lambda _: None,
    )
    assert (run / "metrics.csv").read_text() == first
