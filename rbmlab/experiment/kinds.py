"""The experiment kinds, by name: each is a module of rbmlab.experiment with a class that has
``name``, ``section`` (the key of an experiment file that selects it; None for the default kind),
``keys`` (the further top-level keys it reads), ``arguments`` (the classes of command-line
argument it takes, of rbmlab.experiment.arguments.CLASSES: any other is refused before it runs)
and ``run(name, spec, argv, results_root, outputs_root)``. Adding a kind is its module and one
line here."""

from __future__ import annotations

from typing import Any

from rbmlab.errors import RbmlabError
from rbmlab.registry import Registry

KINDS = Registry(
    "experiment kind",
    {
        "sweep": "rbmlab.experiment.sweep:Sweep",
        "timing": "rbmlab.experiment.timing:Timing",
        "gallery": "rbmlab.experiment.gallery:Gallery",
        "inference": "rbmlab.experiment.inference:Inference",
        "figure": "rbmlab.experiment.figure:Figure",
        "leaderboard": "rbmlab.experiment.leaderboard:Leaderboard",
    },
)


def kind_of(spec: dict[str, Any], where: Any = "experiment"):
    """The kind of an experiment file: the one whose section it has (``bench``, ``gallery``, ...),
    else the default kind (the one without a section, a sweep); two sections are one line."""
    kinds = [cls for _, cls in KINDS.items()]
    found = [cls for cls in kinds if cls.section is not None and cls.section in spec]
    if len(found) > 1:
        raise RbmlabError(
            f"experiment: {where}: one kind per file; it has {' and '.join(cls.section for cls in found)}"
        )
    return found[0] if found else next(cls for cls in kinds if cls.section is None)
