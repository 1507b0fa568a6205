"""The domain check (rbmlab.data.domain): each unit type's declared value set against what it
generates, a dataset's values as read from its arrays, each task's constraints and outputs, and
every committed experiment's smoke jobs passing the check (the refusals are in
tests/test_bad_input_domain.py)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rbmlab.backend import get_backend
from rbmlab.data import load_dataset
from rbmlab.data.domain import check_run, visible_declaration
from rbmlab.data.tasks import TASKS
from rbmlab.errors import RbmlabError
from rbmlab.experiment import _variants, available, kind_of, load_spec
from rbmlab.hydra_app import expand_overrides, validated_run_config
from rbmlab.models import MODELS
from rbmlab.units import CATEGORICAL_TYPES, PRIOR_NAMES, UNIT_TYPES, prior
from rbmlab.units.values import MAX_POINTS, ValueSet, observed


# ---------------------------------------------------------------- unit types
@pytest.mark.parametrize("name", list(UNIT_TYPES))
def test_a_discrete_unit_takes_exactly_its_declared_values(name):
    unit, backend = UNIT_TYPES[name], get_backend("numpy", "float64")
    declared = unit.value_set()
    draws = unit.sample_(np.linspace(-3, 3, 20_000), backend.rng(0))
    assert declared == ValueSet.of_points(*np.unique(draws))  # both values drawn, nothing else
    assert declared.contains(observed(unit.states(np, 4, 0, 16, np.float64)))
    assert declared.contains(observed(unit.uniform_states(backend.rng(1), (50, 3), np.float64)))
    assert not declared.contains(observed(0.5 * (np.array(unit.values))))


@pytest.mark.parametrize("name", [n for n in PRIOR_NAMES if n not in UNIT_TYPES])
def test_a_real_prior_puts_its_mass_inside_its_declared_values_and_reaches_their_ends(name):
    """Q(x) ∝ base(x; θ) e^{Bx − ½Ax²} (rbmlab.units.prior): its mean lies in the declared
    interval for any field, tilt and θ, and tends to each end as the field B goes to ∓∞."""
    unit = prior(name)
    declared = unit.value_set()
    lo, hi = declared.interval
    rng = np.random.default_rng(0)
    B, A = rng.normal(0, 20, 500), rng.normal(0, 20, 500)
    theta = [rng.normal(0, 5, 500) for _ in unit.params]
    mean, var = unit.moments(B, A, *theta)
    assert np.all((lo - 1e-12 <= mean) & (mean <= hi + 1e-12)) and np.all(var >= 0)
    ends = unit.moments(np.array([-1e4, 1e4]), np.zeros(2), *[np.ones(2) for _ in unit.params])[0]
    assert ends[0] == pytest.approx(lo, abs=1e-3) and ends[1] == pytest.approx(hi, abs=1e-3)


def test_the_gauss_bernoulli_spike_outside_its_slab_is_kept_apart():
    gb = prior("gauss_bernoulli")
    assert gb.value_set() == ValueSet.between(0.0, 1.0)  # the spike 0 lies in the slab [0, 1]
    assert str(ValueSet.of_points(0.0) | ValueSet.between(0.2, 1.0)) == "{0} ∪ [0.2,1]"


def test_every_family_declares_its_visible_units():
    for family in MODELS.names():
        family_class, decl = MODELS.get(family), visible_declaration(family)
        if decl.key is not None:  # every choice of the config key names a unit type or prior
            field = family_class.config_class.__dataclass_fields__[decl.key]
            assert set(decl.names) == set(field.metadata["choices"]), family
            assert decl.key in family_class.CONFIG_SETTINGS, family  # what a saved model holds
        assert all(n in PRIOR_NAMES or n in CATEGORICAL_TYPES for n in decl.names.values())
        assert all(
            n not in CATEGORICAL_TYPES or decl.states_key in family_class.CONFIG_SETTINGS
            for n in decl.names.values()
        ), family  # q is saved with the model


# ---------------------------------------------------------------- value sets and data
def test_value_sets_compare_exactly():
    binary, spins = ValueSet.of_points(0, 1), ValueSet.of_points(-1, 1)
    unit_interval = ValueSet.between(0, 1)
    assert unit_interval.contains(binary) and not binary.contains(unit_interval)
    assert not spins.contains(binary) and not binary.contains(spins)
    grey = ValueSet(interval=(0.0, 0.996), observed=True)
    assert unit_interval.contains(grey) and not binary.contains(grey)
    assert not unit_interval.contains(ValueSet(interval=(-0.5, 0.5), observed=True))
    assert ValueSet.between(-math.inf, math.inf).contains(spins)
    assert binary.map(-1.0, 1.0) == binary and spins.map(-1.0, 1.0) == ValueSet.of_points(0, 2)
    # a negative scale (task=flip's 1 − x) maps [0.25, 0.5] to [0.5, 0.75], lo before hi
    assert ValueSet.between(0.25, 0.5).map(-1.0, 1.0) == ValueSet(interval=(0.5, 0.75))
    assert ValueSet.between(0, 1).contains(ValueSet.between(0.25, 0.5).map(-1.0, 1.0))
    assert (str(binary), str(spins), str(unit_interval), str(grey)) == (
        "{0,1}",
        "{-1,+1}",
        "[0,1]",
        "values in [0,0.996]",
    )


def test_observed_values_are_exact_even_for_one_rare_value():
    x = np.zeros((3000, 50), np.float32)
    x[::7, 3] = 1
    assert observed(x) == ValueSet.of_points(0, 1)
    x[-1, -1] = 2  # one value in 150,000, at the very end
    assert observed(x) == ValueSet.of_points(0, 1, 2)
    many = np.arange(MAX_POINTS + 1, dtype=np.float32)
    assert observed(many[:-1]) == ValueSet.of_points(*many[:-1])
    assert observed(many) == ValueSet(interval=(0.0, float(MAX_POINTS)), observed=True)
    # exactly MAX_POINTS values in the strided first look, one more only off its stride: still many
    common = np.random.default_rng(0).integers(0, MAX_POINTS, 100_000).astype(np.float32)
    common[1] = 0.5
    assert observed(common) == ValueSet(interval=(0.0, float(MAX_POINTS - 1)), observed=True)
    assert observed(np.zeros((0, 4)), None) == ValueSet()
    assert str(observed(np.array([0.0, np.nan]))) == "NaN values"
    assert not ValueSet.between(0, 1).contains(observed(np.array([0.0, np.nan])))


@pytest.mark.parametrize(
    "name,options,values",
    [
        ("bars_stripes", {}, "{0,1}"),
        ("shifting_bar", {}, "{0,1}"),
        ("deconvolution", {}, "{0,1}"),
        ("ising_samples", {}, "{0,1}"),
        ("ising_samples", {"spins": "pm1"}, "{-1,+1}"),
    ],
)
def test_a_synthetic_dataset_holds_the_values_it_says(name, options, values):
    data = load_dataset(name, **options)
    assert str(data.values) == values
    facts = data.facts()
    assert facts.values is data.values and facts.rows["train"] == data.train.shape[0]


# ---------------------------------------------------------------- tasks
def test_the_smallest_flip_rate_flips_one_pixel_per_image():
    data = load_dataset("bars_stripes")
    d = data.n_visible
    task = TASKS.build(TASKS.parse({"name": "flip", "rate": 1 / d}))
    task.check(data.facts(), ["test"])
    batch = task.batch(data, "test")
    assert batch.mask.sum(axis=1).tolist() == [1] * data.test.shape[0]
    assert np.array_equal(batch.inputs[batch.mask], 1 - data.test[batch.mask])
    with pytest.raises(RbmlabError, match=r"^task\.rate: 0\.05 of the 9 pixels"):
        TASKS.build(TASKS.parse({"name": "flip", "rate": 0.05})).batch(data, "test")  # 0.45 → 0


def test_task_outputs():
    binary, spins = ValueSet.of_points(0, 1), ValueSet.of_points(-1, 1)
    flip = TASKS.build(TASKS.parse({"name": "flip"}))
    assert flip.outputs(binary) == binary and flip.outputs(spins) == ValueSet.of_points(-1, 0, 1, 2)
    occlude = TASKS.build(TASKS.parse({"name": "occlude", "value": 1.0}))
    assert occlude.outputs(binary) == binary
    assert occlude.outputs(spins) == spins
    assert TASKS.build(TASKS.parse({"name": "occlude", "value": 0.5})).outputs(binary) == ValueSet.of_points(
        0, 0.5, 1
    )


# ---------------------------------------------------------------- what the check accepts
def _config(*overrides):
    return validated_run_config(list(overrides))


@pytest.mark.parametrize(
    "overrides",
    [
        ("dataset=ising_samples", "dataset.spins=pm1", "model=ising", "model.spins=pm1"),
        ("dataset=ising_samples", "dataset.spins=pm1", "model.visible_units=spin"),
        ("dataset=ising_samples", "dataset.spins=pm1", "model=grbm", "model.visible_prior=spin"),
        ("dataset=bars_stripes", "model=grbm", "model.visible_prior=truncated_gaussian"),
        ("dataset=bars_stripes", "model=grbm", "model.visible_prior=gauss_bernoulli"),
        ("dataset=bars_stripes", "model=dbm"),
        ("dataset=bars_stripes", "model=crbm", "task=flip", "task.rate=0.12"),
        ("dataset=bars_stripes", "model=crbm", "task=occlude", "task.size=2", "task.value=1"),
        (
            "dataset=ising_samples",
            "dataset.spins=pm1",
            "model.visible_units=spin",
            "task=occlude",
            "task.size=2",
            "task.value=-1",
        ),
    ],
    ids=lambda o: " ".join(o),
)
def test_matching_data_and_units_pass(overrides):
    cfg = _config(*overrides)
    check_run(cfg, load_dataset(**cfg.dataset).facts())


DOMAIN_KEYS = (
    "dataset",
    "model=",
    "model.visible_units",
    "model.visible_prior",
    "model.spins",
    "task",
    "evaluator=",
    "evaluator.splits",
    "scale",
)


def _smoke_jobs(names):
    """One composed job per distinct setting of the keys the check reads, over the smoke sweeps
    of the experiments ``names`` (an experiment without a smoke tier runs none)."""
    seen = {}
    for name in names:
        spec = load_spec(name)
        if kind_of(spec, name).name != "sweep" or "smoke" not in spec.get("scales", {}):
            continue
        for variant, overrides in _variants(name, spec, "smoke", []).items():
            for combo in expand_overrides(overrides):
                key = tuple(o for o in combo if o.startswith(DOMAIN_KEYS))
                seen.setdefault(key, (f"{name} {variant}", combo))
    return list(seen.values())


def _check_jobs(names) -> int:
    facts, failed = {}, []
    jobs = _smoke_jobs(names)
    for where, combo in jobs:
        cfg = validated_run_config(combo)
        key = json.dumps(cfg.dataset, sort_keys=True)
        try:
            if key not in facts:
                facts[key] = load_dataset(**cfg.dataset).facts()
            check_run(cfg, facts[key])
        except RbmlabError as e:
            failed.append(f"{where}: {e}")
    assert not failed, "\n".join(failed)
    return len(jobs)


FAST_EXPERIMENTS = ("tap/figure-3", "crbm_bp/table-3a", "pmp/figure-1a", "tap/figure-11")


def test_experiments_of_every_family_and_value_kind_pass_the_check():
    """grey MNIST under gauss_bernoulli, CBCL under truncated_gaussian, binary MNIST under
    Bernoulli (tap Fig. 3), Caltech occlusion by the background 1 (crbm_bp), ±1 Ising lattices
    (pmp), a DBM (tap Fig. 11)."""
    assert set(FAST_EXPERIMENTS) <= set(available())
    assert _check_jobs(FAST_EXPERIMENTS) >= 6


@pytest.mark.slow
def test_every_experiment_smoke_job_passes_the_check():
    assert _check_jobs(available()) >= 30


def test_a_declaration_keeps_its_visible_units_and_config_keys_together():
    """The visible units' config keys must each fix a declared setting (what a saved model holds),
    checked when a family is declared, not when data first meet it."""
    from rbmlab.models.declaration import Declaration, Setting, VisibleUnits

    arrays = {"W": ("n_visible", "n_hidden")}
    units = VisibleUnits("units", {"a": "bernoulli", "b": "spin"})
    with pytest.raises(ValueError, match="key units fixes no setting"):
        Declaration(arrays, visible=units)
    with pytest.raises(ValueError, match=r"undeclared settings \['visible'\]"):
        Declaration(arrays, config_settings={"units": "visible"}, visible=units)
    ok = Declaration(
        arrays, settings={"visible": Setting(("bernoulli", "spin"))}, config_settings={"units": "visible"}
    )
    assert ok.visible is None and Declaration(**{**ok.__dict__, "visible": units}).visible is units
