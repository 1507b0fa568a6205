"""Unit types. ``UNIT_TYPES``: the discrete ones (sampled, enumerated; RBM and Ising layers).
``PRIORS``: every unit type with the TAP maths of rbmlab.units.prior — the discrete ones and
the real-valued truncated priors of the tap paper. Entries are imported lazily like the
registries, so a prior's special functions load only when it is used."""
from __future__ import annotations

import importlib

from rbmlab.units.discrete import UNIT_TYPES, Bernoulli, Spin, UnitType
from rbmlab.units.prior import Prior
from rbmlab.units.values import ValueSet

_REAL_PRIORS = {
    "truncated_gaussian": "rbmlab.units.truncated_gaussian:TruncatedGaussian",
    "gauss_bernoulli": "rbmlab.units.gauss_bernoulli:TruncatedGaussBernoulli",
}
PRIOR_NAMES = (*UNIT_TYPES, *_REAL_PRIORS)

__all__ = ["UNIT_TYPES", "PRIOR_NAMES", "Bernoulli", "Spin", "UnitType", "Prior", "ValueSet",
           "unit_type", "prior"]


def unit_type(name: str):
    return UNIT_TYPES[name]


def prior(name: str) -> type[Prior]:
    """The prior (unit type with TAP maths) called ``name``."""
    if name in UNIT_TYPES:
        return UNIT_TYPES[name]
    module, attribute = _REAL_PRIORS[name].split(":")
    return getattr(importlib.import_module(module), attribute)
