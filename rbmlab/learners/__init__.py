"""Learners, by name. Each module holds one learner: its config dataclass and its step."""
from __future__ import annotations

from rbmlab.learners.cd import CD
from rbmlab.learners.cg import CG
from rbmlab.learners.csdcp import CSDCP
from rbmlab.learners.pcd import PCD
from rbmlab.learners.sdcp import SDCP
from rbmlab.learners.ssd import SSD

LEARNERS = {"cd": CD, "pcd": PCD, "sdcp": SDCP, "csdcp": CSDCP, "cg": CG, "ssd": SSD}


def make_learner(config):
    return LEARNERS[config.name](config)
