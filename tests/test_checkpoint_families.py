"""Checkpoints of every registered family, checked against the family's declaration
(rbmlab/models/declaration.py) as scikit-learn checks every estimator: a good file loads and
round-trips; each array deleted, resized, transposed, retyped or given a trial axis of its own is
one line naming the file and that array. And ``rbmlab evaluate`` on the checkpoint of a run of
each family (1 epoch) gives the run's own final numbers.

A new family is covered the day it is registered: the checks below read its DECLARATION, and
the end-to-end test fails until it names a run of it (RUNS).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rbmlab.cli import main
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.applicable import applicable, check_applies
from rbmlab.models import MODELS
from rbmlab.models.declaration import Declaration
from rbmlab.run.checkpoint import load_checkpoint, save_checkpoint
from tests.test_conformance import N_VISIBLE, make_model, symmetric

FAMILIES = MODELS.names()


def saved(family: str, path: Path, trials: int = 0) -> dict[str, np.ndarray]:
    """A checkpoint of a small model of ``family`` at ``path``; its entries as a dict."""
    _, _, _, model = make_model(family, dtype="float64", trials=trials)
    save_checkpoint(path, symmetric(model), meta={"epoch": 1})
    with np.load(path) as f:
        return dict(f)


def one_line_naming(path: Path, *words: str) -> str:
    with pytest.raises(RbmlabError) as info:
        load_checkpoint(path)
    message = str(info.value)
    assert "\n" not in message and message.startswith(f"checkpoint: {path}: "), message
    for word in words:
        assert word in message, message
    return message


@pytest.mark.parametrize("family", FAMILIES)
def test_the_declaration_is_the_family(family):
    """PARAMS, the settings and the sizes are what the declaration says, for the config's sizes."""
    _, cls, config, model = make_model(family)
    declared = cls.DECLARATION
    assert isinstance(declared, Declaration) and list(cls.PARAMS) == list(declared.arrays)
    assert set(model.settings()) == set(declared.settings)
    assert model.model_sizes() == cls.sizes(config, N_VISIBLE)
    assert set(declared.data_sizes) <= set(declared.sizes)
    assert model.data_dimension == N_VISIBLE and model.data_mismatch(N_VISIBLE) is None
    assert model.data_mismatch(N_VISIBLE + 1) is not None
    for name, axes in declared.arrays.items():
        assert getattr(model, name).ndim == len(axes)


@pytest.mark.parametrize("trials", [0, 2])
@pytest.mark.parametrize("family", FAMILIES)
def test_a_good_checkpoint_round_trips(family, trials, tmp_path):
    data = saved(family, tmp_path / "m.npz", trials)
    model, meta, _ = load_checkpoint(tmp_path / "m.npz")
    assert (
        model.family == family
        and isinstance(model, MODELS.get(family))
        and meta == {"epoch": 1}
        and model.n_trials == trials
    )
    for name in model.PARAMS:
        np.testing.assert_array_equal(getattr(model, name), data[name])
    # big-endian floats are read in native order, integers as float64
    np.savez(tmp_path / "b.npz", **{**data, **{k: data[k].astype(">f4") for k in model.PARAMS}})
    assert load_checkpoint(tmp_path / "b.npz")[0].dtype == np.dtype("float32")
    np.savez(tmp_path / "i.npz", **{**data, **{k: np.rint(data[k]).astype(np.int16) for k in model.PARAMS}})
    back = load_checkpoint(tmp_path / "i.npz")[0]
    assert all(a.dtype == np.float64 for a in back.arrays().values())


def arrays_of(family: str) -> list[tuple[str, str]]:
    return [(family, name) for name in MODELS.get(family).DECLARATION.arrays]


ARRAYS = [pair for family in FAMILIES for pair in arrays_of(family)]
IDS = [f"{f}-{a}" for f, a in ARRAYS]
MATRICES = [(f, a) for f, a in ARRAYS if len(MODELS.get(f).DECLARATION.arrays[a]) == 2]


@pytest.mark.parametrize("family, name", ARRAYS, ids=IDS)
def test_each_missing_array_is_named(family, name, tmp_path):
    data = saved(family, tmp_path / "m.npz")
    np.savez(tmp_path / "m.npz", **{k: v for k, v in data.items() if k != name})
    one_line_naming(tmp_path / "m.npz", f"model {family} needs arrays", f"missing {name}")


@pytest.mark.parametrize("trials", [0, 2])
@pytest.mark.parametrize("family, name", ARRAYS, ids=IDS)
def test_each_resized_array_is_named(family, name, trials, tmp_path):
    """Every axis one longer: the line names the array (as the culprit, or as the array the
    culprit disagrees with when either could be the wrong one)."""
    data = saved(family, tmp_path / "m.npz", trials)
    a = data[name]
    grown = np.zeros(
        a.shape[:1] + tuple(n + 1 for n in a.shape[1:]) if trials else tuple(n + 1 for n in a.shape), a.dtype
    )
    np.savez(tmp_path / "m.npz", **{**data, name: grown})
    one_line_naming(tmp_path / "m.npz", name, "has shape", "expected")


@pytest.mark.parametrize("family, name", MATRICES, ids=[f"{f}-{a}" for f, a in MATRICES])
def test_each_transposed_array_is_named(family, name, tmp_path):
    data = saved(family, tmp_path / "m.npz")
    a = data[name]
    if a.shape[-1] == a.shape[-2]:
        pytest.skip(f"{name} {a.shape} is square: its transpose has the same shape")
    np.savez(tmp_path / "m.npz", **{**data, name: a.swapaxes(-1, -2)})
    message = one_line_naming(tmp_path / "m.npz", f"{name} has shape {a.shape[::-1]}")
    assert f"expected {a.shape}" in message, message


@pytest.mark.parametrize("family, name", ARRAYS, ids=IDS)
def test_each_array_with_a_trial_axis_of_its_own_is_named(family, name, tmp_path):
    data = saved(family, tmp_path / "m.npz")
    np.savez(tmp_path / "m.npz", **{**data, name: np.stack([data[name]] * 2)})
    one_line_naming(tmp_path / "m.npz", name)


@pytest.mark.parametrize("bad", [np.bool_, np.complex128, np.str_])
@pytest.mark.parametrize("family, name", ARRAYS, ids=IDS)
def test_each_non_numeric_array_is_named(family, name, bad, tmp_path):
    data = saved(family, tmp_path / "m.npz")
    np.savez(tmp_path / "m.npz", **{**data, name: data[name].astype(bad)})
    one_line_naming(tmp_path / "m.npz", f"{name} must be numeric")


@pytest.mark.parametrize("family", FAMILIES)
def test_each_setting_is_checked(family, tmp_path):
    data = saved(family, tmp_path / "m.npz")
    for setting, declared in MODELS.get(family).DECLARATION.settings.items():
        np.savez(tmp_path / "m.npz", **{**data, setting: np.array("nonsense")})
        one_line_naming(tmp_path / "m.npz", f"setting {setting}='nonsense' is unknown", declared.known[0])
        np.savez(tmp_path / "m.npz", **{**data, setting: np.array(1)})
        one_line_naming(tmp_path / "m.npz", f"setting {setting} must be a string")
        np.savez(tmp_path / "m.npz", **{k: v for k, v in data.items() if k != setting})
        if declared.default is None:
            one_line_naming(tmp_path / "m.npz", f"needs setting {setting}")
        else:
            assert getattr(load_checkpoint(tmp_path / "m.npz")[0], setting) == declared.default


@pytest.mark.parametrize("family", FAMILIES)
def test_an_evaluator_that_does_not_apply_names_those_that_do(family):
    _, cls, config, _ = make_model(family)
    sizes = cls.sizes(config, N_VISIBLE)
    names = applicable(cls, sizes)
    assert names, f"no evaluator applies to {family}"
    refused = [n for n in EVALUATORS.names() if n not in names]
    for name in refused:
        with pytest.raises(RbmlabError) as info:
            check_applies(EVALUATORS.build(EVALUATORS.parse({"name": name})), cls, sizes)
        assert str(info.value).endswith(
            f"evaluators that apply to model {family} with "
            + ", ".join(f"{k}={v}" for k, v in sizes.items())
            + ": "
            + ", ".join(names)
        ), str(info.value)
    # an option of an evaluator that applies is its own problem: no list
    if "ais" in names:
        with pytest.raises(RbmlabError) as info:
            check_applies(EVALUATORS.build(EVALUATORS.parse({"name": "ais", "n_chains": 10**11})), cls, sizes)
        assert "evaluators that apply" not in str(info.value)


# ---------------------------------------------------------------- rbmlab evaluate on a run of each family
BARS = ["dataset=bars_stripes", "train.epochs=1", "train.progress=false"]
RUNS = {  # family → (run overrides, evaluate overrides): the run's final numbers are evaluate's
    "rbm": (["model.n_hidden=4", "learner=pcd", "evaluator=exact"], ["evaluator=exact"]),
    "grbm": (
        ["model=grbm", "model.n_hidden=4", "learner=cd", "learner.batch_size=full", "evaluator=exact"],
        ["evaluator=exact"],
    ),
    "crbm": (
        ["model=crbm", "model.n_hidden=4", "learner=mle_bp", "task=flip", "evaluator=pixel_error"],
        ["evaluator=pixel_error", "task=flip"],
    ),
    "dbm": (
        [
            "model=dbm",
            "model.n_hidden=[4,3]",
            "learner=tap_dbm",
            "learner.pretrain_epochs=1",
            "evaluator=tap_dbm",
        ],
        ["evaluator=tap_dbm"],
    ),
    "ising": (["model=ising", "learner=pcd", "evaluator=exact"], ["evaluator=exact"]),
    "fractional_rbm": (
        [
            "model=fractional_rbm",
            "learner=frank_wolfe",
            "learner.alpha=learned",
            "learner.alpha_lr=1.0",
            "learner.n_samples=50",
            "learner.bias_chains=20",
            "learner.bias_max_steps=30",
            "evaluator=exact",
        ],
        ["evaluator=exact"],
    ),
}


def evaluate_json(argv: list[str], capsys) -> dict:
    capsys.readouterr()
    main(["evaluate", *argv])
    return json.loads(capsys.readouterr().out)


def test_every_family_has_a_run():
    assert set(RUNS) == set(FAMILIES), "name a 1-epoch run of the new family in RUNS"


@pytest.mark.parametrize(
    "family", [pytest.param(f, marks=pytest.mark.slow) if f == "rbm" else f for f in FAMILIES]
)  # rbm's evaluate: also tests/test_cli.py
def test_evaluate_gives_the_runs_final_numbers(family, tmp_path, monkeypatch, capsys):
    run_args, evaluate_args = RUNS[family]
    monkeypatch.chdir(tmp_path)
    main(["run", *BARS, *run_args, "hydra.run.dir=r"])
    final = json.loads((tmp_path / "r" / "summary.json").read_text())["final"]
    result = evaluate_json(["checkpoint=r/checkpoint.npz", "dataset=bars_stripes", *evaluate_args], capsys)
    assert result["model"] == family and result["trained_epochs"] == 1
    compared = {k: v for k, v in final.items() if k.startswith("test_")}
    assert compared
    for column, value in compared.items():
        bare = {"test_log_likelihood": "mean_log_likelihood"}.get(column, column.removeprefix("test_"))
        assert result[bare] == pytest.approx(value, rel=1e-12, abs=1e-12), column


def test_a_dbms_exact_log_likelihood_from_its_checkpoint(tmp_path, monkeypatch, capsys):
    """A DBM trained by rbmlab, scored exactly (evaluator=exact enumerates it) by `rbmlab
    evaluate`: the run's own exact numbers, and TAP's within its error at these tiny weights."""
    monkeypatch.chdir(tmp_path)
    main(["run", *BARS, *RUNS["dbm"][0][:-1], "evaluator=exact", "hydra.run.dir=r"])
    final = json.loads((tmp_path / "r" / "summary.json").read_text())["final"]
    exact = evaluate_json(["checkpoint=r/checkpoint.npz", "dataset=bars_stripes", "evaluator=exact"], capsys)
    assert exact["log_z"] == pytest.approx(final["log_z"], abs=1e-12)
    assert exact["mean_log_likelihood"] == pytest.approx(final["test_log_likelihood"], abs=1e-12)
    tap = evaluate_json(
        [
            "checkpoint=r/checkpoint.npz",
            "dataset=bars_stripes",
            "evaluator=tap_dbm",
            "evaluator.progress=false",
        ],
        capsys,
    )
    assert tap["log_z"] == pytest.approx(exact["log_z"], abs=1e-4)


# ---------------------------------------------------------------- the user guide's checkpoint page
PAGE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "checkpoints.md"


def declarations_table() -> str:
    """docs/guide/checkpoints.md's table of every family's checkpoint arrays and settings, from the
    declarations."""
    rows = ["| family | arrays, by their axes | settings (default) |", "|---|---|---|"]
    for name, cls in MODELS.items():
        declared = cls.DECLARATION
        arrays = ", ".join(f"`{k}` ({', '.join(axes)})" for k, axes in declared.arrays.items())
        if hasattr(cls, "of_depth"):  # a layered family: each depth declares its own arrays
            arrays = (
                "; ".join(
                    f"L = {d}: "
                    + ", ".join(
                        f"`{k}` ({', '.join(a)})" for k, a in cls.of_depth(d).DECLARATION.arrays.items()
                    )
                    for d in (1, 2)
                )
                + "; each layer l more adds `Wl` (n_hidden(l−1), n_hiddenl), `bl` (n_hiddenl)"
            )
        settings = ", ".join(
            f"`{k}`: {s.described(' / ')} ({s.default or 'required'})"
            + ("; or one per layer, comma-separated" if s.per_layer else "")
            for k, s in declared.settings.items()
        )
        rows.append(f"| {name} | {arrays} | {settings or '—'} |")
    return "\n".join(rows)


def test_the_guide_checkpoint_table_is_the_declarations():
    table = declarations_table()
    assert table in PAGE.read_text(), f"{PAGE.name}'s checkpoint table is stale; it should read:\n{table}"
