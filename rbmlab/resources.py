"""Where the files rbmlab ships beside its code lie: the run configuration (``conf/``), the
experiment files (``experiments/``) and the record of what the papers' artefacts cost
(``results/<paper>/README.md``).

In the repository they sit at the top level, next to ``rbmlab/``; that is where a checkout and an
editable install read them (an edit to conf/*.yaml counts at once). A wheel carries them inside the
package, as ``rbmlab/conf``, ``rbmlab/experiments`` and ``rbmlab/results`` (setup.py maps them
there). The package's own copy comes first, so an installed rbmlab never reads a checkout it happens
to sit in. Runs and reports are written elsewhere: under the working directory.
"""

from __future__ import annotations

from pathlib import Path

SHIPPED = ("conf", "experiments")  # the folders a run is made of (a change to them is a change of source)


def package_dir() -> Path:
    """The installed (or checked-out) ``rbmlab`` package folder. Wheels install unpacked, so its
    folders are real directories Hydra can read."""
    return Path(__file__).resolve().parent


def checkout_root() -> Path | None:
    """The repository holding this package (its conf/ beside rbmlab/), or None for an install."""
    package = package_dir()
    if (package / "conf").is_dir():
        return None
    root = package.parent
    return root if all((root / name).is_dir() for name in SHIPPED) else None


def _shipped(name: str) -> Path:
    inside = package_dir() / name
    if inside.is_dir():
        return inside
    return package_dir().parent / name  # a checkout (or editable install): the top-level folder


def conf_dir() -> Path:
    """The Hydra configuration directory: conf/config.yaml and the config groups."""
    return _shipped("conf")


def experiments_dir() -> Path:
    """The experiment files, experiments/<paper>/<artefact>.yaml."""
    return _shipped("experiments")


def results_readmes_dir() -> Path:
    """The committed results/<paper>/README.md (a wheel carries these files of results/ only)."""
    return _shipped("results")
