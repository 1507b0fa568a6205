"""Bad checkpoints of every family (issue 33): missing, resized, transposed, retyped arrays and bad
settings, through ``rbmlab evaluate``, ``rbmlab run model.init=`` and ``resume=true``. Each must
end in exactly one ``rbmlab: error:`` line naming the file's problem (exit 2, no traceback); a bad
``model.init`` file leaves no run directory at all (every check comes before it is made), and a
damaged checkpoint of a killed run is refused before any training resumes.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from rbmlab.cli import main
from rbmlab.models import MODELS
from rbmlab.run.checkpoint import save_checkpoint
from tests.test_bad_input import Case, assert_one_error_line

N = 9  # bars_stripes' dimension
SIZES = {
    "rbm": {"n_hidden": 4},
    "grbm": {"n_hidden": 4},
    "crbm": {"n_hidden": 4},
    "dbm": {"n_hidden": [4, 3]},
    "fractional_rbm": {"n_hidden": 4},
}


def family_npz(family: str, /, name: str = "m.npz", n: int = N, trials: int = 0, **changes):
    """Setup: a valid checkpoint of a small ``family`` model for ``n``-dimensional data, with
    entries replaced (a value), computed from the saved one (a function) or deleted (None)."""

    def setup(root: Path) -> None:
        cls = MODELS.get(family)
        config = MODELS.parse({"name": family, **SIZES.get(family, {})})
        rng = np.random.default_rng(0)
        rows = (rng.random((8, n)) < 0.5).astype(np.float32)
        model = cls.initialize(
            config,
            xp=np,
            rng=rng,
            data_mean=np.full(n, 0.4, np.float32),
            dtype="float32",
            trials=trials,
            data=rows,
        )
        path = root / name
        save_checkpoint(path, model, meta={"epoch": 1})
        edit_npz(path, changes)

    return setup


def edit_npz(path: Path, changes: dict) -> None:
    if not changes:
        return
    with np.load(path) as f:
        data = dict(f)
    for key, change in changes.items():
        if change is None:
            del data[key]
        else:
            data[key] = change(data[key]) if callable(change) else change
    np.savez(path, **data)


def transposed(a):
    return a.swapaxes(-1, -2).copy()


def with_trials(a):
    return np.stack([a, a])


EVALUATE = {
    "rbm": ["evaluator=exact"],
    "grbm": ["evaluator=exact"],
    "dbm": ["evaluator=exact"],
    "ising": ["evaluator=exact"],
    "crbm": ["evaluator=pixel_error", "task=flip"],
    "fractional_rbm": ["evaluator=exact"],
}


def evaluate(family: str, *extra: str) -> list[str]:
    return ["evaluate", "dataset=bars_stripes", "checkpoint=m.npz", *EVALUATE[family], *extra]


EVALUATE_CASES = [
    Case(
        "rbm-W-transposed",
        evaluate("rbm"),
        "m.npz: W has shape (4, 9), expected (9, 4) = (n_visible, n_hidden)",
        family_npz("rbm", W=transposed),
    ),
    Case(
        "rbm-trial-axes-disagree",
        evaluate("rbm"),
        "b_v has shape (3, 9), expected (2, 9) = (trials, n_visible)",
        family_npz("rbm", trials=2, b_v=np.zeros((3, N))),
    ),
    Case(
        "rbm-empty-trial-axis",
        evaluate("rbm"),
        "an empty trial axis",
        family_npz("rbm", W=np.zeros((0, N, 4)), b_v=np.zeros((0, N)), b_h=np.zeros((0, 4))),
    ),
    Case(
        "rbm-no-hidden-units",
        evaluate("rbm"),
        "W has shape (9, 0): n_hidden is 0",
        family_npz("rbm", W=np.zeros((N, 0)), b_h=np.zeros(0)),
    ),
    Case(
        "rbm-hidden-unit-type-a-number",
        evaluate("rbm"),
        "setting hidden must be a string",
        family_npz("rbm", hidden=np.array(1)),
    ),
    Case(
        "rbm-family-says-dbm",
        evaluate("rbm"),
        "model dbm needs arrays W1, b0, b1; missing W1, b0, b1",
        family_npz("rbm", family=np.array("dbm")),
    ),
    Case(
        "grbm-no-v_theta",
        evaluate("grbm"),
        "model grbm needs arrays W, b_v, b_h, v_theta; missing v_theta",
        family_npz("grbm", v_theta=None),
    ),
    Case(
        "grbm-v_theta-of-another-prior",
        evaluate("grbm"),
        "v_theta has shape (0, 9), expected (1, 9) = (n_prior_params, n_visible)",
        family_npz("grbm", visible=np.array("truncated_gaussian")),
    ),
    Case(
        "grbm-unknown-prior",
        evaluate("grbm"),
        "setting visible='poisson' is unknown",
        family_npz("grbm", visible=np.array("poisson")),
    ),
    Case(
        "grbm-pixel-error",
        evaluate("grbm", "evaluator=pixel_error"),
        "evaluators that apply to model grbm with n_visible=9, n_hidden=4:",
        family_npz("grbm"),
    ),
    Case("crbm-no-W_xh", evaluate("crbm"), "missing W_xh", family_npz("crbm", W_xh=None)),
    Case(
        "crbm-W-transposed",
        evaluate("crbm"),
        "W has shape (4, 9), expected (9, 4)",
        family_npz("crbm", W=transposed),
    ),
    Case(
        "crbm-W_xh-transposed",
        evaluate("crbm"),
        "W_xh has shape (4, 9), expected (9, 4) = (n_inputs, n_hidden)",
        family_npz("crbm", W_xh=transposed),
    ),
    Case(
        "crbm-b_h-with-a-trial-axis",
        evaluate("crbm"),
        "b_h has shape (2, 4), expected (4,)",
        family_npz("crbm", b_h=with_trials),
    ),
    Case(
        "crbm-inputs-not-the-datas",
        evaluate("crbm"),
        "crbm model with n_inputs=5 but dataset bars_stripes has 9",
        family_npz("crbm", W_xv=np.zeros((5, N)), W_xh=np.zeros((5, 4))),
    ),
    Case(
        "crbm-exact",
        evaluate("crbm", "evaluator=exact"),
        "evaluators that apply to model crbm with n_visible=9, n_hidden=4, n_inputs=9: pixel_error",
        family_npz("crbm"),
    ),
    Case("dbm-no-b2", evaluate("dbm"), "missing b2", family_npz("dbm", b2=None)),
    Case(
        "dbm-W2-transposed",
        evaluate("dbm"),
        "W2 has shape (3, 4), expected (4, 3) = (n_hidden1, n_hidden2)",
        family_npz("dbm", W2=transposed),
    ),
    Case(
        "dbm-empty-second-layer",
        evaluate("dbm"),
        "n_hidden2 is 0",
        family_npz("dbm", W2=np.zeros((4, 0)), b2=np.zeros(0)),
    ),
    Case(
        "dbm-empty-second-layer-fixed-depth-format",
        evaluate("dbm"),
        "n_hidden2 is 0",
        family_npz("dbm", W2=np.zeros((4, 0)), W3=np.zeros((0, 0)), b2=np.zeros(0), b3=np.zeros(0)),
    ),
    Case(
        "dbm-third-layer-bias-without-weights",
        evaluate("dbm"),
        "model dbm needs arrays W1, W2, W3, b0, b1, b2, b3; missing W3",
        family_npz("dbm", b3=np.zeros(2)),
    ),
    Case(
        "dbm-visible-size",
        evaluate("dbm"),
        "dbm model with n_visible=8 but dataset bars_stripes has 9",
        family_npz("dbm", n=8),
    ),
    Case(
        "dbm-pl",
        evaluate("dbm", "evaluator=pl"),
        "evaluators that apply to model dbm with n_visible=9, n_hidden1=4, n_hidden2=3: "
        "exact, ais, test_error, mmd, recognised, variety, kl, tap_dbm, free_energy, moments, overlap",
        family_npz("dbm"),
    ),
    Case(
        "dbm-W1-complex",
        evaluate("dbm"),
        "W1 must be numeric",
        family_npz("dbm", W1=lambda a: a.astype(complex)),
    ),
    Case("ising-no-h", evaluate("ising"), "missing h", family_npz("ising", h=None)),
    Case(
        "ising-J-not-square",
        evaluate("ising"),
        "J has shape (9, 8), expected (9, 9) = (n, n)",
        family_npz("ising", J=np.zeros((N, N - 1))),
    ),
    Case(
        "ising-no-spins",
        evaluate("ising"),
        "model ising needs setting spins (01 or pm1)",
        family_npz("ising", spins=None),
    ),
    Case(
        "ising-spins-a-number",
        evaluate("ising"),
        "setting spins must be a string",
        family_npz("ising", spins=np.array(1)),
    ),
    Case("ising-bool-J", evaluate("ising"), "J must be numeric", family_npz("ising", J=lambda a: a != 0)),
    Case(
        "ising-pl",
        evaluate("ising", "evaluator=pl"),
        "evaluators that apply to model ising with n=9: exact",
        family_npz("ising"),
    ),
    Case(
        "fractional_rbm-no-c",
        evaluate("fractional_rbm"),
        "model fractional_rbm needs arrays W, b_v, b_h, c; missing c",
        family_npz("fractional_rbm", c=None),
    ),
    Case(
        "fractional_rbm-c-resized",
        evaluate("fractional_rbm"),
        "c has shape (5,), expected (4,) = (n_hidden,)",
        family_npz("fractional_rbm", c=np.ones(5, np.float32)),
    ),
    Case(
        "fractional_rbm-reverse-ais",
        evaluate("fractional_rbm", "evaluator=ais", "evaluator.reverse=true"),
        "evaluator.reverse: reverse AIS is not written for model fractional_rbm",
        family_npz("fractional_rbm"),
    ),
]

# ---------------------------------------------------------------- rbmlab run model.init=
RUN = [
    "run",
    "dataset=bars_stripes",
    "train.epochs=1",
    "train.progress=false",
    "hydra.run.dir=r",
    "model.init=m.npz",
]
TRAIN = {
    "rbm": ["model.n_hidden=4", "learner=cd", "learner.batch_size=full", "evaluator=exact"],
    "grbm": ["model=grbm", "learner=cd", "learner.batch_size=full", "evaluator=exact"],
    "crbm": ["model=crbm", "learner=mle_bp", "task=flip", "evaluator=pixel_error"],
    "dbm": ["model=dbm", "learner=tap_dbm", "learner.pretrain_epochs=0", "evaluator=tap_dbm"],
    "ising": ["model=ising", "learner=pcd", "evaluator=exact"],
    "fractional_rbm": [
        "model=fractional_rbm",
        "learner=frank_wolfe",
        "learner.n_samples=20",
        "learner.bias_chains=10",
        "learner.bias_max_steps=20",
        "evaluator=exact",
    ],
}

INIT_CASES = [
    Case(
        "init-rbm-b_h-with-a-trial-axis",
        [*RUN, *TRAIN["rbm"]],
        "model.init: m.npz: b_h has shape (2, 4)",
        family_npz("rbm", b_h=with_trials),
    ),
    Case(
        "init-rbm-bool-b_v",
        [*RUN, *TRAIN["rbm"]],
        "model.init: m.npz: b_v must be numeric",
        family_npz("rbm", b_v=lambda a: a > 0),
    ),
    Case(
        "init-grbm-v_theta-resized",
        [*RUN, *TRAIN["grbm"]],
        "model.init: m.npz: v_theta has shape (1, 10)",
        family_npz("grbm", v_theta=np.zeros((1, N + 1))),
    ),
    Case(
        "init-crbm-W-transposed",
        [*RUN, *TRAIN["crbm"]],
        "model.init: m.npz: W has shape (4, 9)",
        family_npz("crbm", W=transposed),
    ),
    Case(
        "init-crbm-W_xh-resized",
        [*RUN, *TRAIN["crbm"]],
        "model.init: m.npz: W_xh has shape (9, 5)",
        family_npz("crbm", W_xh=np.zeros((N, 5))),
    ),
    Case(
        "init-crbm-no-b_v",
        [*RUN, *TRAIN["crbm"]],
        "model.init: m.npz: model crbm needs arrays",
        family_npz("crbm", b_v=None),
    ),
    Case(
        "init-crbm-inputs-not-the-datas",
        [*RUN, *TRAIN["crbm"]],
        "model.init: m.npz is a model with n_inputs=5; the dataset has 9 dimensions",
        family_npz("crbm", W_xv=np.zeros((5, N)), W_xh=np.zeros((5, 4))),
    ),
    Case(
        "init-dbm-no-W2",
        [*RUN, *TRAIN["dbm"]],
        "model.init: m.npz: model dbm needs arrays W1, W2, b0, b1, b2; missing W2",
        family_npz("dbm", W2=None),
    ),
    Case(
        "init-dbm-W1-transposed",
        [*RUN, *TRAIN["dbm"]],
        "model.init: m.npz: W1 has shape (4, 9)",
        family_npz("dbm", W1=transposed),
    ),
    Case(
        "init-ising-J-with-a-trial-axis",
        [*RUN, *TRAIN["ising"]],
        "model.init: m.npz: h has shape (9,), expected (2, 9) = (trials, n) to match J (2, 9, 9)",
        family_npz("ising", J=with_trials),
    ),
    Case(
        "init-rbm-nan-in-W",
        [*RUN, *TRAIN["rbm"]],
        "model.init: m.npz: W holds non-finite values",
        family_npz("rbm", W=lambda a: np.where(np.eye(*a.shape) > 0, np.nan, a)),
    ),
    Case(
        "init-dbm-b1-beyond-the-divergence-limit",
        [*RUN, *TRAIN["dbm"]],
        "model.init: m.npz: b1 holds non-finite values or values beyond ±1e+06",
        family_npz("dbm", b1=np.full(4, 1e7)),
    ),
    Case(
        "init-ising-unknown-tie",
        [*RUN, *TRAIN["ising"]],
        "model.init: m.npz: model ising: setting tie='both'",
        family_npz("ising", tie=np.array("both")),
    ),
]

# ---------------------------------------------------------------- resume=true of a killed run
RESUMED = {
    "rbm": [
        "dataset=bars_stripes",
        "model.n_hidden=4",
        "learner=pcd",
        "learner.k=1",
        "evaluator=exact",
        "train.progress=false",
        "train.epochs=2",
    ],
    "crbm": [
        "dataset=bars_stripes",
        "model=crbm",
        "model.n_hidden=4",
        "learner=mle_bp",
        "task=flip",
        "evaluator=pixel_error",
        "train.progress=false",
        "train.epochs=2",
    ],
    "dbm": [
        "dataset=bars_stripes",
        "model=dbm",
        "model.n_hidden=[4,3]",
        "learner=tap_dbm",
        "learner.pretrain_epochs=1",
        "evaluator=exact",
        "train.progress=false",
        "train.epochs=2",
    ],
}
RESUMED["rbm-adam"] = [*RESUMED["rbm"], "learner/optimizer=adam"]
RESUMED["rbm-momentum"] = [*RESUMED["rbm"], "learner.optimizer.momentum=0.5"]


_KILLED: dict[str, Path] = {}  # family → a run killed after its last checkpoint, made once


def killed_run(family: str) -> Path:
    """A run of ``family`` whose summary says running after its last checkpoint (as kill -9
    leaves it); trained once per test session, copied by each case."""
    if family not in _KILLED:
        root = Path(tempfile.mkdtemp(prefix=f"rbmlab-killed-{family}-"))
        atexit.register(shutil.rmtree, root, True)
        main(["run", *RESUMED[family], f"hydra.run.dir={root / 'r'}"])
        summary = root / "r" / "summary.json"
        summary.write_text(json.dumps({**json.loads(summary.read_text()), "status": "running"}))
        _KILLED[family] = root / "r"
    return _KILLED[family]


def killed(family: str, /, **changes) -> Callable[[Path], None]:
    """Setup: the killed run of ``family`` in ``r``, its checkpoint.npz with entries replaced,
    computed or deleted as in :func:`family_npz`; ``meta``: changes to its meta JSON."""

    def setup(root: Path) -> None:
        shutil.copytree(killed_run(family), root / "r", ignore=shutil.ignore_patterns(".rbmlab.lock"))
        edits = {k: v for k, v in changes.items() if k != "meta"}
        if "meta" in changes:
            edits["meta"] = lambda m: np.array(json.dumps({**json.loads(str(m)), **changes["meta"]}))
        edit_npz(root / "r" / "checkpoint.npz", edits)

    return setup


def resume(family: str) -> list[str]:
    return ["run", *RESUMED[family], "hydra.run.dir=r", "resume=true"]


RESUME_CASES = [
    Case(
        "resume-rbm-no-b_h",
        resume("rbm"),
        "checkpoint.npz: model rbm needs arrays W, b_v, b_h; missing b_h",
        killed("rbm", b_h=None),
    ),
    Case(
        "resume-rbm-W-transposed",
        resume("rbm"),
        "checkpoint.npz: W has shape (4, 9), expected (9, 4)",
        killed("rbm", W=transposed),
    ),
    Case(
        "resume-rbm-every-array-resized",
        resume("rbm"),
        "checkpoint.npz: holds a model with n_visible=10, the run's has n_visible=9",
        killed("rbm", W=np.zeros((N + 1, 4), np.float32), b_v=np.zeros(N + 1, np.float32)),
    ),
    Case(
        "resume-rbm-trials",
        resume("rbm"),
        "holds 2 trials, the run has train.trials=1",
        killed("rbm", W=with_trials, b_v=with_trials, b_h=with_trials),
    ),
    Case(
        "resume-rbm-chains-resized",
        resume("rbm"),
        "learner state state.chains has shape (3, 5), expected (14, 9)",
        killed("rbm", **{"state.chains": np.zeros((3, 5), np.float32)}),
    ),
    Case(
        "resume-rbm-no-chains",
        resume("rbm"),
        "learner state state.chains is missing",
        killed("rbm", **{"state.chains": None}),
    ),
    Case(
        "resume-rbm-epoch-not-a-count",
        resume("rbm"),
        "its meta entry epoch is 'two', not a count",
        killed("rbm", meta={"epoch": "two"}),
    ),
    Case(
        "resume-rbm-family-ising",
        resume("rbm"),
        "model ising needs arrays J, h",
        killed("rbm", family=np.array("ising")),
    ),
    Case(
        "resume-crbm-W_xv-resized",
        resume("crbm"),
        "W_xh has shape (9, 4), expected (10, 4) = (n_inputs, n_hidden) to match W_xv (10, 9)",
        killed("crbm", W_xv=np.zeros((N + 1, N), np.float32)),
    ),
    Case("resume-dbm-no-b1", resume("dbm"), "missing b1", killed("dbm", b1=None)),
    Case(
        "resume-rbm-adam-moment-resized",
        resume("rbm-adam"),
        "optimizer state state.adam_v_W has shape (4, 9), expected (9, 4)",
        killed("rbm-adam", **{"state.adam_v_W": np.zeros((4, N), np.float32)}),
    ),
    Case(
        "resume-rbm-velocity-resized",
        resume("rbm-momentum"),
        "optimizer state state.velocity_b_h has shape (5,), expected (4,)",
        killed("rbm-momentum", **{"state.velocity_b_h": np.zeros(5, np.float32)}),
    ),
]

CASES = EVALUATE_CASES + INIT_CASES + RESUME_CASES


def test_the_corpus_counts_and_ids_are_unique():
    assert len(CASES) >= 30, f"{len(CASES)} cases; issue 33 asks for at least 30 here"
    assert len({c.id for c in CASES}) == len(CASES)
    families = {f for f in MODELS.names() if any(c.id.startswith(f"{f}-") for c in EVALUATE_CASES)}
    assert families == set(MODELS.names()), "every family has bad checkpoints through evaluate"


@pytest.mark.parametrize("case", EVALUATE_CASES, ids=[c.id for c in EVALUATE_CASES])
def test_a_bad_checkpoint_to_evaluate_is_one_line(case, tmp_path, monkeypatch, capsys):
    assert_one_error_line(main, case, tmp_path, monkeypatch, capsys)


@pytest.mark.parametrize("case", INIT_CASES, ids=[c.id for c in INIT_CASES])
def test_a_bad_init_checkpoint_is_one_line_and_leaves_no_run_directory(case, tmp_path, monkeypatch, capsys):
    assert_one_error_line(main, case, tmp_path, monkeypatch, capsys)
    assert not (tmp_path / "r").exists(), "the run directory was made before the init file was checked"


@pytest.mark.parametrize("case", RESUME_CASES, ids=[c.id for c in RESUME_CASES])
def test_a_damaged_checkpoint_to_resume_is_one_line_and_trains_nothing(case, tmp_path, monkeypatch, capsys):
    assert_one_error_line(main, case, tmp_path, monkeypatch, capsys)
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["status"] == "failed" and summary["error"], summary
    rows = (tmp_path / "r" / "metrics.csv").read_text().splitlines()
    assert rows[-1].startswith("2,"), "the rows of the killed run are kept, none added"


@pytest.mark.slow
def test_a_good_init_checkpoint_of_each_family_starts_a_run(tmp_path, monkeypatch, capsys):
    """The files above without damage are accepted: the refusals are the damage's."""
    monkeypatch.chdir(tmp_path)
    for family in MODELS.names():
        family_npz(family, f"{family}.npz")(tmp_path)
        main([*RUN[:-2], f"hydra.run.dir={family}", f"model.init={family}.npz", *TRAIN[family]])
        assert json.loads((tmp_path / family / "summary.json").read_text())["status"] == "completed"
