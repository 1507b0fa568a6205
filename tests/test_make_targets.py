"""The Makefile's paper targets: ``make experiments`` lists every per-file and combined target, a
guess that is no target ends in one line naming the closest ones (exit 2, nothing run), and the
targets README.md and the documentation pages (docs/*.md, docs/guide/*.md) name exist. No test
here installs anything: ``make -n``, or a stand-in venv whose install stamp is current."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from rbmlab.experiment import available

ROOT = Path(__file__).resolve().parent.parent
MAKEFILE = (ROOT / "Makefile").read_text() + (ROOT / "experiments" / "composites.mk").read_text()
COMPOSITES = dict(re.findall(r"^PARTS\.(\S+) := ((?:.*\\\n)*.*)$", MAKEFILE, re.M))
BASICS = re.search(r"^\.PHONY: (.*)$", MAKEFILE, re.M).group(1).split()
TARGETS = {*BASICS, "experiments", *COMPOSITES, *(name.replace("/", "-", 1) for name in available())}
pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="no make here")


def make(*args: str, dry: bool = True) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["make", *(["-n"] if dry else []), "-C", str(ROOT), "--no-print-directory", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "guess,closest",
    [
        ("crbm-bp-table-1", "crbm_bp-table-1"),
        ("pmp-table-1", "tap-table-1"),
        ("paper-table-1", "dcp-table-1"),
        ("dcp-figure3", "dcp-figure-3"),
        ("experiment", "experiments"),
    ],
)
def test_a_guess_names_the_closest_targets_in_one_line(guess, closest):
    proc = make(guess)
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and proc.stdout == "" and len(lines) == 1, proc
    named = (
        re.search(
            rf"\*\*\* {guess}: no such target; closest: (.*) \(make experiments lists them all\)\.  Stop\.$",
            lines[0],
        )
        .group(1)
        .split()
    )
    assert closest in named and set(named) <= TARGETS


def test_a_guess_runs_nothing(tmp_path):
    proc = make(f"VENV={tmp_path / 'venv'}", "crbm-bp-table-1", dry=False)  # no install first
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1
    assert "crbm-bp-table-1: no such target" in proc.stderr and not (tmp_path / "venv").exists()


def test_real_targets_and_the_files_make_reads_are_untouched():
    assert (
        make("dcp-figure-3").stdout.splitlines()[-1].endswith("rbmlab experiment dcp/figure-3 scale=reduced")
    )
    assert [
        ln.split("rbmlab ", 1)[1]
        for ln in make("pmp-sec-5-1").stdout.splitlines()
        if "rbmlab experiment" in ln
    ] == [
        f"experiment pmp/{a} scale=reduced"
        for a in ("sec-5-1-theta", "sec-5-1-kl-model", "sec-5-1-kl-samples", "sec-5-1-bethe")
    ]
    for goal in ("Makefile", "pyproject.toml", "help", "clean"):
        assert make(goal).returncode == 0, goal


def test_make_experiments_lists_every_target_with_its_title(tmp_path):
    """With a stand-in venv (install stamp current, bin/rbmlab this checkout's CLI)."""
    cksum = subprocess.run(
        "cat pyproject.toml | cksum | cut -d' ' -f1",
        shell=True,
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (tmp_path / "bin").mkdir()
    (tmp_path / f".installed-{cksum}").touch()
    cli = tmp_path / "bin" / "rbmlab"
    cli.write_text(f'#!/bin/sh\nPYTHONPATH={ROOT} exec {sys.executable} -m rbmlab "$@"\n')
    cli.chmod(0o755)
    proc = make(f"VENV={tmp_path}", "experiments", dry=False)
    assert proc.returncode == 0 and proc.stderr == "", proc
    listed = {ln.split()[0]: ln.split(None, 1)[1] for ln in proc.stdout.splitlines() if ln.startswith("  ")}
    assert set(listed) == TARGETS - set(BASICS) - {"experiments"}
    assert listed["dcp-figure-3"] == "dcp Figure 3: MNIST, five learners, two learning rates"
    for composite, parts in COMPOSITES.items():
        assert listed[composite].split() == ["runs", *parts.replace("\\", " ").split()]


def test_the_readme_and_the_guide_name_only_targets_that_exist():
    readme = (ROOT / "README.md").read_text()
    table = readme[readme.index("| paper | artefact | `make` target | results |") :]
    table = table[: table.index("\n\n")].splitlines()[2:]
    named = [t for row in table for t in re.findall(r"`([^`]+)`", row.split(" | ")[2])]
    assert named and set(named) <= TARGETS, set(named) - TARGETS
    assert {row.split(":")[0].strip("| ") for row in table if not row.startswith("| |")} == {
        name.split("/")[0] for name in available()
    }  # every paper has its rows
    for link in re.findall(r"\]\((results/[^)]+)\)", "\n".join(table)):
        assert (ROOT / link).is_file(), link
    pages = {"README.md": readme} | {
        page.relative_to(ROOT).as_posix(): page.read_text()
        for page in sorted([*(ROOT / "docs").glob("*.md"), *(ROOT / "docs" / "guide").glob("*.md")])
    }  # the user guide, once README's: its commands are held to the Makefile too
    named = {name: make_targets_named(text) for name, text in pages.items()}
    assert named["README.md"] and named["docs/guide/experiments.md"], named
    for name, targets in named.items():
        assert targets <= TARGETS, (name, targets - TARGETS)


def make_targets_named(text: str) -> set[str]:
    """The targets of every ``make ...`` line of the page's bash blocks (not its VAR=value words)."""
    return {
        word
        for block in re.findall(r"```bash\n(.*?)```", text, re.S)
        for ln in block.splitlines()
        if ln.startswith("make ")
        for word in ln.split("#")[0].split()[1:]
        if "=" not in word
    }


def test_results_readme_indexes_every_folder():
    index = (ROOT / "results" / "README.md").read_text()
    folders = sorted(p.name for p in (ROOT / "results").iterdir() if p.is_dir())
    assert len(folders) == 11
    for folder in folders:
        assert (
            f"| [`{folder}/`]({folder}/README.md) |" in index
            and (ROOT / "results" / folder / "README.md").is_file()
        )
