"""The ``gallery`` experiment kind (crbm_bp Figure 2): an image grid of other experiments' runs at
the same scale, {split, examples, rows: [{label, show: input | target | prediction, run:
{experiment: <paper>/<artefact>, variant, <key>: value}}]} (rbmlab.report.gallery); those
experiments run first when absent. To results/<paper>/<artefact>_<scale>.{png,md}."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import rbmlab.experiment.spec as spec_file
from rbmlab.experiment.spec import _parse_argv, load_spec
from rbmlab.experiment.sweep import _run_if_absent, check_passed_on, passed_on


class Gallery:
    """The ``gallery`` experiment kind (crbm_bp Figure 2): an image grid of inputs, targets and
    predictions of other experiments' runs at the same scale.
    """

    name = "gallery"
    section = "gallery"
    keys = frozenset({"gallery"})
    arguments = frozenset(
        {"outputs_root", "report_only", "variants", "launch", "overrides"}
    )  # for its sources

    def run(
        self,
        name: str,
        spec: dict[str, Any],
        argv: list[str],
        results_root: Path | str,
        outputs_root: Path | str,
    ) -> dict[str, Any]:
        return _run_gallery(name, spec, argv, _parse_argv(argv), results_root, outputs_root)


def _run_gallery(
    name: str,
    spec: dict[str, Any],
    argv: list[str],
    parsed: tuple[str, list[str], bool],
    results_root: Path | str,
    outputs_root: Path | str,
) -> dict[str, Path]:
    """An image grid (``gallery:``) of the runs of other experiments at the same scale."""
    from rbmlab.report.gallery import Row, check_gallery, find_run, make_gallery  # noqa: PLC0415

    scale, extra, report_only = parsed
    split, examples, rows = check_gallery(
        spec["gallery"], f"experiment: {spec_file.EXPERIMENTS_DIR / name}.yaml"
    )
    sources = list(dict.fromkeys(row["run"]["experiment"] for row in rows))
    for source in sources:
        load_spec(source)  # known, or one line naming it
    check_passed_on(name, sources, passed_on(argv), scale, extra, report_only, outputs_root)
    for source in sources:
        if not report_only:
            _run_if_absent(source, argv, scale, extra, results_root, outputs_root)
    found = [
        Row(
            row["label"],
            find_run(
                Path(outputs_root) / row["run"]["experiment"] / scale,
                {k: v for k, v in row["run"].items() if k != "experiment"},
            ),
            row["show"],
            row.get("sweeps"),
            row.get("sampler"),
        )
        for row in rows
    ]
    paper, artefact = name.split("/", 1)
    paths = make_gallery(
        found,
        split,
        examples,
        f"{spec.get('title', name)} (scale: {scale})",
        Path(results_root) / paper / f"{artefact}_{scale}",
        f"rbmlab experiment {name} scale={scale}",
    )
    print(f"rbmlab experiment {name}: wrote {paths['plot']} and {paths['table']}")
    return paths
