"""The jobs of an experiment's tier as rbmlab.bench.tier_price prices them: each job's override
list, a job whose model comes from another experiment's runs (``model.init={sweep:…}``) given that
experiment's model settings instead (the same sizes: the same work)."""

from __future__ import annotations

import re


def jobs_of(name: str, scale: str) -> list[tuple[list[str], str]]:
    """The override list of every job of experiment ``name`` at ``scale``, each with the source
    experiment's model settings put first where its model comes from another experiment's runs
    (the ``model.init`` override dropped), and a note saying so."""
    from rbmlab.experiment.spec import _variants, load_spec  # noqa: PLC0415
    from rbmlab.hydra_app import expand_overrides  # noqa: PLC0415

    out = []
    for overrides in _variants(name, load_spec(name), scale, [], None).values():
        for combo in expand_overrides(overrides):
            init = next((o for o in combo if o.startswith("model.init=") and "{sweep" in o), None)
            if init is None:
                out.append((combo, ""))
                continue
            source = re.search(r"\{sweep(?::([^}]+))?\}/([\w-]+)", init)
            experiment, variant = source.group(1) or name, source.group(2)
            model = _model_settings(experiment, variant, scale)
            rest = [o for o in combo if o is not init]
            out.append((model + rest, f"the models of {experiment}/{variant}, evaluated"))
    return out


def _model_settings(experiment: str, variant: str, scale: str) -> list[str]:
    """The model overrides (``model=…``, ``model.…=v``, unswept, no init) of one variant of an
    experiment at ``scale``."""
    from rbmlab.experiment.spec import _variants, load_spec  # noqa: PLC0415

    overrides = _variants(experiment, load_spec(experiment), scale, [], None)[variant]
    return [
        o
        for o in overrides
        if (o.startswith("model=") or o.startswith("model."))
        and "," not in o
        and not o.startswith("model.init")
    ]
