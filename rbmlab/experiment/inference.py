"""The ``inference`` experiment kind (``inference:`` in the file): a sampler or solver on a fixed
model, nothing trained, e.g. pmp Sec. 5.6's posterior samples of a blind deconvolution.

    inference: {problem: <PROBLEMS name>, <the problem's options>}
    scales: {smoke | reduced | paper: {<options>}}     each tier's options over the section's

A problem is a class of its own module, registered by one line in ``PROBLEMS``, with ``name``,
``parse(options, prefix)`` (the options checked, one line naming ``<prefix>.<key>`` on a bad one)
and ``run(parsed, out)`` (writes its files to ``out``, returns what it found). ``key=value`` on
the command line sets an option (``a.b=value``: key b of mapping option a), over the tier's. The
files go to results/<paper>/<artefact>_<scale>/.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from rbmlab.errors import RbmlabError
from rbmlab.experiment.spec import _parse_argv
from rbmlab.registry import Registry
from rbmlab.validation import merged

PROBLEMS = Registry(
    "inference problem",
    {
        "deconvolution": "rbmlab.experiment.deconvolution:Deconvolution",
    },
)


class Inference:
    """The ``inference`` experiment kind (``inference:`` in the file): a sampler or solver on a fixed
    model, nothing trained (e.g. pmp Sec. 5.6's blind deconvolution), the problem one of ``PROBLEMS``.
    """

    name = "inference"
    section = "inference"
    keys = frozenset({"inference"})
    arguments = frozenset({"overrides"})  # key=value: the problem's options

    def run(
        self,
        name: str,
        spec: dict[str, Any],
        argv: list[str],
        results_root: Path | str,
        outputs_root: Path | str,
    ) -> dict[str, Any]:
        scale, extra, _ = _parse_argv(argv)  # report_only=true, variants=: refused (``arguments``)
        problem, options = tier_options(name, spec, scale, extra)
        paper, artefact = name.split("/", 1)
        return problem.run(options, Path(results_root) / paper / f"{artefact}_{scale}")


def tier_options(name: str, spec: dict[str, Any], scale: str, extra: list[str] = ()) -> tuple[Any, Any]:
    """(the problem, its checked options) of an inference experiment at ``scale``: the section's
    options, the tier's over them, then the command line's ``key=value`` over both."""
    section, tiers = spec["inference"], spec.get("scales") or {}
    if not isinstance(section, dict) or "problem" not in section:
        raise RbmlabError(
            f"experiment {name}: inference.problem: missing; choose one of {', '.join(PROBLEMS.names())}"
        )
    if scale not in tiers:
        raise RbmlabError(f"experiment {name}: no settings for scale {scale!r}; defined: {', '.join(tiers)}")
    tier = tiers[scale] or {}
    if not isinstance(tier, dict):
        raise RbmlabError(f"experiment {name}: scales.{scale}: expected a mapping of options, got {tier!r}")
    problem = PROBLEMS.get(section["problem"], f"experiment {name}: inference.problem")()
    own = {k: v for k, v in section.items() if k != "problem"}
    options = merged(merged(own, tier), _command_line(name, extra))
    try:
        return problem, problem.parse(options, "inference")
    except RbmlabError as e:
        raise RbmlabError(f"experiment {name}: {e}") from None


def _command_line(name: str, extra: list[str]) -> dict[str, Any]:
    """``key=value`` arguments as options (a YAML value; ``a.b=value`` nests)."""
    given: dict[str, Any] = {}
    for item in extra:
        key, eq, text = item.partition("=")
        if not eq or not key:
            raise RbmlabError(f"experiment {name}: {item}: expected key=value")
        try:
            value = yaml.safe_load(text)
        except yaml.YAMLError:
            value = text
        *path, last = key.split(".")
        node = given
        for part in path:
            node = node.setdefault(part, {})
            if not isinstance(node, dict):
                raise RbmlabError(f"experiment {name}: {item}: {part} is given a value and options")
        node[last] = value
    return given
