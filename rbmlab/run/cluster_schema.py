"""The typed schema of ``hydra/launcher=slurm`` (rbmlab.run.cluster.store_schema stores it with
Hydra): submitit's SLURM options, rbmlab's launcher class and its ``backend`` setting. A module of
its own so that importing rbmlab.run.cluster does not import Hydra's config store."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from hydra_plugins.hydra_submitit_launcher.config import SlurmQueueConf

REQUEUES = 20  # time limits a job may reach and be requeued before it gives up (submitit's countdown)


@dataclass
class SlurmConf(SlurmQueueConf):
    _target_: str = (
        "hydra_plugins.rbmlab_launcher.SlurmLauncher"  # Hydra instantiates launchers from there only
    )
    backend: Optional[str] = None  # noqa: UP045 - omegaconf reads the annotation
    max_num_timeout: int = REQUEUES
