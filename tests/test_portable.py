"""rbmlab.storage.portable: the one rule by which committed files write paths (issue 53, item 7),
and the reader's side of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from rbmlab.storage.portable import ABSOLUTE_PATH, portable_path, portable_text, resolve_path

OUTPUTS = "/work/main/outputs/experiments"


@pytest.mark.parametrize(
    "path, roots, expected",
    [
        # under the outputs root: relative to it
        (
            f"{OUTPUTS}/frank_wolfe/figure-1a/reduced/fw/0/snapshots/epoch_20.npz",
            [OUTPUTS],
            "frank_wolfe/figure-1a/reduced/fw/0/snapshots/epoch_20.npz",
        ),
        # a run selector after '?' is kept
        (
            f"{OUTPUTS}/pmp/figure-2-mmd/reduced/pmp?learner.k=5&seed=0",
            [OUTPUTS],
            "pmp/figure-2-mmd/reduced/pmp?learner.k=5&seed=0",
        ),
        # the first root that holds it
        (
            "/work/wt/outputs/experiments/tap/figure-3/smoke/x.npz",
            ["/elsewhere", "/work/wt/outputs/experiments", "/work/wt"],
            "tap/figure-3/smoke/x.npz",
        ),
        (
            "/work/wt/outputs/runs/a/checkpoint.npz",
            ["/work/wt/outputs/experiments", "/work/wt"],
            "outputs/runs/a/checkpoint.npz",
        ),
        # an installed library: the part after site-packages / dist-packages
        (
            "/work/main/.venv/lib/python3.11/site-packages/numpy.libs/libscipy_openblas64_-32a4b2a6.so",
            [OUTPUTS],
            "numpy.libs/libscipy_openblas64_-32a4b2a6.so",
        ),
        ("/usr/lib/python3/dist-packages/scipy.libs/libopenblas.so", [], "scipy.libs/libopenblas.so"),
        # anything else absolute: its name
        ("/tmp/rbms38/ck_cd5.npz", [OUTPUTS], "ck_cd5.npz"),
        ("/work/ckpt/hpconv_lam1_200units.npz", [], "hpconv_lam1_200units.npz"),
        ("C:\\Users\\me\\runs\\checkpoint.npz", [OUTPUTS], "checkpoint.npz"),
        # left as they are: relative paths, words, URLs, system programs
        (
            "frank_wolfe/figure-1a/reduced/fw/0/snapshots/epoch_20.npz",
            [OUTPUTS],
            "frank_wolfe/figure-1a/reduced/fw/0/snapshots/epoch_20.npz",
        ),
        ("truth", [OUTPUTS], "truth"),
        ("https://github.com/a/b", [], "https://github.com/a/b"),
        ("/usr/bin/time", [], "/usr/bin/time"),
    ],
)
def test_portable_path(path, roots, expected):
    assert portable_path(path, roots) == expected


def test_a_relative_root_is_the_working_directory_s(tmp_path, monkeypatch):
    """``outputs/experiments`` as given on a command line: the same folder as its absolute spelling."""
    monkeypatch.chdir(tmp_path)
    inside = tmp_path / "outputs" / "experiments" / "pmp" / "figure-3-train" / "smoke" / "pmp"
    assert portable_path(f"{inside}?seed=0", ["outputs/experiments"]) == "pmp/figure-3-train/smoke/pmp?seed=0"
    assert portable_path(Path(inside), [Path("outputs/experiments")]) == "pmp/figure-3-train/smoke/pmp"


def test_portable_text_rewrites_each_absolute_path_and_nothing_else():
    text = (
        "`python s.py out.md checkpoints=[/work/ckpt/a.npz,/work/ckpt/b.npz] sweep=/work/wt/outputs/x/y`. "
        "BLAS (/v/lib/python3.11/site-packages/numpy.libs/o.so); see https://x.org/a/b, 3 /s, 1/2/3, "
        "dir: /work/pottsout/learned\n/usr/bin/time -f x"
    )
    assert portable_text(text, ["/work/wt"]) == (
        "`python s.py out.md checkpoints=[a.npz,b.npz] sweep=outputs/x/y`. "
        "BLAS (numpy.libs/o.so); see https://x.org/a/b, 3 /s, 1/2/3, dir: learned\n/usr/bin/time -f x"
    )
    assert ABSOLUTE_PATH.findall("a,/work/main/outputs/experiments/p/a/s/v?k=1&seed=0,b") == [
        "/work/main/outputs/experiments/p/a/s/v?k=1&seed=0"
    ]
    assert ABSOLUTE_PATH.findall('"C:\\Users\\x.npz" and D:/data/x.npz') == [
        "C:\\Users\\x.npz",
        "D:/data/x.npz",
    ]


def test_resolve_path_reads_the_relative_form_back_against_the_root(tmp_path):
    root = tmp_path / "outputs" / "experiments"
    written = portable_path(f"{root}/pmp/figure-3-train/reduced/pmp?seed=0", [root])
    assert resolve_path(written, root) == f"{root}/pmp/figure-3-train/reduced/pmp?seed=0"
    assert resolve_path("/tmp/x.npz", root) == "/tmp/x.npz"
    assert resolve_path("https://x.org/a", root) == "https://x.org/a"


def test_the_runs_table_writes_config_paths_relative_to_the_outputs_root(tmp_path):
    """The report's runs table (rbmlab.report.load, behind every runs CSV): ``model.init`` and the
    overrides name another run's checkpoint relative to the outputs root; a library path by its
    part after site-packages; the run directory itself as before."""
    import json  # noqa: PLC0415

    import yaml  # noqa: PLC0415

    from rbmlab.report.load import load_runs  # noqa: PLC0415

    outputs = tmp_path / "outputs" / "experiments"
    sweep = outputs / "p" / "b" / "reduced"
    init = f"{outputs}/p/a/reduced/fw/0/snapshots/epoch_20.npz"
    run = sweep / "cd" / "0"
    run.mkdir(parents=True)
    (run / "config.yaml").write_text(
        yaml.safe_dump(
            {
                "seed": 0,
                "model": {"n_hidden": 20, "init": init},
                "dataset": {"name": "file", "path": "/venv/lib/python3.11/site-packages/pkg/data/x.npz"},
            }
        )
    )
    (run / "overrides.yaml").write_text(yaml.safe_dump([f"model.init='{init}'", "seed=0"]))
    (run / "summary.json").write_text(json.dumps({"status": "completed", "epochs_done": 1, "final": {}}))
    (run / "metrics.csv").write_text("epoch,test_log_likelihood\n1,-1.0\n")
    runs, _ = load_runs(sweep, ["cd"], outputs)
    assert runs.loc[0, "model.init"] == "p/a/reduced/fw/0/snapshots/epoch_20.npz"
    assert runs.loc[0, "dataset.path"] == "pkg/data/x.npz"
    assert runs.loc[0, "overrides"] == "model.init='p/a/reduced/fw/0/snapshots/epoch_20.npz' seed=0"
    assert runs.loc[0, "run_dir"] == "cd/0"
    assert resolve_path(runs.loc[0, "model.init"], outputs) == init


@pytest.mark.slow  # about 7 s alone, 11 s on two busy cores
def test_a_runs_csv_names_another_run_s_checkpoint_relative_to_the_outputs_root(tmp_path, monkeypatch):
    """frank_wolfe/figure-1a's cd_fw variant starts from the fw variant's snapshot
    (``model.init='{sweep}/fw?seed=${seed}&file=snapshots/epoch_<n>.npz'``): the run itself reads the absolute
    path, its runs CSV names the file relative to the outputs root, which resolves back to it,
    and no file of the report holds a path of this machine."""
    import pandas as pd  # noqa: PLC0415
    import yaml  # noqa: PLC0415
    from threadpoolctl import threadpool_limits  # noqa: PLC0415

    from rbmlab.experiment import run_experiment  # noqa: PLC0415
    from rbmlab.run.pretrained import select_run  # noqa: PLC0415

    monkeypatch.chdir(tmp_path)
    outputs = tmp_path / "out"
    with threadpool_limits(1):
        result = run_experiment(
            "frank_wolfe/figure-1a",
            ["scale=smoke", "variants=fw,cd_fw", "train.epochs=4"],  # fw: 4 units; cd_fw: from 2 and 4
            results_root=tmp_path / "results",
            outputs_root=outputs,
        )
    runs = pd.read_csv(result["runs"])
    written = runs.loc[runs["variant"] == "cd_fw", "model.init"].tolist()
    assert written == [f"frank_wolfe/figure-1a/smoke/fw?seed=0&file=snapshots/epoch_{n}.npz" for n in (2, 4)]
    config = yaml.safe_load((outputs / "frank_wolfe/figure-1a/smoke/cd_fw/0/config.yaml").read_text())
    assert config["model"]["init"] == f"{outputs}/{written[0]}"  # what the run read
    assert (
        select_run(resolve_path(written[0], outputs))  # the reader's side
        == outputs / "frank_wolfe/figure-1a/smoke/fw/0/snapshots/epoch_2.npz"
    )
    for path in (result["runs"], result["curves"], result["table"]):
        assert ABSOLUTE_PATH.findall(Path(path).read_text()) == [], path


def test_the_machine_facts_and_rbmlab_evaluate_write_no_path_of_this_machine(tmp_path, monkeypatch):
    """bench.json / bench.md / a timing's table read the BLAS library from facts(); ``rbmlab
    evaluate``'s JSON names its checkpoint relative to the working directory, or by its name."""
    from rbmlab.backend.machine import facts  # noqa: PLC0415
    from rbmlab.evaluate import _named  # noqa: PLC0415

    for lib in facts()["blas"]:
        assert not lib["filepath"].startswith("/"), lib
    monkeypatch.chdir(tmp_path)
    assert _named(tmp_path / "outputs" / "runs" / "a" / "checkpoint.npz") == "outputs/runs/a/checkpoint.npz"
    assert _named("outputs/runs/a/checkpoint.npz") == "outputs/runs/a/checkpoint.npz"
    assert _named("/elsewhere/scratch/ck_cd5.npz") == "ck_cd5.npz"
