"""Compute budgets: ``train.budget_unit`` and ``train.budgets``.

A run with budgets is scored at each compute point it reaches (a metrics.csv row with the final
evaluation's settings, in the middle of an epoch if that is where the point falls) and ends at the
last one; ``train.epochs`` only caps it. Compute is counted one of two ways:

- ``seconds``: the training wall clock (evaluations excluded): what a researcher pays on one machine;
- ``gmac``: 10⁹ multiply-adds of the learner's matrix products, as the learner declares them per
  step (``Learner.step_cost``): the same on every machine, so budgets transfer between a laptop, a
  cluster and a GPU.

Points are met after the step that crosses them: a run overshoots each by less than one step.
"""

from __future__ import annotations

from dataclasses import dataclass

GIGA = 1e9


@dataclass
class Budget:
    """The compute points of a run and how many it has reached."""

    unit: str  # seconds | gmac
    points: tuple[float, ...]  # ascending
    reached: int = 0

    @classmethod
    def of(cls, train) -> Budget | None:
        """The budget of a TrainConfig (None: train.budget_unit=none)."""
        if train.budget_unit == "none":
            return None
        return cls(train.budget_unit, tuple(float(b) for b in train.budgets))

    def spent(self, wall: float, work: float) -> float:
        """Compute used, in the budget's unit, after ``wall`` seconds of training and ``work``
        multiply-adds."""
        return wall if self.unit == "seconds" else work / GIGA

    def due(self, spent: float) -> list[int]:
        """The indices of the points that ``spent`` reaches for the first time (marked reached)."""
        first = self.reached
        while self.reached < len(self.points) and spent >= self.points[self.reached]:
            self.reached += 1
        return list(range(first, self.reached))

    def restore(self, spent: float) -> None:
        """Mark reached the points at or below ``spent`` (a resumed run's checkpoint)."""
        self.reached = 0
        self.due(spent)

    @property
    def exhausted(self) -> bool:
        return self.reached == len(self.points)
