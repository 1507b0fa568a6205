"""Hydra helpers: composing and validating configurations, expanding sweeps, and running the
Hydra application that trains one job (or each job of a sweep).

Every user error is a one-line :class:`RbmlabError`; overrides are composed and validated here
before Hydra starts, so a bad sweep fails before its first job.
"""
from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

from omegaconf import OmegaConf

from rbmlab.errors import RbmlabError, fail

CONF_DIR = Path(__file__).resolve().parent.parent / "conf"
# Cached: every job of a sweep (also in launcher worker processes) sees the launching process's pid.
OmegaConf.register_new_resolver("rbmlab_pid", os.getpid, replace=True, use_cache=True)
FAILED_JOBS: list[str] = []


def _one_line(e: Exception) -> str:
    """Hydra's multi-line composition errors, condensed to the line a user needs."""
    text = str(e)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    if not lines:
        return type(e).__name__
    missing = re.search(r"Could not find '([^']+)/([^'/]+)'", text)   # group: up to the last /
    if missing:
        group, option = missing.groups()
        options = []
        if "Available options" in text:
            after = lines[next(i for i, ln in enumerate(lines) if ln.startswith("Available options")) + 1:]
            options = [ln for ln in after[:next((i for i, ln in enumerate(after)
                                                  if ln.startswith("Config search path")), len(after))]]
        return f"{group}={option}: no such option; available: {', '.join(options) or 'none'}"
    unknown = re.search(r"Could not override '([^']+)'", text)
    if unknown and "not in struct" in f"{text} {e.__cause__}":
        key = unknown.group(1)
        return f"{key}: unknown config key (`rbmlab run --cfg job` shows the known ones)"
    return lines[0] if len(lines) == 1 else f"{lines[0]} ({lines[-1]})"


def compose(config_name: str, overrides: list[str]):
    """Compose ``conf/<config_name>.yaml`` with overrides (no sweeps); one-line errors."""
    from hydra import compose as hydra_compose, initialize_config_dir  # noqa: PLC0415
    from hydra.core.global_hydra import GlobalHydra  # noqa: PLC0415

    GlobalHydra.instance().clear()
    try:
        with initialize_config_dir(config_dir=str(CONF_DIR), version_base="1.3"):
            return hydra_compose(config_name=config_name, overrides=overrides)
    except Exception as e:  # hydra raises several unrelated types for bad overrides
        raise RbmlabError(_one_line(e)) from None
    finally:
        GlobalHydra.instance().clear()


def expand_overrides(overrides: list[str]) -> list[list[str]]:
    """The override lists to validate before a sweep: the first value of every swept key,
    then each other value of each swept key in turn (linear in the number of values)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser  # noqa: PLC0415

    try:
        parsed = OverridesParser.create().parse_overrides(overrides)
    except Exception as e:
        raise RbmlabError(_one_line(e)) from None
    options = []
    for o in parsed:
        if o.is_hydra_override():
            continue
        if o.is_sweep_override():
            key = o.get_key_element()
            options.append([f"{key}={v}" for v in o.sweep_string_iterator()])
        else:
            options.append([o.input_line])
    base = [opts[0] for opts in options]
    combos = [base]
    for i, opts in enumerate(options):
        combos += [base[:i] + [alt] + base[i + 1:] for alt in opts[1:]]
    return combos


def validated_run_config(overrides: list[str]):
    from rbmlab.config import parse_run_config  # noqa: PLC0415

    return parse_run_config(compose("config", overrides))


def _alive(pid: int | None) -> bool:
    if not pid or pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def find_run_to_resume(config_hash: str, root: Path = Path("outputs/runs")) -> Path | None:
    """The newest interrupted run under ``root`` with the same configuration: not completed,
    not diverged (it would diverge again), and not still running in another process."""
    candidates = []
    for summary in root.glob("*/summary.json"):
        try:
            s = json.loads(summary.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        if (s.get("config_hash") == config_hash and s.get("status") in ("running", "failed")
                and not (s.get("status") == "running" and _alive(s.get("pid")))):
            candidates.append(summary.parent)
    return max(candidates, key=lambda p: p.stat().st_mtime) if candidates else None


# ---------------------------------------------------------------- run (Hydra app)
def _hydra_task(cfg) -> None:
    """Body of one Hydra job (single run or one job of a sweep)."""
    from hydra.core.hydra_config import HydraConfig  # noqa: PLC0415
    from hydra.types import RunMode  # noqa: PLC0415

    from rbmlab.config import parse_run_config  # noqa: PLC0415
    from rbmlab.runner import train  # noqa: PLC0415

    hc = HydraConfig.get()
    out = Path(hc.runtime.output_dir)
    sweeping = hc.mode == RunMode.MULTIRUN
    try:
        train(parse_run_config(cfg), out, list(hc.overrides.task))
    except Exception as e:  # noqa: BLE001 - a sweep goes on; the run's record says what happened
        message = str(e) if isinstance(e, RbmlabError) else f"{type(e).__name__}: {e}"
        record_failure(out / "summary.json", message)
        if not sweeping:
            if isinstance(e, RbmlabError):
                fail(message)
            raise
        FAILED_JOBS.append(f"{out}: {message}")
        print(f"rbmlab: job {hc.job.num} failed: {message}", file=sys.stderr)


def record_failure(summary_path: Path, message: str) -> None:
    """Mark a run failed, keeping what its summary already says; a completed run is left alone."""
    from rbmlab.records import write_json  # noqa: PLC0415

    summary = {}
    if summary_path.exists():
        try:
            summary = json.loads(summary_path.read_text())
        except (OSError, json.JSONDecodeError):
            summary = {}
    if summary.get("status") == "completed":
        return
    summary_path.parent.mkdir(parents=True, exist_ok=True)
    write_json(summary_path, {**summary, "status": "failed", "error": message})


def run_hydra(argv: list[str]) -> None:
    import hydra  # noqa: PLC0415

    app = hydra.main(config_path=str(CONF_DIR), config_name="config", version_base="1.3")(_hydra_task)
    saved = sys.argv
    sys.argv = ["rbmlab run", *argv]
    FAILED_JOBS.clear()
    try:
        app()
    finally:
        sys.argv = saved
    if FAILED_JOBS:
        raise RbmlabError(f"{len(FAILED_JOBS)} job(s) of the sweep failed; first: {FAILED_JOBS[0]}")


HYDRA_OPTIONS_WITH_VALUE = {"--config-name", "-cn", "--config-path", "-cp", "--config-dir", "-cd",
                            "--experimental-rerun"}


def overrides_of(argv: list[str]) -> list[str]:
    """The key=value arguments of a Hydra command line (flags and their values left out)."""
    out, skip = [], False
    for a in argv:
        if skip:
            skip = False
        elif a.startswith("-"):
            skip = a in HYDRA_OPTIONS_WITH_VALUE
        else:
            out.append(a)
    return out


