"""rbmlab as an installed package: conf/, experiments/ and the results READMEs travel inside the
wheel, and the installed command runs and writes under the working directory, with no checkout
anywhere near.

The slow tests build the wheel from a copy of the sources (the checkout is not written to), install
it with ``--no-deps`` into a fresh virtual environment and make the dependencies visible through a
.pth file naming this interpreter's site-packages (no network). A .pth file's folders do not get
their own .pth files read, so an editable rbmlab installed there stays out of sight: the tests
check that the rbmlab imported is the wheel's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

import rbmlab
from rbmlab import resources
from rbmlab.storage import provenance

REPO = Path(__file__).resolve().parent.parent
SOURCES = (
    "pyproject.toml",
    "setup.py",
    "README.md",
    "rbmlab",
    "hydra_plugins",
    "conf",
    "experiments",
    "results",
)  # a build's
RUN = [
    "dataset=bars_stripes",
    "model.n_hidden=4",
    "train.epochs=1",
    "evaluator=exact",
    "train.progress=false",
]
SMOKE = "demo/bars-cd-vs-pcd"  # 6 runs of 30 full-batch epochs on 9 visible units


def files_under(root: Path) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def to_ship() -> dict[str, set[str]]:
    """The repository's files the wheel must carry, by folder: every file of conf/ and experiments/,
    and the README of each results/<paper>/."""
    return {
        "conf": {f"conf/{f}" for f in files_under(REPO / "conf")},
        "experiments": {f"experiments/{f}" for f in files_under(REPO / "experiments")},
        "results": {p.relative_to(REPO).as_posix() for p in REPO.glob("results/*/README.md")},
    }


def package_data() -> dict[str, tuple[Path, list[str]]]:
    """What setup.py gives build_py to copy besides modules: package -> (build folder, source files),
    read from the configuration without building anything."""
    from distutils.core import run_setup  # noqa: PLC0415

    import setuptools  # noqa: F401, PLC0415 - distutils below is setuptools' own

    cwd = Path.cwd()
    os.chdir(REPO)
    try:
        build_py = run_setup("setup.py", stop_after="config").get_command_obj("build_py")
        build_py.ensure_finalized()
        return {
            package: (Path(build_dir), [Path(source, name).as_posix() for name in names])
            for package, source, build_dir, names in build_py.data_files
            if names
        }
    finally:
        os.chdir(cwd)


def test_the_wheel_carries_conf_experiments_and_the_results_readmes_where_resources_looks():
    shipped, expected = package_data(), to_ship()
    assert shipped.pop("rbmlab")[1] == ["rbmlab/py.typed"]  # PEP 561's marker, the one data file of the code
    assert set(shipped) == {f"rbmlab.{name}" for name in expected}
    for name, files in expected.items():
        build_dir, sources = shipped[f"rbmlab.{name}"]
        assert build_dir.parts[-2:] == ("rbmlab", name)  # installed as rbmlab/<name>: resources' first place
        assert sorted(sources) == sorted(files)  # every file of conf/, yaml or not
    assert min(len(files) for files in expected.values()) >= 6


def test_a_checkout_reads_its_top_level_folders():
    assert resources.checkout_root() == REPO
    assert resources.conf_dir() == REPO / "conf" and (resources.conf_dir() / "config.yaml").is_file()
    assert resources.experiments_dir() == REPO / "experiments"
    assert resources.results_readmes_dir() == REPO / "results"


def test_outside_a_checkout_the_source_is_the_version(monkeypatch):
    monkeypatch.setattr(provenance, "checkout_root", lambda: None)
    assert provenance.source_revision.__wrapped__() == f"rbmlab {rbmlab.__version__}"


# ------------------------------------------------------------------------------- the installed wheel
class Install:
    """A fresh virtual environment holding the wheel; ``run`` calls its rbmlab command in ``cwd``."""

    def __init__(self, root: Path):
        self.root = root
        self.prefix = root / "venv"
        self.python = self.prefix / "bin" / "python"
        self.site = Path(
            subprocess.run(
                [str(self.python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        )
        # without the checkout's PYTHONPATH (the tests' own), so only the venv and the .pth decide
        self.env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        self.env.update(OMP_NUM_THREADS="1", HYDRA_FULL_ERROR="0")

    def run(self, *args: str, cwd: Path, check: bool = True) -> subprocess.CompletedProcess:
        cwd.mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [str(self.prefix / "bin" / "rbmlab"), *args],
            cwd=cwd,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        if check and proc.returncode != 0:
            raise AssertionError(
                f"rbmlab {' '.join(args)} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
            )
        return proc

    def python_says(self, code: str, cwd: Path) -> str:
        return subprocess.run(
            [str(self.python), "-c", code], cwd=cwd, env=self.env, capture_output=True, text=True, check=True
        ).stdout.strip()


def build_wheel(out: Path) -> Path:
    """The wheel of a copy of the sources, built with this interpreter's setuptools, offline."""
    import importlib.util  # noqa: PLC0415

    if not (importlib.util.find_spec("setuptools.command.bdist_wheel") or importlib.util.find_spec("wheel")):
        pytest.fail(
            "building a wheel offline needs setuptools>=70.1 (the test extra: pip install -e '.[test]')"
        )
    source = out / "source"
    source.mkdir(parents=True)
    for name in SOURCES:
        if (REPO / name).is_dir():
            shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(REPO / name, source / name)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-index",
            "--no-build-isolation",
            "--wheel-dir",
            str(out / "dist"),
            str(source),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, f"pip wheel failed:\n{proc.stdout}\n{proc.stderr}"
    (wheel,) = (out / "dist").glob("rbmlab-*.whl")
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Install:
    root = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(root / "build")
    venv.create(root / "venv", with_pip=False)
    install = Install(root)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(install.python),
            "install",
            "--no-deps",
            "--no-index",
            str(wheel),
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, f"pip install failed:\n{proc.stdout}\n{proc.stderr}"
    # after the install: pip must not see (and offer to replace) an rbmlab of this interpreter's
    visible = [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages") and Path(p).is_dir()]
    (install.site / "dependencies.pth").write_text("".join(f"{p}\n" for p in visible))
    return install


def snapshot(install: Install) -> dict[str, tuple[int, int]]:
    """Every file of the environment (bytecode caches aside): its size and modification time."""
    return {
        f: ((install.prefix / f).stat().st_size, (install.prefix / f).stat().st_mtime_ns)
        for f in files_under(install.prefix)
    }


def untouched(install: Install, before: dict[str, tuple[int, int]]) -> None:
    now = snapshot(install)
    assert now == before, f"written into the install: {sorted(set(now.items()) ^ set(before.items()))[:10]}"


@pytest.mark.slow
def test_the_installed_rbmlab_is_the_wheel_with_its_own_configuration(installed, tmp_path):
    said = installed.python_says(
        "import rbmlab, rbmlab.resources as r; "
        "print(rbmlab.__file__, r.conf_dir(), r.experiments_dir(), r.checkout_root())",
        cwd=tmp_path,
    ).split()
    package = installed.site / "rbmlab"
    assert said == [str(package / "__init__.py"), str(package / "conf"), str(package / "experiments"), "None"]
    shipped = {f for f in files_under(package) if not f.endswith(".py")}
    assert shipped == set().union(*to_ship().values(), {"py.typed"})  # PEP 561's marker beside the data


@pytest.mark.slow
def test_the_installed_command_runs_in_any_folder_and_writes_only_there(installed, tmp_path):
    before = snapshot(installed)
    proc = installed.run("run", *RUN, cwd=tmp_path / "wheel")
    (summary_file,) = (tmp_path / "wheel" / "outputs" / "runs").glob("*/summary.json")
    assert f"run directory: {tmp_path / 'wheel' / 'outputs' / 'runs'}" in proc.stdout
    summary = json.loads(summary_file.read_text())
    assert summary["status"] == "completed" and summary["source"] == f"rbmlab {rbmlab.__version__}"
    # the same job in the checkout gives the same number: the wheel carries the same configuration
    subprocess.run(
        [sys.executable, "-m", "rbmlab", "run", *RUN],
        cwd=tmp_path,
        capture_output=True,
        check=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    (checkout_summary,) = (tmp_path / "outputs" / "runs").glob("*/summary.json")
    assert summary["final"] == json.loads(checkout_summary.read_text())["final"]

    for command, says in {
        ("doctor",): "numpy",
        ("data", "list"): "bars_stripes",
        ("run", "--help"): "usage: rbmlab run",
    }.items():  # the help reads conf/hydra/help
        assert says in installed.run(*command, cwd=tmp_path / "wheel").stdout, command
    unknown = installed.run("experiment", "no/such", cwd=tmp_path / "wheel", check=False)
    assert unknown.returncode == 2 and SMOKE in unknown.stderr and "Traceback" not in unknown.stderr
    listed = installed.run(
        "experiment", "list", cwd=tmp_path / "wheel"
    ).stdout  # titles and costs: the READMEs
    readmes = re.findall(r"  \[(.+)\]$", listed, re.M)  # an install names the files inside the package
    assert readmes and all(Path(r).is_absolute() and Path(r).is_file() for r in readmes)
    assert (
        re.sub(r"\[/\S+/(results/\w+/README\.md)\]", r"[\1]", listed)
        == subprocess.run(
            [sys.executable, "-m", "rbmlab", "experiment", "list"],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert "reduced: ≈ 1 min on 2 cores" in listed
    assert sorted(p.name for p in (tmp_path / "wheel").iterdir()) == ["outputs"]
    untouched(installed, before)


@pytest.mark.slow
def test_the_installed_command_runs_a_smoke_experiment(installed, tmp_path):
    before = snapshot(installed)
    installed.run("experiment", SMOKE, "scale=smoke", cwd=tmp_path)
    runs = sorted((tmp_path / "outputs" / "experiments" / SMOKE / "smoke").glob("*/summary.json"))
    assert len(runs) == 6 and all(json.loads(r.read_text())["status"] == "completed" for r in runs)
    report = tmp_path / "outputs" / "results" / "demo" / "bars-cd-vs-pcd_smoke.md"  # smoke: never results/
    assert "| CD | 3 |" in report.read_text() and "| PCD | 3 |" in report.read_text()  # in words
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outputs"]
    untouched(installed, before)
