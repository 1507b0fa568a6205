"""evaluator=combined: several evaluators at every evaluation point, each giving the numbers it
gives alone; the first part's columns as they are, a later part's as <part>.<metric>."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from rbmlab.backend import get_backend
from rbmlab.cli import main
from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS, exact
from rbmlab.evaluators.base import Context, mean_log_unnormalized
from rbmlab.evaluators.metrics import metric_spec
from rbmlab.models.rbm import RBM
from tests.test_bad_input import Case, assert_one_error_line

BACKEND = get_backend("numpy", "float64")
AIS = {"name": "ais", "n_chains": 16, "schedule": "linear", "n_temperatures": 50, "progress": False}


def random_rbm(seed: int = 0) -> RBM:
    g = np.random.default_rng(seed)
    return RBM(g.standard_normal((9, 4)), 0.5 * g.standard_normal(9), 0.5 * g.standard_normal(4))


def splits() -> dict[str, Batch]:
    g = np.random.default_rng(3)
    return {s: Batch((g.random((12, 9)) < 0.5).astype(np.float64)) for s in ("test", "valid")}


def combined(*parts):
    return EVALUATORS.build(EVALUATORS.parse({"name": "combined", "parts": list(parts)}))


def alone(node, data, seed: int = 7) -> dict[str, float]:
    evaluator = EVALUATORS.build(EVALUATORS.parse(node))
    own = {s: b for s, b in data.items() if s in evaluator.config.splits}
    if evaluator.config.max_examples:
        own = {s: b.take(slice(0, evaluator.config.max_examples)) for s, b in own.items()}
    return evaluator.evaluate(random_rbm(), own, Context(rng=BACKEND.rng(seed), final=True))


def test_exact_then_ais_gives_each_its_own_numbers():
    """[exact, ais]: exact's columns unchanged, AIS's (its own splits and cap, the same random
    stream: exact draws nothing) under ais.<metric>."""
    ais = {**AIS, "splits": ["valid"], "max_examples": 5, "exact_check": True}
    evaluator, data = combined("exact", ais), splits()
    got = evaluator.evaluate(random_rbm(), data, Context(rng=BACKEND.rng(7), final=True))
    assert evaluator.config.splits == ["test", "valid"]  # the union: what the run loads
    first, second = alone({"name": "exact"}, data), alone(ais, data)
    log_z = exact.log_partition(random_rbm())
    assert first == {
        "log_z": log_z,
        "test_log_likelihood": mean_log_unnormalized(random_rbm(), data["test"].inputs) - log_z,
    }
    expected = {
        **first,
        **{
            f"valid_ais.{k[len('valid_') :]}" if k.startswith("valid_") else f"ais.{k}": v
            for k, v in second.items()
        },
    }
    assert got == expected
    assert got["ais.log_z_exact"] == got["log_z"] and got["ais.log_z_within"] == 1.0
    assert "test_ais.log_likelihood" not in got and "valid_log_likelihood" not in got
    assert set(got) <= {
        f"{s}_{m.name}" if m.per_split else m.name for m in evaluator.metrics for s in ("test", "valid")
    }


def test_metrics_are_the_parts_with_later_ones_prefixed_and_declared():
    evaluator = combined("exact", AIS, "mmd")
    names = [m.name for m in evaluator.metrics]
    assert names[:2] == ["log_likelihood", "log_z"] and "ais.log_z_lower" in names and "mmd.log_mmd2" in names
    spec = metric_spec("valid_ais.log_likelihood")  # the report ranks and names it by AIS's declaration
    assert (spec.name, spec.per_split, spec.summary_name, spec.label) == (
        "ais.log_likelihood",
        True,
        "ais.mean_log_likelihood",
        "log-likelihood (ais)",
    )
    assert (
        metric_spec("ais.log_z_error").best_at == 0.0
        and metric_spec("test_mmd.log_mmd2").higher_is_better is False
    )
    assert metric_spec("nope.log_z") is None and metric_spec("ais.nope") is None
    assert evaluator.headline_column("test") == "test_log_likelihood"


def test_delegates_requirements_units_truth_and_cost_to_the_parts():
    evaluator = combined({"name": "ais", "curve_n_temperatures": 300}, {"name": "kl"})
    assert evaluator.needs_truth and not combined("exact", "ais").needs_truth
    assert evaluator.units["visible"] == ("bernoulli",)  # AIS's, within kl's binary ones
    assert evaluator.epoch_cost == ("parts[0].curve_n_temperatures", "parts[0].curve_n_chains")
    assert getattr(evaluator.config, "parts[0].curve_n_temperatures") == 300  # the runner's time report
    with pytest.raises(AttributeError):
        evaluator.config.nope  # noqa: B018 - the attribute lookup is what raises


def test_a_part_s_refusal_names_the_part():
    big = {"n_visible": 784, "n_hidden": 30}
    with pytest.raises(RbmlabError, match=r"^evaluator=combined: parts\[1\] \(exact\): enumeration needs"):
        combined("tap", "exact").check(RBM, big)
    with pytest.raises(RbmlabError, match=r"^evaluator\.parts\[1\]\.exact_check: enumeration needs"):
        combined("tap", {"name": "ais", "exact_check": True}).check(RBM, big)
    combined("tap", "ais").check(RBM, big)


def test_the_headline_joins_the_parts_headlines():
    evaluator, data = combined("exact", {**AIS, "splits": ["valid"]}), splits()
    line = evaluator.headline(
        evaluator.evaluate(random_rbm(), data, Context(rng=BACKEND.rng(7), final=True)), "test"
    )
    assert (
        line.startswith("test log-likelihood (exact): ")
        and "; valid log-likelihood (AIS, 50 temperatures" in line
    )


def test_an_evaluator_given_twice_is_refused():
    with pytest.raises(RbmlabError) as e:
        EVALUATORS.parse({"name": "combined", "parts": ["exact", "ais", {"name": "ais", "n_chains": 50}]})
    assert str(e.value) == ("evaluator.parts[2].name: ais is parts[1] already; use each evaluator once")
    EVALUATORS.parse({"name": "combined", "parts": ["ais", "exact"]})  # exact's as exact.<metric>: no clash


def test_the_default_parts_are_ais_then_tap():
    from omegaconf import OmegaConf  # noqa: PLC0415

    from rbmlab.hydra_app import compose  # noqa: PLC0415

    node = OmegaConf.to_container(compose("config", ["evaluator=combined"]).evaluator)
    config = EVALUATORS.parse(node)
    assert [p.name for p in config.parts] == ["ais", "tap"] and config.splits == ["test"]
    assert config.parts[0] == EVALUATORS.parse("ais") and config.parts[1] == EVALUATORS.parse("tap")


RUN = [
    "run",
    "dataset=bars_stripes",
    "model.n_hidden=4",
    "train.epochs=1",
    "train.progress=false",
    "evaluator=combined",
]
BAD = [
    Case(
        "unknown-part",
        [*RUN, "evaluator.parts=[{name: nope}]"],
        "evaluator.parts[0].name: unknown evaluator 'nope'",
    ),
    Case(
        "nested-combined",
        [*RUN, "evaluator.parts=[{name: exact}, {name: combined}]"],
        "evaluator.parts[1].name: combined cannot be a part",
    ),
    Case(
        "bad-part-option",
        [*RUN, "evaluator.parts=[{name: exact}, {name: ais, n_chains: 1}]"],
        "evaluator.parts[1].n_chains: must be >= 2",
    ),
    Case(
        "unknown-part-option",
        [*RUN, "evaluator.parts=[{name: tap, chains: 3}]"],
        "evaluator.parts[0].chains: unknown option for evaluator tap",
    ),
    Case("no-parts", [*RUN, "evaluator.parts=[]"], "evaluator.parts: expected a non-empty list"),
    Case(
        "clash",
        [*RUN, "evaluator.parts=[exact, tap, tap]"],
        "evaluator.parts[2].name: tap is parts[1] already",
    ),
    Case(
        "splits-not-the-parts",
        [*RUN, "evaluator.splits=[valid]"],
        "evaluator.splits: the parts score ['test']",
    ),
    Case(
        "exact-check-too-large",
        [
            "run",
            "dataset=shifting_bar",
            "dataset.n=40",
            "model.n_hidden=30",
            "evaluator=combined",
            "evaluator.parts=[{name: tap}, {name: ais, exact_check: true}]",
        ],
        "evaluator.parts[1].exact_check: enumeration needs at most 25 enumerated units, "
        "this model (40x30) has 30",
    ),
]


@pytest.mark.parametrize("case", BAD, ids=[c.id for c in BAD])
def test_bad_parts_are_one_line_errors(case, tmp_path, monkeypatch, capsys):
    assert_one_error_line(main, case, tmp_path, monkeypatch, capsys)


def test_a_run_writes_every_part_s_columns(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    main(
        [
            *RUN[:3],
            "train.epochs=2",
            "train.eval_every=1",
            "train.progress=false",
            "evaluator=combined",
            "evaluator.parts=[{name: exact}, {name: ais, n_chains: 8, schedule: linear, n_temperatures: 40, "
            "curve_n_temperatures: 20, exact_check: true}, {name: tap}, {name: mmd, sweeps: 3}]",
        ]
    )
    out = capsys.readouterr().out
    assert "test log-likelihood (exact): " in out and "; test log-likelihood (TAP" in out
    (summary,) = tmp_path.rglob("summary.json")
    metrics, final = pd.read_csv(summary.parent / "metrics.csv"), json.loads(summary.read_text())["final"]
    columns = {
        "test_log_likelihood",
        "log_z",
        "test_ais.log_likelihood",
        "ais.log_z_upper",
        "ais.log_z_exact",
        "ais.log_z_error",
        "ais.log_z_within",
        "test_tap.log_likelihood",
        "tap.log_z",
        "test_mmd.log_mmd2",
    }
    assert columns <= set(metrics.columns) and columns <= set(final) and list(metrics.epoch) == [0, 1, 2]
    assert np.allclose(metrics["ais.log_z_exact"], metrics["log_z"])  # the exact part's log Z, each epoch
    assert final["ais.log_z_error"] == pytest.approx(final["ais.log_z"] - final["log_z"])
    assert final["test_tap.log_likelihood"] == pytest.approx(final["test_log_likelihood"], abs=0.05)
