"""Paths as committed files write them: the same meaning in any checkout, on any machine.

A runs CSV names the checkpoint a run started from (``model.init``), a bench table the BLAS
library it timed, a script's record the checkpoints it read. Spelt as on the machine that ran
them (``/work/main/outputs/experiments/...``) they mean nothing in another checkout.
:func:`portable_path` is the one rule every writer of such files applies (the report's runs
table, rbmlab.backend.machine's facts, ``rbmlab evaluate``'s JSON, the scripts' records):

- under one of ``roots`` (the writer names them: a report's is the outputs root of the
  experiments, outputs/experiments by default; a script's or ``rbmlab evaluate``'s the working
  directory, i.e. the checkout) → relative to the first that holds it:
  ``frank_wolfe/figure-1a/reduced/fw/0/snapshots/epoch_20.npz``, the file
  ``{sweep:frank_wolfe/figure-1a}/fw/0/snapshots/epoch_20.npz`` names there;
  :func:`resolve_path` reads it back against that root;
- inside an installed package folder (``site-packages``, ``dist-packages``) → the part after
  it: ``numpy.libs/libscipy_openblas64_-32a4b2a6.so``, the same library in any environment;
- any other absolute path (a scratch file: ``/tmp/rbms38/ck_cd5.npz``) → its name alone,
  ``ck_cd5.npz``: a file of the machine that ran it, whose name is all that carries over.

A system program at its standard place (``/usr/bin/time``, :data:`SYSTEM_PROGRAMS`) is the same on
every machine and stays as it is.

A relative path, a URL and a value that is no path (``truth``) stay as they are; a run selector
after ``?`` (``<sweep dir>?seed=0``, rbmlab.run.pretrained) is kept. :func:`portable_text` applies
the rule to every absolute path in a text (a command line, a file written elsewhere), and
:data:`ABSOLUTE_PATH` is what counts as one there.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path, PurePath, PurePosixPath, PureWindowsPath

PACKAGE_FOLDERS = ("site-packages", "dist-packages")  # where pip and the distributions install
SYSTEM_PROGRAMS = ("/bin/", "/usr/bin/")  # a program here (``/usr/bin/env``) is every machine's
_END = r"\s\"'`()\[\]{},;<>|"  # what ends a path inside a text (a CSV cell, a list, a markdown cell)
# An absolute path inside a text: at its start or after a space, a quote, a bracket, ``=`` and the
# like (never inside a word or a URL's ``//``), of at least two parts (``/work/x``: not the
# ``/ step`` of prose); or a Windows drive path (``C:\\x``, ``C:/x``).
ABSOLUTE_PATH = re.compile(
    rf"(?:(?<=^)|(?<=[\s\"'`(\[{{=,;<>|]))"
    rf"(?:/[\w.~+-][^/{_END}]*/[^{_END}]*|[A-Za-z]:[\\/][^{_END}]+)",
    re.MULTILINE,
)
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]")


def _pure(text: str) -> PurePath | None:
    """``text`` as an absolute path of its machine's kind, or None when it is not one."""
    if _DRIVE.match(text):
        return PureWindowsPath(text)
    if text.startswith("/") and not text.startswith("//"):
        return PurePosixPath(text)
    return None


def _under(path: PurePath, root: str | os.PathLike) -> str | None:
    """``path`` relative to ``root`` (as written, made absolute, or with its links resolved)."""
    for base in dict.fromkeys((Path(os.path.abspath(root)), Path(root).resolve())):
        try:
            return PurePosixPath(*path.relative_to(base).parts).as_posix()
        except ValueError:
            continue
    return None


def portable_path(path: str | os.PathLike, roots: Iterable[str | os.PathLike] = ()) -> str:
    """``path`` as a committed file writes it (the module's rules): relative to the first of
    ``roots`` that holds it, the part after ``site-packages`` for an installed library, its name
    for any other absolute path; a system program, and anything that is not an absolute path, as
    it is."""
    text = os.fspath(path)
    where, mark, query = text.partition("?")
    pure = _pure(where)
    if pure is None or where.startswith(SYSTEM_PROGRAMS):
        return text
    for root in roots:
        inside = _under(pure, root)
        if inside is not None:
            return inside + mark + query
    parts = pure.parts
    folder = max((i for i, part in enumerate(parts) if part in PACKAGE_FOLDERS), default=None)
    if folder is not None and folder + 1 < len(parts):
        return PurePosixPath(*parts[folder + 1 :]).as_posix() + mark + query
    return (pure.name or text) + mark + query


def portable_text(text: str, roots: Iterable[str | os.PathLike] = ()) -> str:
    """``text`` with each absolute path in it (:data:`ABSOLUTE_PATH`) as :func:`portable_path`
    writes it; a full stop or colon that ends a sentence after a path stays outside it."""
    roots = list(roots)

    def one(match: re.Match) -> str:
        found = match.group(0)
        path = found.rstrip(".:")
        return portable_path(path, roots) + found[len(path) :]

    return ABSOLUTE_PATH.sub(one, text)


def resolve_path(path: str | os.PathLike, root: str | os.PathLike) -> str:
    """The reader's side of :func:`portable_path`: a relative path (its selector after ``?``
    kept) as the file under ``root``, the root it was written relative to; an absolute one as it is."""
    text = os.fspath(path)
    where, mark, query = text.partition("?")
    if _pure(where) is not None or re.match(r"^\w+://", text):
        return text
    return str(Path(root) / where) + mark + query
