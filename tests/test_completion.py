"""Shell completion of ``rbmlab run`` (``-sc``): the install script, Hydra's answers to its
queries, and the two together in bash."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from rbmlab.cli import COMMANDS, cmd_run
from rbmlab.errors import RbmlabError


def test_install_prints_a_script_that_completes_rbmlab_and_asks_rbmlab_run(capsys):
    cmd_run(["-sc", "install=bash"])
    script = capsys.readouterr().out
    assert script.rstrip().endswith("complete -o nospace -o default -F _rbmlab_completion rbmlab")
    assert "${words[0]} run -sc query=bash" in script
    assert f'compgen -W "{" ".join(COMMANDS)}"' in script
    cmd_run(["--shell-completion", "install=zsh"])
    zsh = capsys.readouterr().out
    assert zsh.startswith("autoload -Uz bashcompinit && bashcompinit\n_rbmlab_completion()")


@pytest.mark.parametrize(
    "line, expected",
    [
        ("rbmlab run learner=", {"learner=cd", "learner=pcd", "learner=tap"}),
        ("rbmlab run -m dataset=bars_stripes evaluator=ex", {"evaluator=exact"}),
        ("rbmlab run train.eval_", {"train.eval_every="}),
    ],
)
def test_a_query_lists_hydras_completions_of_the_run_line(line, expected, monkeypatch, capsys):
    monkeypatch.setenv("COMP_LINE", line)
    cmd_run(["-sc", "query=bash"])
    words = set(capsys.readouterr().out.split())
    assert expected <= words and all(w.startswith(line.split()[-1]) for w in words)


def test_completion_errors_are_one_line(monkeypatch):
    monkeypatch.delenv("COMP_LINE", raising=False)
    for argv, needle in [
        (["-sc", "query=bash"], "COMP_LINE must hold"),
        (["-sc", "install=fish"], "fish: rbmlab completes in bash, zsh"),
        (["-sc"], "give one of install=SHELL"),
    ]:
        with pytest.raises(RbmlabError, match=needle):
            cmd_run(argv)


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash here")
def test_bash_completes_the_subcommand_and_run_overrides(tmp_path):
    program = tmp_path / "rbmlab"
    program.write_text(f'#!/bin/sh\nexec {sys.executable} -m rbmlab "$@"\n')
    program.chmod(0o755)
    complete = """eval "$(rbmlab run -sc install=bash)"
ask() { COMP_LINE="$1"; COMP_WORDS=($1); COMP_CWORD=$((${#COMP_WORDS[@]} - 1));
        COMP_POINT=${#COMP_LINE}; _rbmlab_completion; echo "${COMPREPLY[*]}"; }
ask "rbmlab ev"; ask "rbmlab run learner=p"; ask "rbmlab run model=i" """
    out = subprocess.run(
        ["bash", "-c", complete],
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": f"{tmp_path}:/usr/bin:/bin", "PYTHONPATH": ":".join(sys.path)},
    )
    assert out.stdout.splitlines() == ["evaluate", "learner=pcd", "model=ising"], out.stderr
