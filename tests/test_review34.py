"""Issue 34 review: partial_fit and save after set_params, a sampling sweep with no completed trial."""

from __future__ import annotations

import numpy as np
import pytest

from rbmlab import RBM
from rbmlab.data import load_dataset

X = load_dataset("bars_stripes").train  # 14 rows of 9 {0, 1} values


def fitted(**params) -> RBM:
    return RBM(n_components=4, n_iter=2, random_state=0, **params).fit(X)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"n_components": 6}, r"^n_components: 6 is not the fitted model's 4; partial_fit continues"),
        (
            {"model_options": {"hidden_units": "spin"}},
            r"^model_options\['hidden_units'\]: spin is not the fitted model's bernoulli; partial_fit",
        ),
        ({"learner": "pcd"}, r"^learner: pcd does not continue the fitted state \(it has no chains\)"),
    ],
)
def test_partial_fit_refuses_arguments_that_no_longer_describe_the_fitted_model(params, message):
    rbm = fitted().set_params(**params)
    with pytest.raises(ValueError, match=message):
        rbm.partial_fit(X)


def test_partial_fit_takes_a_new_learning_rate_and_fit_takes_any_change():
    rbm = fitted().set_params(learning_rate=0.5)
    assert rbm.partial_fit(X).n_iter_ == 3
    rbm.set_params(n_components=6, learner="pcd")
    assert rbm.fit(X).components_.shape == (6, 9)


@pytest.mark.parametrize("batch_size", [None, "full", 4])
def test_partial_fit_over_batches_of_any_size_continues_pcd(batch_size):
    """pcd's chains (one per batch row by default) keep their number when the batches change size."""
    rbm = RBM(n_components=4, learner="pcd", batch_size=batch_size, random_state=0)
    for rows in (X[:10], X[10:14], X):
        rbm.partial_fit(rows)
    assert rbm.n_iter_ == 3 and rbm.learner_state_["chains"].shape == (4 if batch_size == 4 else 10, 9)


def test_save_refuses_arguments_that_are_not_the_fitted_models(tmp_path):
    rbm = fitted().set_params(n_components=6)
    with pytest.raises(ValueError, match=r"^n_components: 6 is not the fitted model's 4; save records"):
        rbm.save(tmp_path / "rbm.npz")
    back = RBM.load(rbm.set_params(n_components=4).save(tmp_path / "rbm.npz"))
    assert back.n_components == back.model_.n_hidden == 4
    np.testing.assert_array_equal(back.components_, rbm.components_)


# ---------------------------------------------------------------- sampling sweeps
SMALL = [
    "dataset=bars_stripes",
    "model.n_hidden=4",
    "evaluator=exact",
    "learner.batch_size=full",
    "train.epochs=1",
    "train.progress=false",
    "hydra/sweeper=optuna",
]


def test_a_sampling_sweep_of_no_trials_is_refused_before_any_job(tmp_path, monkeypatch):
    from rbmlab.errors import RbmlabError
    from rbmlab.hydra_app import run_command

    monkeypatch.chdir(tmp_path)
    for n in ("0", "-2"):
        with pytest.raises(RbmlabError, match=rf"^hydra.sweeper.n_trials: must be an integer >= 1, got {n}$"):
            run_command(["-m", *SMALL, f"hydra.sweeper.n_trials={n}", "learner.lr=interval(0.01,0.1)"])
    assert not (tmp_path / "outputs").exists()


def test_a_sampling_sweep_with_an_unknown_direction_is_refused_before_any_job(tmp_path, monkeypatch):
    from rbmlab.errors import RbmlabError
    from rbmlab.hydra_app import run_command

    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        RbmlabError, match=r"^hydra.sweeper.direction: must be one of minimize, maximize .*got 'foo'$"
    ):
        run_command(
            [
                "-m",
                *SMALL,
                "hydra.sweeper.n_trials=1",
                "hydra.sweeper.direction=foo",
                "learner.lr=interval(0.01,0.1)",
            ]
        )
    assert not (tmp_path / "outputs").exists()


def test_a_sampling_sweep_whose_every_trial_diverged_is_an_error(tmp_path, monkeypatch):
    """optuna has no best trial: the command fails in one line instead of exiting 0."""
    from rbmlab.errors import RbmlabError
    from rbmlab.hydra_app import run_command

    monkeypatch.chdir(tmp_path)
    with pytest.raises(
        RbmlabError,
        match=r"^hydra/sweeper: no trial of the OptunaSweeper sweep in sweep "
        r"completed with a finite test_log_likelihood",
    ):
        run_command(
            [
                "-m",
                *SMALL,
                "hydra.sweeper.n_trials=1",
                "learner.lr=interval(1e8,1e9)",
                "hydra.sweep.dir=sweep",
            ]
        )
    assert (tmp_path / "sweep" / "0" / "summary.json").is_file()


# ---------------------------------------------------------------- rbmlab experiment list in an install
def test_experiment_list_points_an_install_at_the_readme_inside_the_package(monkeypatch):
    from rbmlab.experiment import catalog

    assert catalog.render("demo").splitlines()[0].endswith("  [results/demo/README.md]")  # a checkout
    monkeypatch.setattr(catalog, "checkout_root", lambda: None)
    assert (
        catalog.render("demo").splitlines()[0].endswith(f"  [{catalog.RESULTS_DIR / 'demo' / 'README.md'}]")
    )


# ---------------------------------------------------------------- dataset=file's in-process caches
def test_a_file_rewritten_within_one_timestamp_tick_is_read_and_hashed_again(tmp_path, monkeypatch):
    """The caches key a file on its stat; on a file system with coarse timestamps a rewrite of the
    same size within one tick keeps that key, so a file changed less than RACY_NS ago is not cached."""
    import time

    from rbmlab.data import user_file
    from rbmlab.data.files import sha256_of

    path, opts = tmp_path / "x.npy", user_file.FileOptions(path=str(tmp_path / "x.npy"), test_fraction=0)
    now = time.time_ns()
    monkeypatch.setattr(user_file, "_identity", lambda p: (str(p), 1, 2, 3, now, now))  # one tick
    for value in (0.0, 1.0):
        np.save(path, np.full((4, 3), value))
        assert user_file.read(opts)["train"][0, 0] == value
        assert user_file.file_sha256(str(path)) == sha256_of(path)
    monkeypatch.setattr(user_file, "_identity", lambda p: (str(p), 1, 2, 3, 0, 0))  # changed long ago
    first = user_file.read(opts)
    np.save(path, np.full((4, 3), 2.0))
    assert user_file.read(opts) is first  # an old file is read once


# ---------------------------------------------------------------- --help before dataset.path is given
@pytest.mark.parametrize("command", ["run", "evaluate"])
def test_help_lists_the_options_of_a_component_that_does_not_parse_yet(command):
    from omegaconf import OmegaConf

    from rbmlab.evaluate import usage
    from rbmlab.help import components_section
    from rbmlab.hydra_app import compose

    if command == "run":
        text = "\n".join(
            components_section(
                OmegaConf.to_container(compose("config", ["dataset=file", "dataset.split_seed=4"]))
            )
        )
    else:
        text = usage(["dataset=file", "dataset.split_seed=4"])
    lines = [ln.split()[0] for ln in text.splitlines() if ln.lstrip().startswith("dataset.")]
    assert lines == [
        "dataset.path=null",
        "dataset.sha256=null",
        "dataset.test_fraction=0.1",
        "dataset.valid_fraction=0.0",
        "dataset.split_seed=4",
        "dataset.header=null",
        "dataset.delimiter=,",
        "dataset.binarize=none",
        "dataset.threshold=0.5",
        "dataset.binarize_seed=0",
    ]
    assert "(not valid: dataset.path: missing" in text


def test_a_csv_with_a_byte_order_mark_keeps_its_first_row(tmp_path):
    """Spreadsheets write UTF-8 .csv files with a BOM: it is not part of the first field (which
    would then not be a number, and the first row would be dropped as a header)."""
    from rbmlab.data import user_file

    path = tmp_path / "x.csv"
    path.write_bytes(b"\xef\xbb\xbf0,1,0\n1,1,0\n0,0,1\n")
    np.testing.assert_array_equal(
        user_file.read(user_file.FileOptions(path=str(path)))["train"], [[0, 1, 0], [1, 1, 0], [0, 0, 1]]
    )
    path.write_bytes(b"\xef\xbb\xbfa,b,c\n1,1,0\n")
    np.testing.assert_array_equal(user_file.read(user_file.FileOptions(path=str(path)))["train"], [[1, 1, 0]])


def test_an_estimator_with_numpy_scalar_arguments_saves(tmp_path):
    """GridSearchCV over np.arange / np.linspace sets numpy scalars: the checkpoint's meta is JSON."""
    rbm = RBM(
        n_components=np.int64(4),
        n_iter=np.int64(1),
        batch_size=np.int64(5),
        learning_rate=np.float32(0.5),
        learner_options={"k": np.int64(2)},
        random_state=np.int64(0),
    ).fit(X)
    back = RBM.load(rbm.save(tmp_path / "rbm.npz"))
    assert back.get_params() == {**rbm.get_params(), "learning_rate": 0.5}
    assert [type(back.get_params()[k]) for k in ("n_components", "batch_size", "learning_rate")] == [
        int,
        int,
        float,
    ]
    np.testing.assert_array_equal(back.components_, rbm.components_)
