"""Which evaluators apply to a model family: asked of each evaluator's own pre-flight check, so
that a refusal can name the evaluators that would run instead (``rbmlab evaluate`` on a DBM with
``evaluator=exact``: tap_dbm)."""

from __future__ import annotations

from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS


def _accepts(name: str, model_class: type, sizes: dict[str, int]) -> bool:
    """Does evaluator ``name`` in its default configuration accept this family at these sizes?"""
    try:
        EVALUATORS.build(EVALUATORS.parse({"name": name})).check(model_class, sizes)
    except RbmlabError:
        return False
    return True


def cheapest_likelihood(model_class: type, sizes: dict[str, int]) -> str:
    """The log-likelihood evaluator used where none is chosen (the Python estimators' score, a
    run on one's own data): ``exact`` where it applies (the smaller layer enumerates within
    rbmlab.limits.ENUMERATION_UNITS), else ``ais``."""
    return "exact" if _accepts("exact", model_class, sizes) else "ais"


def applicable(model_class: type, sizes: dict[str, int]) -> list[str]:
    """The evaluators whose default configuration accepts a ``model_class`` model of ``sizes``
    (those that also need a particular dataset, e.g. kl's ground truth, included)."""
    return [name for name in EVALUATORS.names() if _accepts(name, model_class, sizes)]


def check_applies(evaluator, model_class: type, sizes: dict[str, int]) -> None:
    """``evaluator.check``; where it refuses and would refuse in its default configuration too
    (the evaluator does not apply to the family or these sizes, whatever its options), the one
    line also names the evaluators that apply."""
    try:
        evaluator.check(model_class, sizes)
    except RbmlabError as e:
        if _accepts(evaluator.config.name, model_class, sizes):
            raise  # an option of this evaluator is the problem
        others = applicable(model_class, sizes)
        shape = ", ".join(f"{k}={v}" for k, v in sizes.items())
        raise RbmlabError(
            f"{e}; evaluators that apply to model {model_class.family} with {shape}: "
            f"{', '.join(others) or 'none'}"
        ) from None
