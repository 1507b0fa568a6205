"""The documentation site's generated parts (docs/_ext/rbmlab_docs.py) and its examples.

The whole site is built by ``make docs`` (warnings as errors; a CI stage). Here, cheaply: the
option pages are made from the declarations at build time (an option's help string changed in
the code shows in a page built after), the registry tables list every registered component, the
API reference names every public name, and every example of the gallery runs as a script (marked
``docs``: run by ``make docs-check`` beside the built site's checks, not by ``make test``).
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
EXAMPLES = sorted((DOCS / "examples").glob("plot_*.py"))


def build(tmp_path: Path, page: str) -> str:
    """``page`` (MyST) built alone with the rbmlab directives, in this process; its HTML."""
    from sphinx.application import Sphinx

    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(DOCS / '_ext')!r})\n"
        "extensions = ['myst_parser', 'rbmlab_docs']\nroot_doc = 'index'\n"
    )
    (src / "index.md").write_text(page)
    app = Sphinx(
        str(src),
        str(src),
        str(tmp_path / "html"),
        str(tmp_path / "doctrees"),
        "html",
        status=None,
        warning=None,
    )
    app.build()
    assert app.statuscode == 0
    return re.sub(r"\s+", " ", (tmp_path / "html" / "index.html").read_text())


def test_an_options_help_string_shows_in_the_page_built_after(tmp_path, monkeypatch):
    from rbmlab.learners import LEARNERS

    cls = LEARNERS.get("pcd").config_class
    field = cls.__dataclass_fields__["n_chains"]
    changed = dataclasses.field(
        default=field.default, metadata={**field.metadata, "doc": "CHAINS-DOC-CHANGED"}
    )
    changed.name, changed.type, changed._field_type = (
        field.name,
        field.type,
        field._field_type,
    )  # as dataclass sets
    monkeypatch.setitem(cls.__dataclass_fields__, "n_chains", changed)
    page = "".join(
        f"## {g}\n\n```{{rbmlab-options}} {g}\n```\n\n" for g in ("learner", "learner/optimizer", "keys")
    )
    html = build(tmp_path, "# Options\n\n" + page)
    assert "learner.n_chains" in html and "CHAINS-DOC-CHANGED" in html
    assert "learner=tap_dbm" in html and "learner.pretrain_epochs" in html  # every learner, its keys
    assert "learner.optimizer.beta1" in html and "first-moment decay" in html  # a nested group's
    assert "lock_wait" in html and "seconds to wait for a run or sweep directory" in html  # config.yaml's
    assert isinstance(field.metadata, types.MappingProxyType)  # the original is left as it was


def test_the_registry_tables_list_every_registered_component(tmp_path):
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.models import MODELS

    html = build(tmp_path, "# R\n\n```{rbmlab-registry} model\n```\n\n```{rbmlab-registry} evaluator\n```\n")
    for name in (*MODELS.names(), *EVALUATORS.names()):
        assert f'<code class="docutils literal notranslate"><span class="pre">{name}</span></code>' in html, (
            name
        )


def test_every_public_name_has_a_reference_page():
    """rbmlab.__all__ is what the API reference's autosummary lists (one page each)."""
    import rbmlab

    listed = re.findall(r"^\s+(rbmlab\.\w+)\s*$", (DOCS / "api" / "index.md").read_text(), re.M)
    assert sorted(listed) == sorted(f"rbmlab.{name}" for name in rbmlab.__all__)


def test_every_registry_entry_has_a_reference_page(monkeypatch):
    """The components page (written from the registries at each build) names, for every Registry
    of the package (found in the source), each entry's class or function for autosummary."""
    import importlib

    from rbmlab.registry import Registry

    monkeypatch.syspath_prepend(str(DOCS / "_ext"))
    rbmlab_docs = importlib.import_module("rbmlab_docs")

    found = set()
    for path in (ROOT / "rbmlab").rglob("*.py"):
        for name in re.findall(r"^([A-Z_]+) = Registry\(", path.read_text(), re.M):
            module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            found.add((module, name))
    assert {(m, r) for _, m, r in rbmlab_docs.KINDS} == found
    page = rbmlab_docs.components_page()
    for module, name in found:
        registry = getattr(importlib.import_module(module), name)
        assert isinstance(registry, Registry)
        for entry_name, entry in registry.items():
            assert f"   {rbmlab_docs.documented(entry)}\n" in page, (name, entry_name)


def test_a_registry_entry_without_a_docstring_of_its_own_is_a_build_warning(monkeypatch, tmp_path):
    """A class that only inherits its docstring (or a function without one) is named by the check
    the build turns into a warning (sphinx -W: an error); today's registries have none."""
    import importlib

    monkeypatch.syspath_prepend(str(DOCS / "_ext"))
    rbmlab_docs = importlib.import_module("rbmlab_docs")

    class Documented:
        """A documented component."""

    class Bare(Documented):
        pass

    def draw():
        pass

    assert rbmlab_docs.has_own_docstring(Documented)
    assert not rbmlab_docs.has_own_docstring(Bare)
    assert not rbmlab_docs.has_own_docstring(draw)

    assert rbmlab_docs.undocumented_entries() == []

    import rbmlab.optimizers

    fake = types.ModuleType("rbmlab_fake_components")
    fake.Bare, fake.Documented = Bare, Documented
    Bare.__module__ = Documented.__module__ = fake.__name__
    Bare.__qualname__, Documented.__qualname__ = "Bare", "Documented"
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    registry = rbmlab.optimizers.OPTIMIZERS.with_entries(
        bare=f"{fake.__name__}:Bare", documented=f"{fake.__name__}:Documented"
    )
    monkeypatch.setattr(rbmlab.optimizers, "OPTIMIZERS", registry)
    assert rbmlab_docs.undocumented_entries() == ["rbmlab_fake_components.Bare"]

    warnings = []
    monkeypatch.setattr(rbmlab_docs.logger, "warning", lambda *args: warnings.append(args[0] % args[1:]))
    rbmlab_docs.write_components_page(
        types.SimpleNamespace(srcdir=str(tmp_path)), types.SimpleNamespace(rbmlab_components_page="c.md")
    )
    assert warnings == ["rbmlab-components: rbmlab_fake_components.Bare has no docstring of its own"]


@pytest.mark.docs  # with the site's checks (make docs-check): ~20 s of CPU make test's budget has not
@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.stem)
def test_every_example_runs_as_a_script(script, tmp_path):
    env = {**os.environ, "MPLBACKEND": "Agg"}
    proc = subprocess.run(
        [sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
