"""README.md is a landing page (issue 59): at most 250 lines, and every relative link in it and in
the user guide (docs/guide/*.md, which holds what README.md once did) points to a file of the
repository, and to a heading of that file where the link names an anchor (GitHub's anchors, the
ones MyST makes with ``myst_heading_anchors``). ``make docs`` checks the guide's links inside the
site as well; this is the cheap check that also covers README.md, which the site does not build.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
GUIDE = sorted((ROOT / "docs" / "guide").glob("*.md"))
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor of a heading (MyST's default slug is the same)."""
    text = re.sub(r"[`*_]", "", heading).strip().lower().replace(" ", "-")
    return re.sub(r"[^\w\-]", "", text)


def prose(text: str) -> str:
    """The text outside fenced blocks and code spans: where a Markdown link can be."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return re.sub(r"`[^`]*`", "", text)


def anchors(page: Path) -> set[str]:
    """The anchors of a page's headings (a '# comment' in a fenced block is no heading)."""
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.S | re.M)
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def relative_links(page: Path) -> list[str]:
    return [t for t in LINK.findall(prose(page.read_text())) if not re.match(r"[a-z]+:", t)]


def test_the_readme_is_a_landing_page():
    lines = README.read_text().splitlines()
    assert len(lines) <= 250, len(lines)
    linked = relative_links(README)
    assert "docs/guide/index.md" in linked and "results/README.md" in linked
    assert {f"docs/guide/{p.name}" for p in GUIDE} <= {t.split("#")[0] for t in linked}  # every page


@pytest.mark.parametrize("page", [README, *GUIDE], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_relative_link_resolves(page):
    for target in relative_links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        assert file.is_file() and ROOT in file.parents, f"{page.name}: {target}: no such file"
        if anchor:
            assert file.suffix == ".md" and anchor in anchors(file), f"{page.name}: {target}: no such heading"


def test_the_anchor_rule_is_githubs():
    assert slug("`rbmlab run` — train and evaluate one configuration") == (
        "rbmlab-run--train-and-evaluate-one-configuration"
    )
    assert slug("Running a paper tier on a cluster") == "running-a-paper-tier-on-a-cluster"
    assert "resume" in anchors(ROOT / "docs" / "guide" / "running.md")
    assert "the-default-job" in {t.partition("#")[2] for p in GUIDE for t in relative_links(p)}  # checked
