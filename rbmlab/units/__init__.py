"""Unit types. ``UNIT_TYPES``: the binary ones (sampled, enumerated; RBM and Ising layers);
``CATEGORICAL_TYPES``: q states per unit, one-hot inside a layer (an RBM's layers; rbmlab.units.potts).
``PRIORS``: every unit type with the TAP maths of rbmlab.units.prior — the discrete ones and
the real-valued truncated priors of the tap paper. Entries are imported lazily like the
registries, so a prior's special functions load only when it is used."""

from __future__ import annotations

import importlib

from rbmlab.units.discrete import UNIT_TYPES, Bernoulli, Spin, UnitType
from rbmlab.units.potts import Potts
from rbmlab.units.prior import Prior
from rbmlab.units.values import ValueSet

_REAL_PRIORS = {
    "truncated_gaussian": "rbmlab.units.truncated_gaussian:TruncatedGaussian",
    "gauss_bernoulli": "rbmlab.units.gauss_bernoulli:TruncatedGaussBernoulli",
}
PRIOR_NAMES = (*UNIT_TYPES, *_REAL_PRIORS)
CATEGORICAL_TYPES = {Potts.name: Potts}
DISCRETE_NAMES = (*UNIT_TYPES, *CATEGORICAL_TYPES)  # what an RBM's layers may be

__all__ = [
    "UNIT_TYPES",
    "CATEGORICAL_TYPES",
    "DISCRETE_NAMES",
    "PRIOR_NAMES",
    "Bernoulli",
    "Spin",
    "Potts",
    "UnitType",
    "Prior",
    "ValueSet",
    "unit_type",
    "prior",
]


def unit_type(name: str, states: int = 2):
    """The unit type called ``name``; a categorical one with ``states`` states per unit."""
    if name in CATEGORICAL_TYPES:
        return CATEGORICAL_TYPES[name].with_states(int(states))
    return UNIT_TYPES[name]


def prior(name: str) -> type[Prior]:
    """The prior (unit type with TAP maths) called ``name``."""
    if name in UNIT_TYPES:
        return UNIT_TYPES[name]
    module, attribute = _REAL_PRIORS[name].split(":")
    return getattr(importlib.import_module(module), attribute)
