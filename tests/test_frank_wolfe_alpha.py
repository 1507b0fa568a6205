"""Frank-Wolfe with a learned temperature α (frank_wolfe Alg. 1 line 6 "optional: gradient
descent", Sec. 3.3, Appendix) against exact answers, and its options.

The exact references are written out here over every visible state: the fractional RBM α q(w)
with q = Σ_i q_i δ(w_i) has log p(v) = α Σ_i q_i softplus(w_iᵀ(v, 1)) + bᵀv − log Z (Eq. 5).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy.optimize import minimize_scalar

from rbmlab.backend import get_backend
from rbmlab.cli import main
from rbmlab.data import load_dataset
from rbmlab.errors import RbmlabError
from rbmlab.inference.fractional_mh import mh_chain
from rbmlab.learners.frank_wolfe import FrankWolfeConfig, append_unit
from rbmlab.learners.frank_wolfe_temperature import TemperatureAscent, next_coefficients
from rbmlab.models.fractional_rbm import FractionalRBM
from rbmlab.run.checkpoint import load_checkpoint
from rbmlab.validation import parse_options
from tests.conftest import all_binary
from tests.test_bad_input import Case, assert_one_error_line
from tests.test_cli import straight_and_resumed

D, H = 8, 4
STATES = all_binary(D)


PROTOTYPES = np.array([[1, 1, 1, 1, 0, 0, 0, 0], [0, 0, 1, 1, 1, 1, 0, 1]], dtype=float)


@pytest.fixture
def toy():
    """Noisy copies of two prototypes (as tests/test_frank_wolfe.py's)."""
    rng = np.random.default_rng(3)
    x = PROTOTYPES[rng.integers(0, 2, size=40)]
    return np.where(rng.random(x.shape) < 0.1, 1 - x, x)


def at_alpha(alpha: float, seed: int = 0) -> FractionalRBM:
    """Four units with mixture weights q_i at temperature α, c_i = α q_i (float64): two matched to
    the toy's prototypes and two random ones, so that Eq. 5's log-likelihood peaks at an α inside
    (0, ∞) (near 3.5)."""
    rng = np.random.default_rng(seed)
    W = np.column_stack(
        [2 * (2 * PROTOTYPES[0] - 1), 2 * (2 * PROTOTYPES[1] - 1), rng.standard_normal((D, 2))]
    )
    return FractionalRBM(
        W,
        0.3 * rng.standard_normal(D),
        np.array([-3.0, -4.0, *rng.standard_normal(2)]),
        alpha * np.array([0.35, 0.35, 0.15, 0.15]),
    )


def exact_mean_log_likelihood(data, alpha: float, seed: int = 0) -> float:
    """Eq. 5 by enumeration, averaged over ``data``."""
    m = at_alpha(alpha, seed)
    q = m.c / alpha

    def neg_f(v):
        return alpha * (np.logaddexp(0.0, v @ m.W + m.b_h) @ q) + v @ m.b_v

    return float(neg_f(data).mean() - np.logaddexp.reduce(neg_f(STATES)))


def probabilities(m: FractionalRBM) -> np.ndarray:
    f = m.log_unnormalized(STATES)
    return np.exp(f - np.logaddexp.reduce(f))


# ---------------------------------------------------------------- ∇_α
@pytest.mark.parametrize("alpha", [0.7, 3.0])
def test_the_alpha_gradient_is_the_derivative_of_the_exact_log_likelihood(toy, alpha):
    """Appendix: ∇_α L = (1/N) Σ_n E_q[softplus(wᵀv_n)] − Σ_v p(v) E_q[softplus(wᵀv)] (the
    penalty has no α), against central finite differences of Eq. 5 enumerated; and its estimate
    from Sec. 3.3's sampler within four standard errors."""
    m = at_alpha(alpha)
    ascent = TemperatureAscent(m, toy, lr=1.0)
    grad = ascent.gradient(m, STATES, weights=probabilities(m))
    h = 1e-5
    fd = (exact_mean_log_likelihood(toy, alpha + h) - exact_mean_log_likelihood(toy, alpha - h)) / (2 * h)
    assert grad == pytest.approx(fd, rel=1e-6, abs=1e-9)
    backend = get_backend("numpy", "float32")
    chains, _ = mh_chain(
        m.astype("float32"), (backend.rng(0).random((20000, D)) < 0.5).astype(np.float32), backend.rng(1), 40
    )
    per_chain = np.logaddexp(0.0, chains @ m.W + m.b_h) @ (m.c / alpha)
    sampled = ascent.gradient(m, chains.astype(np.float64))
    assert abs(sampled - grad) < 4 * per_chain.std() / np.sqrt(len(chains))


def test_exact_ascent_reaches_the_maximising_alpha(toy):
    """L is concave in α (Prop. 3.1): the ascent with exact expectations, at a step η_α = 0.3 (not
    the experiments'), ends at the maximiser of Eq. 5's log-likelihood over α found by scalar
    search; q (every c_i / α) is held."""
    best = minimize_scalar(
        lambda a: -exact_mean_log_likelihood(toy, a),
        bounds=(0.05, 30.0),
        method="bounded",
        options={"xatol": 1e-10},
    ).x
    m = at_alpha(1.0)
    ascent = TemperatureAscent(m, toy, lr=0.3)
    for _ in range(400):
        m = ascent.step(m, STATES, weights=probabilities(m))
    assert float(m.c.sum()) == pytest.approx(best, rel=1e-5)
    np.testing.assert_allclose(m.c / m.c.sum(), at_alpha(1.0).c, rtol=1e-12)


def test_a_step_at_most_halves_alpha(toy):
    """Past the maximiser the gradient is negative; a huge step stops at α/2 (α stays > 0)."""
    m = at_alpha(8.0)
    ascent = TemperatureAscent(m, toy, lr=1e6)
    assert ascent.gradient(m, STATES, weights=probabilities(m)) < 0
    stepped = ascent.step(m, STATES, weights=probabilities(m))
    assert float(stepped.c.sum()) == pytest.approx(4.0, rel=1e-12)


# ---------------------------------------------------------------- the step's coefficients
def test_the_frank_wolfe_step_keeps_c_under_learned_and_makes_alpha_t_under_t():
    """β_t = 1/t at α_t: old c_i ← c_i (1 − 1/t) α_t / α_{t−1}, new c_t = α_t / t. learned starts
    α_t at α_{t−1} t/(t − 1) (every c kept, the new unit at their mean); t sets α_t = t (from
    all c_i = 1 exactly 1 again)."""
    c = np.array([0.8, 0.8, 0.8], np.float32)
    np.testing.assert_array_equal(next_coefficients(c, "learned"), np.float32([0.8, 0.8, 0.8, 0.8]))
    t_rule = next_coefficients(c, "t")
    assert t_rule.sum() == pytest.approx(4.0) and t_rule[-1] == 1.0
    ones = np.ones(5, np.float32)
    for rule in ("t", "learned"):
        np.testing.assert_array_equal(next_coefficients(ones, rule), np.ones(6, np.float32))
        np.testing.assert_array_equal(next_coefficients(ones[:0], rule), np.ones(1, np.float32))
    m = FractionalRBM(
        np.zeros((D, 2), np.float32), np.zeros(D, np.float32), np.zeros(2, np.float32), np.float32([1.2, 1.2])
    )
    grown = append_unit(m, np.arange(D + 1, dtype=np.float64), "learned")
    assert grown.W.shape == (D, 3) and grown.b_h[-1] == D and grown.c.tolist() == pytest.approx([1.2] * 3)


# ---------------------------------------------------------------- runs
FW = [
    "run",
    "dataset=bars_stripes",
    "learner=frank_wolfe",
    "model.visible_bias=zero",
    "evaluator=exact",
    "evaluator.splits=[test,train]",
    "learner.n_samples=200",
    "learner.bias_chains=50",
    "learner.lam=0.05",
    "learner.restarts=2",
    "train.progress=false",
    "train.epochs=4",
]
LEARNED = ["model=fractional_rbm", "learner.alpha=learned"]


def final_model(root, name):
    model, _, _ = load_checkpoint(root / name / "checkpoint.npz")
    return model


@pytest.mark.parametrize(
    "bias_fit",
    [
        ["learner.bias_fit=fixed", "learner.bias_steps=20"],
        ["learner.bias_fit=converge", "learner.bias_max_steps=40"],
    ],
    ids=["fixed", "converge"],
)
def test_learned_alpha_at_step_zero_is_the_alpha_t_model_bit_for_bit(tmp_path, monkeypatch, bias_fit):
    """The learned-α code path (a fractional RBM, its MH sampler, ∇_α formed every bias step) with
    η_α = 0 keeps every c_i = 1, so it must be Alg. 1's α_t = t RBM to the last bit."""
    monkeypatch.chdir(tmp_path)
    main([*FW, *bias_fit, "hydra.run.dir=t"])
    main([*FW, *bias_fit, *LEARNED, "learner.alpha_lr=0", "hydra.run.dir=learned"])
    rbm, fractional = final_model(tmp_path, "t"), final_model(tmp_path, "learned")
    assert type(fractional) is FractionalRBM and fractional.c.tolist() == [1.0] * 4
    for name in ("W", "b_v", "b_h"):
        np.testing.assert_array_equal(getattr(fractional, name), getattr(rbm, name))
    a, b = (pd.read_csv(tmp_path / d / "metrics.csv") for d in ("t", "learned"))
    np.testing.assert_allclose(
        b["test_log_likelihood"], a["test_log_likelihood"], rtol=1e-6
    )  # float32 −F(v), two codes
    assert (b["fw_alpha"][1:] == b["n_hidden"][1:]).all() and (b["fw_mh_accept"][1:] == 1.0).all()
    assert "fw_alpha" not in a  # an RBM run's columns are as before


def test_a_learned_alpha_moves_and_its_model_is_scored_as_the_fractional_rbm(tmp_path, monkeypatch):
    """At η_α = 0.5 α leaves t, every unit keeps one coefficient c = α/t, the MH sampler rejects
    some proposals, and the exact log-likelihood the run records is Eq. 11's of its checkpoint."""
    monkeypatch.chdir(tmp_path)
    main(
        [
            *FW,
            *LEARNED,
            "learner.alpha_lr=0.5",
            "learner.bias_fit=fixed",
            "learner.bias_steps=30",
            "hydra.run.dir=r",
        ]
    )
    rows = pd.read_csv(tmp_path / "r" / "metrics.csv")
    m = final_model(tmp_path, "r")
    alpha = float(m.c.astype(np.float64).sum())
    assert alpha == pytest.approx(rows["fw_alpha"].iloc[-1], rel=1e-6) and abs(alpha - 4.0) > 1e-3
    np.testing.assert_allclose(m.c, m.c[0], rtol=1e-5)
    assert 0.0 < rows["fw_mh_accept"].iloc[-1] < 1.0
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    test = np.asarray(load_dataset("bars_stripes").test, dtype=np.float64)
    m64 = m.astype("float64")
    assert summary["final"]["test_log_likelihood"] == pytest.approx(
        float(m64.log_unnormalized(test).mean()) - m64.exact_log_partition(), rel=1e-6
    )
    with np.load(tmp_path / "r" / "checkpoint.npz") as saved:
        assert {"W", "b_v", "b_h", "c"} <= set(saved.files) and str(saved["family"]) == "fractional_rbm"


@pytest.mark.slow
def test_a_learned_alpha_run_killed_mid_growth_resumes_to_identical_metrics(tmp_path):
    """α lives in the checkpoint (the model's c) and the learner state: a run killed after epoch 5
    resumes from its epoch-4 checkpoint to the straight run's metrics and final model."""
    args = [
        *FW[1:-1],
        *LEARNED,
        "learner.alpha_lr=0.5",
        "learner.bias_fit=fixed",
        "learner.bias_steps=20",
        "train.epochs=8",
        "train.checkpoint_every=2",
        "seed=4",
    ]
    ref, run, _, out = straight_and_resumed(tmp_path, args, kill_after_epoch=5)
    assert "at epoch 4" in out.stdout
    ma, mb = pd.read_csv(ref / "metrics.csv"), pd.read_csv(run / "metrics.csv")
    pd.testing.assert_frame_equal(ma.drop(columns="wall_time"), mb.drop(columns="wall_time"))
    a, b = (load_checkpoint(d / "checkpoint.npz")[0] for d in (ref, run))
    np.testing.assert_array_equal(a.c, b.c)
    assert float(mb["fw_alpha"].iloc[-1]) != 8.0


# ---------------------------------------------------------------- options
def test_the_new_options_and_their_defaults():
    cfg = parse_options(FrankWolfeConfig, {"name": "frank_wolfe"}, "learner")
    assert cfg.alpha == "t" and cfg.alpha_lr is None
    learned = parse_options(
        FrankWolfeConfig, {"name": "frank_wolfe", "alpha": "learned", "alpha_lr": 2.5}, "learner"
    )
    assert learned.alpha_lr == 2.5
    with pytest.raises(RbmlabError, match=r"^learner.alpha_lr: must be >= 0"):
        parse_options(
            FrankWolfeConfig, {"name": "frank_wolfe", "alpha": "learned", "alpha_lr": -1}, "learner"
        )


CASES = [
    Case(
        "alpha-lr-with-alpha-t",
        [*FW, "learner.alpha_lr=0.5"],
        "learner.alpha_lr: applies to alpha=learned only",
    ),
    Case("learned-without-its-step", [*FW, *LEARNED], "learner.alpha_lr: alpha=learned needs the step"),
    Case(
        "learned-on-an-rbm",
        [*FW, "learner.alpha=learned", "learner.alpha_lr=1"],
        "learner=frank_wolfe: learner.alpha=learned makes a fractional RBM",
    ),
    Case(
        "learned-with-line-search",
        [*FW, *LEARNED, "learner.alpha_lr=1", "learner.step=line_search"],
        "learner.step: line_search scores a unit",
    ),
    Case(
        "cd-on-a-fractional-rbm",
        ["run", "dataset=bars_stripes", "model=fractional_rbm", "learner=cd"],
        "learner=cd: model fractional_rbm lacks GradientStatistics",
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_setting_that_does_not_apply_is_one_line(case, tmp_path, monkeypatch, capsys):
    assert_one_error_line(main, case, tmp_path, monkeypatch, capsys)


# ---------------------------------------------------------------- the experiment
def test_the_alpha_learned_experiment_runs_at_the_smoke_tier(tmp_path):
    """experiments/frank_wolfe/alpha-learned.yaml at scale=smoke (about 15 s): both arms complete,
    the learned one as a fractional RBM recording α and the sampler's acceptance, and the report
    names both; everything under tmp_path."""
    from rbmlab.experiment import run_experiment  # noqa: PLC0415

    run_experiment(
        "frank_wolfe/alpha-learned",
        ["scale=smoke"],
        results_root=tmp_path / "results",
        outputs_root=tmp_path / "outputs",
    )
    sweep = tmp_path / "outputs" / "frank_wolfe" / "alpha-learned" / "smoke"
    for variant in ("alpha_t", "learned"):
        (run,) = [p.parent for p in (sweep / variant).rglob("summary.json")]
        summary = json.loads((run / "summary.json").read_text())
        assert summary["status"] == "completed" and summary["n_hidden"] == 3
        model = load_checkpoint(run / "checkpoint.npz")[0]
        rows = pd.read_csv(run / "metrics.csv")
        if variant == "learned":
            assert type(model) is FractionalRBM
            assert float(model.c.sum()) == pytest.approx(rows["fw_alpha"].iloc[-1], rel=1e-5)
            assert rows["fw_mh_accept"].iloc[1:].between(0.0, 1.0).all()
        else:
            assert type(model) is not FractionalRBM and "fw_alpha" not in rows
    report = (tmp_path / "results" / "frank_wolfe" / "alpha-learned_smoke.md").read_text()
    assert "alpha_t = t (RBM)" in report and "learned alpha (fractional RBM)" in report
