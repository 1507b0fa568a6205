"""The verdicts tables of the results READMEs (rbmlab.experiment.verdicts): each row's quote is
the paper's own words, found in its text; a verdict for or against a stochastic claim rests on
≥ 3 seeds; seeds never exceed what the committed runs hold. Small fixtures of known problems,
then the committed READMEs themselves."""

from __future__ import annotations

from pathlib import Path

import pytest

from rbmlab.errors import RbmlabError
from rbmlab.experiment import verdicts
from rbmlab.experiment.catalog import RESULTS_DIR
from rbmlab.experiment.index import readme_seeds, readme_verdicts
from rbmlab.experiment.verdicts import (
    COLUMNS,
    default_papers_dir,
    normalised,
    paper_files,
    readme_problems,
    results_problems,
    seeds_in_runs,
)

PAPER_TEXT = """5.3 Robustness
Figure 7(a) shows that S-DCP reaches about the same ATLL irrespec-
tive of the batch size used for training, an unbiased comparison.
The centered variant “CS-DCP” is — as expected — faster. We set θ=0.5𝜃0.5\\theta=0.5 here.
"""
RUNS = "run_dir,seed,status\nsdcp/0,0,completed\nsdcp/1,1,completed\nsdcp/2,2,completed\n"
HEAD = "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS) + "\n"
GOOD = (
    '| figure-7a | "S-DCP reaches about the same ATLL irrespective of the batch size" (Sec. 5.3, '
    "Fig. 7(a)) | reduced | 5,000 MNIST, 100 ep. | 3 | −103.9 ± 0.5 (n=3) | — | reproduced |"
)


def _tree(tmp_path: Path, rows: str, runs: str | None = RUNS) -> Path:
    """A results/dcp/README.md with ``rows`` under the verdicts header, a papers folder with
    the fixture's text, and optionally results/dcp/figure-7a_reduced_runs.csv."""
    papers = tmp_path / "shared" / "papers"
    papers.mkdir(parents=True)
    (papers / "001_x.txt").write_text(PAPER_TEXT)
    (papers / "README.md").write_text("| Short name | Paper file |\n|---|---|\n| `dcp` | `001_x.txt` |\n")
    folder = tmp_path / "results" / "dcp"
    folder.mkdir(parents=True)
    (folder / "README.md").write_text("# dcp\n\n## Verdicts by artefact\n\n" + HEAD + rows + "\n")
    if runs is not None:
        (folder / "figure-7a_reduced_runs.csv").write_text(runs)
    return folder / "README.md"


def _problems(tmp_path: Path, rows: str, runs: str | None = RUNS) -> list[str]:
    readme = _tree(tmp_path, rows, runs)
    return readme_problems(readme, tmp_path / "shared" / "papers")


def test_a_row_with_its_evidence_has_no_problem(tmp_path):
    assert _problems(tmp_path, GOOD) == []


def test_the_quote_is_found_across_a_hyphenated_line_end_and_quote_and_dash_styles(tmp_path):
    row = GOOD.replace(
        '"S-DCP reaches about the same ATLL irrespective of the batch size"',
        '"irrespective" ... "The centered variant \'CS-DCP\' is - as expected - faster" ... "We set θ=0.5"',
    )
    assert _problems(tmp_path, row) == []
    assert normalised("irrespec-\ntive") == normalised("irrespective")


@pytest.mark.parametrize(
    "change, problem",
    [
        (
            (
                '"S-DCP reaches about the same ATLL irrespective of the batch size" (Sec. 5.3, Fig. 7(a))',
                "S-DCP reaches the same ATLL (Sec. 5.3)",
            ),
            "no quote of the paper's words",
        ),
        (("(Sec. 5.3, Fig. 7(a))", ""), "names no place in the paper"),
        (("irrespective of the batch size", "whatever the batch size"), "not in the paper's text"),
        (("| 3 | −103.9 ± 0.5 (n=3) |", "| 2 | −103.9 ± 0.5 (n=2) |"), "'reproduced' on 2 seed(s)"),
        (
            ("| 3 | −103.9 ± 0.5 (n=3) | — | reproduced |", "| 1 | −121.6 (n=1) | — | fails |"),
            "'fails' on 1 seed(s)",
        ),
        (("| 3 | −103.9", "| some | −103.9"), "seeds 'some'"),
        (("| 3 | −103.9", "| — | −103.9"), "with no seeds (—)"),
        (("| reproduced |", "| mostly reproduced |"), "is not one of"),
        (("| reduced |", "| long |"), "tier 'long'"),
        (("irrespective of the batch size", "biased comparison"), "not in the paper's text"),
        (
            (
                '"S-DCP reaches about the same ATLL irrespective of the batch size"',
                '"batch size ... S-DCP reaches"',
            ),
            "not in the paper's text",
        ),
        (
            (
                '"S-DCP reaches about the same ATLL irrespective of the batch size"',
                '"The centered variant “CS-DCP” is much slower"',
            ),
            "not in the paper's text",
        ),
        (
            ('"S-DCP reaches about the same ATLL irrespective of the batch size"', '"ATLL irrespective"'),
            "fewer than 3 words",
        ),
        (
            (
                '"S-DCP reaches about the same ATLL irrespective of the batch size"',
                '"S-DCP reaches about the same ATLL irrespective of the batch size',
            ),
            "do not pair up",
        ),
        (("| 3 | −103.9", "| 0 | −103.9"), "seeds '0'"),
        (("| 3 | −103.9", "| ³ | −103.9"), "seeds '³'"),
        (
            ("| — | reproduced |", "| — | reproduced | extra |"),
            "7 cells" if False else "cells, the header has 8",
        ),
        (("| −103.9 ± 0.5 (n=3) |", "|  |"), "empty 'ours'"),
    ],
)
def test_each_kind_of_unsupported_row_is_named(tmp_path, change, problem):
    old, new = change
    assert old in GOOD
    found = _problems(tmp_path, GOOD.replace(old, new))
    assert len(found) == 1 and problem in found[0], found
    assert found[0].startswith("results/dcp/README.md:")


def test_exact_evidence_and_open_verdicts_need_no_three_seeds(tmp_path):
    rows = "\n".join(
        [
            GOOD.replace("| 3 | −103.9 ± 0.5 (n=3) |", "| exact | bit-for-bit |"),
            GOOD.replace(
                "| 3 | −103.9 ± 0.5 (n=3) | — | reproduced |", "| 1 | −103.9 (n=1) | — | no verdict yet |"
            ),
            GOOD.replace(
                "| 3 | −103.9 ± 0.5 (n=3) | — | reproduced |",
                "| 1 | −121.6 (n=1) | — | not reproduced at this scale |",
            ),
        ]
    )
    assert _problems(tmp_path, rows) == []


def test_seeds_may_not_exceed_the_committed_runs(tmp_path):
    runs = (
        "run_dir,seed,status\nsdcp/0,0,completed\nsdcp/1,1,completed\ncsdcp/0,0,completed\n"
        "csdcp/1,1,completed\n"
    )
    found = _problems(tmp_path, GOOD, runs)
    assert len(found) == 1 and "3 seeds, but figure-7a_reduced_runs.csv holds 2" in found[0]
    assert _problems(tmp_path / "b", GOOD, runs + "sdcp/2,2,completed\ncsdcp/2,2,completed\n") == []
    failed = runs + "sdcp/2,2,completed\ncsdcp/2,2,failed\n"  # a failed run is no seed
    assert "holds 2" in _problems(tmp_path / "c", GOOD, failed)[0]
    paper = GOOD.replace("| reduced |", "| paper |")
    assert "no committed runs CSV of figure-7a at paper tier" in _problems(tmp_path / "d", paper, runs)[0]
    (tmp_path / "d" / "results" / "dcp" / "figure-7a_paper_runs.csv").write_text(runs)
    assert (
        "holds 2"
        in readme_problems(
            tmp_path / "d" / "results" / "dcp" / "README.md", tmp_path / "d" / "shared" / "papers"
        )[0]
    )


def test_the_seeds_are_those_every_compared_method_holds(tmp_path):
    """Three seeds of one method and one of another make a one-seed comparison, whether the
    method is named by a ``variant`` column or by the run directory."""
    by_dir = "run_dir,seed\ncd/0,0\ncd/1,1\ncd/2,2\nfw/0,0\n"
    assert "3 seeds, but figure-7a_reduced_runs.csv holds 1" in _problems(tmp_path, GOOD, by_dir)[0]
    (tmp_path / "v.csv").write_text("run_dir,variant,seed\n0,cd,0\n1,cd,1\n2,cd,2\n3,fw,0\n4,fw,1\n")
    assert seeds_in_runs(tmp_path / "v.csv") == 2
    (tmp_path / "g.csv").write_text("run_dir,variant,seed\n0,cd,0\n1,cd,0\n2,fw,0\n")  # a grid: one seed
    assert seeds_in_runs(tmp_path / "g.csv") == 1
    (tmp_path / "j.csv").write_text("run_dir,seed\n0,0\n1,1\n2,2\n3,0\n")  # job numbers: one method
    assert seeds_in_runs(tmp_path / "j.csv") == 3
    (tmp_path / "f.csv").write_text(
        "run_dir,seed,status\ncd/0,0,completed\ncd/1,1,completed\ncd/2,2,completed\n"
        "fw/0,0,failed\nfw/1,1,failed\n"
    )  # a method with no completed run
    assert seeds_in_runs(tmp_path / "f.csv") == 0
    (tmp_path / "e.csv").write_text("run_dir,seed,status\ncd/0,0,failed\n")
    assert seeds_in_runs(tmp_path / "e.csv") == 0


def test_a_judging_verdict_needs_files_that_count_its_seeds(tmp_path):
    found = _problems(tmp_path, GOOD, runs=None)
    assert len(found) == 1 and "no committed runs CSV of figure-7a at reduced tier counts them" in found[0]
    open_verdict = GOOD.replace("| reproduced |", "| no verdict yet |")
    assert _problems(tmp_path / "b", open_verdict, runs=None) == []


def test_the_place_may_be_a_section_sign_and_the_cells_may_be_marked_up(tmp_path):
    row = GOOD.replace("(Sec. 5.3, Fig. 7(a))", "(§ 5.3)").replace("| figure-7a |", "| [`figure-7a`](x.md) |")
    row = row.replace("| reproduced |", "| **reproduced** |")
    assert _problems(tmp_path, row) == []


def test_batched_trials_count_as_independent_runs(tmp_path):
    runs = tmp_path / "runs.csv"
    runs.write_text("run_dir,seed\ncd/0#0,0\ncd/0#1,0\ncd/0#2,0\ncd/1#0,0\npcd/0#0,0\npcd/0#1,0\npcd/0#2,0\n")
    assert seeds_in_runs(runs) == 3  # trials 0, 1, 2 of seed 0 for each method


def test_a_table_without_the_evidence_columns_is_refused(tmp_path):
    readme = _tree(tmp_path, "")
    readme.write_text("| artefact | claim | verdict |\n|---|---|---|\n| figure-1 | x | reproduced |\n")
    found = readme_problems(readme, tmp_path / "shared" / "papers")
    assert len(found) == 1 and "lacks the column(s) the paper's words, tier" in found[0]


def test_a_paper_readme_without_a_verdicts_table_is_refused(tmp_path):
    readme = _tree(tmp_path, GOOD)
    readme.write_text("# dcp\n\nno table\n")
    assert results_problems(readme.parent.parent, tmp_path / "shared" / "papers") == [
        "results/dcp/README.md: no verdicts table (a table with the columns " + ", ".join(COLUMNS) + ")"
    ]


def test_the_index_reads_the_verdicts_and_seeds_of_the_new_table():
    rows = "\n".join(
        [
            GOOD,
            GOOD.replace(
                "| 3 | −103.9 ± 0.5 (n=3) | — | reproduced |", "| 1 | −121.6 (n=1) | — | no verdict yet |"
            ),
            GOOD.replace("figure-7a", "tests/test_dcp_learners.py").replace(
                "| 3 | −103.9 ± 0.5 (n=3) |", "| exact | bit-for-bit |"
            ),
        ]
    )
    text = HEAD + rows + "\n"
    assert readme_seeds(text) == {"figure-7a": "1–3", "tests/test_dcp_learners.py": "exact"}
    verdict = readme_verdicts(text, "README.md")["figure-7a"]
    assert verdict == (
        "reproduced (“S-DCP reaches about the same ATLL irrespective of the batch…”); "
        "no verdict yet (“S-DCP reaches about the same ATLL irrespective of the batch…”)"
    )


def test_without_the_papers_texts_nothing_passes(tmp_path, monkeypatch, capsys):
    readme = _tree(tmp_path, GOOD)
    assert results_problems(readme.parent.parent, None) == [
        "../shared/papers: not found beside this checkout: no quote can be looked up"
    ]
    (tmp_path / "shared" / "papers" / "README.md").write_text("no index\n")
    assert "no paper texts" in results_problems(readme.parent.parent, tmp_path / "shared" / "papers")[0]
    monkeypatch.setattr(verdicts, "default_papers_dir", lambda: None)
    assert verdicts.main([str(readme)]) == 2
    assert capsys.readouterr().err.startswith("rbmlab: error: ../shared/papers:")


def test_the_command_lists_the_problems_and_refuses_an_unreadable_file(tmp_path, monkeypatch, capsys):
    readme = _tree(tmp_path, GOOD.replace("| 3 |", "| 2 |"))
    monkeypatch.setattr(verdicts, "default_papers_dir", lambda: tmp_path / "shared" / "papers")
    assert verdicts.main([str(readme)]) == 1
    assert "'reproduced' on 2 seed(s)" in capsys.readouterr().out
    assert verdicts.main([str(tmp_path / "nosuch.md")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rbmlab: error: ") and "nosuch.md" in err and len(err.splitlines()) == 1
    readme.write_bytes(b"# \xff\xfe not UTF-8\n")
    assert verdicts.main([str(readme)]) == 2
    assert "not UTF-8 text" in capsys.readouterr().err


def test_a_row_of_another_width_is_one_line_for_the_index():
    with pytest.raises(RbmlabError, match=r"^README.md:3: 6 cells, the header has 8$"):
        readme_verdicts(HEAD + GOOD.rsplit(" | ", 2)[0] + " |\n", "README.md")


def test_the_committed_readmes_verdicts_carry_their_evidence():
    papers = default_papers_dir()
    if papers is None:
        pytest.skip("../shared/papers is not beside this checkout: the quotes cannot be looked up")
    assert set(paper_files(papers)) >= {"crbm_bp", "dcp", "tap", "frank_wolfe", "pmp"}
    assert results_problems(RESULTS_DIR, papers) == []


def test_a_readme_beyond_the_papers_with_a_verdicts_table_is_held_to_it(tmp_path):
    readme = _tree(tmp_path, GOOD)
    board = readme.parent.parent / "leaderboard"
    board.mkdir()
    (board / "README.md").write_text(HEAD + GOOD.replace("| 3 |", "| 1 |") + "\n")
    (readme.parent.parent / "potts").mkdir()
    (readme.parent.parent / "potts" / "README.md").write_text("# no verdicts here\n")
    found = results_problems(readme.parent.parent, tmp_path / "shared" / "papers")
    assert found and all(f.startswith("results/leaderboard/README.md:3: figure-7a: ") for f in found)
    assert "'reproduced' on 1 seed(s)" in found[0]


def test_report_index_check_prints_each_problem_and_exits_1(monkeypatch, capsys):
    from rbmlab import cli

    monkeypatch.setattr(verdicts, "results_problems", lambda results, papers: ["results/x/README.md:3: y: z"])
    with pytest.raises(SystemExit) as e:
        cli.cmd_report_index(["--check"])
    assert e.value.code == 1
    assert "rbmlab: verdicts: results/x/README.md:3: y: z" in capsys.readouterr().err.splitlines()
