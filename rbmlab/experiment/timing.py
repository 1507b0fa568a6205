"""The ``timing`` experiment kind (``bench:`` in the file): a bench part of rbmlab.bench at the
tier's sizes, as a markdown table with the paper's numbers beside: {part: <rbmlab.bench.
EXPERIMENT_PARTS name>, rounds, scales: {tier: keyword arguments}}; report.paper: [{row: the
start of a row's name, value}]. To results/<paper>/<artefact>_<scale>.md."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

from rbmlab.errors import RbmlabError
from rbmlab.experiment.spec import _parse_argv


class Timing:
    """The ``timing`` experiment kind (``bench:`` in the file): a bench part of rbmlab.bench at the
    tier's sizes, as a markdown table with the paper's numbers beside.
    """

    name = "timing"
    section = "bench"
    keys = frozenset({"bench"})
    arguments = frozenset()  # scale= (and results_root=) only: its options are the file's tiers

    def run(
        self,
        name: str,
        spec: dict[str, Any],
        argv: list[str],
        results_root: Path | str,
        outputs_root: Path | str,
    ) -> dict[str, Any]:
        scale, _, _ = _parse_argv(argv)
        paper, artefact = name.split("/", 1)
        return _run_timing(name, spec, scale, Path(results_root) / paper / f"{artefact}_{scale}")


def _run_timing(name: str, spec: dict[str, Any], scale: str, stem: Path) -> dict[str, Any]:
    """A timing artefact (``bench:``): its bench part at the tier's sizes, as a markdown table
    (rbmlab.bench.render, the machine's facts at its head) with the paper's numbers beside."""
    from rbmlab import bench  # noqa: PLC0415
    from rbmlab.backend.machine import facts  # noqa: PLC0415
    from rbmlab.storage.provenance import source_revision  # noqa: PLC0415
    from rbmlab.storage.publish import publish  # noqa: PLC0415

    timing = spec["bench"]
    part = bench.EXPERIMENT_PARTS.get(timing.get("part"), f"experiment {name}: bench.part")
    options = (timing.get("scales") or {}).get(scale) or {}
    known = [p for p in inspect.signature(part).parameters if p != "rounds"]
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise RbmlabError(
            f"experiment {name}: bench.scales.{scale}: unknown option(s) {', '.join(unknown)} "
            f"of part {timing['part']}; known: {', '.join(known)}"
        )
    rows = part(
        int(timing.get("rounds", 5)),
        **{k: tuple(v) if isinstance(v, list) else v for k, v in options.items()},
    )
    for entry in (spec.get("report") or {}).get("paper") or []:
        for r in rows:
            if r["name"].startswith(entry["row"]):
                r["target"] = f"paper: {entry['value']}"
    result = {
        "rounds": int(timing.get("rounds", 5)),
        "command": f"rbmlab experiment {name} scale={scale}",
        "experiment": True,
        "source": source_revision(),
        "machine": facts(),
        "rows": rows,
    }
    text = f"# {spec.get('title', name)} (scale: {scale})\n\n" + bench.render(result).split("\n", 2)[2]
    stem.parent.mkdir(parents=True, exist_ok=True)
    publish({stem.with_suffix(".md"): text}, what="timing")
    print(text)
    return {"table": stem.with_suffix(".md"), "rows": rows}
