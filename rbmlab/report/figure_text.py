"""Text that fits its figure: a title wrapped to the width the figure really has (measured with
the renderer, not guessed in characters), and the header line above it.

The header (tier, data size, epochs, seeds, commit; a smoke figure's "SMOKE (pipeline check, ...)")
is the figure's first text, small, at the very top; the title comes under it. The panels are kept
below them: by a constrained layout's ``rect`` (before or after the panels are made), or, in a
figure without a layout engine, by pressing every axes down in proportion, colour bars included
(call it once the axes are placed, after tight_layout).
"""

from __future__ import annotations

import textwrap
from typing import Any

_PAD = 0.01  # figure fraction above, between and below the top texts
_MARGIN_INCHES = 0.1  # kept free at each side of a line


def renderer_of(fig: Any) -> Any:
    """The Agg renderer of ``fig`` (a pyplot-free Figure gets an Agg canvas)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    return canvas.get_renderer()


def wrapped(text: str, chars: int) -> str:
    """Each line of ``text`` wrapped at ``chars`` characters (its own line breaks kept)."""
    return "\n".join(textwrap.fill(line, max(chars, 1)) or line for line in text.splitlines())


def fit_text(artist: Any, text: str, width_px: float, renderer: Any) -> None:
    """Set ``text`` on the Text ``artist``, wrapped at the most characters per line that keep it
    within ``width_px`` pixels along its lines (upwards for a y-axis label)."""
    chars = max((len(line) for line in text.splitlines()), default=0)
    artist.set_text(text)
    upright = abs(artist.get_rotation() % 180 - 90) < 1

    def length() -> float:
        extent = artist.get_window_extent(renderer)
        return extent.height if upright else extent.width

    while chars > 8 and length() > width_px:
        chars -= max(1, chars // 12)
        artist.set_text(wrapped(text, chars))


def top_texts(
    fig: Any,
    title: str | None,
    header: str | None = None,
    *,
    title_size: Any = "large",
    span: tuple[float, float] = (0.0, 1.0),
) -> list[Any]:
    """The header (small) and the title at the top of ``fig``, each centred over ``span`` (figure
    fractions: the panels, not a legend beside them) and wrapped to its width, the panels kept
    below them; returns the Text artists, the header first."""
    renderer = renderer_of(fig)
    width = (span[1] - span[0]) * fig.bbox.width - 2 * _MARGIN_INCHES * fig.dpi
    y = 1.0 - _PAD
    texts = []
    for text, size in ((header, "small"), (title, title_size)):
        if not text:
            continue
        artist = fig.text(sum(span) / 2, y, text, ha="center", va="top", fontsize=size)
        fit_text(artist, text, width, renderer)
        y -= artist.get_window_extent(renderer).height / fig.bbox.height + _PAD
        texts.append(artist)
    if texts:
        engine = fig.get_layout_engine()
        if engine is not None and hasattr(engine, "set") and "rect" in engine.get():
            engine.set(rect=(0.0, 0.0, 1.0, y))
        else:
            _press_below(fig, y - _PAD)
    return texts


def _press_below(fig: Any, top: float) -> None:
    """Every axes of ``fig`` moved and shrunk vertically, in proportion, to end below ``top``."""
    highest = max((ax.get_position().y1 for ax in fig.axes), default=0.0)
    if highest <= top:
        return
    scale = top / highest
    for ax in fig.axes:
        box = ax.get_position()
        ax.set_position([box.x0, box.y0 * scale, box.width, box.height * scale])
