"""A refusal's suggested fix that runs: where data refused by the model's visible units suggest
another model (``model=grbm model.visible_prior=truncated_gaussian``), the suggestion also names the
learner and the evaluator that take those units when the run's own do not, so that following it
does not lead to a second refusal."""

from __future__ import annotations

from collections.abc import Callable

from rbmlab.config import RunConfig
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.applicable import applicable, cheapest_likelihood
from rbmlab.learners import LEARNERS
from rbmlab.models import MODELS
from rbmlab.run.pretrained import initial_sizes
from rbmlab.units.requirements import check_configured_units
from rbmlab.validation import to_plain


def _value(text: str):
    """An override's value as the parser takes it: integers as integers, other text (``01``) as it is."""
    return int(text) if text.isdigit() and str(int(text)) == text else text


def _model_config(cfg: RunConfig, changes: dict[str, str]):
    """The run's model config with a suggestion's ``model=`` / ``model.<key>=`` changes: the same
    family keeps the run's other model settings, another family starts from its defaults."""
    family = changes.get("model", cfg.model.name)
    node = to_plain(cfg.model) if family == cfg.model.name else {"name": family}
    if (
        family != cfg.model.name
        and hasattr(cfg.model, "n_hidden")
        and hasattr(MODELS.parse(family), "n_hidden")
    ):
        node["n_hidden"] = cfg.model.n_hidden  # the run's size, not the other family's default
    node.update({k.removeprefix("model."): _value(v) for k, v in changes.items() if k != "model"})
    return MODELS.parse(node, "model")


def _takes(component, model_cfg, model_class, sizes=None) -> bool:
    """Whether a learner (``sizes`` None) or an evaluator accepts this model: its family, its
    sizes and the unit types the config chooses (the run's own checks, rbmlab.run.runner.components)."""
    try:
        if sizes is None:
            component.check(model_class)
            check_configured_units(model_cfg, model_class, learner=component)
        else:
            component.check(model_class, sizes)
            check_configured_units(model_cfg, model_class, evaluator=component)
    except RbmlabError:
        return False
    return True


# what an evaluator put in the run's place scores, in order of preference: the data's likelihood,
# its pseudo-likelihood, the reconstruction (the registry's order within each)
SCORES = ("log_likelihood", "pseudo_log_likelihood", "reconstruction_error")


def _scorers(model_class, sizes) -> list[str]:
    """The evaluators that apply, by SCORES (the cheapest log-likelihood first)."""
    found = applicable(model_class, sizes)
    ranked = [
        n
        for s in SCORES
        for n in found
        if EVALUATORS.get(n).metrics[:1] and EVALUATORS.get(n).metrics[0].name == s
    ]
    return list(dict.fromkeys([cheapest_likelihood(model_class, sizes), *ranked]))


def completion(cfg: RunConfig, n_visible: int) -> Callable[[str], str]:
    """``complete(suggestion)``: the suggested overrides followed by ``learner=<name>`` and
    ``evaluator=<name>`` where the run's own refuse the suggested model (the first learner of
    the registry that takes it and trains as the run's does, generative or not; the first
    evaluator of :func:`_scorers`); the suggestion as it is where its model cannot be built."""

    def complete(suggestion: str) -> str:
        try:
            return " ".join([suggestion, *needs(suggestion)])
        except RbmlabError:  # the suggested model cannot be built here (a model.init, say): as it is
            return suggestion

    def needs(suggestion: str) -> list[str]:
        changes = dict(o.split("=", 1) for o in suggestion.split())
        model_cfg = _model_config(cfg, changes)
        model_class = MODELS.get(model_cfg.name)
        sizes = initial_sizes(model_cfg, model_class, n_visible, cfg.dataset)
        extra = []
        own = LEARNERS.build(cfg.learner)
        if not _takes(own, model_cfg, model_class):
            name = next(
                (
                    n
                    for n in LEARNERS.names()
                    if LEARNERS.get(n).generative == own.generative  # the same kind of training
                    and _takes(LEARNERS.build(LEARNERS.parse(n)), model_cfg, model_class)
                ),
                None,
            )
            extra += [f"learner={name}"] if name else []
        if not _takes(EVALUATORS.build(cfg.evaluator), model_cfg, model_class, sizes):
            name = next(
                (
                    n
                    for n in _scorers(model_class, sizes)
                    if _takes(EVALUATORS.build(EVALUATORS.parse(n)), model_cfg, model_class, sizes)
                ),
                None,
            )
            extra += [f"evaluator={name}"] if name else []
        return extra

    return complete
