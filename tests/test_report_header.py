"""The header line of a table or figure: tier, data, training length, seeds, runs and commit."""

import math

import pandas as pd

from rbmlab.report.header import SMOKE_NOTE, report_header


def runs(**columns):
    return pd.DataFrame({"run_dir": [f"r{i}" for i in range(3)], **columns})


def test_a_reduced_header_says_every_part():
    header = report_header(
        runs(
            scale=["reduced"] * 3,
            **{"dataset.name": ["mnist"] * 3},
            **{"dataset.n_train": [2000] * 3, "train.epochs": [40] * 3},
            epochs_done=[13, 40, 22],
            seed=[0, 1, 2],
            source=["38cbd5b"] * 3,
        )
    )
    assert header == (
        "reduced tier · mnist, 2,000 training examples · 13–40 epochs of 40 asked · "
        "seeds 0–2 · 3 runs · commit 38cbd5b"
    )


def test_a_smoke_header_starts_by_saying_it_is_a_pipeline_check():
    header = report_header(
        runs(
            scale=["smoke"] * 3,
            seed=[0, 3, 7],
            source=["a", "b", "a"],
            **{"dataset.n_train": [math.nan] * 3},
            epochs_done=[2] * 3,
        )
    )
    assert header.startswith(SMOKE_NOTE + " (smoke tier")
    assert "all training examples" in header and "2 epochs" in header
    assert "seeds 0, 3, 7" in header and "commits a, b" in header


def test_trials_of_one_run_count_once_and_the_tier_can_be_given():
    header = report_header(pd.DataFrame({"run_dir": ["x#0", "x#1"], "seed": [4, 4]}), scale="paper")
    assert header == "paper tier · seed 4 · 1 run × trials = 2 replicates · commit unknown"


def test_runs_that_only_evaluate_say_so():
    header = report_header(runs(epochs_done=[0] * 3, **{"train.epochs": [0] * 3}, seed=[0] * 3))
    assert header == "unknown tier · no training (evaluation only) · seed 0 · 3 runs · commit unknown"


def test_runs_that_record_no_commit_take_the_one_the_git_history_names_and_say_so(tmp_path):
    from rbmlab.report.header import HISTORY_COMMIT
    from rbmlab.report.tidy import read_committed_csv

    named = runs(seed=[0] * 3, **{HISTORY_COMMIT: ["2eab2a2"] * 3})
    assert report_header(named).endswith("3 runs · commit 2eab2a2 (from the git history, not the runs)")
    # a recorded source wins; a commit of digits stays text when read back from a runs CSV
    assert report_header(named.assign(source="38cbd5b")).endswith("commit 38cbd5b")
    named.assign(**{HISTORY_COMMIT: "1234e56"}).to_csv(tmp_path / "r.csv", index=False)
    assert report_header(read_committed_csv(tmp_path / "r.csv")).endswith(
        "commit 1234e56 (from the git history, not the runs)"
    )
