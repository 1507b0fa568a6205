"""The worked pages of docs/guide/extending/ (a learner, a unit type, a solver, an experiment
kind) hold no code of their own: each includes its example's files from
docs/guide/extending/code/, and these tests register each example the way its page says (the
registry put back afterwards: monkeypatch) and put it through the checks the page claims it
passes, the project's own conformance tests among them. Everything is written under tmp_path."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from rbmlab.errors import RbmlabError
from tests.test_step_cost import count  # noqa: F401 - the fixture of the step-cost check

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "guide"
PAGES = GUIDE / "extending"
CODE = PAGES / "code"
INCLUDE = re.compile(r"^```\{literalinclude\} (\S+)", re.M)
TOCTREE = re.compile(r"^```\{toctree\}\n(.*?)^```", re.M | re.S)


@pytest.fixture
def examples(monkeypatch):
    """The example modules importable by their own names (as rbmlab.<...> modules would be)."""
    monkeypatch.syspath_prepend(str(CODE))


# ---------------------------------------------------------------- the pages
def test_the_extending_page_lists_the_four_worked_pages():
    (tree,) = TOCTREE.findall((GUIDE / "extending.md").read_text())
    listed = [line.strip() for line in tree.splitlines() if line.strip() and not line.startswith(":")]
    assert listed == [f"extending/{p}" for p in ("learner", "unit-type", "solver", "experiment-kind")]
    assert all((GUIDE / f"{entry}.md").is_file() for entry in listed)


@pytest.mark.parametrize("page", sorted(PAGES.glob("*.md")), ids=lambda p: p.name)
def test_each_page_includes_only_files_that_exist_and_its_links_resolve(page):
    from tests.test_readme_links import anchors, relative_links

    included = INCLUDE.findall(page.read_text())
    assert included, f"{page.name} includes no example file"
    for target in included:
        assert (page.parent / target).resolve().is_file(), f"{page.name}: {target}: no such file"
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.is_file() and ROOT in file.parents, f"{page.name}: {target}: no such file"
        assert not anchor or anchor in anchors(file), f"{page.name}: {target}: no such heading"


# ---------------------------------------------------------------- a learner (learner.md)
def test_the_growing_cd_learner_passes_the_learner_conformance_checks(examples, monkeypatch):
    import tests.test_conformance as conformance
    from rbmlab.learners import LEARNERS
    from rbmlab.models import MODELS

    monkeypatch.setattr(conformance, "LEARNERS", LEARNERS.with_entries(cd_growing="cd_growing:GrowingCD"))
    for family in MODELS.names():  # a family it cannot train: its one-line refusal, checked
        conformance.test_learner("cd_growing", family)
    conformance.test_learner_declares_the_unit_types_its_maths_handles("cd_growing")


def test_the_growing_cd_step_cost_is_the_counted_products(examples, count, monkeypatch):  # noqa: F811
    import tests.test_step_cost as step_cost
    from rbmlab.learners import LEARNERS

    monkeypatch.setattr(step_cost, "LEARNERS", LEARNERS.with_entries(cd_growing="cd_growing:GrowingCD"))
    for options in ({}, {"k": 2, "k_max": 3, "every": 1}):
        step_cost.test_declared_cost_is_the_counted_products("cd_growing", options, count, monkeypatch)


def test_the_growing_cd_schedule_and_its_yaml(examples):
    from cd_growing import GrowingCD, GrowingCDConfig

    learner = GrowingCD(GrowingCDConfig(k=2, k_max=4, every=3))
    assert [learner.k_at(t) for t in range(12)] == [2, 2, 2, 3, 3, 3, 4, 4, 4, 4, 4, 4]
    stated = yaml.safe_load((CODE / "conf" / "learner" / "cd_growing.yaml").read_text())
    assert stated.pop("defaults") == [{"optimizer": "sgd"}, "_self_"]
    assert set(stated) == set(GrowingCDConfig.__dataclass_fields__) - {"optimizer"}  # every option
    assert GrowingCDConfig(**stated).every == stated["every"] == GrowingCDConfig().every
    with pytest.raises(RbmlabError, match=r"^k_max: must be >= k \(3\), got 2$"):
        GrowingCDConfig(k=3, k_max=2)


def test_the_growing_cd_learner_trains_from_the_command_line_options(examples, tmp_path, monkeypatch):
    """``rbmlab run dataset=bars_stripes learner=cd_growing ...``: its yaml in conf/learner/ (a copy
    of conf/ here) and its registry line; k reaches k_max and is in every metrics row."""
    import rbmlab.hydra_app as hydra_app
    from rbmlab.learners import LEARNERS
    from rbmlab.run.runner import train

    conf = tmp_path / "conf"
    shutil.copytree(hydra_app.CONF_DIR, conf)
    shutil.copy(CODE / "conf" / "learner" / "cd_growing.yaml", conf / "learner")
    monkeypatch.setattr(hydra_app, "CONF_DIR", conf)
    monkeypatch.setitem(LEARNERS._entries, "cd_growing", "cd_growing:GrowingCD")
    run = [
        "dataset=bars_stripes",
        "model.n_hidden=4",
        "evaluator=exact",
        "learner=cd_growing",
        "learner.k_max=3",
        "learner.every=2",
        "learner.batch_size=8",
        "train.epochs=3",
        "train.progress=false",
    ]
    summary = train(hydra_app.validated_run_config(run), tmp_path / "run", echo=lambda s: None)
    assert summary["status"] == "completed"
    rows = (tmp_path / "run" / "metrics.csv").read_text().splitlines()
    header, last = rows[0].split(","), rows[-1].split(",")
    assert float(last[header.index("k")]) == 3.0 and np.isfinite(
        float(last[header.index("test_log_likelihood")])
    )
    with pytest.raises(RbmlabError, match=r"^learner.k_max: must be >= k \(4\), got 3$"):
        hydra_app.validated_run_config([*run, "learner.k=4"])


# ---------------------------------------------------------------- a unit type (unit-type.md)
@pytest.fixture
def half_spin(examples, monkeypatch):
    from half_spin import HalfSpin

    from rbmlab.units import UNIT_TYPES

    monkeypatch.setitem(UNIT_TYPES, "half_spin", HalfSpin)  # the UNIT_TYPES entry, put back after
    return HalfSpin


def test_half_spin_units_pass_the_unit_type_checks(half_spin):
    import tests.test_domain as domain
    import tests.test_units as units

    units.test_unit_maths_matches_direct_sums("half_spin")
    domain.test_a_discrete_unit_takes_exactly_its_declared_values("half_spin")
    for visible, hidden in [("half_spin", "bernoulli"), ("bernoulli", "half_spin"), ("half_spin", "spin")]:
        units.test_rbm_with_other_unit_types_matches_brute_force(visible, hidden)


def test_half_spin_prior_maths_match_direct_sums(half_spin):
    """TAP's tilted partition function and moments (rbmlab.units.prior) over the two values."""
    B, A = np.meshgrid(np.linspace(-6, 6, 13), np.linspace(-3, 0, 4))
    x = np.array(half_spin.values)
    weights = np.exp(B[..., None] * x - 0.5 * A[..., None] * x**2)
    np.testing.assert_allclose(half_spin.log_z(B, A), np.log(weights.sum(-1)), rtol=1e-12)
    mean, var = half_spin.moments(B, A)
    p = weights / weights.sum(-1, keepdims=True)
    np.testing.assert_allclose(mean, (p * x).sum(-1), atol=1e-12)
    np.testing.assert_allclose(var, (p * x**2).sum(-1) - mean**2, atol=1e-12)


def test_a_half_spin_hidden_layer_trains_by_cd(half_spin):
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS
    from rbmlab.models.rbm import RBM

    rng = np.random.default_rng(0)
    model = RBM(0.1 * rng.standard_normal((6, 3)), np.zeros(6), np.zeros(3), hidden="half_spin")
    learner = LEARNERS.build(LEARNERS.parse({"name": "cd", "k": 2}))
    learner.check(RBM)
    x = (rng.random((16, 6)) < 0.5).astype(float)
    after, _ = learner.step(model, learner.init_state(model, Batch(x), rng), Batch(x), rng)
    assert np.isfinite(after.W).all() and not np.allclose(after.W, model.W)
    states = learner.sample(model, x.copy(), np.random.default_rng(1), 1)
    assert set(np.unique(model.hidden_units.sample_(states @ model.W, np.random.default_rng(2)))) <= {
        -0.5,
        0.5,
    }


# ---------------------------------------------------------------- a solver (solver.md)
def test_icm_passes_the_solver_checks(examples, monkeypatch):
    import tests.test_solvers as solvers

    monkeypatch.setattr(solvers, "SOLVERS", solvers.SOLVERS.with_entries(icm="icm:ICM"))
    monkeypatch.setattr(solvers, "CONF", CODE / "conf" / "solver")  # where its yaml is kept here
    solvers.test_at_zero_coupling_every_solver_returns_the_unary_fields_own_answer("icm")
    solvers.test_each_solver_has_its_yaml_with_its_defaults("icm")


def test_icm_ends_at_a_fixed_point_no_worse_than_its_start(examples):
    """Each converged instance is a fixed point of both block updates, and its joint score
    vᵀWh + b¹ᵀv + b²ᵀh is at least the unary decode's (each half-step is an exact argmax)."""
    from icm import ICM

    from rbmlab.inference.solvers.base import binary_bipartite
    from tests.test_solvers import loopy_case

    model, x = loopy_case(np.random.default_rng(6))
    beliefs = ICM().solve(model, x)
    W, b_v, b_h = binary_bipartite(model, x)

    def best_h(v):
        return (b_h + v @ W > 0).astype(float)

    def score(v):
        h = best_h(v)
        return ((v @ W) * h).sum(1) + (b_v * v).sum(1) + (b_h * h).sum(1)

    v = beliefs.state
    assert np.all(beliefs.converged) and 1 <= beliefs.iterations <= 50
    np.testing.assert_array_equal(v, (b_v + best_h(v) @ W.T > 0).astype(float))
    assert np.all(score(v) >= score((b_v > 0).astype(float)) - 1e-12)
    assert ICM().solve(model, x, 1).iterations == 1  # a caller's budget caps the sweeps


def test_icm_joins_the_capabilities_table_of_the_families_it_supports(examples, monkeypatch):
    import tests.test_readme_capabilities as capabilities

    monkeypatch.setattr(capabilities, "SOLVERS", capabilities.SOLVERS.with_entries(icm="icm:ICM"))
    rows = {r.split(" | ")[0][2:]: r for r in capabilities.capabilities_table().splitlines()[2:]}
    assert {family for family, row in rows.items() if row.endswith(", icm |")} == {"rbm", "crbm", "grbm"}


def test_icm_is_chosen_by_config_where_a_solver_is(examples, tmp_path, monkeypatch):
    """``rbmlab run model=crbm ... evaluator=pixel_error evaluator.inference=icm``."""
    import icm

    import rbmlab.evaluators.pixel_error as pixel_error
    from rbmlab.hydra_app import validated_run_config
    from rbmlab.run.runner import train

    monkeypatch.setattr(pixel_error, "SOLVERS", pixel_error.SOLVERS.with_entries(icm="icm:ICM"))
    solved, solve = [], icm.ICM.solve
    monkeypatch.setattr(icm.ICM, "solve", lambda self, *a, **k: solved.append(1) or solve(self, *a, **k))
    run = ["model=crbm", "model.n_hidden=4", "dataset=bars_stripes", "task=flip", "learner=cd_percloss"]
    run += ["evaluator=pixel_error", "evaluator.inference=icm", "train.epochs=2", "train.progress=false"]
    assert train(validated_run_config(run), tmp_path / "run", echo=lambda s: None)["status"] == "completed"
    header, *_, last = (tmp_path / "run" / "metrics.csv").read_text().splitlines()
    error = dict(zip(header.split(","), last.split(",")))["test_pixel_error"]
    assert 0 <= float(error) <= 100 and solved  # the prediction is ICM's


# ---------------------------------------------------------------- an experiment kind (experiment-kind.md)
@pytest.fixture
def log_z_gap(examples, tmp_path, monkeypatch):
    """The kind's registry line, and experiments/ holding its example file (a copy)."""
    import rbmlab.experiment.kinds as kinds
    import rbmlab.experiment.spec as spec_file

    monkeypatch.setattr(kinds, "KINDS", kinds.KINDS.with_entries(log_z_gap="log_z_gap:LogZGap"))
    shutil.copytree(CODE / "experiments", tmp_path / "experiments")
    monkeypatch.setattr(spec_file, "EXPERIMENTS_DIR", tmp_path / "experiments")
    return tmp_path


def test_the_log_z_gap_kind_declares_itself(log_z_gap, monkeypatch):
    import rbmlab.experiment.kinds as kinds
    import tests.test_experiment_kinds as experiment_kinds

    monkeypatch.setattr(experiment_kinds, "KINDS", kinds.KINDS)
    experiment_kinds.test_every_kind_declares_itself_and_one_is_the_default()


def test_the_log_z_gap_file_is_listed_with_its_target(log_z_gap, capsys):
    from rbmlab.cli import main

    main(["experiment", "list"])
    title = "How far the deterministic estimates of log Z are from the exact one"
    assert f"  demo/log_z_gap  (make demo-log_z_gap)  {title}" in capsys.readouterr().out


def test_the_log_z_gap_kind_runs_its_file(log_z_gap, capsys):
    from rbmlab.experiment import run_experiment

    result = run_experiment("demo/log_z_gap", ["scale=smoke"], results_root=log_z_gap / "results")
    assert result["table"] == log_z_gap / "results" / "demo" / "log_z_gap_smoke.md"
    rows = [r.split("|")[1:-1] for r in result["table"].read_text().splitlines() if r.startswith("| ")][1:]
    assert [(s.strip(), solver.strip()) for s, solver, *_ in rows] == [
        (s, solver) for s in ("0.1", "0.5", "1") for solver in ("mean_field", "bp_sum")
    ]
    gaps = {(s.strip(), solver.strip()): float(mean) for s, solver, mean, _ in rows}
    assert all(gaps[s, "mean_field"] <= 0 for s in ("0.1", "0.5", "1"))  # a lower bound
    assert abs(gaps["0.1", "bp_sum"]) < 1e-3  # near zero coupling BP is near exact
    more = run_experiment("demo/log_z_gap", ["scale=smoke", "solvers=[unary]"], results_root=log_z_gap / "r")
    assert "| unary |" in more["table"].read_text() and "mean_field" not in more["table"].read_text()
    with pytest.raises(RbmlabError, match=r"^experiment demo/log_z_gap: log_z_gap.n_visible: must be <= 25"):
        run_experiment("demo/log_z_gap", ["scale=smoke", "n_visible=30"], results_root=log_z_gap / "e")
    with pytest.raises(RbmlabError, match=r"^experiment demo/log_z_gap: log_z_gap.solvers: unknown solver"):
        run_experiment("demo/log_z_gap", ["scale=smoke", "solvers=[nope]"], results_root=log_z_gap / "e")
    with pytest.raises(
        RbmlabError, match=r"^outputs_root: demo/log_z_gap is a log_z_gap experiment, which runs no"
    ):
        run_experiment("demo/log_z_gap", ["scale=smoke", "outputs_root=x"], results_root=log_z_gap / "e")
