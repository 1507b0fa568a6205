"""rbmlab's launchers, where Hydra looks for them (it instantiates a launcher only from a class
defined in the hydra_plugins package): submitit's, with the requeue-and-resume protocol of
rbmlab.run.cluster mixed in. ``hydra/launcher=slurm`` and ``slurm_gpu`` choose SlurmLauncher."""

try:
    from hydra_plugins.hydra_submitit_launcher import submitit_launcher
except ImportError:  # without the [slurm] extra there are none; hydra/launcher=slurm says so
    __all__: list[str] = []
else:
    from rbmlab.run.cluster import Requeueing

    class SlurmLauncher(Requeueing, submitit_launcher.SlurmLauncher):
        """``hydra/launcher=slurm``: submitit's SLURM launcher; its jobs resume after a requeue."""

    class LocalLauncher(Requeueing, submitit_launcher.LocalLauncher):
        """submitit's local processes with the same protocol (its requeue restarts the process):
        how the tests exercise it without a cluster."""

    __all__ = ["LocalLauncher", "SlurmLauncher"]
