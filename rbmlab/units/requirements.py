"""What a component needs of a model's unit types, checked from the configuration before any work.

Some methods are written for particular units: AIS's base-rate path and pseudo-likelihood by
flips for Bernoulli {0, 1} units, block Gibbs for binary ones (the GRBM's real-valued priors have
no block sampler), Frank-Wolfe's softplus oracle (frank_wolfe Eq. 5) for Bernoulli units. A
component declares that as ``units = {setting: allowed unit types}`` (setting: a model setting such
as ``visible`` or ``hidden``, as ``Model.settings`` names them). :func:`check_unit_types` compares
it with the settings a configuration fixes (the family's CONFIG_SETTINGS) or a saved model holds,
so the refusal comes in one line before a run directory exists, not at the first evaluation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from rbmlab.errors import RbmlabError

BINARY = ("bernoulli", "spin")  # the binary unit types (rbmlab.units.UNIT_TYPES)
CATEGORICAL = ("potts",)  # q states per unit, one-hot columns (rbmlab.units.potts)
DISCRETE = (*BINARY, *CATEGORICAL)
BERNOULLI = ("bernoulli",)
ANY_UNITS = (*DISCRETE, "truncated_gaussian", "gauss_bernoulli")  # every unit type and prior (rbmlab.units)
PRIORS = tuple(
    u for u in ANY_UNITS if u not in CATEGORICAL
)  # the priors with TAP's maths (rbmlab.units.prior)
NAMES = {"bernoulli": "Bernoulli {0,1}", "spin": "spin {-1,+1}", "potts": "Potts (categorical)"}


def check_configured_units(model_cfg, model_class, learner=None, evaluator=None) -> None:
    """The unit types a model configuration chooses (its family's CONFIG_SETTINGS) against those
    the learner with its sampler and the evaluator (each if given) are written for; the refusal
    names the ``model.<key>`` that chose them."""
    keys = {setting: f"model.{key}" for key, setting in model_class.CONFIG_SETTINGS.items()}
    settings = {setting: str(getattr(model_cfg, key)) for key, setting in model_class.CONFIG_SETTINGS.items()}
    if learner is not None:
        check_unit_types(
            settings, learner.unit_needs(model_class), f"learner={learner.config.name}", keys.get
        )
    samplers = [(learner.sampler_for(model_class), "learner.sampler")] if learner and learner.samples else []
    layers = getattr(model_cfg, "n_hidden", None)
    together = written_per_layer(settings, model_class, len(layers) if isinstance(layers, list) else None)
    if evaluator is not None:
        check_unit_types(settings, evaluator.units, f"evaluator={evaluator.config.name}", keys.get)
        samplers += [(s, "evaluator.sampler") for s in evaluator.samplers(model_class)]
        problem = evaluator.settings_problem(together, model_class)  # AIS on a DBM
        if problem:
            raise RbmlabError(f"{keys.get('hidden', 'model')}: {problem} (evaluator={evaluator.config.name})")
    for sampler, key in samplers:  # what a method asks of the settings together (PT on a DBM)
        problem = sampler.settings_problem(together, model_class)
        if problem:
            raise RbmlabError(f"{keys.get('hidden', key)}: {problem} ({key}={sampler.config.name})")


def written_per_layer(settings: Mapping[str, str], model_class: type, layers: int | None) -> dict[str, str]:
    """``settings`` with each per-layer setting (Setting.per_layer: a DBM's ``hidden``) that names
    one type for all its ``layers`` layers written out once per layer ("spin" → "spin,spin"), so
    that a check of the layers together (one unit type per parity) sees each; ``layers`` None:
    as given."""
    declared = getattr(model_class, "DECLARATION", None)
    per_layer = {s for s, d in declared.settings.items() if d.per_layer} if declared else set()
    return {
        s: ",".join([v] * layers) if s in per_layer and layers and "," not in v else v
        for s, v in settings.items()
    }


def undeclared_is_binary(units: Mapping[str, tuple[str, ...]], settings) -> dict[str, tuple[str, ...]]:
    """``units`` (a sampler's or evaluator's declaration) with each of ``settings`` it does not
    name allowed every unit type but the categorical ones: categorical units are opt-in (a
    component that does not name them is written for binary units, as everything was before
    them). Learners declare every layer (rbmlab.learners.base.Learner.units)."""
    return {**{s: PRIORS for s in settings if s not in units}, **units}


def check_unit_types(
    settings: Mapping[str, str], needs: Mapping[str, tuple[str, ...]], who: str, key_of: Callable[[str], str]
) -> None:
    """One line naming the key (``key_of(setting)``) when a setting ``needs`` constrains holds a
    unit type it does not allow (a setting of one type per layer, "spin,bernoulli": any of them);
    settings the model does not have are not constrained.
    Categorical units are opt-in: a component that does not name them (a constraint listing
    ``potts``) is taken to be written for binary units, as everything was before them."""
    layers = {s: str(v).split(",") for s, v in settings.items()}  # one type per layer, or one for all
    needs = {
        **{s: BINARY for s, v in layers.items() if set(v) & set(CATEGORICAL) and s not in needs},
        **needs,
    }
    for setting, allowed in needs.items():
        value = settings.get(setting)
        if value is not None and not set(layers[setting]) <= set(allowed):
            kinds = " or ".join(NAMES.get(a, a) for a in allowed)
            raise RbmlabError(
                f"{key_of(setting)}: {value} {setting} units; {who} is written for {kinds} {setting} units"
            )
