"""rbmlab's launchers, where Hydra looks for them (it instantiates a launcher only from a class
defined in the hydra_plugins package). ``hydra/launcher=packed`` chooses PackedLauncher: a sweep's
jobs trained in this process, packed into one computation where they allow (rbmlab.run.packed).
``hydra/launcher=slurm`` and ``slurm_gpu`` choose SlurmLauncher: submitit's, with the
requeue-and-resume protocol of rbmlab.run.cluster mixed in."""

from pathlib import Path

from hydra.core.utils import JobStatus, configure_log, run_job, setup_globals
from hydra.plugins.launcher import Launcher


class PackedLauncher(Launcher):
    """``hydra/launcher=packed``: each job's directory made as the basic launcher makes it, the
    job collected instead of run (rbmlab.hydra_app.packed_job), then all of them trained together
    (rbmlab.hydra_app.train_packed_jobs); each job's return value is its run's headline value."""

    def __init__(self, max_runs: int = 128) -> None:
        super().__init__()
        self.config = self.hydra_context = self.task_function = None
        self.max_runs = max_runs

    def setup(self, *, hydra_context, task_function, config) -> None:
        self.config, self.hydra_context, self.task_function = config, hydra_context, task_function

    def launch(self, job_overrides, initial_job_idx: int):
        from omegaconf import open_dict  # noqa: PLC0415

        from rbmlab.hydra_app import packed_job, train_packed_jobs  # noqa: PLC0415

        setup_globals()
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        Path(str(self.config.hydra.sweep.dir)).mkdir(parents=True, exist_ok=True)
        returns = []
        for idx, overrides in enumerate(job_overrides, start=initial_job_idx):
            sweep_config = self.hydra_context.config_loader.load_sweep_config(self.config, list(overrides))
            with open_dict(sweep_config):
                sweep_config.hydra.job.id = sweep_config.hydra.job.num = idx
            returns.append(
                run_job(
                    hydra_context=self.hydra_context,
                    task_function=packed_job,
                    config=sweep_config,
                    job_dir_key="hydra.sweep.dir",
                    job_subdir_key="hydra.sweep.subdir",
                )
            )
        configure_log(self.config.hydra.hydra_logging, self.config.hydra.verbose)
        jobs = [r.return_value if r.status == JobStatus.COMPLETED else None for r in returns]
        for r, value in zip(returns, train_packed_jobs(jobs, self.max_runs)):
            if r.status == JobStatus.COMPLETED:  # a failed job keeps its exception for the sweeper
                r.return_value = value
        return returns


try:
    from hydra_plugins.hydra_submitit_launcher import submitit_launcher
except ImportError:  # without the [slurm] extra there are none; hydra/launcher=slurm says so
    __all__ = ["PackedLauncher"]
else:
    from rbmlab.run.cluster import Requeueing

    class SlurmLauncher(Requeueing, submitit_launcher.SlurmLauncher):
        """``hydra/launcher=slurm``: submitit's SLURM launcher; its jobs resume after a requeue."""

    class LocalLauncher(Requeueing, submitit_launcher.LocalLauncher):
        """submitit's local processes with the same protocol (its requeue restarts the process):
        how the tests exercise it without a cluster."""

    __all__ = ["LocalLauncher", "PackedLauncher", "SlurmLauncher"]
