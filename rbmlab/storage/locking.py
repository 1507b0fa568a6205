"""One owner per run directory and per sweep: exclusive locks held for a process's lifetime.

A lock is an ``flock`` on a lock file (``<run dir>/.rbmlab.lock``; for a sweep, the sibling
``.<sweep name>.lock``, so that moving the sweep aside happens under it). The kernel drops the
lock when its holder exits in any way (kill -9 included), so a lock left by a dead process is never
stale: there is no PID file to trust, only the open file description. The lock file also holds
who took it (pid, host, command, time) for the message a second process gets. Locks are re-entrant
within a process: a sweep's own jobs, run in the launching process, take their run directory's
lock again for free.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from rbmlab.errors import RbmlabError
from rbmlab.storage.faults import injected_os_error

LOCK_NAME = ".rbmlab.lock"
POLL_SECONDS = 0.2
PROBE_GRACE_SECONDS = 1.0  # is_held's probe holds a shared lock for microseconds: not a holder


@dataclass
class _Held:
    fd: int
    count: int


_HELD: dict[str, _Held] = {}


def _holder(fd: int) -> str:
    """Who holds the lock, from the lock file's JSON (written by the holder)."""
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode() or "{}")
        return (
            f"process {info['pid']} on {info['host']} ({info['command']}, since "
            f"{time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(info['since']))})"
        )
    except (OSError, ValueError, KeyError, TypeError):
        return "another process"


def _open(lock: Path, key: str) -> int:
    """A descriptor to flock: the lock file (created), or a directory itself (nothing created)."""
    try:
        if lock.is_dir():
            return os.open(lock, os.O_RDONLY | os.O_DIRECTORY)
        lock.parent.mkdir(parents=True, exist_ok=True)
        injected_os_error(lock.name)
        return os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise RbmlabError(
            f"{key}: cannot write in {lock.parent} ({e.strerror or type(e).__name__})"
        ) from None


def _held_by_writer(fd: int) -> bool:
    """Whether an exclusive holder has the lock of ``fd`` (not only :func:`is_held`'s probes,
    whose shared locks last microseconds)."""
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    fcntl.flock(fd, fcntl.LOCK_UN)
    return False


def is_held(run_dir: Path) -> bool:
    """Whether a live process holds ``run_dir``'s lock (this one included), probed with a shared
    lock for as long as the probe and without creating anything. When in doubt, held: a lock file
    that cannot be opened, a file system without flock, or a lock last taken on another host
    (where flock may be local to each machine, its holder cannot be seen from here)."""
    name = os.path.abspath(Path(run_dir) / LOCK_NAME)
    if name in _HELD:
        return True
    try:
        fd = os.open(name, os.O_RDONLY)
    except FileNotFoundError:  # no lock file: no process ever ran there, or it was moved
        return False
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:  # BlockingIOError: held; others: a file system without flock
        os.close(fd)
        return True
    try:
        host = json.loads(os.pread(fd, 4096, 0).decode() or "{}").get("host")
    except (OSError, ValueError, AttributeError):
        host = None
    finally:
        os.close(fd)  # drops the probe's shared lock with the descriptor
    return host is not None and host != socket.gethostname()


class DirectoryLock:
    """``with DirectoryLock.for_run(run_dir, key, wait):`` -- exclusive ownership, or one line.

    ``key`` names the setting the user would change (e.g. ``hydra.run.dir``); ``wait`` is how
    many seconds to wait for a holder to finish (0: fail at once, naming the holder).
    """

    def __init__(self, lock: Path, owned: Path, key: str, wait: float = 0.0):
        self.lock, self.owned, self.key, self.wait = Path(lock), Path(owned), key, wait
        self.name = os.path.abspath(lock)  # the re-entrancy key

    @classmethod
    def for_run(cls, run_dir: Path, key: str = "hydra.run.dir", wait: float = 0.0) -> DirectoryLock:
        """The lock of a run directory: ``<run_dir>/.rbmlab.lock``."""
        return cls(Path(run_dir) / LOCK_NAME, run_dir, key, wait)

    @classmethod
    def for_sweep(cls, sweep_dir: Path, key: str = "hydra.sweep.dir", wait: float = 0.0) -> DirectoryLock:
        """The lock of a sweep: the sibling ``.<name>.lock`` (it outlives moving the sweep
        aside), found through symbolic links so that two names of one sweep share it."""
        real = Path(sweep_dir).resolve()
        return cls(real.parent / f".{real.name}.lock", sweep_dir, key, wait)

    @classmethod
    def for_directory(cls, directory: Path, key: str, wait: float = 0.0) -> DirectoryLock:
        """The lock of a directory's own inode: nothing is created in it (a folder of committed
        outputs stays as it is), and the holder cannot be named in the message."""
        return cls(Path(directory), Path(directory), key, wait)

    def acquire(self) -> DirectoryLock:
        held = _HELD.get(self.name)
        if held is not None:
            held.count += 1
            return self
        fd = _open(self.lock, self.key)
        deadline = time.monotonic() + max(self.wait, PROBE_GRACE_SECONDS)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline or (not self.wait and _held_by_writer(fd)):
                    holder = _holder(fd)
                    os.close(fd)
                    hint = f"waited {self.wait:g} s; " if self.wait else ""
                    raise RbmlabError(
                        f"{self.key}: {self.owned} is in use by {holder}; {hint}"
                        "wait for it to finish (lock_wait=SECONDS waits) or choose "
                        "another directory"
                    ) from None
                time.sleep(POLL_SECONDS)
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "since": time.time(),
            "command": " ".join(["rbmlab", *sys.argv[1:]])[:300],
        }
        try:  # who holds it, for the message a second process gets; the lock holds without it
            os.ftruncate(fd, 0)
            os.pwrite(fd, json.dumps(info).encode(), 0)
        except OSError:
            pass
        _HELD[self.name] = _Held(fd, 1)
        return self

    def release(self) -> None:
        held = _HELD.get(self.name)
        if held is None:
            return
        held.count -= 1
        if held.count == 0:
            del _HELD[self.name]
            os.close(held.fd)  # closing the descriptor drops the flock

    def __enter__(self) -> DirectoryLock:
        return self.acquire()

    def __exit__(self, *exc) -> None:
        self.release()
