"""How the jobs of each experiment's tier would pack under ``hydra/launcher=packed`` (issue 55):
jobs, packs, the largest pack, and why the others train alone.

    python scripts/paper_tier_packs.py [scale=paper] [papers=crbm_bp,dcp,...]

Each sweep experiment's variants launch apart (one pack set each); within a variant the jobs are
composed and checked as ``rbmlab run`` does (no data read: the dataset's configuration stands for
its training-set size), then keyed by rbmlab.run.packed.pack_key and refused by
rbmlab.run.packed.alone_because. A job whose model starts from another experiment's runs
(``model.init={sweep:...}``) is counted as "reads another experiment's runs". Prints one line per
experiment.
"""

from __future__ import annotations

import collections
import sys

from rbmlab.errors import fail
from rbmlab.validation import typed_key_values

DEFAULTS = {"scale": "paper", "papers": ""}


def packs_of(name: str, scale: str) -> tuple[int, list[int], collections.Counter]:
    """(jobs, the sizes of its packs, why the others train alone) of one experiment at ``scale``."""
    from rbmlab.data import dataset_dimension  # noqa: PLC0415
    from rbmlab.errors import RbmlabError  # noqa: PLC0415
    from rbmlab.experiment.spec import _variants, load_spec  # noqa: PLC0415
    from rbmlab.hydra_app import expand_overrides, validated_run_config  # noqa: PLC0415
    from rbmlab.run.packed import alone_because, pack_key  # noqa: PLC0415
    from rbmlab.run.runner import components  # noqa: PLC0415

    jobs, sizes, alone = 0, [], collections.Counter()
    for overrides in _variants(name, load_spec(name), scale, [], None).values():
        keys: collections.Counter = collections.Counter()
        for combo in expand_overrides(overrides):
            jobs += 1
            if any("{sweep" in o for o in combo):
                alone["reads another experiment's runs"] += 1
                continue
            try:
                cfg = validated_run_config(combo)
                model_class, model_sizes, learner, *_ = components(cfg, dataset_dimension(cfg.dataset))
            except RbmlabError as e:
                alone[f"refused: {e}"] += 1
                continue
            why = alone_because(cfg, learner, model_class)
            if why is not None:
                alone[why] += 1
            else:
                keys[pack_key(cfg, model_sizes, (sorted(cfg.dataset.items()),))] += 1
        sizes += list(keys.values())
    return jobs, sizes, alone


def main(argv: list[str]) -> None:
    from rbmlab.experiment.spec import available, load_spec  # noqa: PLC0415

    opts = typed_key_values(argv, DEFAULTS, {})
    papers = [p for p in opts["papers"].split(",") if p]
    for name in available():
        spec = load_spec(name)
        if papers and name.split("/")[0] not in papers:
            continue
        if (
            spec.get("kind", "sweep") != "sweep"
            or spec.get("runs_of")
            or opts["scale"] not in spec.get("scales", {})
        ):
            continue
        jobs, sizes, alone = packs_of(name, opts["scale"])
        why = "; ".join(f"{n} {reason}" for reason, n in alone.most_common())
        packs = f"{jobs} jobs, {len(sizes)} packs (largest {max(sizes, default=0)})"
        print(f"{name}: {packs}{'; alone: ' + why if why else ''}")


if __name__ == "__main__":
    try:
        main(sys.argv[1:])
    except Exception as e:  # noqa: BLE001 - one line, as every rbmlab command
        fail(str(e))
