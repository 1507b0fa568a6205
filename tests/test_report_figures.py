"""The report's figure read as a reader reads it: words from report.names on every axis, legend and
panel, the paper's numbers drawn, the header first, a long title inside the figure, and lines that
stay apart when their curves are equal."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from matplotlib.figure import Figure

from rbmlab.report import make_report
from rbmlab.report.layout import Layout
from rbmlab.report.names import Names
from rbmlab.report.plot import curves_figure, plot_curves
from tests.test_report import write_run

METRIC = "test_pixel_error"
NAMES = Names.parse(
    {
        "variant": {"label": "method", "values": {"cd1": "CD-1", "lr": "logistic regression"}},
        "task.rate": "corruption rate",
    }
)
RAW = ("variant", "task.rate", "test_pixel_error", "cd1", "n_hidden", "learner.", "_")
HEADER = (
    "SMOKE (pipeline check, not comparable with the paper) · 200 images · 2 epochs · seeds 0–2 · "
    "commit abc1234"
)
LONG_TITLE = (
    "crbm_bp Table 1, MNIST with occluded pixels: test pixel error (%) at the early-stopping epoch of "
    "every method, at each corruption rate, the paper's numbers beside ours (scale: reduced)"
)
EPOCHS = [0, 1, 2, 3, 4]
# (rate, variant): the paper's number, a text the paper gives instead, or none
PAPER = {("0.1", "cd1"): 1.9, ("0.1", "lr"): "Init 1", ("0.2", "cd1"): 4.0, ("0.2", "lr"): None}


def frames(equal: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """summary and curve of 2 rates (panels) × 2 variants (lines), 3 runs each; ``equal``: both
    variants' curves the same."""
    summary, curve = [], []
    for g, (rate, variant) in enumerate(PAPER):
        summary.append(
            {
                "task.rate": rate,
                "variant": variant,
                "panel": f"task.rate={rate}",
                "line": variant,
                "label": f"task.rate={rate}, variant={variant}",
                "n": 3,
                "paper": PAPER[rate, variant],
            }
        )
        level = 5.0 + float(rate) * 10 + (0 if equal or variant == "cd1" else 1)
        curve += [{"gid": g, "epoch": e, "mean": level - e, "std": 0.1, "partial": 0} for e in EPOCHS]
    return pd.DataFrame(summary), pd.DataFrame(curve)


def figure(title: str | None = LONG_TITLE, header: str | None = HEADER, equal: bool = False) -> Figure:
    summary, curve = frames(equal)
    fig = curves_figure(
        summary,
        curve,
        Layout(["variant"], ["task.rate"], []),
        METRIC,
        "epoch",
        title=title,
        hlines=[],
        fraction=None,
        names=NAMES,
        header=header,
    )
    fig.canvas.draw()
    return fig


@pytest.fixture(scope="module")
def drawn() -> Figure:
    return figure()


def words(fig: Figure) -> list[str]:
    """Every axis label, panel title, legend title and legend entry of ``fig`` (not the experiment's
    own title)."""
    texts = []
    for ax in fig.axes:
        texts += [ax.get_xlabel(), ax.get_ylabel(), ax.get_title()]
    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]:
        texts += [legend.get_title().get_text(), *(t.get_text() for t in legend.get_texts())]
    return [t for t in texts if t]


def test_every_label_is_the_names_text(drawn: Figure) -> None:
    fig = drawn
    assert [ax.get_xlabel() for ax in fig.axes] == ["epoch", "epoch"]
    assert [ax.get_ylabel() for ax in fig.axes] == ["test pixel error (%)"] * 2 == [NAMES.metric(METRIC)] * 2
    assert [ax.get_title() for ax in fig.axes] == ["corruption rate = 0.1", "corruption rate = 0.2"]
    (legend,) = fig.legends
    assert legend.get_title().get_text() == "method"
    assert [t.get_text() for t in legend.get_texts()] == ["CD-1 (n=3)", "logistic regression (n=3)", "paper"]
    assert not [t for t in words(fig) for raw in RAW if raw in t], words(fig)


def test_the_papers_numbers_are_black_crosses_labelled_paper(drawn: Figure) -> None:
    fig = drawn
    drawn = [
        (line.get_xdata()[0], line.get_ydata()[0], line.get_marker(), line.get_color())
        for ax in fig.axes
        for line in ax.get_lines()
        if line.get_label() == "paper"
    ]
    # at each curve's last epoch; the text "Init 1" and the missing value are not drawn
    assert drawn == [(4, 1.9, "x", "black"), (4, 4.0, "x", "black")]


def test_header_first_and_a_long_title_inside_the_figure(drawn: Figure) -> None:
    fig = drawn
    header, title = fig.texts[:2]
    assert header.get_text().replace("\n", " ") == HEADER
    assert title.get_text().replace("\n", " ") == LONG_TITLE and "\n" in title.get_text()
    assert header.get_window_extent().y0 >= title.get_window_extent().y1 - 1  # header above the title
    box = fig.bbox
    legend = fig.legends[0].get_window_extent()
    labels = [text for ax in fig.axes for text in (ax.title, ax.xaxis.label, ax.yaxis.label)]
    for text in (header, title, *labels):
        extent = text.get_window_extent()
        assert box.x0 <= extent.x0 and extent.x1 <= box.x1 and box.y0 <= extent.y0 and extent.y1 <= box.y1
        assert not extent.overlaps(legend), text.get_text()
    for ax in fig.axes:  # the panels below the top texts
        assert ax.get_tightbbox().y1 <= title.get_window_extent().y0 + 1


def test_equal_curves_stay_apart() -> None:
    fig = figure(equal=True)
    ax = fig.axes[0]
    curves = [line for line in ax.get_lines() if line.get_label() != "paper"]
    assert len(curves) == 2 and (curves[0].get_ydata() == curves[1].get_ydata()).all()
    looks = {(line.get_marker(), line.get_linestyle()) for line in curves}
    assert looks == {("o", "-"), ("s", "--")}
    # the one drawn first is wider: an edge of it shows around the one over it
    assert (
        curves[0].get_linewidth() > curves[1].get_linewidth()
        and curves[0].get_zorder() < curves[1].get_zorder()
    )


def test_points_over_a_runs_table_key_and_png_bytes() -> None:
    # cd1: the paper's one number (no x: a level); lr: points read off the paper's curve
    summary = pd.DataFrame(
        [
            {"variant": v, "panel": "", "line": v, "label": f"variant={v}", "n": 2, "paper": paper}
            for v, paper in (("cd1", 3.5), ("lr", {100: 3.9, 200: "2.9"}))
        ]
    )
    curve = pd.DataFrame(
        [
            {"gid": g, "model.n_hidden": h, "mean": 4.0 - h / 100 + g, "std": 0.1}
            for g in (0, 1)
            for h in (100, 200)
        ]
    )
    args = (summary, curve, Layout(["variant"], [], []), METRIC, "model.n_hidden")
    kwargs = {"title": "t", "hlines": [], "fraction": None, "by_key": True, "names": NAMES}
    (ax,) = curves_figure(*args, **kwargs).axes
    assert ax.get_xlabel() == Names().key("model.n_hidden") != "model.n_hidden"
    level, curve_read = [line for line in ax.get_lines() if line.get_label() == "paper"]
    assert (list(level.get_xdata()), list(level.get_ydata()), level.get_linestyle()) == (
        [100, 200],
        [3.5, 3.5],
        ":",
    )
    assert (list(curve_read.get_xdata()), list(curve_read.get_ydata())) == ([100, 200], [3.9, 2.9])
    assert {line.get_marker() for line in (level, curve_read)} == {"x"}
    assert [t.get_text() for t in ax.texts] == ["CD-1"]  # whose level it is
    assert plot_curves(*args, **kwargs)[:4] == b"\x89PNG"


def test_make_report_draws_with_the_experiments_names_and_header(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for learner in ("cd", "pcd"):
        for seed in (0, 1):
            write_run(tmp_path / "runs" / learner / str(seed), learner, 0.1, seed, epochs=[0, 5, 10])
    figures: list[Figure] = []
    monkeypatch.setattr(Figure, "savefig", lambda fig, *a, **k: figures.append(fig))
    make_report(
        tmp_path / "runs",
        tmp_path / "out",
        names={"learner.name": {"label": "method", "values": {"cd": "CD-1", "pcd": "PCD-1"}}},
        paper=[{"match": {"learner.name": "pcd"}, "value": -9.0}],
    )
    (fig,) = figures
    (ax,) = fig.axes
    # the runs' own header line (rbmlab.report.header), first in the figure as in the table
    assert " ".join(fig.texts[0].get_text().split()) == (
        "SMOKE TIER: a pipeline check, not comparable with the paper (smoke "
        "tier · bars_stripes · 10 epochs of 50 asked · seeds 0, 1 · 4 runs · "
        "commit unknown)"
    )
    assert fig.texts[1].get_text() == f"{Names().metric('test_log_likelihood')} vs epoch"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("epoch", Names().metric("test_log_likelihood"))
    legend = ax.get_legend()
    assert legend.get_title().get_text() == "method"
    assert [t.get_text() for t in legend.get_texts()] == ["CD-1 (n=2)", "PCD-1 (n=2)", "paper"]


def test_final_values_without_curves_name_the_lines_on_the_axis() -> None:
    summary = pd.DataFrame(
        [
            {
                "variant": v,
                "panel": "",
                "line": v,
                "label": v,
                "n": 3,
                "final_mean": m,
                "final_std": 0.2,
                "final_n": 3,
                "paper": paper,
            }
            for v, m, paper in (("lr", 2.0, 1.96), ("cd1", 2.1, "Init 1"))
        ]
    )
    fig = curves_figure(
        summary,
        pd.DataFrame(),
        Layout(["variant"], [], []),
        "early_stopping.test_pixel_error",
        "epoch",
        title="t",
        hlines=[],
        fraction=None,
        names=NAMES,
    )
    (ax,) = fig.axes
    assert ax.get_xlabel() == "method" and ax.get_ylabel().replace("\n", " ") == (
        "test pixel error (%) at the early-stopping epoch"
    )
    assert [t.get_text() for t in ax.get_xticklabels()] == ["logistic regression (n=3)", "CD-1 (n=3)"]
    (paper,) = [line for line in ax.get_lines() if line.get_label() == "paper"]
    assert (list(paper.get_xdata()), list(paper.get_ydata())) == ([0], [1.96])
    legend = ax.get_legend()
    assert legend.get_title().get_text() == "" and [t.get_text() for t in legend.get_texts()] == ["paper"]
