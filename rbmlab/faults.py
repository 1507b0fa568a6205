"""Deterministic fault injection, for the tests of kills and resume.

``RBMLAB_FAULT=<point>:<epoch>`` in the environment makes the process kill itself with SIGKILL
(no handlers, no clean-up: as ``kill -9`` would) when the training loop reaches ``point`` at
``epoch``. Points: ``after_epoch`` (once the epoch's evaluation and any checkpoint are written).
Unset, the check costs one dictionary lookup per epoch.
"""
from __future__ import annotations

import os
import signal

ENV = "RBMLAB_FAULT"


def fault_point(point: str, epoch: int) -> None:
    if os.environ.get(ENV) == f"{point}:{epoch}":
        os.kill(os.getpid(), signal.SIGKILL)
