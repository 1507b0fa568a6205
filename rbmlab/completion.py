"""Shell completion of ``rbmlab run`` (``-sc`` / ``--shell-completion``, as in Hydra).

Hydra answers the queries: ``rbmlab run -sc query=bash`` with the shell's ``COMP_LINE`` lists the
config groups, their options and the config keys that complete the last word. Hydra's own
install script completes the first word of a command line as the application, which for
``rbmlab run`` is ``rbmlab``; the script here completes the subcommand and sends ``rbmlab run``
lines to that query.
"""
from __future__ import annotations

import os
import re

from rbmlab.errors import RbmlabError

SHELLS = ("bash", "zsh")   # zsh through bashcompinit, as Hydra's zsh completion

SCRIPT = """_rbmlab_completion()
{
    local words=($COMP_LINE)
    if (( COMP_CWORD < 2 )); then
        COMPREPLY=($(compgen -W "%(commands)s" -- "${COMP_WORDS[COMP_CWORD]}"))
    elif [ "${words[1]}" == "run" ]; then
        local choices=$(COMP_POINT=$COMP_POINT COMP_LINE=$COMP_LINE ${words[0]} run -sc query=bash 2>/dev/null)
        COMPREPLY=($(compgen -o nospace -o default -W "$choices" -- "${words[$COMP_CWORD]}"))
    fi
}
COMP_WORDBREAKS=${COMP_WORDBREAKS//=}
complete -o nospace -o default -F _rbmlab_completion rbmlab"""
ZSH_PREFIX = "autoload -Uz bashcompinit && bashcompinit\n"
UNINSTALL = "complete -r rbmlab 2> /dev/null\nunset -f _rbmlab_completion"


def shell_completion(argv: list[str]) -> None:
    """``rbmlab run -sc install=bash|zsh`` prints the script to eval; ``uninstall=`` the lines
    that remove it; ``query=bash`` (from the script) the completions of ``$COMP_LINE``."""
    from rbmlab.cli import COMMANDS  # noqa: PLC0415 - the cli imports the run command

    requests = [a for a in argv if "=" in a and a.split("=", 1)[0] in ("install", "uninstall", "query")]
    if len(requests) != 1:
        raise RbmlabError("--shell-completion: give one of install=SHELL, uninstall=SHELL, query=SHELL "
                          f"(shells: {', '.join(SHELLS)}); e.g. eval \"$(rbmlab run -sc install=bash)\"")
    action, shell = requests[0].split("=", 1)
    if shell not in SHELLS:
        raise RbmlabError(f"--shell-completion: {shell}: rbmlab completes in {', '.join(SHELLS)}")
    if action == "install":
        print((ZSH_PREFIX if shell == "zsh" else "") + SCRIPT % {"commands": " ".join(COMMANDS)})
    elif action == "uninstall":
        print(UNINSTALL)
    else:
        query(os.environ.get("COMP_LINE"))


def query(line: str | None) -> None:
    """Hydra's completions of an ``rbmlab run ...`` line, asked as of an application ``rbmlab``."""
    from rbmlab.hydra_app import run_hydra  # noqa: PLC0415

    match = re.match(r"\s*(\S+)\s+run\b(.*)$", line or "", re.DOTALL)
    if match is None:
        raise RbmlabError("--shell-completion: query=: COMP_LINE must hold an `rbmlab run ...` line "
                          "(the installed completion script sets it)")
    os.environ["COMP_LINE"] = match.group(1) + match.group(2)
    try:
        run_hydra(["-sc", "query=bash"])
    finally:
        os.environ["COMP_LINE"] = line
