"""An experiment file: its name, loading (``extends`` merged, keys checked against its kind),
and the sweep arithmetic of the ``sweep`` kind's variants, grid, seeds and tiers."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from rbmlab.errors import RbmlabError
from rbmlab.experiment.arguments import SCALE_TIERS, parse_command_line
from rbmlab.experiment.kinds import kind_of
from rbmlab.resources import experiments_dir
from rbmlab.storage.portable import resolve_path
from rbmlab.validation import merged

EXPERIMENTS_DIR = experiments_dir()
COMMON_KEYS = {
    "title",
    "description",
    "scales",
    "report",
    "extends",
}  # every kind's; the rest are the kind's own
OTHER_SWEEP = re.compile(r"\{sweep:([^}]+)\}")  # {sweep:<paper>/<artefact>}: that one's sweep dir
# libyaml's safe loader where PyYAML was built with it (the same documents, ten times faster: a
# test run and `rbmlab experiment list` read every experiment file), else PyYAML's own
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def available() -> list[str]:
    return sorted(f"{p.parent.name}/{p.stem}" for p in EXPERIMENTS_DIR.glob("*/*.yaml"))


def load_spec(name: str, _extending: tuple[str, ...] = ()) -> dict[str, Any]:
    """The checked spec of ``name``: exactly ``<paper>/<artefact>`` (no path), a file under experiments/,
    merged onto the spec it ``extends``."""
    from rbmlab.report.spec import ReportSpec  # noqa: PLC0415

    parts = name.split("/")
    if len(parts) != 2 or not all(
        part not in ("", ".", "..") and all(c.isascii() and (c.isalnum() or c in "_.-") for c in part)
        for part in parts
    ):
        raise RbmlabError(
            f"experiment: {name!r} is not of the form PAPER/ARTEFACT (two names of letters, "
            f"digits, _ . -); available: {', '.join(available())}"
        )
    path = EXPERIMENTS_DIR / f"{name}.yaml"
    if not path.is_file():
        raise RbmlabError(f"experiment: unknown experiment {name!r}; available: {', '.join(available())}")
    try:
        spec = yaml.load(path.read_text(), Loader=SAFE_LOADER) or {}
    except yaml.YAMLError as e:
        raise RbmlabError(f"experiment: {path} is not valid YAML ({str(e).splitlines()[0]})") from None
    if (base := spec.pop("extends", None)) is not None:
        if not isinstance(base, str):
            raise RbmlabError(f"experiment: {path}: extends must name one experiment, got {base!r}")
        if base in (*_extending, name):
            chain = " -> ".join((*_extending, name, base))
            raise RbmlabError(f"experiment: {path}: extends {base!r}, a cycle ({chain})")
        try:
            base_spec = load_spec(base, (*_extending, name))
        except RbmlabError as e:
            raise RbmlabError(f"experiment: {path}: extends {base!r}: {e}") from None
        spec = merged(base_spec, spec)
    kind = kind_of(spec, path)  # the merged file's: its keys are the kind's own
    unknown = set(spec) - COMMON_KEYS - kind.keys
    if unknown:
        raise RbmlabError(
            f"experiment: {path}: unknown key(s) {', '.join(sorted(unknown))} for the {kind.name} kind"
        )
    ReportSpec.parse(spec.get("report") or {}, f"experiment: {path}")  # checked before any run
    for tier in spec.get("scales", {}):
        if tier not in SCALE_TIERS:
            raise RbmlabError(f"experiment: {path}: unknown scale {tier!r}; tiers: {', '.join(SCALE_TIERS)}")
    return spec


VARIANT_KEYS = {"overrides", "grid", "seeds", "after", "scales"}


def variant_spec(value: Any, name: str = "") -> dict[str, Any]:
    """A variant as a mapping (a plain list is its overrides), its keys checked."""
    if isinstance(value, dict):
        unknown = set(value) - VARIANT_KEYS
        if unknown:
            raise RbmlabError(
                f"experiment: variant {name!r}: unknown key(s) {', '.join(sorted(unknown))}; "
                f"known: {', '.join(sorted(VARIANT_KEYS))}"
            )
        return value
    return {"overrides": list(value or [])}


def seed_list(seeds: Any) -> list[Any]:
    """An experiment's ``seeds``: a list, or a count N standing for 0 … N − 1."""
    if isinstance(seeds, bool) or isinstance(seeds, float):
        raise RbmlabError(f"experiment: seeds must be a positive count or a list of integers, got {seeds!r}")
    if isinstance(seeds, int):
        if seeds < 1:
            raise RbmlabError(f"experiment: seeds as a count must be at least 1, got {seeds}")
        return list(range(seeds))
    if isinstance(seeds, str) or not hasattr(seeds, "__iter__"):
        raise RbmlabError(f"experiment: seeds must be a positive count or a list of integers, got {seeds!r}")
    listed = list(seeds)
    if not listed or not all(isinstance(s, int) and not isinstance(s, bool) for s in listed):
        raise RbmlabError(f"experiment: seeds must be a non-empty list of integers, got {listed!r}")
    return listed


def sweep_overrides(
    spec: dict[str, Any], scale: str, extra: list[str], variant: list[str] | dict[str, Any] = ()
) -> list[str]:
    """The ``rbmlab run -m`` arguments of one experiment (variant) at one scale."""
    tier = spec.get("scales", {}).get(scale)
    if tier is None:
        raise RbmlabError(
            f"experiment: no settings for scale {scale!r}; defined: {', '.join(spec.get('scales', {}))}"
        )
    own = variant_spec(variant)
    own_tier = own.get("scales", {}).get(scale, {})
    if "grid" in own or "seeds" in own:  # the variant's own sweep, narrowed by its own tiers
        seeds = own_tier.get("seeds", own.get("seeds", tier.get("seeds", spec.get("seeds", [0]))))
        grid = {**own.get("grid", {}), **own_tier.get("grid", {})}
    else:
        seeds = tier.get("seeds", spec.get("seeds", [0]))
        grid = {**spec.get("grid", {}), **tier.get("grid", {})}
    swept = {
        k: f"{k}={','.join(str(v) for v in values)}"
        for k, values in {**grid, "seed": seed_list(seeds)}.items()
    }
    for override in extra:  # a swept key given on the command line narrows the sweep to it
        key = override.split("=", 1)[0]
        if key in swept:
            swept[key] = override
    extra = [o for o in extra if o.split("=", 1)[0] not in swept]
    return [
        *spec.get("overrides", []),
        *own.get("overrides", []),
        *tier.get("overrides", []),
        *own_tier.get("overrides", []),
        *extra,
        *swept.values(),
        f"scale={scale}",
    ]


def _parse_argv(argv: list[str]) -> tuple[str, list[str], bool]:
    """(scale, other overrides, report_only) of ``rbmlab experiment NAME [args]``, each argument
    checked (rbmlab.experiment.arguments)."""
    line = parse_command_line(argv)
    return line.scale, line.extra, line.report_only


def _only_variants(argv: list[str]) -> list[str] | None:
    """The variants named by ``variants=a,b`` (or ``[a,b]``) on the command line, or None."""
    return parse_command_line(argv).variants


def _known_variants(name: str, names: list[str], variants: dict[str, Any], where: str) -> None:
    unknown = [v for v in names if v not in variants]
    if unknown:
        raise RbmlabError(
            f"experiment: {name}: {where} unknown variant(s) {', '.join(unknown)}; "
            f"defined: {', '.join(variants)}"
        )


def _variants(
    name: str,
    spec: dict[str, Any],
    scale: str,
    extra: list[str],
    sweep_dir: Path | None = None,
    only: list[str] | None = None,
) -> dict[str, list[str]]:
    """Variant name ("" when there are none) → its ``rbmlab run -m`` overrides at ``scale``
    (``{sweep}`` replaced by ``sweep_dir``), in the order they run; ``only``: just these."""
    variants = {v: variant_spec(value, v) for v, value in (spec.get("variants") or {"": []}).items()}
    chosen = spec.get("scales", {}).get(scale, {}).get("variants")
    if chosen is not None:
        _known_variants(name, chosen, variants, f"scale {scale} names")
        variants = {v: variants[v] for v in chosen}
    if only is not None:
        _known_variants(name, only, variants, "variants= names")
        variants = {v: value for v, value in variants.items() if v in only}
    for v, value in variants.items():
        after = value.get("after")
        if after is not None and (
            after not in variants or list(variants).index(after) > list(variants).index(v)
        ):
            raise RbmlabError(
                f"experiment: {name}: variant {v!r} runs after {after!r}, which is not a "
                "variant listed before it at this scale"
            )

    def place(override: str) -> str:
        """``{sweep}`` and ``{sweep:<paper>/<artefact>}`` as directories (outputs/<name>/<scale>)."""
        if sweep_dir is None:
            return override
        root = Path(sweep_dir).resolve()
        outputs = root.parents[2]

        def other(match: re.Match) -> str:
            load_spec(match.group(1))  # a known experiment, or a one-line error
            # <paper>/<artefact>/<scale>: the form a committed runs CSV names its runs in
            return resolve_path(f"{match.group(1)}/{scale}", outputs)

        return OTHER_SWEEP.sub(other, override).replace("{sweep}", str(root))

    return {
        v: [place(o) for o in sweep_overrides(spec, scale, extra, value)] for v, value in variants.items()
    }


def _deferred(spec: dict[str, Any]) -> set[str]:
    """Variants whose jobs are checked just before they run (they read an earlier variant's files)."""
    return {v for v, value in (spec.get("variants") or {}).items() if variant_spec(value, v).get("after")}
