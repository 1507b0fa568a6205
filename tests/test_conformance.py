"""One conformance test per plug-in axis, run over every registered component (as scikit-learn
checks every estimator): model families, inference methods, optimizers, learners, evaluators.

Each family is exercised on a small model of its own (its ``sizes`` from its default config),
with a trial axis, under fixed seeds: shapes and dtypes are kept, results are deterministic under
a seed, trials are independent, and the checkpoint round trip is exact. A cell where a component
does not apply to a family is checked as a declared refusal (:func:`check_refusal`), not skipped.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from rbmlab.backend import get_backend
from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.base import Context
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.inference import INFERENCE
from rbmlab.learners import LEARNERS
from rbmlab.models import MODELS
from rbmlab.models import base as capabilities
from rbmlab.models.base import Conditional, GradientStatistics, supports
from rbmlab.optimizers import OPTIMIZERS
from rbmlab.run.checkpoint import load_checkpoint, save_checkpoint
from rbmlab.run.evaluation import evaluate

N_VISIBLE, SMALL = (
    6,
    {
        "rbm": {"n_hidden": 3},
        "crbm": {"n_hidden": 3},
        "grbm": {"n_hidden": 3},
        "dbm": {"n_hidden": [4, 3]},
        "fractional_rbm": {"n_hidden": 3},
    },
)


def make_model(family: str, dtype="float32", trials: int = 0, seed: int = 0):
    backend = get_backend("numpy", dtype)
    cls = MODELS.get(family)
    config = MODELS.parse({"name": family, **SMALL.get(family, {})})
    rng = backend.rng(seed)
    data_mean = backend.asarray(np.linspace(0.2, 0.8, N_VISIBLE))
    model = cls.initialize(
        config,
        xp=backend.xp,
        rng=rng,
        data_mean=data_mean,
        dtype=backend.dtype,
        trials=trials,
        data=data(backend, 16, seed + 7),
    )
    # away from the symmetric starting point, so that every parameter matters
    model = model.map(lambda a: a + 0.3 * backend.rng(seed, 1).standard_normal(a.shape, dtype=a.dtype))
    assert isinstance(model, cls)  # of the family's class, or of its depth's (a layered machine)
    return backend, type(model), config, model


def data(backend, n: int = 8, seed: int = 3):
    return backend.asarray((backend.rng(seed).random((n, N_VISIBLE)) < 0.5).astype(np.float32))


def examples(backend, cls, n: int, seed: int) -> Batch:
    """Inputs with targets: class labels, or for a conditional family (model=crbm) clean outputs
    and the mask of the pixels where the inputs differ from them."""
    x = data(backend, n, seed)
    if supports(cls, Conditional):
        clean = data(backend, n, seed + 100)
        return Batch(x, targets=clean, mask=x != clean)
    return Batch(x, targets=np.arange(n) % 3)


def symmetric(model):
    """Ising couplings must stay symmetric with a zero diagonal after the random shift."""
    if model.family == "ising":
        J = model.J + model.J.swapaxes(-1, -2)
        idx = np.arange(J.shape[-1])
        J[..., idx, idx] = 0
        return model.replace(J=J)
    return model


@pytest.mark.parametrize("family", MODELS.names())
def test_model_family(family, tmp_path):
    backend, cls, config, model = make_model(family, trials=3)
    model = symmetric(model)
    assert model.family == family and cls.config_class is type(config)
    assert model.n_trials == 3 and model.trial(1).n_trials == 0
    for name, core in cls.PARAMS.items():
        a = getattr(model, name)
        assert a.ndim == core + 1 and a.shape[0] == 3 and a.dtype == np.float32
        assert getattr(model.astype("float64"), name).dtype == np.float64
    assert model.finite_trials() == [True, True, True]
    broken = model.map(lambda a: a.copy())
    getattr(broken, next(iter(cls.PARAMS)))[1].flat[0] = np.nan
    assert broken.finite_trials() == [True, False, True]
    assert set(cls.sizes(config, N_VISIBLE)) == set(model.trial(0).model_sizes())
    # checkpoint round trip: every array and setting back exactly, the family recognised
    path = save_checkpoint(tmp_path / "m.npz", model, meta={"epoch": 1}, state={"x": np.ones(2)})
    back, meta, state = load_checkpoint(path)
    assert type(back) is cls and back.settings() == model.settings() and meta == {"epoch": 1}
    for name in cls.PARAMS:
        np.testing.assert_array_equal(getattr(back, name), getattr(model, name))
    np.testing.assert_array_equal(state["x"], np.ones(2))


@pytest.mark.parametrize("family", MODELS.names())
def test_model_capabilities_agree_with_each_other(family):
    """Where a family can enumerate, its log Z normalises its own log-probabilities, and its
    statistics have one entry per parameter, shaped like it, per trial."""
    backend, cls, config, model = make_model(family, dtype="float64", trials=2)
    model = symmetric(model)
    x = data(backend)
    if not supports(cls, GradientStatistics):  # a conditional family: statistics need targets
        pytest.skip(f"{family} has no unconditional statistics")
    x = model.chain_start(x, backend.rng(4))  # a chain's state (a DBM's: layers 0 and 2)
    assert (model.visible_part(x) == data(backend)).all()  # each trial's chains start at the rows
    stats = model.statistics(x)
    assert set(stats) == set(cls.PARAMS)
    for name, s in stats.items():  # data shared by all trials: its term broadcasts
        assert np.broadcast_shapes(s.shape, getattr(model, name).shape) == getattr(model, name).shape
    single = model.trial(0)
    stats0 = single.statistics(x[0] if x.ndim == 3 else x)  # trial 0's chains
    for name in cls.PARAMS:
        np.testing.assert_allclose(
            np.broadcast_to(stats[name], getattr(model, name).shape)[0], stats0[name], rtol=1e-12
        )
    if supports(cls, __import__("rbmlab.models.base", fromlist=["Enumerable"]).Enumerable):
        states = (np.arange(2**N_VISIBLE)[:, None] >> np.arange(N_VISIBLE)) & 1
        values = getattr(single, "visible_units", getattr(single, "units", None)).values
        states = values[0] + (values[1] - values[0]) * states.astype(np.float64)
        log_p = single.log_unnormalized(states) - single.exact_log_partition()
        assert np.exp(log_p).sum() == pytest.approx(1.0, rel=1e-10)


def compatible(family: str, component_requires) -> bool:
    return all(supports(MODELS.get(family), c) for c in component_requires)


def check_refusal(error: RbmlabError, who: str, family: str, declared: tuple) -> None:
    """A cell where the component does not apply is checked, not skipped (as scikit-learn
    declares its expected failures): the refusal is one line that starts with the component's
    key and names the family, and where it says the family lacks a capability, the family does
    lack it and the component (or the sampler it names) declares it needed; "no default sampler"
    is said only of a family without one."""
    message = str(error)
    assert "\n" not in message and message.startswith(f"{who}:"), message
    cls = MODELS.get(family)
    assert f"model {family}" in message, message
    lacking = re.search(r"model \w+ lacks (\w+(?: or \w+)*)", message)
    for name in lacking.group(1).split(" or ") if lacking else ():
        capability = getattr(capabilities, name)
        assert not supports(cls, capability), f"{message}: but {family} supports {name}"
        assert capability in declared, f"{message}: {name} is not among {declared}"
    if "has no default sampler" in message:
        assert getattr(cls, "default_sampler", None) is None, message


def needs(component, model_class) -> tuple:
    """The capabilities a learner or evaluator declares it needs of ``model_class``: its own and
    its sampler's (none when the family has no sampler for it: that refusal says so)."""
    try:
        if hasattr(component, "samplers"):  # an evaluator
            samplers = list(component.samplers(model_class))
        else:
            samplers = [component.sampler_for(model_class)] if component.samples else []
    except RbmlabError:
        samplers = []
    own = (*component.requires, *getattr(component, "requires_one_of", ()))
    return (*own, *(r for s in samplers for r in s.requires))


@pytest.mark.parametrize("method", INFERENCE.names())
@pytest.mark.parametrize("family", MODELS.names())
def test_inference_method(method, family):
    sampler = INFERENCE.build(INFERENCE.parse(method))
    if not compatible(family, sampler.requires):
        # the refusal a user sees choosing it: learner=pcd learner.sampler=<method>
        learner = LEARNERS.build(LEARNERS.parse({"name": "pcd", "sampler": {"name": method}}))
        with pytest.raises(RbmlabError) as refusal:
            learner.check(MODELS.get(family))
        assert f"its sampler {method})" in str(refusal.value), refusal.value
        check_refusal(refusal.value, "learner=pcd", family, (*learner.requires, *sampler.requires))
        return
    backend, _, _, model = make_model(family, trials=2)
    model = symmetric(model)
    x = model.chain_start(data(backend), backend.rng(4))  # chain states (a DBM's: layers 0 and 2)
    before = x.copy()
    a = sampler.run(model, x, backend.rng(5), 3)
    b = sampler.run(model, x, backend.rng(5), 3)
    np.testing.assert_array_equal(x, before)  # never modifies its input
    np.testing.assert_array_equal(a, b)  # deterministic under a seed
    assert a.shape == (2,) + x.shape[-2:] and a.dtype == x.dtype
    assert not np.array_equal(a, sampler.run(model, x, backend.rng(6), 3))


@pytest.mark.parametrize("name", OPTIMIZERS.names())
@pytest.mark.parametrize("family", MODELS.names())
def test_optimizer(name, family):
    optimizer = OPTIMIZERS.build(OPTIMIZERS.parse(name))
    backend, cls, _, model = make_model(family, trials=2)
    model = symmetric(model)
    rng = backend.rng(7)  # a gradient of every parameter's shape, whatever the family
    grad = {
        p: rng.standard_normal(getattr(model, p).shape).astype(getattr(model, p).dtype) for p in cls.PARAMS
    }
    new, state = optimizer.update(model, grad, {}, 0.01)
    for p in cls.PARAMS:
        assert getattr(new, p).shape == getattr(model, p).shape
        assert getattr(new, p).dtype == getattr(model, p).dtype
    assert any(not np.array_equal(getattr(new, p), getattr(model, p)) for p in cls.PARAMS)
    again, _ = optimizer.update(model, grad, {}, 0.01)
    for p in cls.PARAMS:
        np.testing.assert_array_equal(getattr(again, p), getattr(new, p))
    # a zero gradient (no weight decay) leaves the model unchanged
    zero = {k: 0 * v for k, v in grad.items()}
    same, _ = optimizer.update(model, zero, {}, 0.01)
    for p in cls.PARAMS:
        np.testing.assert_allclose(getattr(same, p), getattr(model, p), atol=1e-7)


@pytest.mark.parametrize("node", [{"name": "sgd", "momentum": 0.5}, *OPTIMIZERS.names()], ids=str)
@pytest.mark.parametrize("family", MODELS.names())
def test_optimizer_declares_its_buffers(node, family):
    """The state entries an update keeps are those ``buffers`` declares, of the shapes it says
    (resume=true checks a checkpoint's against them)."""
    optimizer = OPTIMIZERS.build(OPTIMIZERS.parse(node))
    backend, cls, _, model = make_model(family, trials=2)
    rng = backend.rng(7)
    grad = {
        p: rng.standard_normal(getattr(model, p).shape).astype(getattr(model, p).dtype) for p in cls.PARAMS
    }
    _, state = optimizer.update(model, grad, {}, 0.01)
    _, state = optimizer.update(model, grad, state, 0.01)
    buffers = optimizer.buffers(model)
    assert {k: tuple(np.shape(v)) for k, v in state.items()} == {k: buffers.get(k) for k in state}


@pytest.mark.parametrize("name", LEARNERS.names())
@pytest.mark.parametrize("family", MODELS.names())
def test_learner(name, family):
    """Deterministic under a seed, dtype kept, shapes kept (or grown along the sizes the learner
    declares in ``grows``), state keys kept; trial 1 of a batched model trains alone too."""
    cls = LEARNERS.get(name)
    fields = set(cls.config_class.__dataclass_fields__)
    reads_lr = "lr" not in LEARNERS.parse({"name": name}).unread()  # frank_wolfe's converge fit: none
    node = {"name": name, **({"lr": 0.01} if reads_lr else {}), **({"k": 2} if "k" in fields else {})}
    if "full" != cls.config_class.__dataclass_fields__["batch_size"].default:
        node["batch_size"] = 8
    learner = LEARNERS.build(LEARNERS.parse(node))
    backend, model_class, _, model = make_model(family, trials=2 if learner.trains_trials else 0)
    model = symmetric(model)
    try:
        learner.check(MODELS.get(family))
    except RbmlabError as e:  # declared: the learner's own one-line refusal, checked
        check_refusal(e, f"learner={name}", family, needs(learner, MODELS.get(family)))
        return
    model = learner.initial_model(model, pretrained=True)
    train = examples(backend, model_class, 16, 3)
    state = learner.init_state(model, train, backend.rng(0))
    batch = train.take(np.arange(8)) if node.get("batch_size") == 8 else train
    a, sa = learner.step(model, state, batch, backend.rng(1))
    b, _ = learner.step(model, state, batch, backend.rng(1))
    for p in model_class.PARAMS:
        np.testing.assert_array_equal(getattr(a, p), getattr(b, p))
        assert getattr(a, p).dtype == np.float32
        if not learner.grows:
            assert getattr(a, p).shape == getattr(model, p).shape
    before, after = model.model_sizes(), a.model_sizes()
    assert all(after[k] == before[k] or (k in learner.grows and after[k] > before[k]) for k in before)
    assert set(state) <= set(sa)
    if learner.trains_trials:
        one, _ = learner.step(
            model.trial(1),
            {
                k: v[1] if np.ndim(v) and v.shape[:1] == (2,) and k != "chains" else v
                for k, v in state.items()
            },
            batch,
            backend.rng(1),
        )
        assert all(np.isfinite(getattr(one, p)).all() for p in model_class.PARAMS)


@pytest.mark.parametrize("name", EVALUATORS.names())
@pytest.mark.parametrize("family", MODELS.names())
def test_evaluator(name, family):
    node = {"name": name}
    cheap_ais = {
        "name": "ais",
        "n_chains": 4,
        "schedule": "linear",
        "n_temperatures": 20,
        "curve_n_temperatures": 10,
    }
    if name == "ais":
        node.update(cheap_ais)
    if name == "combined":  # its default parts, the AIS one at the cheap schedule
        node["parts"] = [cheap_ais, {"name": "tap"}]
    evaluator = EVALUATORS.build(EVALUATORS.parse(node))
    backend, cls, config, model = make_model(family)
    model = symmetric(model)
    try:
        evaluator.check(MODELS.get(family), cls.sizes(config, N_VISIBLE))
    except RbmlabError as e:  # declared: the evaluator's own one-line refusal, checked
        parts = [EVALUATORS.build(p) for p in getattr(evaluator.config, "parts", [])]
        declared = tuple(r for e_ in (evaluator, *parts) for r in needs(e_, MODELS.get(family)))
        check_refusal(e, f"evaluator={name}", family, declared)
        return
    splits = {s: examples(backend, cls, 8, 3 + i) for i, s in enumerate(evaluator.config.splits)}
    truth = model if evaluator.needs_truth else None  # a ground truth of the family

    def context():
        return Context(
            rng=backend.rng(9),
            final=True,
            train=examples(backend, cls, 16, 4),
            data_mean=np.full(N_VISIBLE, 0.5, np.float32),
            truth=truth,
        )

    m1 = evaluate(model, splits, evaluator, context())
    m2 = evaluate(model, splits, evaluator, context())
    assert m1 == m2 and all(isinstance(v, float) for v in m1.values())
    declared = {s.name for s in evaluator.metrics}
    model_level = {s.name for s in evaluator.metrics if not s.per_split}  # e.g. train_valid_gap
    own = {
        k.split("_", 1)[1] if k.startswith(("test_", "valid_", "train_")) and k not in model_level else k
        for k in m1
    }
    own -= {"reconstruction_error"}
    assert own <= declared, f"{name} writes undeclared metrics {own - declared}"
    assert all(isinstance(s, MetricSpec) for s in evaluator.metrics)
    # the headline names the split its numbers are of (none for an evaluator of the model alone)
    per_split = any(s.per_split for s in evaluator.metrics)
    assert evaluator.headline(m1, "test").startswith("test ") or not per_split


def test_a_parameter_beyond_one_million_counts_as_diverged():
    """The divergence rule (models.base.PARAMETER_LIMIT): every trial whose parameters all lie in
    ±1e6 is finite, one with a single entry at ±2e6 (finite in float32) is not, nor one with NaN."""
    from rbmlab.models.rbm import RBM

    W = np.zeros((2, 3, 2))
    for value, want in (
        (9e5, [True, True]),
        (-9.9e5, [True, True]),
        (2e6, [True, False]),
        (-2e6, [True, False]),
        (np.nan, [True, False]),
    ):
        W[1, 0, 1] = value
        model = RBM(W.copy(), np.zeros((2, 3)), np.zeros((2, 2)))
        assert list(map(bool, model.finite_trials())) == want, value


@pytest.mark.parametrize("name", LEARNERS.names())
def test_learner_declares_the_unit_types_its_maths_handles(name):
    """Nothing is accepted by default: every learner names, per layer, the unit types it is
    written for (rbmlab.units.requirements), and only known ones."""
    from rbmlab.units.requirements import ANY_UNITS

    units = LEARNERS.get(name).units
    assert units is not None, f"learner={name} declares no unit types (Learner.units)"
    assert units and set(units) <= {"visible", "hidden"}, units
    assert all(allowed and set(allowed) <= set(ANY_UNITS) for allowed in units.values()), units


def test_a_learner_that_declares_no_unit_types_trains_nothing():
    """The declaration is read, not assumed: a learner without one is refused in one line before
    any work, on every family; the sampler's own declaration still narrows a learner's (a
    sampler that does not name Potts units is written for binary ones)."""
    from rbmlab.learners.cd import CD
    from rbmlab.units.requirements import check_configured_units

    class Undeclared(CD):
        units = None

    learner = Undeclared(LEARNERS.parse({"name": "cd"}))
    for family in ("rbm", "grbm"):
        config = MODELS.parse({"name": family})
        with pytest.raises(RbmlabError, match=r"^learner=cd: declares no unit types"):
            check_configured_units(config, MODELS.get(family), learner=learner)
    potts = MODELS.parse({"name": "rbm", "visible_units": "potts", "visible_states": 3})
    check_configured_units(potts, MODELS.get("rbm"), learner=LEARNERS.build(LEARNERS.parse("cd")))
    pmp = LEARNERS.build(LEARNERS.parse({"name": "cd", "sampler": {"name": "pmp"}}))
    with pytest.raises(
        RbmlabError, match=r"^model.visible_units: potts visible units; learner=cd is written "
    ):
        check_configured_units(potts, MODELS.get("rbm"), learner=pmp)
