"""Learners, by name. Each module holds one learner: its config dataclass and its step."""
from __future__ import annotations

from rbmlab.learners.cd import CD
from rbmlab.learners.pcd import PCD

LEARNERS = {"cd": CD, "pcd": PCD}


def make_learner(config):
    return LEARNERS[config.name](config)
