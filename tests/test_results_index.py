"""results/README.md's index (rbmlab.experiment.index): current with the registry and the committed
files, complete, and right on a small results tree of known numbers."""

from __future__ import annotations

import re

import pytest

from rbmlab.errors import RbmlabError
from rbmlab.experiment.catalog import RESULTS_DIR
from rbmlab.experiment.index import MARK, index_main, index_text, readme_verdicts, rows
from rbmlab.experiment.spec import available, load_spec
from rbmlab.report.names import Names

TABLE_1 = "crbm_bp/table-1"  # metric early_stopping.test_pixel_error (lower is better), lines
#                               variant, panels task.rate, a paper value per (variant, rate)
HEADER = (
    "run_dir,learner.name,task.rate,variant,seed,status,"
    "final.early_stopping.test_pixel_error,final.test_pixel_error\n"
)
RUNS = [  # run_dir, variant, rate, seed, status, value
    ("lr/0", "lr", 0.1, 0, "completed", 2.0),
    ("lr/1", "lr", 0.1, 1, "completed", 2.2),
    ("lr/2", "lr", 0.1, 2, "completed", 2.4),
    ("cd1/0", "cd1", 0.2, 0, "completed", 3.0),
    ("cd1/1", "cd1", 0.2, 1, "completed", 3.1),
    ("cd1/2", "cd1", 0.2, 2, "failed", -10.0),  # not completed: left out, else cd1 would lead
    ("extra/0", "extra", 0.1, 0, "completed", 0.1),  # best of all, but the paper has no value for it
]
README = """# crbm_bp: a fixture

| artefact | claim | verdict |
|---|---|---|
| table-1 | 3. MLE-BP below CD-PercLoss | reproduced in shape |
| `table-2` | 4. CD-k unsatisfactory | reproduced |
| table-2 | 5. MSSVM improves on LSSVM | not reproduced at this scale |
"""


@pytest.fixture(scope="module")
def committed_index():
    return (RESULTS_DIR / "README.md").read_text(), index_text(RESULTS_DIR)


def test_the_committed_index_is_what_the_generator_makes_now(committed_index):
    committed, generated = committed_index
    assert committed == generated, "results/README.md is stale: run `make results-index`"
    assert committed.count(MARK) == 1
    assert committed.index("Each folder's README gives the command") < committed.index(MARK)  # intro kept


def test_every_experiment_of_the_registry_has_a_row_in_its_papers_section(committed_index):
    sections = dict(re.findall(r"^### (\S+?):? .*?\n(.*?)(?=^### |\Z)", committed_index[1], re.S | re.M))
    assert set(sections) == {name.split("/")[0] for name in available()}
    for name in available():
        paper, artefact = name.split("/")
        assert f"| `{artefact}`: " in sections[paper], name


@pytest.fixture
def results_tree(tmp_path):
    folder = tmp_path / "crbm_bp"
    folder.mkdir()
    (folder / "README.md").write_text(README)
    (folder / "table-1_reduced_runs.csv").write_text(
        HEADER
        + "".join(
            f"{d},x,{rate},{v},{seed},{status},{value},{value}\n" for d, v, rate, seed, status, value in RUNS
        )
    )
    for name in (
        "table-1_reduced.md",
        "table-1_reduced.png",
        "table-1_reduced_curves.csv",
        "table-1_smoke.md",
        "table-10_reduced.md",
        "table-1-changed_reduced.md",
    ):
        (folder / name).write_text("x")
    return tmp_path


def test_a_results_tree_gives_its_rows(results_tree):
    smoke, reduced = rows(results_tree, [TABLE_1])
    assert (smoke.tier, smoke.ours, smoke.paper, smoke.tables, smoke.plots) == (
        "smoke",
        "—",
        "—",
        ("crbm_bp/table-1_smoke.md",),
        (),
    )
    # of the groups with a paper value (lr 0.1: 1.96, cd1 0.2: 4.012) the lowest mean; extra has none
    assert (reduced.tier, reduced.ours, reduced.paper) == ("reduced", "2.2 ± 0.2 (n=3)", "1.96")
    names = Names.parse(load_spec(TABLE_1)["report"].get("names"))
    assert reduced.measure.startswith(names.metric("early_stopping.test_pixel_error") + "; ")
    assert (
        names.value("variant", "lr") in reduced.measure and names.value("task.rate", 0.1) in reduced.measure
    )
    assert reduced.verdict == "reproduced in shape"
    assert reduced.tables == ("crbm_bp/table-1_reduced.md",)
    assert reduced.plots == ("crbm_bp/table-1_reduced.png",)
    page = index_text(results_tree, [TABLE_1])
    assert "| reduced | 2.2 ± 0.2 (n=3) | 1.96 |" in page
    assert "[crbm_bp/README.md](crbm_bp/README.md)" in page
    assert "[table-1_reduced.png](crbm_bp/table-1_reduced.png) |" in page


def test_the_failed_run_counts_once_completed(results_tree):
    runs = results_tree / "crbm_bp" / "table-1_reduced_runs.csv"
    runs.write_text(runs.read_text().replace("failed,-10.0", "completed,-10.0"))
    reduced = rows(results_tree, [TABLE_1])[1]
    assert (reduced.ours, reduced.paper) == ("-1.3 ± 7.5 (n=3)", "4.012")


def test_an_artefact_of_several_claims_lists_each_verdict_with_its_claim():
    assert readme_verdicts(README, "README.md") == {
        "table-1": "reproduced in shape",
        "table-2": "reproduced (4. CD-k unsatisfactory); "
        "not reproduced at this scale (5. MSSVM improves on LSSVM)",
    }


def test_a_verdict_outside_the_vocabulary_is_a_one_line_error(results_tree):
    readme = results_tree / "crbm_bp" / "README.md"
    readme.write_text(README.replace("| reproduced in shape |", "| mostly reproduced |"))
    with pytest.raises(RbmlabError) as e:
        rows(results_tree, [TABLE_1])
    assert "\n" not in str(e.value)
    assert str(e.value).startswith(
        "results/crbm_bp/README.md: verdict of table-1: 'mostly reproduced' is not one of"
    )


def test_check_finds_a_stale_index_and_a_rewrite_makes_it_current(results_tree):
    readme = results_tree / "README.md"
    readme.write_text(f"# results/\n\nIntro.\n\n{MARK}\n\nold rows\n")
    assert index_main(results_tree, check=True, names=[TABLE_1]) is False
    assert "old rows" in readme.read_text()  # --check writes nothing
    assert index_main(results_tree, names=[TABLE_1]) is False
    text = readme.read_text()
    assert text.startswith("# results/\n\nIntro.\n\n" + MARK) and "old rows" not in text
    assert index_main(results_tree, check=True, names=[TABLE_1]) is True
