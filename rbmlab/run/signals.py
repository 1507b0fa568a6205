"""Termination signals as an exception a run can record: SIGTERM, SIGINT, SIGHUP and SIGUSR2.

A run stopped from outside (``kill``, Ctrl-C, ``timeout``, a closed terminal, SLURM at its time
limit, submitit's timeout and preemption signal USR2) must not leave ``"status": "running"``
behind. Inside :func:`interruptible`, the first of these signals raises :class:`RunInterrupted`
in the main thread; the runner records the run as interrupted (its last checkpoint kept) and
lets the exception end the process with status 128 + the signal's number, as the shell expects.
In the command's process a second signal during that short recording ends the process at once
(the checkpoint still holds), unless it comes within DUPLICATE_S of the first: that is the same
stop delivered twice (coreutils ``timeout`` signals the command and then its whole process group,
the command included), and the recording goes on. A launcher's worker ignores further ones until
it has recorded: its launcher passes the first on to it (:func:`forward`), a second copy when the
signal went to the process group.

``kill -9`` cannot be caught: the run's lock, which the kernel drops with its holder, tells
whether a run that says it is running really is (rbmlab.run.records.observed_status).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator

CAUGHT = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGUSR2)
DUPLICATE_S = 1.0  # a second signal this soon after the first is its copy (see the docstring)


class RunInterrupted(KeyboardInterrupt):
    """A termination signal arrived. A KeyboardInterrupt (a BaseException): ``except Exception``
    handlers (a sweep that goes on past a failed job) do not swallow it, and code that cleans up
    after Ctrl-C (joblib, a notebook) does the same for SIGTERM."""

    def __init__(self, signum: int):
        self.signum = int(signum)
        super().__init__(f"interrupted by {self.name}")

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        return 128 + self.signum


_CLI_PID: int | None = None  # the process that runs rbmlab's command line (mark_cli_process)


def mark_cli_process() -> None:
    """Called by the ``rbmlab`` command: this process reports an interruption in one line."""
    global _CLI_PID
    _CLI_PID = os.getpid()


def is_cli_process() -> bool:
    """False in a launcher's worker (joblib, submitit): a process of its own, started by
    another interpreter or forked from the command's."""
    return _CLI_PID == os.getpid()


_TAKEN_OVER = False  # a launcher's job function handles the interruption (taken_over_by_launcher)


@contextlib.contextmanager
def taken_over_by_launcher() -> Iterator[None]:
    """Within the block the launcher that runs the job, not the job, decides how this worker
    ends once its run has recorded an interruption (rbmlab.run.cluster: requeue it)."""
    global _TAKEN_OVER
    saved, _TAKEN_OVER = _TAKEN_OVER, True
    try:
        yield
    finally:
        _TAKEN_OVER = saved


def ends_when_interrupted() -> bool:
    """Does a sweep's job end its process itself after recording an interruption? A launcher's
    worker does (the command's one line comes from the launching process) unless its launcher
    took the interruption over."""
    return not is_cli_process() and not _TAKEN_OVER


def end_as_signalled(stop: RunInterrupted) -> None:
    """End this process as the signal's default action would have (its parent, a launcher or a
    shell, sees "killed by SIGTERM"), after the run has recorded it. A launcher's worker must
    not survive its interruption: joblib's would idle on, holding its parent's pipes."""
    signal.signal(stop.signum, signal.SIG_DFL)
    os.kill(os.getpid(), stop.signum)
    os._exit(stop.exit_status)  # a signal whose default is not to terminate: end anyway


def interruption_of(exc: BaseException) -> RunInterrupted | None:
    """``exc`` as a RunInterrupted (a KeyboardInterrupt raised by Python's own SIGINT handler
    counts as SIGINT), None for any other exception."""
    if isinstance(exc, RunInterrupted):
        return exc
    if isinstance(exc, KeyboardInterrupt):
        return RunInterrupted(signal.SIGINT)
    return None


def _after_the_first(first_at: float):
    """The command's handler once a signal has arrived: a copy within DUPLICATE_S is dropped,
    a later signal ends the process at once with its default action."""

    def handler(signum: int, _frame) -> None:
        if time.monotonic() - first_at >= DUPLICATE_S:
            end_as_signalled(RunInterrupted(signum))

    return handler


def _raiser(first: Callable[[RunInterrupted], None] | None):
    def handler(signum: int, _frame) -> None:
        # see the module's docstring
        then = _after_the_first(time.monotonic()) if is_cli_process() else signal.SIG_IGN
        for sig in CAUGHT:  # a second signal while the run records the first
            signal.signal(sig, then)
        stop = RunInterrupted(signum)
        if first is not None:
            first(stop)
        raise stop

    return handler


@contextlib.contextmanager
def interruptible(first: Callable[[RunInterrupted], None] | None = None) -> Iterator[None]:
    """Turn the termination signals into :class:`RunInterrupted` for the block, then restore
    the handlers there were; ``first(stop)`` runs in the handler before the exception is raised
    (a launcher passes the signal on to its workers there, before its pool can kill them).
    Outside the main thread (where Python runs no signal handlers) it does nothing: the
    signal's default action and the run's lock tell the story there."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    # a signal the user chose to ignore stays ignored (nohup: SIGHUP; a script's background job: SIGINT)
    caught = [sig for sig in CAUGHT if signal.getsignal(sig) is not signal.SIG_IGN]
    previous = {sig: signal.signal(sig, _raiser(first)) for sig in caught}
    try:
        yield
    finally:
        for sig, handler in previous.items():  # None: a handler installed outside Python
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)


def children(pid: int | None = None) -> list[int]:
    """The live child processes of ``pid`` (default: this one), from /proc (Linux; elsewhere
    none): a launcher's workers (multiprocessing's resource tracker is not one: it cleans up
    after the others, on its own)."""
    pid = os.getpid() if pid is None else pid
    found = []
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != b"Z" and not _is_resource_tracker(entry):
                found.append(int(entry))
    return found


def _is_resource_tracker(pid: str) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"resource_tracker" in f.read()
    except OSError:
        return False


def forward(stop: RunInterrupted, wait: float = 30.0) -> None:
    """Send SIGTERM to this process's children (a launcher's workers, each then recording its
    run as interrupted) and wait for them to end, at most ``wait`` seconds: a launcher that is
    stopped does not leave its workers training on as orphans. One still there after that (its
    recording stuck) is killed by the launcher's pool as it stops (joblib's: SIGKILL)."""
    import time  # noqa: PLC0415

    pids = children()
    for pid in pids:  # SIGTERM: a worker may ignore SIGINT (loky's do), none ignores this
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + wait
    while pids and time.monotonic() < deadline:
        time.sleep(0.1)
        pids = [p for p in pids if p in children()]
