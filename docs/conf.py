"""Sphinx configuration of rbmlab's documentation site (``make docs``: docs/_build/html).

Built offline from the checkout: the user guide (docs/guide), the option pages generated from the
``option(...)`` declarations (docs/_ext/rbmlab_docs.py, the source ``rbmlab run --help`` reads),
the API reference from the docstrings, one page per paper rendered from results/<paper>/README.md,
and the example gallery (docs/examples, executed at every build by sphinx-gallery).
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path[:0] = [str(ROOT), str(DOCS / "_ext")]

import rbmlab  # noqa: E402 - after the path: the checkout's rbmlab, not another install

project = "rbmlab"
author = "the rbmlab developers"
copyright = "2026, the rbmlab developers"
release = version = getattr(rbmlab, "__version__", "0.1.0")

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx_gallery.gen_gallery",
    "rbmlab_docs",
]

root_doc = "index"
exclude_patterns = ["_build", "examples/*.py", "examples/*.txt", "examples/*.rst"]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
nitpicky = False
suppress_warnings = []

# MyST: the results READMEs render as they are (tables, $math$, heading anchors for their links)
myst_enable_extensions = ["dollarmath", "colon_fence", "attrs_inline"]
myst_heading_anchors = 4

# docstrings: numpy style, read by napoleon; one page per public name (autosummary)
autosummary_generate = True
# scikit-learn's metadata-routing setters (set_score_request) are its API, documented there
autodoc_default_options = {"members": True, "show-inheritance": True, "exclude-members": "set_score_request"}
autodoc_typehints = "description"
autodoc_member_order = "bysource"
napoleon_numpy_docstring = True
napoleon_google_docstring = False

# the example gallery: each script runs at build time on small data and leaves its figure
sphinx_gallery_conf = {
    "examples_dirs": str(DOCS / "examples"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": r"/plot_",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "image_scrapers": ("matplotlib",),
    "within_subsection_order": "FileNameSortKey",
    "show_signature": False,
}

# every registry entry's reference page, listed from the registries at each build (git-ignored)
rbmlab_components_page = "api/components.md"

html_theme = "pydata_sphinx_theme"
html_title = "rbmlab"
html_theme_options = {
    "navigation_with_keys": False,
    "show_prev_next": False,
    "header_links_before_dropdown": 6,
    "icon_links": [],
}
html_static_path = []
html_show_sourcelink = False
