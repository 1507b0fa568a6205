"""Second-read fixes of the report layer (issue 35): the header's commits and replicates."""
import pandas as pd

from rbmlab.report.header import report_header


def test_a_resumed_runs_commits_are_listed_once_each():
    # a resumed run's source is every commit that trained it, comma-separated (merge_sources)
    runs = pd.DataFrame({"run_dir": ["a", "b", "c"], "source": ["38cbd5b", "38cbd5b,94cd235", "94cd235"]})
    assert report_header(runs).endswith("· 3 runs · commits 38cbd5b, 94cd235")


def test_batched_trials_are_counted_as_replicates():
    runs = pd.DataFrame({"run_dir": ["x#0", "x#1", "y#0", "y#1"], "seed": [4, 4, 5, 5]})
    assert report_header(runs, scale="paper") == ("paper tier · seeds 4, 5 · 2 runs × trials = 4 replicates · "
                                                  "commit unknown")
