"""Registries: one per plug-in axis (model family, inference method, optimizer, learner, evaluator).

An entry maps a name to ``"module:attribute"``; the module is imported only when the entry is
used, so registries never import their members at package import time (no cycles) and a broken
optional plug-in cannot stop the others. A component class carries ``config_class``, a
dataclass declared with :func:`rbmlab.validation.option`; :meth:`Registry.parse` validates a
config group against it and :meth:`Registry.build` makes the component from the parsed config.
Adding a component is its module, its yaml in ``conf/`` and one line in its axis's registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from rbmlab.errors import RbmlabError
from rbmlab.validation import parse_options


class Registry:
    def __init__(self, kind: str, entries: Mapping[str, str]):
        self.kind = kind  # 'model', 'learner', ... (the config group's key)
        self._entries = dict(entries)  # name -> "module:attribute"

    def names(self) -> list[str]:
        return list(self._entries)

    def with_entries(self, **extra: str) -> Registry:
        """A new registry of the same kind: these entries, then ``extra`` (name="module:attribute";
        a name already here is replaced in place). This one is left as it is: a test registers a
        toy component by putting the new registry where the old one is looked up."""
        return Registry(self.kind, {**self._entries, **extra})

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def get(self, name: Any, key: str | None = None) -> Any:
        """The component class registered as ``name`` (one-line error naming ``key`` if unknown)."""
        if not isinstance(name, str) or name not in self._entries:
            raise RbmlabError(
                f"{key or self.kind + '.name'}: unknown {self.kind} {name!r}; "
                f"choose one of {', '.join(self._entries)}"
            )
        module, attribute = self._entries[name].split(":")
        return getattr(importlib.import_module(module), attribute)

    def parse(self, node: Any, prefix: str | None = None) -> Any:
        """Validate a config group ``{name: ..., options...}`` into its component's config class."""
        prefix = prefix or self.kind
        if not isinstance(node, Mapping):
            node = {"name": node} if isinstance(node, str) else node
        if not isinstance(node, Mapping) or "name" not in node:
            raise RbmlabError(f"{prefix}.name: missing; choose one of {', '.join(self._entries)}")
        cls = self.get(node["name"], f"{prefix}.name").config_class
        return parse_options(cls, node, prefix, f"{self.kind} {node['name']}")

    def parse_optional(self, node: Any, prefix: str | None = None) -> Any:
        """:meth:`parse`, or None for None (an option whose null means a default component, such
        as ``learner.sampler``: the model family's)."""
        return None if node is None else self.parse(node, prefix)

    def build(self, config: Any) -> Any:
        """The component for a parsed ``config`` (its class called with the config)."""
        return self.get(config.name)(config)

    def items(self):
        """(name, component class) for every entry (imports them all)."""
        return [(name, self.get(name)) for name in self._entries]
