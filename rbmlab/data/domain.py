"""The domain check: the values a dataset holds (and the inputs its task makes) must be values of
the model's visible units, and the metrics the evaluation reads must be defined on the data —
checked before any work, in one line naming the key to change.

Three declarations meet here: each unit type's value set (rbmlab.units: ``Prior.value_set``, a
Bernoulli unit {0,1}, a spin {−1,+1}, a truncated Gaussian its support), each dataset's values
(``Dataset.values``, read once from its arrays) and each task's constraints and outputs
(rbmlab.data.tasks). Each model family's declaration (rbmlab.models.declaration.VisibleUnits)
says which config key chooses its visible units and which unit type each value names (a family
with fixed units has no key).

It lives in rbmlab.data because data is the lowest layer that sees all three (units below it,
tasks in it) and both callers sit above it: the runner's pre-flight (``check_feasible``, before a
run directory exists; ``prepare``) and ``rbmlab evaluate``.

Our choice: a Bernoulli unit takes 0 or 1 only. Grey levels in [0, 1] read as probabilities
train by CD (its statistics are linear in v) but the log-likelihoods, pseudo-likelihood,
pixel errors and KL scored on them are not what they are named; none of the papers here does
it (tap uses a truncated-Gaussian prior for grey MNIST and CBCL, dcp binarises), so grey data
are refused under binary units with the binarising option and the real-valued priors named.
"""

from __future__ import annotations

from collections.abc import Iterable

from rbmlab.data.dataset import DataFacts
from rbmlab.data.registry import get_spec
from rbmlab.data.tasks import TASKS
from rbmlab.errors import RbmlabError
from rbmlab.limits import STATES
from rbmlab.models import MODELS
from rbmlab.models.declaration import VisibleUnits
from rbmlab.units import CATEGORICAL_TYPES, DISCRETE_NAMES, prior, unit_type
from rbmlab.units.values import ValueSet


def data_values(name: str, states: int = 2) -> ValueSet:
    """The values data for visible units ``name`` hold: a binary type's or prior's value set; a
    categorical type's codes 0 … q − 1 (encoded one-hot before training, rbmlab.data.encoding)."""
    if name in CATEGORICAL_TYPES:
        return unit_type(name, states).data_value_set()
    return prior(name).value_set()


def _categorical_states(values: ValueSet) -> int | None:
    """q when ``values`` are codes 0 … q − 1 that a categorical type could take (q ≥ 3: codes
    {0, 1} are binary data), else None."""
    points = values.points
    if values.interval is not None or not points or any(p != int(p) or p < 0 for p in points):
        return None
    q = int(max(points)) + 1
    return q if 3 <= q <= STATES else None


def visible_declaration(family: str) -> VisibleUnits:
    """How ``family`` chooses its visible units (its DECLARATION's, rbmlab.models.declaration)."""
    declared = MODELS.get(family).DECLARATION.visible
    if declared is None:  # a new family declares its visible units in its DECLARATION
        raise RbmlabError(f"model: family {family} declares no visible unit type (Declaration.visible)")
    return declared


# ---------------------------------------------------------------- the data against the units
def _takers(values: ValueSet, family: str) -> list[str]:
    """Overrides whose visible units take ``values``: the family's own first choice that does,
    else that of the first other family with one."""

    def fits(decl: VisibleUnits) -> list[str]:
        found = []
        for v, name in decl.names.items():
            if name in CATEGORICAL_TYPES:
                q = _categorical_states(values)
                found += [f"{v} model.{decl.states_key}={q}"] if q and decl.states_key else []
            elif prior(name).value_set().contains(values):
                found.append(v)
        return found

    own = visible_declaration(family)
    if own.key is not None and fits(own):
        return [f"model.{own.key}={fits(own)[0]}"]
    found = []
    for other in MODELS.names():
        decl = visible_declaration(other)
        choices = fits(decl)
        if other != family and choices:
            found.append(f"model={other}" + (f" model.{decl.key}={choices[0]}" if decl.key else ""))
    return found[:1]


def _remedy(
    values: ValueSet, units: ValueSet, family: str, dataset: str, models: bool = True, complete=None
) -> str:
    """What to change: a model whose units take these values (``models``: a run's config; not
    for a saved model), the dataset options that set them; the family's own key first, then the
    dataset, then other families. ``complete(suggestion)``: the suggestion with what else it
    needs to run (the run layer's rbmlab.run.remedies: a learner and evaluator that take the
    suggested units)."""
    options = ", ".join(
        f"dataset.{o}"
        for o in get_spec(dataset).value_options
        if not (o == "binarize" and dataset == "file" and not ValueSet.between(0, 1).contains(values))
    )  # a file's binarize is for values in [0, 1] (grey levels, probabilities), not codes or counts
    takers = [(complete or str)(t) for t in _takers(values, family)] if models else []
    own = [t for t in takers if not t.startswith("model=")]
    others = [t for t in takers if t.startswith("model=")]
    parts = [f"{' or '.join(own)} takes these"] if own else []
    parts += [f"set {options}"] if options else []
    parts += [f"{' or '.join(others)} takes these"] if others else []
    if parts:
        return ", or ".join(parts)
    return "no visible unit type of rbmlab takes these" if models else f"data holding {units}"


def check_units(
    family: str,
    config_value: str | None,
    values: ValueSet,
    facts: DataFacts,
    where: str | None = None,
    states: int = 2,
    complete=None,
) -> ValueSet:
    """The values data for the visible units of ``family`` hold (its unit key at
    ``config_value``, a categorical type of ``states`` states), after checking that they include
    ``values`` (the dataset's). ``where`` replaces the model key in the message (``checkpoint:
    <path>: its rbm model``, for a saved model)."""
    decl = visible_declaration(family)
    name = decl.prior_name(config_value)
    units = data_values(name, states)
    if units.contains(values):
        return units
    remedy = _remedy(values, units, family, facts.name, models=where is None, complete=complete)
    if name in CATEGORICAL_TYPES:  # the number of states is what a code outside 0 … q − 1 contradicts
        name = f"{name} ({states} states)"
    if facts.path is not None:  # the user's own file: the data are what to look at first
        model = where or (f"model.{decl.key}={config_value}" if decl.key is not None else f"model={family}")
        raise RbmlabError(
            f"dataset.path: {facts.path} holds {values}, but {model} has {name} visible "
            f"units, values {units}" + (f" ({remedy})" if where is None else "")
        )
    held = f"dataset {facts.name} holds {values} ({remedy})"
    if where is not None:
        raise RbmlabError(f"{where} has {name} visible units, values {units}; {held}")
    if decl.key is None:
        raise RbmlabError(f"model: {family} has {name} visible units, values {units}; {held}")
    if name != decl.prior_name(config_value) and _categorical_states(values):  # codes beyond q − 1
        raise RbmlabError(f"model.{decl.states_key}: {states} states take codes {units}; {held}")
    raise RbmlabError(f"model.{decl.key}: {config_value} units take values {units}; {held}")


def check_task_outputs(task, values: ValueSet, units: ValueSet, unit_name: str) -> None:
    """The inputs ``task`` makes from data holding ``values`` must be values of the units."""
    made = task.outputs(values)
    if not units.contains(made):
        raise RbmlabError(
            f"{task.output_key}: {task.makes}, so the inputs of task={task.config.name} "
            f"hold {made}; the {unit_name} visible units take {units}"
        )


# ---------------------------------------------------------------- metrics defined on the splits
def check_splits(facts: DataFacts, splits: Iterable[str], key: str) -> None:
    """Every scored split exists and holds a row (a mean over no rows is NaN, which a run would
    record as diverged): ``key`` is the option that names the splits."""
    for split in splits:
        rows = facts.rows.get(split)
        if rows is None:
            raise RbmlabError(f"{key}: dataset {facts.name} has no {split} split with these options")
        if rows == 0:
            raise RbmlabError(
                f"{key}: the {split} split of dataset {facts.name} holds no rows with "
                "these options, so nothing on it can be scored"
            )


# ---------------------------------------------------------------- the two callers
def check_run(cfg, facts: DataFacts, complete=None) -> None:
    """Everything a run's configuration ``cfg`` (a RunConfig) asks of its data, in one line
    per problem, before any work: the scored splits, the task's own constraints, the data and
    the task's inputs against the model's visible units (``complete``: see _remedy)."""
    splits = list(cfg.evaluator.splits)
    check_splits(facts, ["train"], "dataset")
    check_splits(facts, splits, "evaluator.splits")
    task = TASKS.build(cfg.task or TASKS.parse("none"))
    task.check(facts, splits)
    family = cfg.model.name
    value, states = configured_choice(cfg.model)
    units = check_units(family, value, facts.values, facts, states=states, complete=complete)
    check_task_outputs(task, facts.values, units, visible_declaration(family).prior_name(value))


def check_saved_model(model, facts: DataFacts, task, split: str, path) -> None:
    """What ``rbmlab evaluate`` asks of a saved ``model`` scored on ``split`` of the data with
    ``task``: the split, the task's constraints, the data and the task's inputs against the
    model's visible units (read from its settings)."""
    check_splits(facts, ["train"], "dataset")
    check_splits(facts, [split], "split")
    task.check(facts, [split])
    value, states = saved_choice(model)
    units = check_units(
        model.family,
        value,
        facts.values,
        facts,
        where=f"checkpoint: {path}: its {model.family} model",
        states=states,
    )
    check_task_outputs(task, facts.values, units, visible_declaration(model.family).prior_name(value))


# ---------------------------------------------------------------- the units data are encoded for
def visible_unit_type(family: str, value: str | None, states: int = 2):
    """The discrete unit type of the visible units a family's unit key ``value`` chooses (None for
    a real-valued prior): what rbmlab.data.encoding.encoded encodes data for."""
    name = visible_declaration(family).prior_name(value)
    return unit_type(name, states) if name in DISCRETE_NAMES else None


def configured_choice(model_cfg) -> tuple[str | None, int]:
    """(the value of the family's unit key, states per unit) in a model config (None: a family
    with fixed units; 2 states: a family without a states key)."""
    decl = visible_declaration(model_cfg.name)
    value = getattr(model_cfg, decl.key) if decl.key is not None else None
    return value, getattr(model_cfg, decl.states_key) if decl.states_key is not None else 2


def saved_choice(model) -> tuple[str | None, int]:
    """:func:`configured_choice` of a saved model, read from the settings it holds."""
    decl = visible_declaration(model.family)
    settings, keys = model.settings(), type(model).CONFIG_SETTINGS
    value = None if decl.key is None else str(settings[keys[decl.key]])
    return value, 2 if decl.states_key is None else int(settings[keys[decl.states_key]])


def configured_visible_units(model_cfg):
    """:func:`visible_unit_type` of a run's model config."""
    return visible_unit_type(model_cfg.name, *configured_choice(model_cfg))


def saved_visible_units(model):
    """:func:`visible_unit_type` of a saved model (its settings)."""
    return visible_unit_type(model.family, *saved_choice(model))
