"""The Python API (rbmlab.RBM): scikit-learn's conventions, and the CLI's cores underneath.

The CLI run and the estimator with the same data, settings and seed end in the same parameters
bit for bit, a checkpoint goes either way, and the scores are checked against enumeration written
out here independently.
"""

from __future__ import annotations

import json
import pickle
import subprocess
import sys

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning, DataConversionWarning
from sklearn.utils.estimator_checks import check_estimator

import rbmlab
from rbmlab import RBM, IsingModel
from rbmlab.cli import main
from rbmlab.data import load_dataset
from rbmlab.run.checkpoint import load_checkpoint

X = load_dataset("bars_stripes").train  # the 14 bars and stripes of 3x3, {0, 1} float32
SETTINGS = [
    "dataset=bars_stripes",
    "model.n_hidden=8",
    "learner=pcd",
    "learner.batch_size=4",
    "train.epochs=5",
    "seed=3",
    "evaluator=exact",
    "train.progress=false",
]
SAME = dict(
    n_components=8, learner="pcd", learning_rate=0.01, batch_size=4, n_iter=5, random_state=3
)  # learning_rate: pcd.yaml's, which the run uses


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory):
    """`rbmlab run` with SETTINGS: its directory."""
    out = tmp_path_factory.mktemp("cli") / "run"
    main(["run", *SETTINGS, f"hydra.run.dir={out}"])
    return out


def states(n: int) -> np.ndarray:
    return ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.float64)


def brute_log_p(W, b_v, b_h, v) -> np.ndarray:
    """log p(v) of a {0,1} RBM by summing over every (v, h) (no rbmlab code)."""
    W, b_v, b_h = (np.asarray(a, np.float64) for a in (W, b_v, b_h))
    h = states(len(b_h))

    def log_marginal(x):  # log Σ_h exp(xWh + b_v x + b_h h), per row of x
        e = x @ W @ h.T + (x @ b_v)[:, None] + (h @ b_h)[None, :]
        return np.logaddexp.reduce(e, axis=1)

    all_v = states(len(b_v))
    return log_marginal(np.asarray(v, np.float64)) - np.logaddexp.reduce(log_marginal(all_v))


# ---------------------------------------------------------------- the cores are the CLI's
def test_fit_ends_in_the_cli_runs_parameters_bit_for_bit(cli_run):
    model, meta, state = load_checkpoint(cli_run / "checkpoint.npz")
    rbm = RBM(**SAME).fit(X)
    for name in ("W", "b_v", "b_h"):
        assert np.array_equal(getattr(rbm.model_, name), getattr(model, name)), name
    assert np.array_equal(rbm.learner_state_["chains"], state["chains"])  # PCD's persistent chains
    assert rbm.n_iter_ == meta["epoch"] == 5 and rbm.n_updates_ == meta["updates"]


def test_a_run_checkpoint_loads_with_its_settings_and_continues_as_the_run_would(cli_run):
    summary = json.loads((cli_run / "summary.json").read_text())
    rbm = RBM.load(cli_run / "checkpoint.npz")
    params = rbm.get_params()
    assert {k: params[k] for k in SAME} == SAME and params["learning_rate"] == 0.01  # conf/learner/pcd.yaml
    assert params["learner_options"]["k"] == 1 and params["learner_options"]["chain_init"] == "data"
    # the run's final exact log-likelihood (bars and stripes: test = train)
    assert rbm.score(X, evaluator="exact") == pytest.approx(summary["final"]["test_log_likelihood"], rel=1e-9)
    # epoch 6 from the checkpoint draws what epoch 6 of an uninterrupted fit draws
    assert np.array_equal(rbm.partial_fit(X).model_.W, RBM(**{**SAME, "n_iter": 6}).fit(X).model_.W)


def test_a_saved_estimator_loads_back_and_rbmlab_evaluate_scores_it(tmp_path):
    rbm = RBM(n_components=6, learner="cd", learning_rate=0.1, batch_size=2, n_iter=3, random_state=1).fit(X)
    path = rbm.save(tmp_path / "rbm.npz")
    back = RBM.load(path)
    assert back.get_params() == rbm.get_params()
    assert np.array_equal(back.model_.W, rbm.model_.W) and np.array_equal(back.data_mean_, rbm.data_mean_)
    assert back.n_iter_ == 3 and back.seed_ == 1
    np.testing.assert_array_equal(back.transform(X), rbm.transform(X))
    main(
        [
            "evaluate",
            f"checkpoint={path}",
            "dataset=bars_stripes",
            "evaluator=exact",
            f"out={tmp_path / 'e.json'}",
        ]
    )
    result = json.loads((tmp_path / "e.json").read_text())
    assert result["trained_epochs"] == 3 and result["n_hidden"] == 6
    assert result["mean_log_likelihood"] == pytest.approx(rbm.score(X, evaluator="exact"), rel=1e-6)
    assert np.array_equal(
        RBM.load(path).partial_fit(X).model_.W, clone(rbm).set_params(n_iter=4).fit(X).model_.W
    )


def test_a_hand_written_or_batched_checkpoint_loads(tmp_path):
    rng = np.random.default_rng(0)
    W, b_v, b_h = rng.normal(size=(9, 3)), rng.normal(size=9), rng.normal(size=3)
    np.savez(tmp_path / "m.npz", W=W, b_v=b_v, b_h=b_h)
    rbm = RBM.load(tmp_path / "m.npz")
    assert rbm.dtype == "float64" and rbm.n_components == 3 and rbm.n_features_in_ == 9
    np.testing.assert_allclose(
        rbm.score_samples(X, evaluator="exact"), brute_log_p(W, b_v, b_h, X), atol=1e-9
    )
    assert rbm.learner_state_ is None  # none saved: PCD starts its chains as a fresh run would
    assert rbm.set_params(learner="pcd").partial_fit(X).learner_state_["chains"].shape == (
        10,
        9,
    )  # one chain per row of a batch of 10
    np.savez(
        tmp_path / "trials.npz", W=np.stack([W, 2 * W]), b_v=np.stack([b_v, b_v]), b_h=np.stack([b_h, b_h])
    )
    with pytest.raises(ValueError, match="trial: .* holds 2 trials; choose one with trial=N"):
        RBM.load(tmp_path / "trials.npz")
    second = RBM.load(tmp_path / "trials.npz", trial=1)
    assert np.array_equal(second.model_.W, 2 * W) and second.learner_state_ is None
    assert second.partial_fit(X).n_iter_ == 1  # a fresh learner state for the trial


# ---------------------------------------------------------------- the estimator's methods
@pytest.fixture(scope="module")
def small():
    return RBM(
        n_components=4,
        learner="cd",
        learning_rate=0.1,
        batch_size=2,
        n_iter=10,
        dtype="float64",
        random_state=0,
    ).fit(X)


def test_score_samples_exact_is_log_p_by_enumeration(small):
    m = small.model_
    all_v = states(9)
    np.testing.assert_allclose(
        small.score_samples(X, evaluator="exact"), brute_log_p(m.W, m.b_v, m.b_h, X), rtol=0, atol=1e-9
    )
    assert np.logaddexp.reduce(small.score_samples(all_v)) == pytest.approx(0.0, abs=1e-9)  # auto: exact
    assert small.score(X) == pytest.approx(small.score_samples(X).mean(), abs=1e-12)


def test_ais_and_tap_are_close_to_exact(small):
    exact = small.score(X, evaluator="exact")
    ais = clone(small).set_params(
        evaluator="ais", evaluator_options={"schedule": "linear", "n_temperatures": 1000}
    )
    assert ais.fit(X).score(X) == pytest.approx(exact, abs=0.02)  # the same model: the same seed
    assert small.score(X, evaluator="tap") == pytest.approx(exact, abs=0.01)  # weak couplings: TAP is close


def test_pseudo_likelihood_is_the_sum_of_conditionals_by_enumeration(small):
    m = small.model_
    all_v = states(9)
    log_p = dict(zip(map(tuple, all_v), brute_log_p(m.W, m.b_v, m.b_h, all_v)))
    expected = []
    for v in X.astype(np.float64):
        total = 0.0
        for i in range(9):
            flip = v.copy()
            flip[i] = 1 - flip[i]
            total += log_p[tuple(v)] - np.logaddexp(log_p[tuple(v)], log_p[tuple(flip)])
        expected.append(total)
    np.testing.assert_allclose(small.score_samples(X, evaluator="pl"), expected, atol=1e-9)


def test_rows_of_probabilities_are_scored_at_their_means(small):
    """X in [0, 1]: exact gives −F(x) − log Z at x (the enumeration's marginal is −F for real x
    too); pl gives Σ_i log σ(F(x^(i)) − F(x)), x^(i): x_i → 1 − x_i, log 1/2 per unit at 1/2."""
    m = small.model_
    P = np.random.default_rng(0).uniform(size=(5, 9))
    np.testing.assert_allclose(
        small.score_samples(P, evaluator="exact"), brute_log_p(m.W, m.b_v, m.b_h, P), atol=1e-9
    )
    log_p = lambda v: brute_log_p(m.W, m.b_v, m.b_h, v)  # noqa: E731  (−F(v) − log Z)
    expected = sum(
        -np.logaddexp(0.0, log_p(np.where(np.arange(9) == i, 1 - P, P)) - log_p(P)) for i in range(9)
    )
    np.testing.assert_allclose(small.score_samples(P, evaluator="pl"), expected, atol=1e-9)
    np.testing.assert_allclose(small.score_samples(np.full((2, 9), 0.5), evaluator="pl"), 9 * np.log(0.5))


def test_score_is_exact_where_a_layer_enumerates_else_the_pseudo_likelihood():
    data = np.random.default_rng(1).integers(0, 2, size=(20, 26)).astype(np.float32)
    wide = RBM(n_components=26, n_iter=1, random_state=0).fit(data)  # 2^26 states each side
    assert wide.score(data) == wide.score(data, evaluator="pl")
    narrow = wide.set_params(n_components=4).fit(data)
    assert narrow.score(data) == narrow.score(data, evaluator="exact")


def test_transform_is_the_hidden_means(small):
    m = small.model_
    np.testing.assert_allclose(small.transform(X), 1 / (1 + np.exp(-(X @ m.W + m.b_h))), rtol=1e-12)
    assert small.fit_transform(X).shape == (14, 4)
    assert small.components_.shape == (4, 9) and small.intercept_hidden_.shape == (4,)
    assert list(small.get_feature_names_out()) == ["rbm0", "rbm1", "rbm2", "rbm3"]


def test_partial_fit_k_times_is_fit_with_k_epochs():
    rbm = RBM(n_components=5, learner="sdcp", learner_options={"d": 2, "k": 1}, random_state=7)
    for _ in range(3):
        rbm.partial_fit(X)
    fitted = clone(rbm).set_params(n_iter=3).fit(X)
    assert rbm.n_iter_ == 3 and np.array_equal(rbm.model_.W, fitted.model_.W)


@pytest.mark.parametrize("method", ["gibbs", "pmp", "exact"])
def test_samples_are_visible_states_drawn_reproducibly(small, method):
    n = 100 if method == "pmp" else 3000  # a PMP sample is a max-product solve
    x = small.sample(n, method=method, n_steps=20)
    assert x.shape == (n, 9) and set(np.unique(x)) <= {0.0, 1.0}
    assert np.array_equal(x, small.sample(n, method=method, n_steps=20))
    assert not np.array_equal(x, small.sample(n, method=method, n_steps=20, random_state=1))
    if method != "pmp":  # PMP samples only approximately (pmp Sec. 3); the others from p(v)
        all_v = states(9)
        p = np.exp(small.score_samples(all_v, evaluator="exact"))
        moments = all_v.T @ (all_v * p[:, None])  # E[v_i v_j] (diagonal: E[v_i])
        assert np.abs(x.T @ x / len(x) - moments).max() < 0.04  # 4.4 standard errors at most


@pytest.mark.parametrize("learner", ["cd", "pcd", "sdcp", "csdcp", "frank_wolfe"])
def test_any_learner_by_name_trains(learner):
    grows = learner == "frank_wolfe"  # one unit an epoch: it takes no n_components
    rbm = RBM(**({} if grows else {"n_components": 6}), learner=learner, n_iter=2, random_state=0).fit(X)
    assert rbm.model_.is_finite() and rbm.model_.W.any()
    assert rbm.transform(X).shape == (14, 2 if grows else 6)


def test_a_model_setting_the_learner_does_not_read_is_refused():
    """Frank-Wolfe grows its hidden units from none: n_components (set) and model_options about
    the initial units are refused, not ignored (the CLI refuses model.n_hidden the same way)."""
    with pytest.raises(ValueError, match=r"^n_components: frank_wolfe grows its hidden units"):
        RBM(n_components=6, learner="frank_wolfe", n_iter=1).fit(X)
    with pytest.raises(ValueError, match=r"^model_options\['weight_std'\]: frank_wolfe grows"):
        RBM(learner="frank_wolfe", model_options={"weight_std": 0.1}, n_iter=1).fit(X)


def test_learner_options_go_to_the_learners_parser(tmp_path):
    rbm = RBM(
        n_components=3, learner="pcd", learner_options={"k": 3, "optimizer": "adam"}, n_iter=1, random_state=0
    ).fit(X)
    learner = json.loads(str(np.load(rbm.save(tmp_path / "r.npz"))["meta"]))["config"]["learner"]
    assert learner["k"] == 3 and learner["optimizer"]["name"] == "adam"
    assert (learner["lr"], learner["batch_size"]) == (0.1, 10)  # BernoulliRBM's, not pcd.yaml's 0.01, 100
    sdcp = RBM(n_components=3, learner="sdcp", n_iter=1, random_state=0).fit(X)
    learner = json.loads(str(np.load(sdcp.save(tmp_path / "s.npz"))["meta"]))["config"]["learner"]
    assert (learner["lr"], learner["batch_size"]) == (0.01, 200)  # conf/learner/sdcp.yaml


@pytest.mark.parametrize(
    "params, message",
    [
        ({"learner": "nope"}, r"learner: unknown learner 'nope'; choose one of cd, pcd, .*sdcp"),
        ({"learning_rate": -1.0}, r"learning_rate: must be > 0"),
        ({"batch_size": 0}, r"batch_size: "),
        ({"n_iter": -1}, r"n_iter: "),
        ({"n_components": 0}, r"n_components: "),
        ({"learner_options": {"k": 0}}, r"learner_options\['k'\]: must be >= 1"),
        ({"learner_options": {"bogus": 1}}, r"learner_options\['bogus'\]"),
        ({"learner_options": {"lr": 0.1}}, r"give it as learning_rate"),
        ({"model_options": {"init": "x.npz"}}, r"model_options\['init'\]: not an option here"),
        ({"dtype": "float16"}, r"dtype: "),
        ({"random_state": -1}, r"random_state: "),
    ],
)
def test_bad_parameters_are_value_errors_naming_the_argument(params, message):
    with pytest.raises(ValueError, match=message):
        RBM(**params).fit(X)


def test_values_are_checked_against_the_visible_units(small):
    with pytest.raises(ValueError, match=r"X: holds \{-1,0\}; .*\(Negative values in data passed to RBM; "):
        small.transform(X - 1)
    with pytest.warns(DataConversionWarning, match=r"X: holds \{0,2\}; .* means in \[0,1\]: clipped"):
        np.testing.assert_array_equal(small.transform(2 * X), small.transform(X))
    spins = RBM(n_components=3, n_iter=1, model_options={"visible_units": "spin"}, random_state=0).fit(
        2 * X - 1
    )
    assert spins.model_.visible == "spin" and spins.transform(2 * X - 1).shape == (14, 3)
    with pytest.raises(ValueError, match="X has 8 features, but RBM is expecting 9"):
        small.transform(X[:, :8])
    with pytest.raises(ValueError, match="evaluator: score_samples takes exact, ais, tap, pl"):
        small.score_samples(X, evaluator="reconstruction")
    with pytest.raises(ValueError, match="method: unknown inference 'nope'"):
        small.sample(2, method="nope")


def test_an_overflow_says_so_once(recwarn):
    """Training that overflows ends in one ConvergenceWarning naming the epoch, and values beyond
    float32 in one ValueError: numpy's own overflow warnings do not precede them (issue 57)."""
    diverged = RBM(n_components=3, learning_rate=1e300, n_iter=2, random_state=0).fit(X)
    assert [w.category for w in recwarn] == [ConvergenceWarning], [str(w.message) for w in recwarn]
    assert "training diverged at epoch 1" in str(recwarn[0].message) and diverged.n_iter_ == 1
    recwarn.clear()
    with pytest.raises(ValueError, match="infinity or a value too large for dtype"):
        RBM(n_components=3, n_iter=1).fit(np.full((5, 9), 1e39))
    assert not recwarn.list, [str(w.message) for w in recwarn]


def full_pseudo_log_likelihood(W, b_v, b_h, x) -> np.ndarray:
    """Per-row Σ_i log σ(F(x^(i)) − F(x)), x^(i): x_i → 1 − x_i (no rbmlab code; W: n_v × n_h)."""
    W, b_v, b_h, x = (np.asarray(a, np.float64) for a in (W, b_v, b_h, x))
    free_energy = lambda v: -v @ b_v - np.logaddexp(0.0, v @ W + b_h).sum(axis=1)  # noqa: E731
    f = free_energy(x)
    return sum(
        -np.logaddexp(0.0, f - free_energy(np.where(np.arange(x.shape[1]) == i, 1 - x, x)))
        for i in range(x.shape[1])
    )


@pytest.mark.slow  # about 3 s: a fit of each on 1437 digits and four pseudo-likelihoods
@pytest.mark.parametrize("binarised", [True, False], ids=["binarised", "probabilities"])
def test_defaults_learn_digits_as_well_as_bernoulli_rbm_with_no_more_work(binarised):
    """Issue 56's acceptance: RBM() against BernoulliRBM() on load_digits / 16, both scored by one
    function (measured over three seeds: scripts/estimator_defaults.py). "In no more time" is
    checked as no more arithmetic: the same hidden units, epochs and mini-batch updates, one
    Gibbs step each (the wall times, measured apart from the tests: scripts/estimator_defaults.py,
    0.16 s against 0.20 s binarised, 0.23 s against 0.25 s as probabilities)."""
    from sklearn.datasets import load_digits
    from sklearn.neural_network import BernoulliRBM

    digits = load_digits().data / 16
    data = (digits > 0.5 if binarised else digits).astype(np.float32)
    train, test = data[:1437], data[1437:]
    ours, theirs = RBM(random_state=0).fit(train), BernoulliRBM(random_state=0).fit(train)
    assert ours.n_components == theirs.n_components and ours.n_iter_ == theirs.n_iter
    assert ours.n_updates_ == theirs.n_iter * -(-len(train) // theirs.batch_size)
    assert ours.learner == "cd" and ours.model_.W.dtype == np.float32  # CD-1 in float32 (sklearn: float64)
    for rows in (train, test):
        ours_pl = full_pseudo_log_likelihood(ours.model_.W, ours.model_.b_v, ours.model_.b_h, rows).mean()
        theirs_pl = full_pseudo_log_likelihood(
            theirs.components_.T, theirs.intercept_visible_, theirs.intercept_hidden_, rows
        ).mean()
        assert ours_pl >= theirs_pl + 0.5  # measured: 2.9 nats more binarised, 1.0 as probabilities


def test_pickle_round_trip(small):
    back = pickle.loads(pickle.dumps(small))
    np.testing.assert_array_equal(back.transform(X), small.transform(X))


# ---------------------------------------------------------------- scikit-learn's own checks
@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("estimator", [RBM(n_components=3, n_iter=2), IsingModel(n_iter=2)], ids=repr)
def test_check_estimator_passes(estimator):
    """All checks, none declared to fail (they feed real X: means, clipped beyond [0, 1])."""
    check_estimator(estimator, on_skip=None)


# ---------------------------------------------------------------- the Ising model
ISING = load_dataset("ising_samples", side=3)


def test_ising_fit_ends_in_the_cli_runs_parameters_and_scores_exactly(tmp_path):
    main(
        [
            "run",
            "model=ising",
            "dataset=ising_samples",
            "dataset.side=3",
            "learner=pcd",
            "learner.k=2",
            "learner.lr=0.2",
            "learner.batch_size=full",
            "train.epochs=10",
            "seed=5",
            "evaluator=exact",
            "train.progress=false",
            f"hydra.run.dir={tmp_path}",
        ]
    )
    run, _, state = load_checkpoint(tmp_path / "checkpoint.npz")
    ising = IsingModel(
        learning_rate=0.2, batch_size="full", learner_options={"k": 2}, n_iter=10, random_state=5
    )
    ising.fit(ISING.train)
    assert np.array_equal(ising.coupling_, run.J) and np.array_equal(ising.field_, run.h)
    assert np.array_equal(ising.learner_state_["chains"], state["chains"])
    J, h, x = (np.asarray(a, np.float64) for a in (run.J, run.h, ISING.test))
    energy = lambda s: 0.5 * ((s @ J) * s).sum(1) + s @ h  # noqa: E731
    brute = energy(x) - np.logaddexp.reduce(energy(states(9)))
    np.testing.assert_allclose(ising.score_samples(ISING.test), brute, atol=1e-4)  # float32 model
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert ising.score(ISING.test) == pytest.approx(summary["final"]["test_log_likelihood"], rel=1e-6)
    back = IsingModel.load(ising.save(tmp_path / "ising.npz"))
    assert back.get_params() == ising.get_params() and np.array_equal(back.coupling_, ising.coupling_)
    assert back.sample(7, n_steps=5).shape == (7, 9)
    with pytest.raises(ValueError, match="holds a model of family ising; this estimator reads rbm"):
        RBM.load(tmp_path / "ising.npz")
    with pytest.raises(ValueError, match="evaluator: ais does not score this ising model .*use exact"):
        ising.score(ISING.test, evaluator="ais")
    with pytest.raises(ValueError, match=r"choose model_options=\{'spins': ...\}"):
        IsingModel().fit(2 * ISING.train - 1)
    spins = IsingModel(model_options={"spins": "pm1"}, n_iter=2, random_state=0).fit(2 * ISING.train - 1)
    assert spins.model_.spins == "pm1" and set(np.unique(spins.sample(5, n_steps=3))) <= {-1.0, 1.0}


def test_import_rbmlab_stays_cheap():
    code = (
        "import sys, rbmlab; print([m for m in ('sklearn', 'hydra', 'matplotlib', 'scipy', 'rbmlab.api') "
        "if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    assert rbmlab.RBM is RBM and rbmlab.IsingModel is IsingModel and "RBM" in dir(rbmlab)
    with pytest.raises(AttributeError):
        rbmlab.nothing_here  # noqa: B018


@pytest.mark.parametrize(
    "learner, options",
    [
        ("pcd", {"k": 1}),  # persistent chains
        ("cd", {"optimizer": {"name": "sgd", "momentum": 0.9}}),  # momentum buffers
        ("cd", {"optimizer": {"name": "adam"}}),  # Adam's moments and step count
    ],
)
def test_partial_fit_continues_the_learner_state(learner, options):
    """partial_fit k times equals fit with n_iter=k where the learner state changes the result,
    and a continuation that restarted the state would not (the control): at the lr and batch of
    these fits the state matters."""
    params = dict(  # weights of std 1: a Gibbs step depends on where the chains were
        n_components=5,
        learner=learner,
        learner_options=options,
        learning_rate=0.05,
        batch_size=4,
        model_options={"weight_std": 1.0},
    )
    rbm = RBM(**params, random_state=7)
    for _ in range(3):
        rbm.partial_fit(X)
    fitted = RBM(**params, n_iter=3, random_state=7).fit(X)
    np.testing.assert_array_equal(rbm.model_.W, fitted.model_.W)
    restarted = RBM(**params, random_state=7).partial_fit(X).partial_fit(X)
    restarted.learner_state_ = None  # the state lost: the third epoch starts a fresh one
    assert not np.array_equal(restarted.partial_fit(X).model_.W, fitted.model_.W)
