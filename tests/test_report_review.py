"""Second-read fixes of the report layer (issue 35): the header's commits and replicates."""

import pandas as pd
import pytest

from rbmlab.report.header import report_header
from tests.test_report import variant_sweep  # noqa: F401 - the fixture


def test_a_resumed_runs_commits_are_listed_once_each():
    # a resumed run's source is every commit that trained it, comma-separated (merge_sources)
    runs = pd.DataFrame({"run_dir": ["a", "b", "c"], "source": ["38cbd5b", "38cbd5b,94cd235", "94cd235"]})
    assert report_header(runs).endswith("· 3 runs · commits 38cbd5b, 94cd235")


def test_batched_trials_are_counted_as_replicates():
    runs = pd.DataFrame({"run_dir": ["x#0", "x#1", "y#0", "y#1"], "seed": [4, 4, 5, 5]})
    assert report_header(runs, scale="paper") == (
        "paper tier · seeds 4, 5 · 2 runs × trials = 4 replicates · commit unknown"
    )


def test_a_grown_model_and_its_early_stopping_line_survive_a_rerender(variant_sweep, tmp_path):  # noqa: F811 - the fixture
    """The committed tidy files of a report over a grown model (frank_wolfe) with a vertical line
    per run at a summary record: the re-render says what the report from the runs said."""
    from rbmlab.report import make_report
    from rbmlab.report.tidy import Committed

    options = dict(
        metric="test_log_likelihood",
        x="model.n_hidden",
        lines="variant",
        select="valid_log_likelihood",
        vlines=[{"summary": "early_stopping.n_hidden", "label": "early stopping"}],
        title="t",
        filename_stem="fig_reduced",
    )
    first = make_report(variant_sweep, tmp_path, variants=["fw", "cd_rand"], **options)
    text = first["table"].read_text()
    again = make_report(Committed(tmp_path / "fig_reduced"), tmp_path, variants=["fw", "cd_rand"], **options)
    rerendered = again["table"].read_text()
    note = next(line for line in text.splitlines() if line.startswith("Each completed run"))
    note_again = next(line for line in rerendered.splitlines() if line.startswith("Each completed run"))
    assert "a model that grew during training" in note and "early stopping at hidden units = 4 (fw/0)" in note
    assert note_again.split(" Re-rendered from")[0] == note
    assert [r for r in rerendered.splitlines() if r.startswith("|")] == [
        r for r in text.splitlines() if r.startswith("|")
    ]


def test_select_where_survives_a_rerender_and_must_name_a_group_key(variant_sweep, tmp_path):  # noqa: F811 - the fixture
    """select in the fw groups only: the committed files re-render to the same table (cd_rand
    averaged over its seeds), and a select_where key that is not a lines/panels key is one line."""
    from rbmlab.errors import RbmlabError
    from rbmlab.report import make_report
    from rbmlab.report.tidy import Committed

    options = dict(
        metric="test_log_likelihood",
        x="model.n_hidden",
        lines="variant",
        select="valid_log_likelihood",
        select_where={"variant": ["fw"]},
        title="t",
        filename_stem="fig_reduced",
    )
    text = make_report(variant_sweep, tmp_path, variants=["fw", "cd_rand"], **options)["table"].read_text()
    again = make_report(Committed(tmp_path / "fig_reduced"), tmp_path, variants=["fw", "cd_rand"], **options)
    rows = [r for r in text.splitlines() if r.startswith("| cd_rand")]
    assert rows == [r for r in again["table"].read_text().splitlines() if r.startswith("| cd_rand")]
    assert "-5 ± 1" in rows[0] and "best of" not in rows[0]
    with pytest.raises(
        RbmlabError, match=r"^report.select_where: seed must be a key of the lines or panels \(variant\)$"
    ):
        make_report(
            variant_sweep,
            tmp_path / "x",
            variants=["fw", "cd_rand"],
            **{**options, "select_where": {"seed": 0}},
        )


def test_a_vertical_line_the_committed_runs_csv_cannot_draw_is_named():
    from rbmlab.report.tidy import missing_records_note

    marks = [
        {"summary": "early_stopping.n_hidden", "label": "FW early stopping"},
        {"x": 460, "label": "paper"},
    ]
    runs = pd.DataFrame({"run_dir": ["fw/0"]})
    assert missing_records_note(marks, runs, "f_runs.csv") == (
        " The committed f_runs.csv does not hold early_stopping.n_hidden: "
        "its vertical lines (FW early stopping) are not drawn."
    )
    assert missing_records_note(marks, runs.assign(**{"early_stopping.n_hidden": [4]}), "f_runs.csv") == ""


def test_the_dot_charts_legend_says_paper_when_only_a_later_panel_has_the_papers_numbers():
    from rbmlab.report.names import Names
    from rbmlab.report.paper_table import TableData, TableMetric, TableSpec
    from rbmlab.report.table_figure import dot_figure

    cells = pd.DataFrame(
        [
            {
                "row": (r,),
                "column": (c,),
                "metric": "test_log_likelihood",
                "label": None,
                "mean": -1.0,
                "std": 0.1,
                "n": 2,
                "runs": 2,
                "paper": None if c == "0.1" else -1.5,
            }
            for c in ("0.1", "0.2")
            for r in ("a", "b")
        ]
    )
    data = TableData([("a",), ("b",)], [("0.1",), ("0.2",)], cells, [])
    fig = dot_figure(
        data, TableSpec(("variant",), ("task.rate",), (TableMetric("test_log_likelihood"),)), Names()
    )
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["ours (mean ± std)", "paper"]


def test_rerender_of_an_unknown_paper_is_one_line(tmp_path):
    import pytest

    from rbmlab.errors import RbmlabError
    from rbmlab.experiment.rerender import committed_reports

    with pytest.raises(RbmlabError, match="report rerender: unknown paper 'zzz'; papers: .*demo"):
        committed_reports(tmp_path, "zzz")


def test_a_curves_csv_without_its_mean_std_and_n_is_one_line(tmp_path):
    import pytest

    from rbmlab.errors import RbmlabError
    from rbmlab.report.tidy import load_tidy

    (tmp_path / "t_runs.csv").write_text("run_dir,status\na,completed\n")
    (tmp_path / "t_curves.csv").write_text("variant,epoch,mean\ncd,0,1.0\n")
    with pytest.raises(
        RbmlabError, match="t_curves.csv is not a report's curves table \\(no std, n column\\)"
    ):
        load_tidy(tmp_path / "t")


def test_the_index_headline_of_a_report_with_select_is_the_run_the_report_selects():
    """frank_wolfe Figure 1(a): at each size the report shows the seed best on validation; the
    index's headline is that run's value, not the mean over the seeds."""
    from rbmlab.experiment.index import headline
    from rbmlab.report.spec import ReportSpec

    runs = pd.DataFrame(
        {
            "run_dir": ["cd/0", "cd/1", "fw/0"],
            "variant": ["cd", "cd", "fw"],
            "model.n_hidden": [700, 700, 700],
            "status": ["completed"] * 3,
            "final.test_log_likelihood": [-96.0, -98.0, -170.0],
            "final.valid_log_likelihood": [-99.0, -97.0, -171.0],
        }
    )
    report = ReportSpec.parse(
        {
            "metric": "test_log_likelihood",
            "x": "model.n_hidden",
            "lines": "variant",
            "select": "valid_log_likelihood",
        },
        "t",
    )
    ours, paper, measure = headline(runs, report)
    assert ours == "-98 (n=1)" and "method cd" in measure
    only_fw = ReportSpec.parse(
        {
            "metric": "test_log_likelihood",
            "x": "model.n_hidden",
            "lines": "variant",
            "select": "valid_log_likelihood",
            "select_where": {"variant": ["fw"]},
        },
        "t",
    )
    ours, _, measure = headline(runs, only_fw)  # cd's seeds now averaged: -97 ± 1.41
    assert ours.startswith("-97") and "(n=2)" in ours and "method cd" in measure


@pytest.mark.parametrize("argv", [["report", "index"], ["report", "rerender", "demo"]])
def test_an_installed_rbmlab_never_writes_the_results_inside_its_package(argv, monkeypatch, capsys):
    import rbmlab.resources
    from rbmlab.cli import main

    monkeypatch.setattr(rbmlab.resources, "checkout_root", lambda: None)
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"rbmlab: error: {' '.join(argv[:2])}: maintains the committed results/ of a checkout of rbmlab; "
        "this rbmlab is installed"
    )


def test_a_table_metric_given_twice_is_one_line():
    from rbmlab.errors import RbmlabError
    from rbmlab.report.paper_table import TableSpec

    with pytest.raises(
        RbmlabError, match=r"report.table.metrics\[1\]: test_log_likelihood is already a column"
    ):
        TableSpec.parse(
            {
                "rows": "variant",
                "metrics": [
                    {"metric": "test_log_likelihood", "label": "A"},
                    {"metric": "test_log_likelihood", "label": "B"},
                ],
            }
        )
