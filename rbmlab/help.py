"""The words of ``--help``, read from the configuration so that they cannot drift from it.

An option of a config group (``conf/<group>/<option>.yaml``) is described by its file's first
comment line; a component's keys by their ``option(...)`` declarations (rbmlab.validation); the
top-level keys of ``conf/config.yaml`` and ``conf/evaluate.yaml`` by their trailing comments;
``train.*`` by rbmlab.config.TrainConfig. Only what a group is for is written here
(:data:`GROUP_DOCS`). ``rbmlab run --help`` is Hydra's help with rbmlab's template
(``conf/hydra/help/rbmlab.yaml``), which calls :func:`help_section` through the ``rbmlab_help``
resolver; ``rbmlab evaluate --help`` (rbmlab.evaluate.usage) is made of the same sections.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from rbmlab.errors import RbmlabError

# What each config group chooses (every directory of conf/ but hydra/; tests/test_help.py checks).
GROUP_DOCS = {
    "dataset": "the data: its splits and preprocessing (`rbmlab data list` says which are here)",
    "task": "what the model is asked at test time: the splits as they are, or corrupted inputs "
    "with the clean images as targets",
    "model": "the model family and its size, units and initialisation",
    "learner": "the training algorithm and its hyperparameters",
    "learner/optimizer": "the update rule a learner steps with (learner/optimizer=adam)",
    "learner/optimizer_tuning": "a paper's optimizer settings for one learner/optimizer pair "
    "(+learner/optimizer_tuning=tap_sgd)",
    "learner/sampler": "a sampler's options for a learner's negative phase "
    "(+learner/sampler=parallel_tempering learner.sampler.n_temperatures=20)",
    "evaluator": "how the model is scored, per evaluation point and at the end",
    "backend": "the array library and float type",
    "scale": "the tier label recorded in every run (rbmlab experiment sets it)",
    "solver": "defaults of the deterministic inference methods, which components choose by name "
    "(evaluator.inference=bp_sum, learner.inference=adatap)",
}
SHOWN_GROUPS = {
    "config": ("dataset", "task", "model", "learner", "evaluator", "backend"),
    "evaluate": ("dataset", "task", "evaluator", "backend"),
}
_KEY_COMMENT = re.compile(r"^(\s*)([A-Za-z_]\w*):\s*(.*?)\s+#\s*(.+?)\s*$")
_BLOCK = re.compile(r"^([A-Za-z_]\w*):\s*(#.*)?$")  # a top-level key whose value is the block below
WIDTH = 28  # the column where descriptions start


def conf_dir() -> Path:
    from rbmlab.resources import conf_dir  # noqa: PLC0415 - one place says where conf/ is

    return conf_dir()


def first_comment(path: Path) -> str:
    """The first comment line of a yaml file (``# @package`` lines skipped), or ''."""
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("#") and not line.startswith("# @package"):
            return line.lstrip("#").strip()
        if line and not line.startswith("#"):
            break
    return ""


def key_comments(config_name: str) -> dict[str, tuple[str, str]]:
    """``{key: (value, comment)}`` of the ``key: value  # comment`` lines of
    ``conf/<config_name>.yaml``, a key in a top-level block as ``block.key``."""
    out, block = {}, ""
    for line in (conf_dir() / f"{config_name}.yaml").read_text().splitlines():
        if m := _BLOCK.match(line):
            block = m.group(1)
        elif (m := _KEY_COMMENT.match(line)) and m.group(3):
            indent, key, value, comment = m.groups()
            out[f"{block}.{key}" if indent and block else key] = (value, comment)
    return out


def _line(left: str, text: str, indent: int = 2) -> str:
    left = " " * indent + left
    pad = WIDTH if len(left) < WIDTH else len(left) + 2
    return f"{left:<{pad}}{text}".rstrip()


def group_options(group: str, default: str | None = None) -> list[str]:
    """One line per option of ``group``: its name and its file's first comment."""
    lines = []
    for path in sorted((conf_dir() / group).glob("*.yaml")):
        mark = " (default)" if path.stem == default else ""
        lines.append(_line(path.stem + mark, first_comment(path), indent=6))
    return lines


def groups_section(config_name: str = "config") -> list[str]:
    """Every group ``conf/<config_name>.yaml`` chooses, what it is for, and its options; for
    ``config``, also the groups that are chosen inside others or by name."""
    from omegaconf import OmegaConf  # noqa: PLC0415

    defaults = {}
    for item in OmegaConf.to_container(OmegaConf.load(conf_dir() / f"{config_name}.yaml")).get(
        "defaults", []
    ):
        if isinstance(item, dict):
            defaults.update({k: v for k, v in item.items() if not k.startswith("override ")})
    groups = (
        list(defaults) if config_name != "config" else [g for g in GROUP_DOCS if (conf_dir() / g).is_dir()]
    )
    lines = []
    for group in groups:
        lines.append(_line(f"{group}=NAME", GROUP_DOCS[group]))
        lines += group_options(group, defaults.get(group))
    return lines


def component_options(prefix: str, config: Any) -> list[str]:
    """``prefix.key=value  doc`` for each declared option of a parsed component configuration,
    nested components (``learner.optimizer``) in turn."""
    lines, nested = [], []
    for f in dataclasses.fields(config):
        value, doc = getattr(config, f.name), f.metadata.get("doc", "")
        if f.name == "name":
            continue
        if dataclasses.is_dataclass(value):
            nested += [
                _line(f"{prefix}.{f.name}: {getattr(value, 'name', '')}", doc),
                *component_options(f"{prefix}.{f.name}", value),
            ]
        elif isinstance(value, list) and value and all(dataclasses.is_dataclass(v) for v in value):
            for i, item in enumerate(value):  # evaluator=combined's parts
                nested += [
                    _line(f"{prefix}.{f.name}[{i}]: {getattr(item, 'name', '')}", doc if i == 0 else ""),
                    *component_options(f"{prefix}.{f.name}[{i}]", item),
                ]
        else:
            lines.append(_line(f"{prefix}.{f.name}={shown_value(value)}", doc))
    return lines + nested


def shown_value(value: Any) -> str:
    """A value as it is written on the command line."""
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(shown_value(v) for v in value) + "]"
    return "null" if value is None else str(value).lower() if isinstance(value, bool) else str(value)


def _parsers() -> dict[str, Callable[[Any], Any]]:
    from rbmlab.config import BackendConfig  # noqa: PLC0415
    from rbmlab.data import validate_dataset_options  # noqa: PLC0415
    from rbmlab.data.tasks import TASKS  # noqa: PLC0415
    from rbmlab.evaluators import EVALUATORS  # noqa: PLC0415
    from rbmlab.learners import LEARNERS  # noqa: PLC0415
    from rbmlab.models import MODELS  # noqa: PLC0415
    from rbmlab.validation import parse_options  # noqa: PLC0415

    return {
        "dataset": validate_dataset_options,
        "task": TASKS.parse,
        "model": MODELS.parse,
        "learner": LEARNERS.parse,
        "evaluator": EVALUATORS.parse,
        "backend": lambda node: parse_options(BackendConfig, node, "backend"),
    }


def components_section(cfg: Mapping[str, Any], config_name: str = "config") -> list[str]:
    """The options of the components ``cfg`` (a composed configuration) chooses, with their values
    there (the overrides given applied) and their declared meaning."""
    lines, parsers = [], _parsers()
    for group in SHOWN_GROUPS[config_name]:
        node = dict(cfg.get(group) or {})
        if config_name == "evaluate" and group == "backend":
            node.pop("dtype", None)  # evaluate's dtype may be 'saved' (its own key, below)
        lines.append(_line(f"{group}: {node.get('name', '')}", GROUP_DOCS[group]))
        try:
            lines += component_options(group, parsers[group](node))
        except RbmlabError as e:
            lines.append(_line("", f"(not valid: {e})", indent=4))
            lines += declared_options(group, node)
    return lines


def declared_options(group: str, node: Mapping[str, Any]) -> list[str]:
    """``group.key=value  doc`` for each option declared by the component ``node`` chooses, when
    its options do not parse (``dataset=file`` before ``dataset.path`` is given): the value given,
    else the default. None for a component name that is not registered."""
    from rbmlab.config import BackendConfig  # noqa: PLC0415
    from rbmlab.data.registry import get_spec  # noqa: PLC0415
    from rbmlab.data.tasks import TASKS  # noqa: PLC0415
    from rbmlab.evaluators import EVALUATORS  # noqa: PLC0415
    from rbmlab.learners import LEARNERS  # noqa: PLC0415
    from rbmlab.models import MODELS  # noqa: PLC0415
    from rbmlab.validation import option_docs  # noqa: PLC0415

    classes = {
        "dataset": lambda name: get_spec(name).options,
        "task": lambda name: TASKS.get(name).config_class,
        "model": lambda name: MODELS.get(name).config_class,
        "learner": lambda name: LEARNERS.get(name).config_class,
        "evaluator": lambda name: EVALUATORS.get(name).config_class,
        "backend": lambda name: BackendConfig,
    }
    try:
        declared = option_docs(classes[group](node.get("name")))
    except RbmlabError:
        return []
    return [
        _line(f"{group}.{key}={shown_value(node.get(key, default))}", doc)
        for key, (default, doc) in declared.items()
        if key != "name" and not isinstance(node.get(key), Mapping)
    ]


def _component_classes(group: str) -> list[type]:
    """The option classes of every registered component of ``group`` (``train``: TrainConfig)."""
    from rbmlab.config import BackendConfig, TrainConfig  # noqa: PLC0415
    from rbmlab.data.registry import DATASET_NAMES, get_spec  # noqa: PLC0415
    from rbmlab.data.tasks import TASKS  # noqa: PLC0415
    from rbmlab.evaluators import EVALUATORS  # noqa: PLC0415
    from rbmlab.learners import LEARNERS  # noqa: PLC0415
    from rbmlab.models import MODELS  # noqa: PLC0415

    registries = {"task": TASKS, "model": MODELS, "learner": LEARNERS, "evaluator": EVALUATORS}
    if group in registries:
        return [registries[group].get(name).config_class for name, _ in registries[group].items()]
    if group == "dataset":
        return [get_spec(name).options for name in DATASET_NAMES]
    return {"train": [TrainConfig], "backend": [BackendConfig]}.get(group, [])


def declared_option(key: str) -> dict[str, Any] | None:
    """The declaration (``option`` metadata) of a dotted config key such as ``model.n_hidden``:
    the first registered component of its group declaring that option with a ``label``, else the
    first declaring it at all; None when none does. Nested components (``learner.optimizer.lr``)
    are followed through their declared defaults."""
    group, _, path = key.partition(".")
    if not path:
        return None
    found = [meta for cls in _component_classes(group) for meta in _field_metas(cls, path.split("."))]
    labelled = [m for m in found if m.get("label")]
    return (labelled or found or [None])[0]


def _field_metas(cls: Any, parts: list[str]) -> list[dict[str, Any]]:
    """The metadata of the field at ``parts`` under option class ``cls``: one, or one per
    component a nested field may hold (``learner.sampler.damping``); none when absent."""
    from rbmlab.registry import Registry  # noqa: PLC0415

    if cls is None or not dataclasses.is_dataclass(cls):
        return []
    f = {f.name: f for f in dataclasses.fields(cls)}.get(parts[0])
    if f is None:
        return []
    if len(parts) == 1:
        return [dict(f.metadata)]
    default = f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[misc]
    if dataclasses.is_dataclass(default):
        return _field_metas(type(default), parts[1:])
    registry = getattr(f.metadata.get("parse"), "__self__", None)  # a component: Registry.parse(_optional)
    if not isinstance(registry, Registry):
        return []
    return [
        meta for _, component in registry.items() for meta in _field_metas(component.config_class, parts[1:])
    ]


def keys_section(config_name: str = "config") -> list[str]:
    """The top-level keys (their trailing comments in the yaml); for ``config``, ``train.*`` from
    the declarations of rbmlab.config.TrainConfig."""
    from rbmlab.config import TrainConfig  # noqa: PLC0415
    from rbmlab.validation import option_docs  # noqa: PLC0415

    declared = ("train.", "hydra.")  # train: TrainConfig's declarations; hydra: not the user's
    lines = [
        _line(f"{key}={value}", comment)
        for key, (value, comment) in key_comments(config_name).items()
        if not key.startswith(declared)
    ]
    if config_name == "config":
        lines += [
            _line(f"train.{key}={shown_value(default)}", doc)
            for key, (default, doc) in option_docs(TrainConfig).items()
        ]
    return lines


def help_section(name: str, *, _root_: Any) -> str:
    """The ``rbmlab_help`` resolver of Hydra's help template: ``groups``, ``components`` or ``keys``
    of the configuration being composed (``$`` doubled: the template is a string.Template)."""
    from omegaconf import OmegaConf  # noqa: PLC0415

    if name == "groups":
        lines = groups_section()
    elif name == "components":
        cfg = OmegaConf.to_container(_root_, resolve=False)
        cfg.pop("hydra", None)
        lines = components_section(cfg)
    elif name == "keys":
        lines = keys_section()
    else:
        raise RbmlabError(f"rbmlab_help: unknown section {name!r}; sections: groups, components, keys")
    return "\n".join(lines).replace("$", "$$")


def doctor_help() -> str:
    """``rbmlab doctor --help``."""
    return "\n".join(
        [
            "usage: rbmlab doctor",
            "",
            "Print the numerical stack this process runs on: Python and numpy versions, the BLAS",
            "library and its kernel, its thread count, and the CPU's features. It takes no arguments;",
            "the same facts head every result of `make bench`.",
        ]
    )


HELP_FLAGS = ("-h", "--help")
