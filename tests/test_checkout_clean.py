"""The end-of-run check that the tests left no file in the checkout (tests/conftest.py)."""

from conftest import NOT_WATCHED, checkout_files


def test_checkout_files_lists_every_file_but_the_unwatched_folders(tmp_path):
    (tmp_path / "outputs" / "experiments").mkdir(parents=True)
    (tmp_path / "outputs" / "experiments" / "summary.json").write_text("{}")
    (tmp_path / ".hidden").write_text("")
    for name in NOT_WATCHED:
        (tmp_path / "deep" / name).mkdir(parents=True)
        (tmp_path / "deep" / name / "file").write_text("")
    before = checkout_files(tmp_path)
    assert before == {"outputs/experiments/summary.json", ".hidden"}
    (tmp_path / "deep" / "new.csv").write_text("")
    assert checkout_files(tmp_path) - before == {"deep/new.csv"}
