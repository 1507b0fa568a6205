"""The ``leaderboard`` experiment kind: every generative learner on the same data, scored the same
way, at equal compute.

The entrants are not listed anywhere: they are the learners of rbmlab.learners.LEARNERS that
declare ``generative`` (each under its registry name and its declared ``entrants``, such as adaTAP
beside TAP), so a learner registered later joins with no edit here. Each trains with its own
configuration (its yaml: the paper's step counts), adjusted only where the experiment file says
why (``leaderboard.adjust``), up to the compute points ``train.budgets``; its learning rate is
tuned on the validation split over the same grid for every entrant (its own rate times
``lr_factors``; an entrant whose configuration reads no learning rate runs at one), for every
seed. The report (rbmlab.report.leaderboard) picks, per entrant and
compute point, the rate best on validation (mean over seeds) and shows its test score.

File: {leaderboard: {lr_factors, adjust: {entrant: [overrides]}, names: {entrant: label}},
overrides, seeds, scales: {tier: {overrides, seeds, lr_factors}}}.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rbmlab.errors import RbmlabError
from rbmlab.experiment.arguments import key_of
from rbmlab.experiment.spec import _parse_argv, seed_list

SETTINGS = frozenset({"lr_factors", "adjust", "names"})


def entrants() -> dict[str, list[str]]:
    """Entrant name → its overrides: every registered learner declaring ``generative``, under its
    registry name and under each of its ``entrants`` (their overrides after ``learner=<name>``)."""
    from rbmlab.learners import LEARNERS  # noqa: PLC0415 - the registry as it stands (tests add to it)

    found: dict[str, list[str]] = {}
    for name, cls in LEARNERS.items():
        if getattr(cls, "generative", False):
            found[name] = [f"learner={name}"]
            for entrant, overrides in cls.entrants.items():
                found[entrant] = [f"learner={name}", *overrides]
    return found


def _factors(value: Any, where: str) -> list[float]:
    if (
        not isinstance(value, list)
        or not value
        or not all(isinstance(f, (int, float)) and not isinstance(f, bool) and f > 0 for f in value)
    ):
        raise RbmlabError(
            f"experiment: {where}: lr_factors must be a non-empty list of positive numbers, got {value!r}"
        )
    return [float(f) for f in value]


def settings(name: str, spec: dict[str, Any], scale: str) -> tuple[list[float], dict[str, list[str]]]:
    """(lr_factors at ``scale``, adjustments by entrant) of a leaderboard file, checked."""
    board = spec.get("leaderboard") or {}
    if not isinstance(board, dict) or set(board) - SETTINGS:
        raise RbmlabError(
            f"experiment: {name}: leaderboard must be a mapping of "
            f"{', '.join(sorted(SETTINGS))}; got {board!r}"
        )
    tier = spec.get("scales", {}).get(scale) or {}
    factors = _factors(tier.get("lr_factors", board.get("lr_factors", [1.0])), name)
    adjust = board.get("adjust") or {}
    known = entrants()
    unknown = sorted(set(adjust) - set(known))
    if unknown:
        raise RbmlabError(
            f"experiment: {name}: leaderboard.adjust names {', '.join(unknown)}, not an "
            f"entrant; entrants: {', '.join(known)}"
        )
    return factors, {e: list(o) for e, o in adjust.items()}


def _unit_refusal(cfg) -> str | None:
    """Why the learner of the run config ``cfg`` (with its sampler) cannot train the board's model
    for its unit types (a Potts board: the learners written for binary units), or None."""
    from rbmlab.learners import LEARNERS  # noqa: PLC0415
    from rbmlab.models import MODELS  # noqa: PLC0415
    from rbmlab.units.requirements import check_configured_units  # noqa: PLC0415

    try:
        check_configured_units(cfg.model, MODELS.get(cfg.model.name), LEARNERS.build(cfg.learner))
    except RbmlabError as e:
        return str(e).partition(": ")[2]
    return None


def sweep_spec(name: str, spec: dict[str, Any], scale: str) -> dict[str, Any]:
    """The leaderboard as a sweep: one variant per entrant, its learning-rate grid the entrant's
    own rate (composed with the experiment's and the tier's overrides) times ``lr_factors``; an
    entrant whose configuration does not read learner.lr (Frank-Wolfe's converged bias fit: its
    ``unread``) runs at its own rate only, where each factor would repeat one run. An entrant
    written for other unit types than the board's model is left out, with its reason
    (``not_entered``: entrant → why), where the board's units are not every learner's."""
    from rbmlab.hydra_app import validated_run_config  # noqa: PLC0415

    factors, adjust = settings(name, spec, scale)
    tier = spec.get("scales", {}).get(scale)
    if tier is None:
        raise RbmlabError(
            f"experiment: no settings for scale {scale!r}; defined: {', '.join(spec.get('scales', {}))}"
        )
    board, board_tier = list(spec.get("overrides", [])), list(tier.get("overrides", []))
    variants, not_entered = {}, {}
    for entrant, overrides in entrants().items():
        own = [*overrides, *adjust.get(entrant, [])]
        try:
            unread = _model_unread([*board, *board_tier], own, scale)
            mine, mine_tier = ([o for o in part if key_of(o) not in unread] for part in (board, board_tier))
            cfg = validated_run_config([*mine, *own, *mine_tier, f"scale={scale}"])
        except RbmlabError as e:
            raise RbmlabError(f"experiment: {name}: entrant {entrant}: {e}") from None
        if (why := _unit_refusal(cfg)) is not None:
            not_entered[entrant] = why
            continue
        lr = cfg.learner.lr
        rates = [lr] if "lr" in cfg.learner.unread() else [float(f"{lr * f:.6g}") for f in factors]
        variants[entrant] = {  # the board's settings that the entrant reads, in the sweep's order
            "overrides": [*mine, *own],
            "grid": {"learner.lr": rates},  # one rate where lr is unread
            "scales": {scale: {"overrides": mine_tier}},
        }
    seeds = tier.get("seeds", spec.get("seeds", [0]))
    seed_list(seeds)
    return {
        "title": spec.get("title", name),
        "overrides": [],  # each entrant's own share of them, above
        "variants": variants,
        "seeds": seeds,
        "not_entered": not_entered,
        "scales": {scale: {k: v for k, v in tier.items() if k not in ("lr_factors", "overrides")}},
    }


def _model_unread(board: list[str], own: list[str], scale: str) -> set[str]:
    """The board's ``model.*`` settings that the entrant's learner does not read
    (LearnerConfig.model_unread: Frank-Wolfe grows its hidden units itself), to be left out of its
    jobs rather than refused there."""
    from rbmlab.hydra_app import validated_run_config  # noqa: PLC0415

    cfg = validated_run_config(
        [*[o for o in board if not key_of(o).startswith("model.")], *own, f"scale={scale}"]
    )
    return {f"model.{key}" for key in cfg.learner.model_unread(cfg.model)}


class Leaderboard:
    """The ``leaderboard`` experiment kind: every generative learner on the same data, scored the same
    way at equal compute (``train.budgets``), its learning rate tuned on the validation split.
    """

    name = "leaderboard"
    section = "leaderboard"
    keys = frozenset({"leaderboard", "overrides", "seeds"})
    arguments = frozenset({"outputs_root", "report_only", "variants", "launch", "overrides"})

    def run(
        self,
        name: str,
        spec: dict[str, Any],
        argv: list[str],
        results_root: Path | str,
        outputs_root: Path | str,
    ) -> dict[str, Any]:
        """Train every entrant (unless ``report_only=true``) and write the leaderboard report; with
        report_only and no runs here, the report is rendered again from its committed points."""
        from rbmlab.experiment.sweep import run_sweep  # noqa: PLC0415
        from rbmlab.report import leaderboard as report  # noqa: PLC0415

        scale, _, report_only = _parse_argv(argv)
        paper, artefact = name.split("/", 1)
        stem = Path(results_root) / paper / f"{artefact}_{scale}"
        title = f"{spec.get('title', name)} (scale: {scale})"
        names = (spec.get("leaderboard") or {}).get("names") or {}
        if report_only and not (Path(outputs_root) / name / scale).is_dir() and report.has_points(stem):
            print(
                f"rbmlab experiment {name}: no runs here; rendering from the committed {stem.name}_points.csv"
            )
            return report.render_points(
                report.read_points(stem), stem, title, names, scale, spec.get("description", "")
            )
        board = sweep_spec(name, spec, scale)
        protocol = spec.get("description", "")
        if board["not_entered"]:
            protocol += (
                "\n\nNot entered (written for other unit types): "
                + "; ".join(f"{names.get(e, e)}: {why}" for e, why in board.pop("not_entered").items())
                + "."
            )
        board.pop("not_entered", None)
        return run_sweep(
            name,
            board,
            argv,
            results_root,
            outputs_root,
            report_with=lambda root: report.leaderboard_report(
                root, stem, title, names, scale, list(board["variants"]), protocol
            ),
        )
