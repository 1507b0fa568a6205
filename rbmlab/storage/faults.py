"""Deterministic fault injection, for the tests of kills, full disks and read-only directories.

``RBMLAB_FAULT`` in the environment holds comma-separated ``<point>:<key>`` entries:

    after_epoch:<epoch>   SIGKILL once the training loop has written epoch <epoch>'s records
    raise_after_epoch:<epoch>  an exception there instead (a job that fails mid-run)
    stall_after_epoch:<epoch>  sleep there for an hour (a process that holds its run directory)
    sleep_after_epoch:<seconds>  sleep that long after every epoch's records (a run longer than
                          a cluster's time limit, whatever the machine's speed; numbers unchanged)
    write:<file name>     SIGKILL while writing <file name> (its temporary file written and
                          synced, the rename not done): a kill in the middle of a file write
    enospc:<file name>    writing <file name> fails with ENOSPC (a full disk)
    erofs:<file name>     writing <file name> fails with EROFS (a read-only file system)

A kill is ``kill -9``: no handlers, no clean-up. Unset, a check costs one dictionary lookup.
"""

from __future__ import annotations

import errno
import os
import signal
import time

ENV = "RBMLAB_FAULT"
ERRORS = {"enospc": errno.ENOSPC, "erofs": errno.EROFS}


def _armed(point: str, key: object) -> bool:
    value = os.environ.get(ENV)
    return bool(value) and f"{point}:{key}" in value.split(",")


def fault_point(point: str, key: object) -> None:
    """SIGKILL this process when ``<point>:<key>`` is armed."""
    if _armed(point, key):
        os.kill(os.getpid(), signal.SIGKILL)


def stall_point(point: str, key: object) -> None:
    """Sleep for an hour when ``<point>:<key>`` is armed (the test kills the process)."""
    if _armed(point, key):
        time.sleep(3600)


def sleep_point(point: str) -> None:
    """Sleep for the seconds of an armed ``<point>:<seconds>``."""
    for entry in (os.environ.get(ENV) or "").split(","):
        name, _, seconds = entry.partition(":")
        if name == point:
            time.sleep(float(seconds))


class InjectedFault(RuntimeError):
    """The exception ``raise_after_epoch`` raises: an unexpected failure in the middle of a run."""


def raise_point(point: str, key: object) -> None:
    """Raise :class:`InjectedFault` when ``<point>:<key>`` is armed."""
    if _armed(point, key):
        raise InjectedFault(f"injected fault {point}:{key}")


def injected_os_error(name: str) -> None:
    """Raise the OSError a full or read-only file system would give for writing ``name``."""
    for point, code in ERRORS.items():
        if _armed(point, name):
            raise OSError(code, os.strerror(code), name)
