"""Sphinx directives that write rbmlab's reference pages from the code itself, so that they cannot
drift from it (the same sources ``rbmlab run --help`` reads, rbmlab.help):

```{rbmlab-options} GROUP``` (MyST)
    every option of a configuration group (``conf/GROUP/*.yaml``): its file's first comment and a
    table of the keys its component declares with ``option(...)`` (rbmlab.validation): default,
    meaning, and the values or range it accepts. ``train`` and ``backend`` are one class each.

```{rbmlab-registry} KIND``` (MyST)
    every registered component of a kind (model, learner, evaluator, inference, optimizer): its
    name, its class (linked to the API reference) and the first line of its docstring.

```{rbmlab-artefacts} PAPER``` (MyST)
    every table and figure committed in ``results/PAPER/``, inline: a paper's page shows its
    artefacts as its README names them.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

from docutils import nodes
from docutils.parsers.rst import Directive, directives
from docutils.statemachine import StringList
from sphinx.util import logging
from sphinx.util.nodes import nested_parse_with_titles

from rbmlab import help as rbmlab_help
from rbmlab.help import GROUP_DOCS, first_comment, key_comments, shown_value

logger = logging.getLogger(__name__)

GROUPS = (
    "dataset",
    "task",
    "model",
    "learner",
    "learner/optimizer",
    "learner/sampler",
    "evaluator",
    "solver",
    "backend",
    "scale",
    "train",
    "keys",
)


def _escape(text: str) -> str:
    """Text for a cell of a Markdown table: one line, its pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{text}`" if text else ""


def accepts(meta: dict[str, Any]) -> str:
    """What an option accepts, from its declaration: its choices or its range."""
    if meta.get("choices"):
        return ", ".join(f"`{c}`" for c in meta["choices"])
    lo, hi = meta.get("lo"), meta.get("hi")
    if lo is not None and hi is not None:
        return f"{'(' if meta.get('open_lo') else '['}{lo}, {hi}{')' if meta.get('open_hi') else ']'}"
    if lo is not None:
        return f"{'>' if meta.get('open_lo') else '≥'} {lo}"
    if hi is not None:
        return f"{'<' if meta.get('open_hi') else '≤'} {hi}"
    return ""


def option_rows(cls: type) -> list[tuple[str, str, str, str]]:
    """(key, default, meaning, accepts) of every option ``cls`` declares, nested components by
    their default's name."""
    rows = []
    for f in dataclasses.fields(cls):
        if f.name == "name":
            continue
        default = f.default_factory() if f.default is dataclasses.MISSING else f.default  # type: ignore[misc]
        if dataclasses.is_dataclass(default):
            default = getattr(default, "name", type(default).__name__)
        rows.append((f.name, shown_value(default), f.metadata.get("doc", ""), accepts(dict(f.metadata))))
    return rows


def table(rows: list[tuple[str, ...]], header: tuple[str, ...]) -> list[str]:
    """A Markdown (MyST) table, the first column as code."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for first, *rest in rows:
        lines.append("| " + " | ".join([_code(_escape(first)), *(_escape(c) for c in rest)]) + " |")
    return lines + [""]


def _option_class(group: str, name: str):
    """The options class of option ``name`` of ``group`` (None: a group whose options are plain
    yaml, such as a dataset without declared options)."""
    from rbmlab.config import BackendConfig, TrainConfig
    from rbmlab.data.registry import DATASET_NAMES, get_spec
    from rbmlab.data.tasks import TASKS
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.inference import INFERENCE
    from rbmlab.inference.solvers import SOLVERS
    from rbmlab.learners import LEARNERS
    from rbmlab.models import MODELS
    from rbmlab.optimizers import OPTIMIZERS

    registries = {
        "task": TASKS,
        "model": MODELS,
        "learner": LEARNERS,
        "evaluator": EVALUATORS,
        "learner/optimizer": OPTIMIZERS,
        "learner/sampler": INFERENCE,
        "solver": SOLVERS,
    }
    if group in registries:
        return registries[group].get(name).config_class if name in registries[group].names() else None
    if group == "dataset":
        return get_spec(name).options if name in DATASET_NAMES else None
    return {"train": TrainConfig, "backend": BackendConfig}.get(group)


HEADER = ("key", "default", "meaning", "accepts")
# where a group's options are set on the command line: a learner's optimizer and sampler under
# learner.*; a solver's are the defaults its yaml states, the solver chosen by name
# (evaluator.inference=bp_sum), so its keys are shown bare
KEY_PREFIX = {"learner/optimizer": "learner.optimizer", "learner/sampler": "learner.sampler", "solver": ""}


def group_lines(group: str) -> list[str]:
    """The Markdown of one configuration group's section."""
    if group == "train":
        return [
            "`train.*` sets how long and how often a run trains, evaluates and checkpoints "
            "(rbmlab.config.TrainConfig).",
            "",
            *table([(f"train.{k}", *rest) for k, *rest in option_rows(_option_class("train", ""))], HEADER),
        ]
    if group == "keys":  # conf/config.yaml's own keys, by their trailing comments (as --help)
        rows = [(key, value, comment, "") for key, (value, comment) in key_comments("config").items()]
        return [
            "The keys of `conf/config.yaml` itself, beside the groups (`seed=3`, `resume=true`):",
            "",
            *table([r for r in rows if not r[0].startswith(("train.", "hydra."))], HEADER),
        ]
    lines = [GROUP_DOCS.get(group, ""), ""]
    if group == "backend":
        rows = option_rows(_option_class("backend", ""))
        return lines + table([(f"backend.{k}", *rest) for k, *rest in rows], HEADER)
    for path in sorted((rbmlab_help.conf_dir() / group).glob("*.yaml")):
        name = path.stem
        lines += [f"### `{group}={name}`", "", _escape(first_comment(path)), ""]
        cls = _option_class(group, name)
        rows = option_rows(cls) if cls is not None else []
        prefix = KEY_PREFIX.get(group, group)
        if rows:
            lines += table([(f"{prefix}.{k}" if prefix else k, *rest) for k, *rest in rows], HEADER)
        else:
            lines += ["No options of its own.", ""]
    return lines


class OptionsDirective(Directive):
    required_arguments = 1
    has_content = False

    def run(self):
        group = self.arguments[0]
        if group not in GROUPS:
            raise self.error(f"rbmlab-options: unknown group {group!r}; known: {', '.join(GROUPS)}")
        return _parse(self, group_lines(group))


def registry_rows(kind: str) -> list[tuple[str, str, str]]:
    """(name, class path, first docstring line) of every registered component of ``kind``."""
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.inference import INFERENCE
    from rbmlab.learners import LEARNERS
    from rbmlab.models import MODELS
    from rbmlab.optimizers import OPTIMIZERS

    registry = {
        "model": MODELS,
        "learner": LEARNERS,
        "evaluator": EVALUATORS,
        "inference": INFERENCE,
        "optimizer": OPTIMIZERS,
    }[kind]
    rows = []
    for name, cls in registry.items():
        doc = (inspect.getdoc(cls) or "").strip().split("\n\n")[0]
        rows.append((name, f"{cls.__module__}.{cls.__qualname__}", " ".join(doc.split())))
    return rows


class RegistryDirective(Directive):
    required_arguments = 1
    has_content = False
    option_spec = {"caption": directives.unchanged}

    def run(self):
        kind = self.arguments[0]
        rows = [(name, f"{{class}}`{path}`", doc) for name, path, doc in registry_rows(kind)]
        lines = [f"**{self.options['caption']}**", ""] if "caption" in self.options else []
        lines += ["| name | class | what it is |", "|---|---|---|"]
        lines += [f"| `{name}` | {path} | {_escape(doc)} |" for name, path, doc in rows]
        return _parse(self, lines + [""])


def artefact_stems(paper_dir) -> list[str]:
    """The artefacts committed in a results folder: every ``<artefact>_<tier>`` with a table
    (.md) or a figure (.png), the README aside, in name order."""
    stems = {p.stem for p in paper_dir.glob("*.md") if p.name != "README.md"}
    stems |= {p.stem for p in paper_dir.glob("*.png")}
    return sorted(stems)


class ArtefactsDirective(Directive):
    """Every table and figure of ``results/PAPER/`` inline: per artefact, its figure and its
    table as committed (the table's own headings moved below the artefact's)."""

    required_arguments = 1
    has_content = False

    def run(self):
        from pathlib import Path

        env = self.state.document.settings.env
        paper = self.arguments[0]
        folder = Path(env.srcdir).parent / "results" / paper
        if not folder.is_dir():
            raise self.error(f"rbmlab-artefacts: no results folder {folder}")
        here = Path(env.doc2path(env.docname)).parent
        rel = Path(*([".."] * len(here.relative_to(env.srcdir).parts))) / ".." / "results" / paper
        lines = []
        for stem in artefact_stems(folder):
            lines += [f"### {stem}", ""]
            if (folder / f"{stem}.png").exists():
                env.note_dependency(str(folder / f"{stem}.png"))
                lines += [f"```{{image}} {rel / stem}.png", f":alt: {stem}", ":width: 100%", "```", ""]
            if (folder / f"{stem}.md").exists():
                lines += [f"```{{include}} {rel / stem}.md", ":heading-offset: 3", "```", ""]
        return _parse(self, lines)


def _parse(directive: Directive, lines: list[str]):
    """``lines`` parsed as the document's own markup (MyST Markdown in a .md page), headings
    becoming sections of the page."""
    node = nodes.section()
    node.document = directive.state.document
    nested_parse_with_titles(directive.state, StringList(lines, source="rbmlab_docs"), node)
    return node.children


KINDS = (  # every Registry of the package (tests/test_docs.py checks none is left out)
    ("Model families", "rbmlab.models", "MODELS"),
    ("Learners", "rbmlab.learners", "LEARNERS"),
    ("Evaluators", "rbmlab.evaluators", "EVALUATORS"),
    ("Samplers", "rbmlab.inference", "INFERENCE"),
    ("Solvers", "rbmlab.inference.solvers", "SOLVERS"),
    ("Optimizers", "rbmlab.optimizers", "OPTIMIZERS"),
    ("Tasks", "rbmlab.data.tasks", "TASKS"),
    ("Experiment kinds", "rbmlab.experiment.kinds", "KINDS"),
    ("Inference problems of experiments", "rbmlab.experiment.inference", "PROBLEMS"),
    ("Figures drawn from experiments", "rbmlab.experiment.figures", "FIGURES"),
    ("Bench rows", "rbmlab.bench", "BENCH_PARTS"),
    ("Experiment timings", "rbmlab.bench", "EXPERIMENT_PARTS"),
)


def documented(entry) -> str:
    """The dotted path of what documents a registry entry: its class or function (a figure's
    drawing function)."""
    target = getattr(entry, "draw", entry)
    return f"{target.__module__}.{target.__qualname__}"


def has_own_docstring(target) -> bool:
    """Whether a class or function has a docstring of its own (a class's, not one it inherits)."""
    doc = target.__dict__.get("__doc__") if isinstance(target, type) else target.__doc__
    return bool(doc and doc.strip())


def undocumented_entries() -> list[str]:
    """The dotted paths of the registry entries (every Registry of ``KINDS``) whose class or
    function has no docstring of its own: its reference page would say nothing of it."""
    import importlib

    missing = []
    for _, module, registry in KINDS:
        for _, entry in getattr(importlib.import_module(module), registry).items():
            path = documented(entry)
            if not has_own_docstring(getattr(entry, "draw", entry)) and path not in missing:
                missing.append(path)
    return missing


def components_page() -> str:
    """The API reference's page of every registered component: one autosummary entry (one
    generated page) per registry entry's class, kind by kind."""
    import importlib

    parts = [
        "# Components",
        "",
        "Every registered component, one reference page each, read from the registries when the "
        "pages are built.",
        "",
    ]
    for title, module, registry in KINDS:
        paths = dict.fromkeys(
            documented(e) for _, e in getattr(importlib.import_module(module), registry).items()
        )
        parts += [f"## {title}", "", "```{eval-rst}", ".. autosummary::", "   :toctree: generated", ""]
        parts += [f"   {path}" for path in paths] + ["```", ""]
    return "\n".join(parts)


def write_components_page(app, config) -> None:
    """The components page at ``rbmlab_components_page`` (a path under the source directory;
    None: none, as in a project that only uses the directives), with a build warning for each entry
    whose class or function has no docstring of its own (:func:`undocumented_entries`)."""
    from pathlib import Path

    if not config.rbmlab_components_page:
        return
    page = Path(app.srcdir) / config.rbmlab_components_page
    for path in undocumented_entries():  # a warning fails ``sphinx -W`` (make docs)
        logger.warning("rbmlab-components: %s has no docstring of its own", path)
    text = components_page()
    if not page.exists() or page.read_text() != text:
        page.write_text(text)


def setup(app):
    app.add_config_value("rbmlab_components_page", None, "env")
    app.connect("config-inited", write_components_page)  # before the sources are listed
    app.add_directive("rbmlab-options", OptionsDirective)
    app.add_directive("rbmlab-registry", RegistryDirective)
    app.add_directive("rbmlab-artefacts", ArtefactsDirective)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
