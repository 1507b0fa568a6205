"""``hydra/launcher=slurm`` and ``slurm_gpu``: a sweep as one SLURM array job (through submitit)
whose jobs outlive the cluster's time limits and preemptions.

submitit's protocol: SLURM sends USR2 ``signal_delay_s`` before a job's time limit (and a
preempting scheduler may send it too); submitit's handler asks the launched callable for its
``checkpoint()``, a resubmission that it stores, and requeues the job (``scontrol requeue``). A
run inside the job catches that signal first (rbmlab.run.signals): it records itself as
interrupted at its last checkpoint (checkpoint.npz, every ``train.checkpoint_every`` epochs). The launcher
below then hands the signal on to submitit, with a resubmission of the same job plus
``resume=true``, so the restarted job continues from that checkpoint and ends identical to an
uninterrupted run. A job that SLURM requeues by itself (a preemption in ``REQUEUE`` mode, a
node failure) restarts from its original submission; ``SLURM_RESTART_COUNT`` tells it to resume.

The launchers take one setting of their own, ``backend``: set on every job unless the job sets
``backend=`` itself (``slurm_gpu``: cupy, checked on the GPU node, not where the sweep is
launched). The rest are submitit's (partition, account, qos, gpus_per_node, mem_gb, timeout_min,
max_num_timeout: how many time limits a job may reach and be requeued, ...).
"""

from __future__ import annotations

import functools
import importlib.util
import os
import shutil
import signal
from typing import Any

from rbmlab.errors import RbmlabError
from rbmlab.resources import conf_dir
from rbmlab.run import signals

LAUNCHERS = ("slurm", "slurm_gpu")  # conf/hydra/launcher/*.yaml built on the schema below
EXTRA = "hydra_plugins.hydra_submitit_launcher"  # the [slurm] extra's Hydra plugin


def installed() -> bool:
    """Is the [slurm] extra (submitit's Hydra launcher) installed?"""
    return importlib.util.find_spec(EXTRA) is not None


def restarted() -> bool:
    """Is this job a restart of one SLURM requeued (``SLURM_RESTART_COUNT`` ≥ 1)?"""
    count = os.environ.get("SLURM_RESTART_COUNT", "0")
    return count.isdigit() and int(count) > 0


def _sets(overrides: list[str], key: str) -> bool:
    return any(o.lstrip("+~").split("=", 1)[0] == key for o in overrides)


def resumed(overrides: list[str]) -> list[str]:
    """The job's overrides with ``resume=true`` in place of any ``resume=``/``overwrite=``: a
    restarted job continues its run directory (the sweep's owner already checked it)."""
    return [o for o in overrides if not _sets([o], "resume") and not _sets([o], "overwrite")] + [
        "resume=true"
    ]


def job_overrides(overrides: list[str], backend: str | None, restart: bool) -> list[str]:
    """What a job runs with: the launcher's ``backend`` unless the job chose one; ``resume=true``
    when SLURM restarted it."""
    out = list(overrides)
    if backend and not _sets(out, "backend"):
        out.append(f"backend={backend}")
    return resumed(out) if restart else out


def preemption_signal() -> int:
    """The signal submitit's handler checkpoints and requeues on (USR2 unless
    ``SUBMITIT_PREEMPT_SIGNAL`` says otherwise)."""
    import submitit  # noqa: PLC0415

    return getattr(signal, "SIG" + submitit.JobEnvironment.USR_SIG)


class Requeueing:
    """A submitit launcher whose jobs resume after a requeue, mixed into submitit's own in
    hydra_plugins.rbmlab_launcher (where Hydra accepts launcher classes)."""

    def __init__(self, backend: str | None = None, **params: Any) -> None:
        super().__init__(**params)
        self.backend = backend

    def __call__(self, sweep_overrides: list[str], *rest: Any):
        overrides = job_overrides(sweep_overrides, self.backend, restarted())
        try:
            with signals.taken_over_by_launcher():
                return super().__call__(overrides, *rest)
        except BaseException as e:  # the run recorded its interruption and restored submitit's handler
            stop = signals.interruption_of(e)
            if stop is None:
                raise
            handler = signal.getsignal(stop.signum)
            if stop.signum == preemption_signal() and callable(handler):
                handler(stop.signum, None)  # submitit: checkpoint() below, requeue, exit
            signals.end_as_signalled(stop)

    def checkpoint(self, sweep_overrides: list[str], *rest: Any):
        """The resubmission submitit stores before it requeues: the same job, resumed."""
        import submitit  # noqa: PLC0415

        return submitit.helpers.DelayedSubmission(self, resumed(sweep_overrides), *rest)


def _launchers_chosen(overrides: list[str]) -> list[str]:
    """The values of the ``hydra/launcher=`` overrides (``+``/``~`` forms too), in order."""
    return [o.partition("=")[2] for o in overrides if o.partition("=")[0].lstrip("+~") == "hydra/launcher"]


def check_installed(overrides: list[str]) -> None:
    """A launcher of this module chosen without the [slurm] extra: one line saying what to install."""
    for value in _launchers_chosen(overrides):
        if value in LAUNCHERS and not installed():
            raise RbmlabError(
                f"hydra/launcher={value}: needs hydra-submitit-launcher; pip install 'rbmlab[slurm]'"
            )


# submitit's integer options and their least values (None: the cluster's default)
AT_LEAST = {
    "timeout_min": 1,
    "cpus_per_task": 1,
    "gpus_per_node": 0,
    "tasks_per_node": 1,
    "nodes": 1,
    "mem_gb": 1,
    "cpus_per_gpu": 1,
    "gpus_per_task": 0,
    "signal_delay_s": 0,
    "max_num_timeout": 0,
    "array_parallelism": 1,
}
SLURM_COMMANDS = ("sbatch", "srun")  # submitit submits with sbatch and starts each job with srun


def check_launcher(launcher) -> None:
    """What a launcher of this module needs, checked where the sweep is launched, before any
    directory is made: its integer options in range, ``backend`` an option of conf/backend/ (cupy
    itself is checked on the node, not by every job after its wait in the queue; joblib's
    launcher has a ``backend`` of its own: loky, threading, ...). SLURM's commands are checked at
    launch (:func:`check_can_submit`)."""
    target = "" if launcher is None else str(launcher.get("_target_", ""))
    if not target.startswith("hydra_plugins.rbmlab_launcher."):
        return
    for key, least in AT_LEAST.items():
        value = launcher.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < least):
            raise RbmlabError(f"hydra.launcher.{key}: must be an integer >= {least}, got {value!r}")
    backend = launcher.get("backend")
    options = sorted(p.stem for p in (conf_dir() / "backend").glob("*.yaml"))
    if backend is not None and backend not in options:
        raise RbmlabError(
            f"hydra.launcher.backend: no such option {backend!r}; available: {', '.join(options)}"
        )


def check_can_submit(overrides: list[str]) -> None:
    """SLURM's commands on PATH when ``overrides`` choose a launcher that submits to SLURM:
    checked where a sweep is launched, before any directory is made (not where a configuration
    is only composed or shown, which a laptop may do)."""
    chosen = _launchers_chosen(overrides)
    missing = [c for c in SLURM_COMMANDS if chosen and chosen[-1] in LAUNCHERS and shutil.which(c) is None]
    if missing:
        raise RbmlabError(
            f"hydra/launcher: SLURM's {' and '.join(missing)} not found on PATH: this machine cannot "
            "submit to a cluster (run on its login node, or drop hydra/launcher for local jobs)"
        )


def register_launchers() -> None:
    """Tell Hydra about the launcher classes of hydra_plugins.rbmlab_launcher. Its plugin scan
    finds them in an installed wheel but not in an editable install (whose import hook it cannot
    list); registering again is harmless. Without the [slurm] extra only PackedLauncher."""
    from hydra.core.plugins import Plugins  # noqa: PLC0415

    from hydra_plugins import rbmlab_launcher  # noqa: PLC0415

    for name in rbmlab_launcher.__all__:
        Plugins.instance().register(getattr(rbmlab_launcher, name))


@functools.cache
def store_schema() -> None:
    """Store with Hydra the schema conf/hydra/launcher/slurm.yaml fills in (typed: a misspelt
    option is refused), before a composition that may choose it. Not at import: Hydra's config
    store and submitit's configs would cost every rbmlab command's start-up about 0.15 s. A
    launcher's worker receives Hydra's stores with the launching process's state."""
    if not installed():
        return
    from hydra.core.config_store import ConfigStore  # noqa: PLC0415

    from rbmlab.run.cluster_schema import SlurmConf  # noqa: PLC0415 - imports submitit's configs

    ConfigStore.instance().store(
        group="hydra/launcher", name="_slurm_schema", node=SlurmConf, provider="rbmlab"
    )
