"""The built documentation site in a browser (``make docs-check``; CI runs it after ``make docs``).

Given the site ``make docs`` leaves in docs/_build/html (a run without one fails, saying so),
headless Chromium (Debian's ``chromium``; ``make docs-check`` installs it with apt-get where it is
missing) takes a screenshot of the home page, one paper page and one gallery example, each a real
render (the window's size, not blank), and loads the three pages again to check that it decoded
every image on them. Without a browser, on every page of the site: each ``<img>`` (its src and
srcset), stylesheet and script names a file of the site, and no Markdown source shows in the text
(a table's rule or row, a code fence, link or image syntax, a heading's hashes, a MyST directive or
role, a directive's option): what a results README that MyST did not parse, or an include that
came through as text, would leave. The last test runs the checks on a copy of the site broken
on purpose (an image gone, one that is no PNG, Markdown source in a page) and on a blank
screenshot: each refuses it.

Everything is written under pytest's temporary directory, Chromium's profile included (pytest
keeps the last runs' directories: the screenshots are there to look at).
"""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "docs" / "_build" / "html"
# the pages the browser opens, and how many images each must have at least (the check that the
# browser decoded them is not vacuous where a page is known to have some)
PAGES = {
    "index.html": 0,
    "papers/dcp.html": 13,  # every figure committed in results/dcp (rbmlab-artefacts)
    "auto_examples/plot_ais_vs_exact.html": 1,  # the example's figure
}
WINDOW = (1280, 1600)
pytestmark = pytest.mark.docs


@pytest.fixture(scope="module")
def site() -> Path:
    if not (SITE / "index.html").is_file():
        pytest.fail(
            f"no built site at {SITE}: run `make docs` first (make docs-check checks the site it leaves)"
        )
    return SITE


@pytest.fixture(scope="module")
def chromium(tmp_path_factory):
    """Runs headless Chromium with ``args`` and a profile and HOME of its own under a temporary
    directory; returns its stdout."""
    program = shutil.which("chromium")
    if program is None:
        pytest.fail("no chromium on PATH: make docs-check installs Debian's chromium (apt-get, as root)")
    home = tmp_path_factory.mktemp("chromium")
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home), "XDG_CACHE_HOME": str(home)}

    def run(*args: str) -> str:
        cmd = [
            program,
            "--headless",
            "--no-sandbox",  # as root (CI) Chromium refuses to start without it
            "--disable-gpu",
            "--hide-scrollbars",
            f"--user-data-dir={home / 'profile'}",
            f"--window-size={WINDOW[0]},{WINDOW[1]}",
            *args,
        ]
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"{' '.join(cmd)}: exit {proc.returncode}\n{proc.stderr[-2000:]}"
        return proc.stdout

    return run


# ---- the pages as the standard library's parser reads them -------------------------------------
# text inside these is no visible prose (code is shown as written: Markdown there is meant)
NOT_PROSE = {"script", "style", "template", "noscript", "textarea", "pre", "code", "kbd", "samp"}
INLINE = {"a", "span", "em", "strong", "b", "i", "sub", "sup", "abbr", "cite", "small", "mark", "q", "s", "u"}
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Page(HTMLParser):
    """A page's prose (one string, a line break at each block element), the local files it
    names for images, stylesheets and scripts, its ``<img>`` count and Sphinx's error markers."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.assets: list[tuple[str, str]] = []  # (tag, URL)
        self.images = 0
        self.errors: list[str] = []
        self._skipping: list[str] = []
        self.feed(text)
        self.close()
        self.prose = "".join(self.parts)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        classes = (attrs.get("class") or "").split()
        if {"problematic", "system-message"} & set(classes):
            self.errors.append(f"<{tag} class={attrs.get('class')!r}>")
        if tag == "img":
            self.images += 1
            self.assets.append(("img", attrs.get("src") or ""))
            for candidate in (attrs.get("srcset") or "").split(","):
                if candidate.strip():
                    self.assets.append(("img srcset", candidate.split()[0]))
        elif tag == "link" and "stylesheet" in (attrs.get("rel") or "").split():
            self.assets.append(("stylesheet", attrs.get("href") or ""))
        elif tag == "script" and attrs.get("src"):
            self.assets.append(("script", attrs["src"]))
        if tag in NOT_PROSE:
            self._skipping.append(tag)
        if tag not in INLINE:
            self.parts.append("\n")

    def handle_endtag(self, tag):
        if self._skipping and self._skipping[-1] == tag:
            self._skipping.pop()
        if tag not in INLINE and tag not in VOID:
            self.parts.append("\n")

    def handle_data(self, data):
        if not self._skipping:
            self.parts.append(data)


def pages(site: Path) -> list[Path]:
    """The site's pages (not _static's theme templates)."""
    return sorted(p for p in site.rglob("*.html") if not p.relative_to(site).parts[0].startswith("_"))


def missing_files(site: Path, page: Path) -> list[str]:
    found = Page(page.read_text())
    missing = []
    for tag, url in found.assets:
        parts = urlsplit(html.unescape(url))
        if parts.scheme or parts.netloc:
            continue  # none here; a remote file is no file of the site
        target = (page.parent / unquote(parts.path)).resolve()
        if not parts.path or not target.is_file() or not target.is_relative_to(site.resolve()):
            missing.append(f"{tag} {url!r}")
    return missing


# Markdown (CommonMark, GFM tables, MyST) as it reads where it was not rendered (a line's blanks
# are [ \t]: \s would cross the lines and backtrack over every blank line of a page)
MARKDOWN = {
    "a table rule": re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}:?[ \t]*(\|[ \t]*:?-{3,}:?[ \t]*)+\|?[ \t]*$", re.M),
    "a table row": re.compile(r"^[ \t]*\|[^|\n]*\|[^\n]*\|[ \t]*$", re.M),
    "a code fence": re.compile(r"```|~~~"),
    "link or image syntax": re.compile(r"\]\(|!\["),
    "a heading's hashes": re.compile(r"^[ \t]*#{1,6} \S", re.M),
    "bold syntax": re.compile(r"\*\*[^*\s][^*\n]*\*\*"),
    "a MyST directive or role": re.compile(r"\{[a-z][a-z0-9_-]{2,}\}"),
    "a directive's option": re.compile(r"^[ \t]*:[a-z][a-z-]+:([ \t]|$)", re.M),
}


def markdown_shown(page: Path) -> list[str]:
    found = Page(page.read_text())
    shown = [f"Sphinx's error marker {marker}" for marker in found.errors]
    for what, pattern in MARKDOWN.items():
        for match in pattern.finditer(found.prose):
            line_start = found.prose.rfind("\n", 0, match.start()) + 1
            line_end = found.prose.find("\n", match.end())
            line = found.prose[line_start : line_end if line_end >= 0 else None].strip()
            shown.append(f"{what}: {line[:120]!r}")
    return list(dict.fromkeys(shown))  # a line once for each kind it shows


def test_every_image_stylesheet_and_script_is_a_file_of_the_site(site):
    assert set(PAGES) <= {p.relative_to(site).as_posix() for p in pages(site)}
    missing = [f"{p.relative_to(site)}: {m}" for p in pages(site) for m in missing_files(site, p)]
    assert not missing, "files the pages name that the site lacks:\n  " + "\n  ".join(missing)


def test_no_markdown_source_shows_in_the_text(site):
    shown = [f"{p.relative_to(site)}: {s}" for p in pages(site) for s in markdown_shown(p)]
    assert not shown, "Markdown source in the pages' text:\n  " + "\n  ".join(shown)


# ---- in the browser ------------------------------------------------------------------------------
def screenshot_problems(png: Path) -> list[str]:
    """What keeps ``png`` from being a render of a page: its size, or too little drawn on it."""
    from PIL import Image

    with Image.open(png) as image:
        size, pixels = image.size, np.asarray(image.convert("RGB"))
    problems = [] if size == WINDOW else [f"{size[0]}x{size[1]} pixels, not {WINDOW[0]}x{WINDOW[1]}"]
    colours = len(np.unique(pixels.reshape(-1, 3) @ np.array([1 << 16, 1 << 8, 1])))
    drawn = float((pixels < 245).any(axis=2).mean())  # off-white: text, rules, images
    if colours < 64:
        problems.append(f"{colours} distinct colours (a blank or flat page has a handful)")
    if drawn < 0.02:
        problems.append(f"{drawn:.2%} of the pixels drawn")
    return problems


@pytest.mark.parametrize("name", PAGES)
def test_a_screenshot_of_the_page_is_a_render(site, chromium, name, tmp_path):
    png = tmp_path / (name.replace("/", "-").removesuffix(".html") + ".png")
    chromium(f"--screenshot={png}", (site / name).as_uri())
    assert png.is_file(), f"Chromium wrote no screenshot of {name}"
    problems = screenshot_problems(png)
    assert not problems, f"{name}: the screenshot {png} is no render: " + "; ".join(problems)


PROBE = """<!doctype html><html><body><pre id="result">no answer</pre>{frames}<script>
const frames = [...document.querySelectorAll("iframe")];
let loaded = 0;
frames.forEach(frame => frame.addEventListener("load", () => {{
  if (++loaded < frames.length) return;
  const result = {{}};
  for (const f of frames) {{
    const d = f.contentDocument;
    result[f.dataset.page] = d === null ? null
      : [...d.images].map(i => [i.getAttribute("src"), i.complete && i.naturalWidth > 0]);
  }}
  document.getElementById("result").textContent = JSON.stringify(result);
}}));
</script></body></html>
"""


def images_in_browser(chromium, site: Path, tmp_path: Path) -> dict[str, list[tuple[str, bool]] | None]:
    """Each page of PAGES: its images as Chromium loaded them, (src, loaded and decoded); None
    where the probe could not read the page. The pages side by side in frames of one probe page,
    tall enough for every image to load; the probe reads each frame's images (file URLs read each
    other with --allow-file-access-from-files) and Chromium prints the probe's DOM."""
    style = f"width:{WINDOW[0]}px;height:100000px"
    frames = "".join(
        f'<iframe data-page="{name}" src="{(site / name).as_uri()}" style="{style}"></iframe>'
        for name in PAGES
    )
    probe = tmp_path / "probe.html"
    probe.write_text(PROBE.format(frames=frames))
    dom = chromium(
        "--allow-file-access-from-files", "--virtual-time-budget=20000", "--dump-dom", probe.as_uri()
    )
    answer = re.search(r'<pre id="result">(.*?)</pre>', dom, re.S)
    assert answer, f"the probe page did not come back from Chromium:\n{dom[:2000]}"
    text = html.unescape(answer.group(1))
    assert text != "no answer", "the probe never saw all its frames load"
    return {
        name: None if images is None else [tuple(i) for i in images]
        for name, images in json.loads(text).items()
    }


def test_the_browser_decodes_every_image_on_the_pages(site, chromium, tmp_path):
    result = images_in_browser(chromium, site, tmp_path)
    for name, least in PAGES.items():
        images = result[name]
        assert images is not None, f"{name}: the probe could not read the page's document"
        assert len(images) == Page((site / name).read_text()).images >= least, (name, images)
        broken = [src for src, shown in images if not shown]
        assert not broken, f"{name}: images the browser could not load or decode: {broken}"


# ---- the checks themselves refuse a broken site ------------------------------------------------
BROKEN_TEXT = """<p>| artefact | verdict |
|---|---|
| Fig. 1 | reproduced |</p>
<p>See [the figure](figure-3_reduced.png) and</p>
<p>```{include} ../../results/dcp/README.md
:relative-images:
```</p>
"""


def test_the_checks_refuse_a_page_with_an_image_gone_or_markdown_shown(site, chromium, tmp_path):
    """A copy of the site with the example's figure deleted, a second one on the paper page that
    is no PNG, and Markdown source in the paper page's text; a blank screenshot."""
    broken = tmp_path / "site"
    shutil.copytree(site, broken)
    example, paper = broken / "auto_examples" / "plot_ais_vs_exact.html", broken / "papers" / "dcp.html"
    (broken / "_images" / "sphx_glr_plot_ais_vs_exact_001.png").unlink()
    (broken / "_images" / "not-a-png.png").write_text("no image")
    text = paper.read_text()
    heading_end = text.index("</h1>") + len("</h1>")
    paper.write_text(
        text[:heading_end] + BROKEN_TEXT + '<img src="../_images/not-a-png.png" alt="">' + text[heading_end:]
    )
    assert missing_files(broken, example) == [
        "img '../_images/sphx_glr_plot_ais_vs_exact_001.png'",
        "img srcset '../_images/sphx_glr_plot_ais_vs_exact_001.png'",
    ]
    shown = {s.split(":")[0] for s in markdown_shown(paper)}
    assert shown == {
        "a table rule",
        "a table row",
        "a code fence",
        "link or image syntax",
        "a MyST directive or role",
        "a directive's option",
    }, markdown_shown(paper)
    result = images_in_browser(chromium, broken, tmp_path)
    assert result["auto_examples/plot_ais_vs_exact.html"] == [
        ("../_images/sphx_glr_plot_ais_vs_exact_001.png", False)
    ]
    assert ("../_images/not-a-png.png", False) in result["papers/dcp.html"]
    from PIL import Image

    Image.new("RGB", WINDOW, "white").save(tmp_path / "blank.png")
    Image.new("RGB", (800, 600), "white").save(tmp_path / "small.png")
    assert len(screenshot_problems(tmp_path / "blank.png")) == 2
    assert len(screenshot_problems(tmp_path / "small.png")) == 3
