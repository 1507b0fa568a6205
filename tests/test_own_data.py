"""dataset=file: a user's own matrix (.npy, .npz, .csv) on the command line (issue 34, item 3).

A run and a sweep train on it, the run records the file's absolute path and sha256, its identity
is the file's content; the held-out splits are the documented seeded permutation; the test
log-likelihood a run reports is the exact one of the rows it held out; every problem with the
file is one ``rbmlab: error: dataset.<key>:`` line, exit 2.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from rbmlab.cli import main
from rbmlab.data import load_dataset
from rbmlab.errors import RbmlabError
from rbmlab.hydra_app import validated_run_config
from rbmlab.models.rbm import RBM
from rbmlab.run.checkpoint import save_checkpoint
from tests.test_bad_input import Case, assert_one_error_line

RNG = np.random.default_rng(0)
X = (RNG.random((40, 6)) < 0.3).astype(np.float64)  # 40 binary rows, 6 visible units
FAST = ["train.epochs=1", "train.progress=false", "model.n_hidden=3", "evaluator=exact"]


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def exact_mean_log_likelihood(W, b_v, b_h, rows) -> float:
    """Mean log p(v) of an RBM by enumerating all 2^n_visible states (independent of rbmlab)."""
    n = W.shape[0]
    states = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.float64)

    def log_p_tilde(v):
        return v @ b_v + np.logaddexp(0, v @ W + b_h).sum(axis=1)

    all_states = log_p_tilde(states)
    log_z = all_states.max() + np.log(np.exp(all_states - all_states.max()).sum())
    return float(log_p_tilde(rows).mean() - log_z)


def test_a_sweep_trains_on_own_files_records_them_and_scores_the_held_out_rows(tmp_path, monkeypatch):
    """The acceptance: `rbmlab run -m dataset=file dataset.path=...` over a .npy and a .csv (with
    a header) of other rows; each run's test log-likelihood is the exact one of the rows perm[:4]
    of numpy default_rng(0).permutation(40), and `rbmlab evaluate` on the same file agrees."""
    np.save(tmp_path / "x.npy", X)
    (tmp_path / "elsewhere").mkdir()
    np.savetxt(
        tmp_path / "elsewhere" / "y.csv", X[::-1], delimiter=",", fmt="%g", header="a,b,c,d,e,f", comments=""
    )
    monkeypatch.chdir(tmp_path)
    main(["run", "-m", "dataset=file", "dataset.path=x.npy,elsewhere/y.csv", *FAST, "hydra.sweep.dir=sweep"])
    perm = np.random.default_rng(0).permutation(40)
    hashes = []
    for job, (name, data) in enumerate([("x.npy", X), ("elsewhere/y.csv", X[::-1])]):
        run = tmp_path / "sweep" / str(job)
        dataset = yaml.safe_load((run / "config.yaml").read_text())["dataset"]
        assert dataset["path"] == str(tmp_path / name) and dataset["sha256"] == sha256(tmp_path / name)
        summary = json.loads((run / "summary.json").read_text())
        assert summary["status"] == "completed"
        hashes.append(summary["config_hash"])
        with np.load(run / "checkpoint.npz") as c:
            W, b_v, b_h = (c[k].astype(np.float64) for k in ("W", "b_v", "b_h"))
        expected = exact_mean_log_likelihood(W, b_v, b_h, data[perm[:4]])
        assert summary["final"]["test_log_likelihood"] == pytest.approx(expected, abs=1e-4)
    assert hashes[0] != hashes[1]

    out = tmp_path / "scored.json"
    main(
        [
            "evaluate",
            f"checkpoint={tmp_path / 'sweep' / '0' / 'checkpoint.npz'}",
            "dataset=file",
            f"dataset.path={tmp_path / 'x.npy'}",
            "evaluator=exact",
            f"out={out}",
        ]
    )
    scored = json.loads(out.read_text())
    assert scored["dataset"] == "file" and scored["dataset_sha256"] == sha256(tmp_path / "x.npy")
    assert scored["n_examples"] == 4
    first = json.loads((tmp_path / "sweep" / "0" / "summary.json").read_text())
    assert scored["mean_log_likelihood"] == pytest.approx(first["final"]["test_log_likelihood"], abs=1e-4)


def test_a_single_matrix_holds_out_seeded_test_and_valid_rows(tmp_path):
    np.save(tmp_path / "x.npy", X)
    path = str(tmp_path / "x.npy")
    data = load_dataset("file", path=path)
    perm = np.random.default_rng(0).permutation(40)
    np.testing.assert_array_equal(data.test, X[perm[:4]])
    np.testing.assert_array_equal(data.train, X[np.sort(perm[4:])])
    assert data.valid is None and data.train.dtype == np.float32
    data = load_dataset("file", path=path, test_fraction=0.25, valid_fraction=0.1, split_seed=7)
    perm = np.random.default_rng(7).permutation(40)
    np.testing.assert_array_equal(data.test, X[perm[:10]])
    np.testing.assert_array_equal(data.valid, X[perm[10:14]])
    np.testing.assert_array_equal(data.train, X[np.sort(perm[14:])])
    whole = load_dataset("file", path=path, test_fraction=0)  # tiny data: test = train = the matrix
    np.testing.assert_array_equal(whole.train, X)
    np.testing.assert_array_equal(whole.test, X)


def test_an_npz_keeps_its_splits_and_labels(tmp_path):
    y = np.arange(40) % 3
    np.savez(
        tmp_path / "d.npz", train=X[:30], test=X[30:], train_labels=y[:30], test_labels=y[30:].astype(float)
    )
    data = load_dataset("file", path=str(tmp_path / "d.npz"), valid_fraction=0.1)
    perm = np.random.default_rng(0).permutation(30)
    np.testing.assert_array_equal(data.test, X[30:])
    np.testing.assert_array_equal(data.test_labels, y[30:])
    np.testing.assert_array_equal(data.valid, X[:30][perm[:3]])
    np.testing.assert_array_equal(data.valid_labels, y[:30][perm[:3]])
    np.testing.assert_array_equal(data.train_labels, y[:30][np.sort(perm[3:])])
    assert data.test_labels.dtype == np.int64


@pytest.mark.parametrize(
    "text, options",
    [
        ("1,0,1\n0,1,0\n", {}),  # no header
        ("a,b,c\n1,0,1\n0,1,0\n", {}),  # a header, detected
        ("1,2,3\n1,0,1\n0,1,0\n", {"header": True}),  # a numeric header, declared
        ("1;0;1\n\n0;1;0\n", {"delimiter": ";"}),  # another separator, a blank line
    ],
)
def test_a_csv_with_or_without_a_header(tmp_path, text, options):
    (tmp_path / "d.csv").write_text(text)
    data = load_dataset("file", path=str(tmp_path / "d.csv"), test_fraction=0, **options)
    np.testing.assert_array_equal(data.train, [[1, 0, 1], [0, 1, 0]])


def test_the_run_identity_is_the_content_and_a_recorded_sha256_is_checked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "a.npy", X)
    np.save(tmp_path / "b.npy", X)
    first = validated_run_config(["dataset=file", "dataset.path=a.npy", *FAST])
    assert first.dataset["path"] == str(tmp_path / "a.npy")
    assert validated_run_config(["dataset=file", "dataset.path=b.npy", *FAST]).hash() == first.hash()
    np.save(tmp_path / "b.npy", 1 - X)
    assert validated_run_config(["dataset=file", "dataset.path=b.npy", *FAST]).hash() != first.hash()
    with pytest.raises(RbmlabError, match=r"^dataset.sha256: .*b.npy has sha256 [0-9a-f]{64}, not "):
        validated_run_config(
            ["dataset=file", "dataset.path=b.npy", f"dataset.sha256={first.dataset['sha256']}", *FAST]
        )


# ---------------------------------------------------------------- one line per problem
def arrays(**files):
    """A setup writing each ``name=array`` (.npy, or a dict of arrays for .npz, or text for .csv)."""

    def setup(root: Path) -> None:
        for name, value in files.items():
            name = name.replace("_", ".")
            if isinstance(value, str):
                (root / name).write_text(value)
            elif isinstance(value, dict):
                np.savez(root / name, **value)
            else:
                np.save(root / name, value)

    return setup


RUN = ["run", "dataset=file", *FAST]
RBM6 = RBM(0.1 * RNG.standard_normal((6, 3)), np.zeros(6), np.zeros(3))
GREY = np.random.default_rng(1).random((20, 6))
NAN = X.copy()
NAN[3, 2] = np.nan
CASES = [
    Case("grey-under-bernoulli", [*RUN, "dataset.path=g.npy"], "dataset.path: ", arrays(g_npy=GREY)),
    Case(
        "grey-under-bernoulli-names-the-units",
        [*RUN, "dataset.path=g.npy"],
        "model.visible_units=bernoulli has bernoulli visible units, values {0,1}",
        arrays(g_npy=GREY),
    ),
    Case(
        "spins-under-ising-01",
        ["run", "dataset=file", "model=ising", "evaluator=exact", "train.epochs=1", "dataset.path=s.npy"],
        "dataset.path: ",
        arrays(s_npy=2 * X - 1),
    ),
    Case("missing-file", [*RUN, "dataset.path=nowhere.npy"], "dataset.path: ", None),
    Case("no-path", RUN, "dataset.path: missing"),
    Case(
        "path-without-dataset-file",
        ["run", *FAST, "dataset.path=x.npy"],
        "dataset.path: the chosen dataset has no path; a file of your own is dataset=file dataset.path=X.npy",
    ),
    Case("unknown-extension", [*RUN, "dataset.path=x.txt"], "dataset.path: x.txt: expected a .npy"),
    Case(
        "three-dimensional",
        [*RUN, "dataset.path=c.npy"],
        "is a 3-D array of shape (2, 3, 4)",
        arrays(c_npy=np.zeros((2, 3, 4))),
    ),
    Case("one-dimensional", [*RUN, "dataset.path=v.npy"], "is a 1-D array", arrays(v_npy=np.zeros(6))),
    Case(
        "nan",
        [*RUN, "dataset.path=n.npy"],
        "NaN or infinite value(s), the first nan at row 3, column 2",
        arrays(n_npy=NAN),
    ),
    Case(
        "strings",
        [*RUN, "dataset.path=s.npy"],
        "holds <U1 values, not real numbers",
        arrays(s_npy=np.array([["a", "b"]])),
    ),
    Case("no-rows", [*RUN, "dataset.path=e.npy"], "no rows", arrays(e_npy=np.zeros((0, 6)))),
    Case(
        "csv-not-a-number",
        [*RUN, "dataset.path=d.csv"],
        "line 3, column 2: 'x' is not a number",
        arrays(d_csv="a,b\n1,0\n1,x\n"),
    ),
    Case("csv-ragged", [*RUN, "dataset.path=d.csv"], "line 2 has 1 fields", arrays(d_csv="1,0\n1\n")),
    Case(
        "csv-binary",
        [*RUN, "dataset.path=d.csv"],
        "is not a text file",
        lambda root: (root / "d.csv").write_bytes(b"\xff\xfe\x00\x81"),
    ),
    Case(
        "npz-without-train",
        [*RUN, "dataset.path=d.npz"],
        "has no array 'train' (it holds X)",
        arrays(d_npz={"X": X}),
    ),
    Case(
        "npz-unknown-array",
        [*RUN, "dataset.path=d.npz"],
        "holds arrays y_train that rbmlab does not read",
        arrays(d_npz={"train": X, "y_train": np.zeros(40)}),
    ),
    Case(
        "npz-labels-wrong-length",
        [*RUN, "dataset.path=d.npz"],
        "train_labels has shape (3,); expected (40,)",
        arrays(d_npz={"train": X, "train_labels": np.zeros(3)}),
    ),
    Case(
        "npz-labels-not-integers",
        [*RUN, "dataset.path=d.npz"],
        "train_labels holds float64 values",
        arrays(d_npz={"train": X, "train_labels": np.full(40, 0.5)}),
    ),
    Case(
        "npz-splits-differ",
        [*RUN, "dataset.path=d.npz"],
        "its splits differ in columns: train 6, test 5",
        arrays(d_npz={"train": X, "test": X[:, :5]}),
    ),
    Case("not-an-npy", [*RUN, "dataset.path=x.npy"], "not a readable .npy file", arrays(x_npy="hello")),
    Case(
        "fraction-rounds-to-none",
        [*RUN, "dataset.path=x.npy", "dataset.test_fraction=0.01"],
        "dataset.test_fraction: 0.01 of the 40 training rows rounds to none",
        arrays(x_npy=X),
    ),
    Case(
        "fractions-leave-no-training-rows",
        [*RUN, "dataset.path=x.npy", "dataset.test_fraction=0.5", "dataset.valid_fraction=0.5"],
        "dataset.valid_fraction: test_fraction + valid_fraction = 1 leaves no training rows",
        arrays(x_npy=X),
    ),
    Case(
        "fraction-out-of-range",
        [*RUN, "dataset.path=x.npy", "dataset.test_fraction=1"],
        "dataset.test_fraction: must be in [0.0, 1.0)",
        arrays(x_npy=X),
    ),
    Case(
        "unknown-option",
        [*RUN, "dataset.path=x.npy", "+dataset.scale=255"],
        "dataset.scale: unknown option for dataset file",
        arrays(x_npy=X),
    ),
    Case(
        "stochastic-beyond-0-1",
        [*RUN, "dataset.path=x.npy", "dataset.binarize=stochastic"],
        "dataset.binarize: stochastic draws 1 with probability the value",
        arrays(x_npy=2.0 * X),
    ),
    Case(
        "threshold-without-binarize",
        [*RUN, "dataset.path=x.npy", "dataset.threshold=0.3"],
        "dataset.threshold: applies to binarize=threshold",
        arrays(x_npy=X),
    ),
    Case(
        "seed-without-stochastic",
        [*RUN, "dataset.path=x.npy", "dataset.binarize=threshold", "dataset.binarize_seed=3"],
        "dataset.binarize_seed: applies to binarize=stochastic",
        arrays(x_npy=X),
    ),
    Case(
        "evaluate-grey-file",
        ["evaluate", "checkpoint=m.npz", "evaluator=exact", "dataset=file", "dataset.path=g.npy"],
        "dataset.path: ",
        lambda root: (arrays(g_npy=GREY)(root), save_checkpoint(root / "m.npz", RBM6)),
    ),
    Case(
        "evaluate-wrong-width",
        ["evaluate", "checkpoint=m.npz", "evaluator=exact", "dataset=file", "dataset.path=w.npy"],
        "but dataset file has 5 dimensions",
        lambda root: (arrays(w_npy=X[:, :5])(root), save_checkpoint(root / "m.npz", RBM6)),
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_bad_file_gives_one_error_line(case, tmp_path, monkeypatch, capsys):
    assert_one_error_line(main, case, tmp_path, monkeypatch, capsys)
    assert not list(tmp_path.rglob("summary.json"))  # refused before any run directory


def test_grey_values_binarised_by_threshold_or_one_fixed_draw(tmp_path):
    """dataset.binarize for a user's matrix: threshold (1 where value > threshold) and stochastic
    (u < value, one draw per split from default_rng([seed, split]): reproducible, independent of
    which rows are held out, mean near the values'); none leaves the values."""
    grey = np.random.default_rng(0).random((400, 5))
    np.save(tmp_path / "grey.npy", grey)
    path = str(tmp_path / "grey.npy")
    plain = load_dataset("file", path=path, test_fraction=0.0)
    np.testing.assert_array_equal(plain.train, grey.astype(np.float32))
    cut = load_dataset("file", path=path, test_fraction=0.0, binarize="threshold", threshold=0.7)
    np.testing.assert_array_equal(cut.train, (grey > 0.7).astype(np.float32))
    drawn = load_dataset("file", path=path, test_fraction=0.0, binarize="stochastic", binarize_seed=4)
    u = np.random.default_rng([4, 0]).random(grey.shape)
    np.testing.assert_array_equal(drawn.train, (u < grey).astype(np.float32))
    assert abs(drawn.train.mean() - grey.mean()) < 0.03
    held = load_dataset("file", path=path, test_fraction=0.25, binarize="stochastic", binarize_seed=4)
    assert sorted(map(bytes, np.vstack([held.train, held.test]))) == sorted(map(bytes, drawn.train))
    assert "u < value" in drawn.info["binarize"] and "0.7" in cut.info["binarize"]


def test_own_data_without_model_or_evaluator_settings_takes_them_from_the_data(tmp_path, monkeypatch, capsys):
    """dataset=file alone: as many hidden units as columns (at least 16) and exact scoring where
    the smaller layer enumerates, said before the run; a setting given is kept."""
    monkeypatch.chdir(tmp_path)
    np.save(tmp_path / "x.npy", X)
    main(["run", "dataset=file", "dataset.path=x.npy", "train.epochs=1", "hydra.run.dir=auto"])
    out = capsys.readouterr().out
    assert "chosen for its data (give them to choose): model.n_hidden=16 evaluator=exact" in out
    cfg = yaml.safe_load((tmp_path / "auto" / "config.yaml").read_text())
    assert (cfg["model"]["n_hidden"], cfg["evaluator"]["name"]) == (16, "exact")
    main(["run", "dataset=file", "dataset.path=x.npy", *FAST, "hydra.run.dir=given"])
    assert "chosen for its data" not in capsys.readouterr().out
    cfg = yaml.safe_load((tmp_path / "given" / "config.yaml").read_text())
    assert (cfg["model"]["n_hidden"], cfg["evaluator"]["name"]) == (3, "exact")
