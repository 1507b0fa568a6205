"""A second read of the SLURM requeue protocol (rbmlab.run.cluster, hydra_plugins.rbmlab_launcher):
the wheel carries the launcher package and finds it, and the launcher's own ``backend`` setting
is checked where the sweep is launched, not on every node after the queue.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

pytest.importorskip("hydra_plugins.hydra_submitit_launcher", reason="the [slurm] extra is not installed")

from rbmlab.errors import RbmlabError
from rbmlab.hydra_app import compose
from tests.test_wheel_install import REPO, RUN, SOURCES, installed

__all__ = ["installed"]  # the fixture, shared with tests/test_wheel_install.py


def setup_packages() -> list[str]:
    """The packages setup.py lists, read from its configuration without building anything."""
    from distutils.core import run_setup  # noqa: PLC0415

    import setuptools  # noqa: F401, PLC0415 - distutils below is setuptools' own

    cwd = Path.cwd()
    os.chdir(REPO)
    try:
        return list(run_setup("setup.py", stop_after="config").packages)
    finally:
        os.chdir(cwd)


def test_the_wheel_tests_build_from_every_folder_setup_py_takes_packages_from():
    """tests/test_wheel_install.py builds the wheel from a copy of SOURCES: a package whose folder
    is not copied (hydra_plugins/rbmlab_launcher) fails that build."""
    folders = {p.split(".")[0] for p in setup_packages()}
    assert folders == {"rbmlab", "hydra_plugins"}
    assert folders <= set(SOURCES)


@pytest.mark.slow
def test_the_installed_wheel_runs_a_sweep_through_its_own_launcher(installed, tmp_path):
    """hydra_plugins.rbmlab_launcher is in the wheel, where Hydra's plugin scan finds it: a sweep
    through its LocalLauncher completes with the wheel's rbmlab in the jobs."""
    installed.run(
        "run",
        "-m",
        *RUN,
        "seed=0,1",
        "hydra/launcher=submitit_local",
        "hydra.launcher._target_=hydra_plugins.rbmlab_launcher.LocalLauncher",
        "hydra.sweep.dir=sweep",
        cwd=tmp_path,
    )
    for job in ("0", "1"):
        summary = json.loads((tmp_path / "sweep" / job / "summary.json").read_text())
        assert summary["status"] == "completed" and summary["source"].startswith("rbmlab ")
    said = installed.python_says("import hydra_plugins.rbmlab_launcher as m; print(m.__file__)", cwd=tmp_path)
    assert said == str(installed.site / "hydra_plugins" / "rbmlab_launcher" / "__init__.py")


def test_a_misspelt_launcher_backend_is_one_line_before_any_job_is_submitted():
    with pytest.raises(
        RbmlabError, match=r"^hydra.launcher.backend: no such option 'cupyy'; available: cupy, numpy$"
    ):
        compose("config", ["hydra/launcher=slurm", "hydra.launcher.backend=cupyy"], hydra_config=True)
    for chosen in (
        ["hydra/launcher=slurm_gpu"],
        ["hydra/launcher=slurm", "hydra.launcher.backend=numpy"],
        ["hydra/launcher=slurm"],
        ["hydra/launcher=basic"],
        ["hydra/launcher=joblib", "hydra.launcher.backend=loky"],
    ):  # joblib's own backend
        compose("config", chosen, hydra_config=True)


@pytest.mark.parametrize("launcher", ["slurm", "slurm_gpu"])
def test_a_cluster_launcher_without_m_is_refused_not_run_here(launcher):
    """Hydra launches only a sweep's jobs: without -m the run would train on this machine (the
    login node), on numpy, while the command line says SLURM."""
    from rbmlab.hydra_app import check_hydra_overrides

    with pytest.raises(
        RbmlabError,
        match=rf"^hydra/launcher={launcher}: launches a sweep's jobs "
        r"\(without -m the run trains here\); add -m",
    ):
        check_hydra_overrides([f"hydra/launcher={launcher}", "learner=cd"], multirun=False)
    assert check_hydra_overrides([f"hydra/launcher={launcher}"], multirun=True) == [
        f"hydra/launcher={launcher}"
    ]
    assert check_hydra_overrides(["hydra/launcher=joblib"], multirun=False) == ["hydra/launcher=joblib"]
