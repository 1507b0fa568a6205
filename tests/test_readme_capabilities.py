"""The capabilities table of docs/guide/extending.md (once README's) is the code's: which model
family offers which capability of rbmlab/models/base.py (by :func:`rbmlab.models.base.supports`),
and which solvers run on it."""

from __future__ import annotations

from pathlib import Path

from rbmlab.inference.solvers import SOLVERS
from rbmlab.models import MODELS, base

PAGE = Path(__file__).resolve().parent.parent / "docs" / "guide" / "extending.md"
CAPABILITIES = (
    "LogProbability",
    "Enumerable",
    "GradientStatistics",
    "Bipartite",
    "ParityLayers",
    "MeanFieldPositive",
    "FractionalUnits",
    "TapForm",
    "TapStack",
    "Conditional",
    "LatentFeatures",
    "LocalFields",
    "PairwiseCouplings",
    "FactorGraphForm",
)


def capabilities_table() -> str:
    head = "| family | " + " | ".join(CAPABILITIES) + " | solvers |"
    rows = [head, "|" + "---|" * (len(CAPABILITIES) + 2)]
    for name, cls in MODELS.items():
        marks = ["✓" if base.supports(cls, getattr(base, c)) else "" for c in CAPABILITIES]
        solvers = ", ".join(s for s, solver in SOLVERS.items() if solver.supports(cls))
        rows.append(f"| {name} | " + " | ".join(marks) + f" | {solvers} |")
    return "\n".join(rows)


def test_the_guide_capabilities_table_is_current():
    table = capabilities_table()
    assert table in PAGE.read_text(), f"{PAGE.name}'s capabilities table is stale; it should read:\n{table}"
