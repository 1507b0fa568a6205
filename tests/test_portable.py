"""rbmlab.storage.portable: the one rule by which committed files write paths (issue 53, item 7),
and the reader's side of it."""
from __future__ import annotations

from pathlib import Path

import pytest

from rbmlab.storage.portable import ABSOLUTE_PATH, portable_path, portable_text, resolve_path

OUTPUTS = "/work/main/outputs/experiments"


@pytest.mark.parametrize("path, roots, expected", [
    # under the outputs root: relative to it
    (f"{OUTPUTS}/frank_wolfe/figure-1a/reduced/fw/0/snapshots/epoch_20.npz", [OUTPUTS],
     "frank_wolfe/figure-1a/reduced/fw/0/snapshots/epoch_20.npz"),
    # a run selector after '?' is kept
    (f"{OUTPUTS}/pmp/figure-2-mmd/reduced/pmp?learner.k=5&seed=0", [OUTPUTS],
     "pmp/figure-2-mmd/reduced/pmp?learner.k=5&seed=0"),
    # the first root that holds it
    ("/work/wt/outputs/experiments/tap/figure-3/smoke/x.npz", ["/elsewhere", "/work/wt/outputs/experiments", "/work/wt"],
     "tap/figure-3/smoke/x.npz"),
    ("/work/wt/outputs/runs/a/checkpoint.npz", ["/work/wt/outputs/experiments", "/work/wt"], "outputs/runs/a/checkpoint.npz"),
    # an installed library: the part after site-packages / dist-packages
    ("/work/main/.venv/lib/python3.11/site-packages/numpy.libs/libscipy_openblas64_-32a4b2a6.so", [OUTPUTS],
     "numpy.libs/libscipy_openblas64_-32a4b2a6.so"),
    ("/usr/lib/python3/dist-packages/scipy.libs/libopenblas.so", [], "scipy.libs/libopenblas.so"),
    # anything else absolute: its name
    ("/tmp/rbms38/ck_cd5.npz", [OUTPUTS], "ck_cd5.npz"),
    ("/work/ckpt/hpconv_lam1_200units.npz", [], "hpconv_lam1_200units.npz"),
    ("C:\\Users\\me\\runs\\checkpoint.npz", [OUTPUTS], "checkpoint.npz"),
    # left as they are: relative paths, words, URLs, system programs
    ("frank_wolfe/figure-1a/reduced/fw/0/snapshots/epoch_20.npz", [OUTPUTS],
     "frank_wolfe/figure-1a/reduced/fw/0/snapshots/epoch_20.npz"),
    ("truth", [OUTPUTS], "truth"),
    ("https://github.com/a/b", [], "https://github.com/a/b"),
    ("/usr/bin/time", [], "/usr/bin/time"),
])
def test_portable_path(path, roots, expected):
    assert portable_path(path, roots) == expected


def test_a_relative_root_is_the_working_directory_s(tmp_path, monkeypatch):
    """``outputs/experiments`` as given on a command line: the same folder as its absolute spelling."""
    monkeypatch.chdir(tmp_path)
    inside = tmp_path / "outputs" / "experiments" / "pmp" / "figure-3-train" / "smoke" / "pmp"
    assert portable_path(f"{inside}?seed=0", ["outputs/experiments"]) == "pmp/figure-3-train/smoke/pmp?seed=0"
    assert portable_path(Path(inside), [Path("outputs/experiments")]) == "pmp/figure-3-train/smoke/pmp"


def test_portable_text_rewrites_each_absolute_path_and_nothing_else():
    text = ("`python s.py out.md checkpoints=[/work/ckpt/a.npz,/work/ckpt/b.npz] sweep=/work/wt/outputs/x/y`. "
            "BLAS (/v/lib/python3.11/site-packages/numpy.libs/o.so); see https://x.org/a/b, 3 /s, 1/2/3, "
            "dir: /work/pottsout/learned\n/usr/bin/time -f x")
    assert portable_text(text, ["/work/wt"]) == (
        "`python s.py out.md checkpoints=[a.npz,b.npz] sweep=outputs/x/y`. "
        "BLAS (numpy.libs/o.so); see https://x.org/a/b, 3 /s, 1/2/3, dir: learned\n/usr/bin/time -f x")
    assert ABSOLUTE_PATH.findall("a,/work/main/outputs/experiments/p/a/s/v?k=1&seed=0,b") == [
        "/work/main/outputs/experiments/p/a/s/v?k=1&seed=0"]
    assert ABSOLUTE_PATH.findall('"C:\\Users\\x.npz" and D:/data/x.npz') == ["C:\\Users\\x.npz", "D:/data/x.npz"]


def test_resolve_path_reads_the_relative_form_back_against_the_root(tmp_path):
    root = tmp_path / "outputs" / "experiments"
    written = portable_path(f"{root}/pmp/figure-3-train/reduced/pmp?seed=0", [root])
    assert resolve_path(written, root) == f"{root}/pmp/figure-3-train/reduced/pmp?seed=0"
    assert resolve_path("/tmp/x.npz", root) == "/tmp/x.npz"
    assert resolve_path("https://x.org/a", root) == "https://x.org/a"

