"""A second termination signal while a run records the first (rbmlab.run.signals): a launcher's
worker gets one from the process group and one from its launcher (forward), and must record; the
command's process records through a copy that comes at once (coreutils timeout signals the command
and then its process group) and ends at once on a later one."""

import signal
import subprocess
import sys

# SIGTERM; a second one, after argv[2] seconds, while the first is recorded; what was recorded,
# and the handler after
RECORDING = """
import os, signal, sys, time
from rbmlab.run import signals
if sys.argv[1] == "cli":
    signals.mark_cli_process()
with signals.interruptible():   # as rbmlab.run.runner.train records within the block
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(10)
    except signals.RunInterrupted as stop:
        time.sleep(float(sys.argv[2]))
        os.kill(os.getpid(), signal.SIGTERM)   # the launcher's copy, or a second stop, during the recording
        time.sleep(0.05)
        print("recorded", stop.name, end=" ")
print(signal.getsignal(signal.SIGTERM) is signal.SIG_DFL)
"""


def run(role: str, delay: float = 0.0) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", RECORDING, role, str(delay)], capture_output=True, text=True, timeout=30
    )


def test_a_worker_records_through_its_launchers_second_signal():
    done = run("worker")
    assert (done.returncode, done.stdout, done.stderr) == (0, "recorded SIGTERM True\n", "")


def test_the_commands_process_records_through_a_copy_of_the_signal():
    done = run("cli")
    assert (done.returncode, done.stdout, done.stderr) == (0, "recorded SIGTERM True\n", "")


def test_the_commands_process_ends_at_once_on_a_later_second_signal():
    from rbmlab.run.signals import DUPLICATE_S

    done = run("cli", delay=DUPLICATE_S + 0.3)
    assert (done.returncode, done.stdout) == (-signal.SIGTERM, "")
