"""Bounds on counts and sizes (rbmlab.limits, issue 33), checked over every registry.

Every integer option of every component (model families, inference methods, solvers, optimizers,
learners, evaluators, tasks, datasets, ``train``) has a finite upper bound or a declared reason
why it needs none; every bound admits, with a factor of 10 to spare, each value the committed
configurations use (conf/ and experiments/, every tier); every dataset declares the dimension of
its data, so that the pre-flight checks run without reading it; and a loop whose tolerance is 0
stops at its bounded iteration cap.
"""

from __future__ import annotations

import dataclasses
import math
import typing
from pathlib import Path

import numpy as np
import pytest
import yaml

from rbmlab import limits
from rbmlab.config import TrainConfig
from rbmlab.data.registry import SPECS, dataset_dimension, load_dataset
from rbmlab.data.tasks import TASKS
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.experiment.deconvolution import DeconvolutionConfig
from rbmlab.experiment.figures import FIGURES
from rbmlab.inference import INFERENCE
from rbmlab.inference.solvers import SOLVERS
from rbmlab.learners import LEARNERS
from rbmlab.models import MODELS
from rbmlab.optimizers import OPTIMIZERS
from rbmlab.validation import _alternatives, parse_options
from tests.test_experiment import SWEEPS, _jobs

ROOT = Path(__file__).resolve().parents[1]
REGISTRIES = {
    "learner": LEARNERS,
    "evaluator": EVALUATORS,
    "sampler": INFERENCE,
    "solver": SOLVERS,
    "model": MODELS,
    "optimizer": OPTIMIZERS,
    "task": TASKS,
}


def config_classes() -> dict[str, list[type]]:
    """Group → the configuration classes of its components (the keys users write: learner.k;
    sampler: the inference methods of learner.sampler and evaluator.sampler), in one order in every
    process (xdist's workers must collect the same list)."""
    groups = {
        group: list(dict.fromkeys(cls.config_class for _, cls in registry.items()))  # in registry order
        for group, registry in REGISTRIES.items()
    }
    groups["dataset"] = [spec.options for spec in SPECS.values()]
    groups["train"] = [TrainConfig]
    groups["experiment"] = [
        DeconvolutionConfig,
        *dict.fromkeys(d.options for _, d in FIGURES.items()),
    ]  # kinds' options
    return groups


def int_options(cls: type) -> list[dataclasses.Field]:
    """The declared options of ``cls`` that hold integers (int, int | str, list[int], ...)."""
    hints = typing.get_type_hints(cls)
    found = []
    for f in dataclasses.fields(cls):
        if "doc" not in f.metadata:
            continue
        bases, _ = _alternatives(hints[f.name])
        bases = [typing.get_args(b)[0] if typing.get_origin(b) is list else b for b in bases]
        if int in bases:
            found.append(f)
    return found


ALL = [(group, cls) for group, classes in config_classes().items() for cls in classes]


@pytest.mark.parametrize("group, cls", ALL, ids=[f"{g}-{c.__module__}.{c.__name__}" for g, c in ALL])
def test_every_integer_option_has_a_finite_bound_or_a_reason(group, cls):
    for f in int_options(cls):
        hi = f.metadata["hi"]
        if hi is None:
            assert limits.unbounded_reason(cls, f.name), f"{group}.{f.name} of {cls.__name__}: no hi"
            continue
        assert math.isfinite(hi), f"{group}.{f.name}: hi={hi}"
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        for value in default if isinstance(default, list) else [default]:
            assert not isinstance(value, int) or value <= hi, f"{group}.{f.name}: default {value} > {hi}"
        if isinstance(hi, limits.Limit):
            assert hi.why and hi.why[0].islower() and not hi.why.endswith("."), hi.why


def test_the_registries_have_integer_options_to_check():
    """The walk above sees the options it must bound (a renamed registry would skip them)."""
    names = {(c.__name__, f.name) for _, c in ALL for f in int_options(c)}
    for expected in [
        ("CDPercLossConfig", "k"),
        ("TapLearnerConfig", "max_iter"),
        ("KLConfig", "sweeps"),
        ("AISConfig", "n_temperatures"),
        ("MPLPConfig", "max_iter"),
        ("TrainConfig", "epochs"),
        ("DBMConfig", "n_hidden"),
        ("IsingSamplesOptions", "burn_in"),
    ]:
        assert expected in names
    assert len(names) > 90


# ---------------------------------------------------------------- committed values
def _leaves(node, path=()):
    """(key path, value) of every override string ``a.b=v`` and mapping leaf in a YAML tree."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "grid" and isinstance(value, dict):  # {key: [values]} of a sweep
                for swept, values in value.items():
                    for v in values if isinstance(values, list) else [values]:
                        yield tuple(str(swept).split(".")), v
            else:
                yield from _leaves(value, (*path, str(key)))
    elif isinstance(node, list):
        for item in node:
            if isinstance(item, str) and "=" in item and not item.startswith("hydra"):
                key, _, text = item.partition("=")
                key = key.lstrip("+~")
                if "/" in key:  # a group choice (learner/optimizer=adam)
                    continue
                for part in text.split(","):
                    try:
                        yield tuple(key.split(".")), yaml.safe_load(part)
                    except yaml.YAMLError:
                        pass
            else:
                yield from _leaves(item, path)
    else:
        yield path, node


def _group(path: tuple[str, ...]) -> tuple[str, str] | None:
    """(group, option) of a key path: learner.k → (learner, k); learner.optimizer.x → (optimizer,
    x); evaluator.sampler.x → (sampler, x); an inference experiment's dataset.x → (dataset, x)."""
    if len(path) < 2:
        return None
    *parents, name = path
    if "dataset" in parents:
        return "dataset", name
    if parents[-1] in ("optimizer", "sampler") and len(parents) >= 2:
        return parents[-1], name
    return (parents[0], name) if len(parents) == 1 and parents[0] in config_classes() else None


def committed_values() -> list[tuple[str, str, str, int]]:
    """(file, group, option, value) of every integer a committed configuration gives."""
    found = []
    files = sorted((ROOT / "conf").rglob("*.yaml")) + sorted((ROOT / "experiments").rglob("*.yaml"))
    for path in files:
        tree = yaml.safe_load(path.read_text()) or {}
        rel = path.relative_to(ROOT)
        if rel.parts[0] == "conf" and len(rel.parts) > 2:  # conf/<group>[/<sub>]/<name>.yaml
            sub = rel.parts[-2]
            group = {"optimizer": "optimizer", "solver": "solver"}.get(sub, rel.parts[1])
            tree = {group: tree}
        for key_path, value in _leaves(tree):
            where = _group(key_path)
            values = value if isinstance(value, list) else [value]
            if where is None:
                continue
            for v in values:
                if isinstance(v, int) and not isinstance(v, bool):
                    found.append((str(rel), *where, v))
    return found


def test_every_bound_admits_every_committed_value_ten_times_over():
    checked = 0
    classes = config_classes()
    for source, group, name, value in committed_values():
        for cls in classes[group]:
            field = next((f for f in int_options(cls) if f.name == name), None)
            if field is None or field.metadata["hi"] is None:
                continue
            hi = field.metadata["hi"]
            margin = 10 if isinstance(hi, limits.Limit) else 1
            assert value * margin <= hi, f"{source}: {group}.{name}={value} against {cls.__name__}'s {hi}"
            checked += 1
    assert checked > 300  # the walk reaches the experiments' overrides and grids


@pytest.mark.slow
@pytest.mark.parametrize("name", SWEEPS)
def test_every_job_of_the_smoke_and_reduced_tiers_is_within_bounds(name):
    """Whole configurations too (a product such as d x k, a dataset's array size), of every job
    of every sweep experiment's smoke and reduced tiers, one seed each, each a valid run
    configuration at its tier (tests/test_experiment.py validates every job of the paper tier)."""
    from rbmlab.hydra_app import validated_run_config

    for tier in ("smoke", "reduced"):
        for combo in _jobs(name, tier, every=True):
            assert validated_run_config(combo).scale == tier, combo


@pytest.mark.slow
def test_the_sweeps_have_hundreds_of_smoke_and_reduced_jobs():
    """What the check above walks: distinct jobs (the experiment files alone, nothing composed)."""
    jobs = {
        tuple(c) for name in SWEEPS for tier in ("smoke", "reduced") for c in _jobs(name, tier, every=True)
    }
    assert len(jobs) > 500


def test_the_committed_values_include_the_largest_ones():
    """The YAML walk finds the values that come closest to their bounds."""
    values = {(group, name, value) for _, group, name, value in committed_values()}
    assert ("train", "epochs", 100000) in values  # pmp's persistent Figure 2 runs
    assert ("dataset", "n_train", 1000000) in values  # pmp Sec 5.1's theta estimate
    assert ("solver", "max_iter", 50000) in values  # conf/solver/mplp.yaml
    assert ("train", "trials", 25) in values  # dcp Figures 1-2


# ---------------------------------------------------------------- the error and its reason
def test_a_bound_error_names_the_key_the_bound_and_why():
    with pytest.raises(RbmlabError) as e:
        LEARNERS.parse({"name": "cd_percloss", "k": 10**10})
    assert str(e.value).startswith(f"learner.k: must be <= {limits.UPDATE_STEPS} (sampler sweeps")
    assert str(e.value).endswith(", got 10000000000")
    with pytest.raises(RbmlabError, match=r"^learner.k: must be >= 1, got 0$"):  # the lower side as before
        LEARNERS.parse({"name": "cd", "k": 0})
    assert LEARNERS.parse({"name": "cd", "k": int(limits.UPDATE_STEPS)}).k == limits.UPDATE_STEPS


def test_a_product_of_options_is_bounded_too():
    assert LEARNERS.parse({"name": "sdcp", "d": 100, "k": 1000}).k == 1000
    with pytest.raises(
        RbmlabError,
        match=r"^learner.k: d x k \(sampler sweeps an update\) is 100100; "
        r"must be <= 100000",
    ):
        LEARNERS.parse({"name": "csdcp", "d": 100, "k": 1001})


def test_a_limit_is_an_int_that_keeps_its_reason():
    import copy
    import pickle

    for limit in (limits.UPDATE_STEPS, limits.ENUMERATION_UNITS):
        assert repr(limit) == str(int(limit)) and f"{limit}" == str(int(limit))
        for copied in (pickle.loads(pickle.dumps(limit)), copy.deepcopy(limit)):
            assert copied == limit and copied.why == limit.why


# ---------------------------------------------------------------- declared dimensions
SYNTHETIC = [
    {"name": "bars_stripes", "size": 4},
    {"name": "shifting_bar", "n": 12, "bar": 3},
    {"name": "ising_samples", "structure": "dense", "n": 7, "n_train": 5, "n_test": 5},
    {"name": "ising_samples", "side": 3, "n_train": 5, "n_test": 5},
    {
        "name": "deconvolution",
        "grid": 3,
        "n_images": 2,
        "n_candidates": 50,
        "p_location": 0.2,
        "min_placements": 1,
    },
]


@pytest.mark.parametrize("config", SYNTHETIC, ids=[str(c) for c in SYNTHETIC])
def test_a_datasets_declared_dimension_is_its_datas(config):
    assert dataset_dimension(config) == load_dataset(**config).n_visible


FILE_DATASETS = [
    {"name": "mnist"},
    {"name": "mnist", "contours": True},
    {"name": "binarized_mnist"},
    {"name": "caltech101"},
    {"name": "omniglot"},
    {"name": "cbcl_faces"},
    {"name": "ocr_letters"},
]


@pytest.mark.slow
@pytest.mark.parametrize("config", FILE_DATASETS, ids=[str(c) for c in FILE_DATASETS])
def test_a_file_datasets_declared_dimension_is_its_datas(config):
    try:
        data = load_dataset(
            **config, **({} if config["name"] == "cbcl_faces" else {"n_train": 10, "n_test": 10})
        )
    except RbmlabError as e:  # its files are not on this machine
        pytest.skip(str(e))
    assert dataset_dimension(config) == data.n_visible


def test_every_dataset_declares_its_dimension():
    for name, spec in SPECS.items():
        if spec.location_options:  # dataset=file: its file's columns (tests/test_own_data.py)
            continue
        assert isinstance(dataset_dimension({"name": name}), int)
        assert isinstance(getattr(spec.options, "dimension", None), property), name


# ---------------------------------------------------------------- tolerance 0 ends at the cap
@pytest.mark.parametrize("name", ["tap", "adatap"])
def test_a_solver_with_tolerance_zero_stops_at_its_iteration_cap(name):
    """tol=0 is never met (learner=tap learner.tol=0): the fixed-point loop runs exactly its
    max_iter iterations, which the option bounds, and returns."""
    model = MODELS.get("rbm").initialize(
        MODELS.parse({"name": "rbm", "n_hidden": 3, "weight_std": 0.5}),
        xp=np,
        rng=np.random.default_rng(0),
        data_mean=np.full(6, 0.5),
        dtype="float64",
    )
    v0 = (np.random.default_rng(1).random((4, 6)) < 0.5).astype(np.float64)
    for cap in (1, 7):
        solver = SOLVERS.build(SOLVERS.parse({"name": name, "max_iter": cap, "tol": 0.0}))
        beliefs = solver.solve(model, v0)
        assert beliefs.iterations == cap and not np.asarray(beliefs.converged).any()
    with pytest.raises(RbmlabError, match=rf"^solver.max_iter: must be <= {limits.EVALUATION_STEPS} \("):
        SOLVERS.parse({"name": name, "max_iter": 10**12, "tol": 0.0})


def test_the_dataset_bounds_parse():
    parse_options(SPECS["ising_samples"].options, {"n_train": int(limits.EXAMPLES)}, "dataset")
    with pytest.raises(RbmlabError, match=r"^dataset.burn_in: must be <= 1000000 \("):
        parse_options(SPECS["ising_samples"].options, {"sampler": "gibbs", "burn_in": 10**7}, "dataset")


def test_kl_counts_a_dbms_summed_out_units_in_its_enumeration():
    """kl lists every visible state's log p(x); a DBM sums its latent units out of each by
    enumeration, so 2^(visible + latent) terms: refused past limits.ENUMERATION_UNITS."""
    dbm = MODELS.get("dbm")
    kl = EVALUATORS.build(EVALUATORS.parse({"name": "kl", "n_samples": 0}))
    kl.check(dbm, {"n_visible": 15, "n_hidden1": 10, "n_hidden2": 10})  # 15 + 10
    with pytest.raises(
        RbmlabError,
        match=r"^evaluator=kl: 20 visible \+ 10 summed-out latent units .* is 30; "
        r"must be <= 25 \(",
    ):
        kl.check(dbm, {"n_visible": 20, "n_hidden1": 10, "n_hidden2": 10})
