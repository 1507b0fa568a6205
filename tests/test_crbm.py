"""The conditional RBM against enumeration: its conditional distribution, the gradient of the
conditional log-likelihood as data statistics minus model statistics (finite differences), and
the MLE-BP gradient, exact where BP is (one hidden unit)."""

from __future__ import annotations

import numpy as np
import pytest

from rbmlab.inference.matrix_bp import loopy_bp, pairwise_beliefs
from rbmlab.models.crbm import CRBM, CRBMConfig, statistics, statistics_difference
from tests.conftest import all_binary

N_V, N_H, N_X, N = 4, 3, 5, 6


def random_crbm(rng, n_h=N_H, scale=0.8):
    return CRBM(
        W=scale * rng.standard_normal((N_V, n_h)),
        W_xv=scale * rng.standard_normal((N_X, N_V)),
        W_xh=scale * rng.standard_normal((N_X, n_h)),
        b_v=rng.standard_normal(N_V),
        b_h=rng.standard_normal(n_h),
    )


def task(rng):
    x = (rng.random((N, N_X)) < 0.5).astype(float)
    v = (rng.random((N, N_V)) < 0.5).astype(float)
    return x, v


def joint(model, x):
    """p(v, h | x) per row by enumeration, straight from the energy of Eq. 3: (V, H, p (N, 2^|v|, 2^|h|))."""
    V, H = all_binary(N_V), all_binary(model.n_hidden)
    neg_e = (
        np.einsum("ai,ij,bj->ab", V, model.W, H)[None]
        + np.einsum("ai,ki,nk->na", V, model.W_xv, x)[:, :, None]
        + np.einsum("bj,kj,nk->nb", H, model.W_xh, x)[:, None, :]
        + (V @ model.b_v)[None, :, None]
        + (H @ model.b_h)[None, None, :]
    )
    p = np.exp(neg_e - neg_e.max(axis=(1, 2), keepdims=True))
    return V, H, p / p.sum(axis=(1, 2), keepdims=True)


def conditional_log_likelihood(model, x, v):
    V, _, p = joint(model, x)
    index = (v @ (2 ** np.arange(N_V))).astype(int)  # all_binary's order: bit i = unit i
    assert np.array_equal(V[index], v)
    return np.log(p.sum(axis=2)[np.arange(len(v)), index]).mean()


def test_the_papers_model_has_1017104_parameters():
    assert CRBM.parameter_count(CRBM.sizes(CRBMConfig(), 784)) == 1_017_104


def test_initialisation_small_weights_zero_hidden_bias_visible_bias_at_the_data_logit():
    rng = np.random.default_rng(0)
    mean = np.linspace(0.1, 0.9, N_V)
    model = CRBM.initialize(
        CRBMConfig(n_hidden=N_H), xp=np, rng=rng, data_mean=mean, dtype=np.float32, n_inputs=N_X, trials=2
    )
    assert model.W.shape == (2, N_V, N_H) and model.W_xh.shape == (2, N_X, N_H)
    assert (model.W_xv == 0).all() and (model.b_h == 0).all() and model.b_v.dtype == np.float32
    np.testing.assert_allclose(1 / (1 + np.exp(-model.b_v[1])), mean, rtol=1e-5)
    assert model.trial(0).model_sizes() == {"n_visible": N_V, "n_hidden": N_H, "n_inputs": N_X}


def test_the_free_energy_gives_the_conditional_distribution():
    rng = np.random.default_rng(1)
    model, (x, _) = random_crbm(rng), task(rng)
    V, _, p = joint(model, x)
    for n in range(N):
        log_p = model.neg_free_energy(V, x[n : n + 1].repeat(len(V), 0))
        np.testing.assert_allclose(np.exp(log_p - np.logaddexp.reduce(log_p)), p[n].sum(1), atol=1e-12)


def exact_model_statistics(model, x):
    return statistics(x, *exact_beliefs(model, x))


def exact_beliefs(model, x):
    """(E[v], E[h], E[v hᵀ]) per instance under p(v, h | x), enumerated."""
    V, H, p = joint(model, x)
    ev, eh = np.einsum("nab,ai->ni", p, V), np.einsum("nab,bj->nj", p, H)
    return ev, eh, np.einsum("nab,ai,bj->nij", p, V, H)


def test_the_gradient_is_data_statistics_minus_model_statistics():
    """The learners' gradient (statistics_difference: each input term formed once, from the
    beliefs' differences) against finite differences of the conditional log-likelihood, and
    against the two statistics subtracted, with v hᵀ formed on both sides or given on one."""
    rng = np.random.default_rng(2)
    model, (x, v) = random_crbm(rng), task(rng)
    data = (v, model.hidden_given(v, x), None)
    gradient = statistics_difference(x, data, exact_beliefs(model, x))
    ev, eh, _ = exact_beliefs(model, x)
    both_formed = statistics_difference(x, data, (ev, eh, None))
    eps = 1e-6
    for name in CRBM.PARAMS:
        grad = gradient[name]
        np.testing.assert_allclose(
            both_formed[name], statistics(x, *data)[name] - statistics(x, ev, eh)[name], atol=1e-14
        )
        fd = np.zeros_like(grad)
        for index in np.ndindex(grad.shape):
            step = np.zeros_like(grad)
            step[index] = eps
            up = model.replace(**{name: getattr(model, name) + step})
            down = model.replace(**{name: getattr(model, name) - step})
            fd[index] = (conditional_log_likelihood(up, x, v) - conditional_log_likelihood(down, x, v)) / (
                2 * eps
            )
        np.testing.assert_allclose(grad, fd, atol=1e-8, err_msg=name)


def test_the_mle_bp_gradient_is_exact_where_bp_is():
    """With one hidden unit the x-conditioned RBM is a tree: BP's beliefs (τ^v, τ^h, Γ) are the
    exact expectations, so MLE-BP's model statistics equal enumeration's."""
    rng = np.random.default_rng(3)
    model, (x, _) = random_crbm(rng, n_h=1), task(rng)
    b1, b2 = model.conditional_biases(x)
    beliefs = loopy_bp(model.W, b1, b2, max_iter=500, tol=1e-13)
    assert beliefs.converged.all()
    bp = statistics(x, beliefs.tau_v, beliefs.tau_h, pairwise_beliefs(model.W, beliefs))
    exact = exact_model_statistics(model, x)
    for name in CRBM.PARAMS:
        np.testing.assert_allclose(bp[name], exact[name], atol=1e-9, err_msg=name)


@pytest.mark.parametrize("trials", [0, 3])
def test_conditional_biases_broadcast_over_a_batch(trials):
    rng = np.random.default_rng(4)
    model = CRBM.initialize(
        CRBMConfig(n_hidden=N_H),
        xp=np,
        rng=rng,
        data_mean=np.full(N_V, 0.3),
        dtype=np.float64,
        n_inputs=N_X,
        trials=trials,
    )
    x = rng.random((N, N_X))
    b1, b2 = model.conditional_biases(x)
    lead = (trials,) if trials else ()
    assert b1.shape == lead + (N, N_V) and b2.shape == lead + (N, N_H)


def test_pixel_error_scores_the_prediction_of_the_chosen_inference():
    """On a tree-structured CRBM (one hidden unit) sum-product predicts the exact marginal mode
    and max-product the exact joint MAP: scored against those, their error is 0; the biases
    alone (the LR baseline) predict 1[b¹ > 0]."""
    from rbmlab.data.batch import Batch
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.evaluators.base import Context

    rng = np.random.default_rng(6)
    model, (x, _) = random_crbm(rng, n_h=1, scale=1.5), task(rng)
    V, H, p = joint(model, x)
    mode = (np.einsum("nab,ai->ni", p, V) > 0.5).astype(float)
    joint_map = V[[np.unravel_index(np.argmax(q), q.shape)[0] for q in p]]
    for inference, target in (
        ("sum", mode),
        ("max", joint_map),
        ("none", (model.conditional_biases(x)[0] > 0).astype(float)),
    ):
        evaluator = EVALUATORS.build(
            EVALUATORS.parse(
                {"name": "pixel_error", "inference": inference, "tol": 1e-12, "max_iter": 500, "chunk": 4}
            )
        )
        changed = np.zeros_like(target, dtype=bool)
        changed[:, 0] = True
        out = evaluator.evaluate(
            model, {"test": Batch(x, targets=target, mask=changed)}, Context(rng=None, final=True)
        )
        assert out == {"test_pixel_error": 0.0, "test_changed_error": 0.0, "test_converged": 100.0}, inference
    flipped = Batch(x, targets=1 - mode, mask=changed)
    assert evaluator.evaluate(model, {"test": flipped}, Context(rng=None, final=True))["test_pixel_error"] > 0
    # wrong only where nothing changed (pixel 1), then only where it did (pixel 0): All vs Changed
    rule = (model.conditional_biases(x)[0] > 0).astype(float)  # inference=none's prediction
    n_v = rule.shape[1]
    for pixel, want_changed in ((1, 0.0), (0, 100.0)):
        target = rule.copy()
        target[:, pixel] = 1 - target[:, pixel]
        out = evaluator.evaluate(
            model, {"test": Batch(x, targets=target, mask=changed)}, Context(rng=None, final=True)
        )
        assert (
            out["test_pixel_error"] == pytest.approx(100.0 / n_v)
            and out["test_changed_error"] == want_changed
        )


def test_pixel_error_runs_the_learners_own_budget_when_it_has_one():
    """Matched inference (the paper's guideline): BP runs the T the model trained with when the
    context carries it, max_iter otherwise or with matched=false."""
    from rbmlab.data.batch import Batch
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.evaluators.base import Context
    from rbmlab.evaluators.pixel_error import predict

    rng = np.random.default_rng(9)
    model, (x, _) = random_crbm(rng, scale=3.0), task(rng)
    one, many = predict(model, x, "sum", 1, 1e-12)[0], predict(model, x, "sum", 200, 1e-12)[0]
    assert (one != many).any()
    batch = {"test": Batch(x, targets=many, mask=np.ones_like(many, dtype=bool))}
    for matched, budget, expected in ((True, 1, one), (True, None, many), (False, 1, many)):
        evaluator = EVALUATORS.build(
            EVALUATORS.parse({"name": "pixel_error", "max_iter": 200, "tol": 1e-12, "matched": matched})
        )
        error = evaluator.evaluate(model, batch, Context(rng=None, final=True, inference_iterations=budget))
        assert error["test_pixel_error"] == pytest.approx(100 * (expected != many).mean()), (matched, budget)


def test_runs_scored_before_matched_inference_keep_their_identity():
    """matched=false is what pixel_error did before the option: the key stays out of the hash
    (a run of the committed lr-grid, config hash dd53f96a017f6c92 in its summary.json)."""
    from rbmlab.hydra_app import validated_run_config
    from tests.test_run_identity import recorded_hash

    args = [
        "model=crbm",
        "dataset=mnist",
        "dataset.validation=True",
        "dataset.validation_seed=0",
        "task=flip",
        "task.rate=0.1",
        "evaluator=pixel_error",
        "evaluator.splits=[valid]",
        "train.progress=False",
        "evaluator.progress=False",
        "learner.batch_size=20",
        "learner=logistic",
        "evaluator.inference=none",
        "dataset.n_train=5000",
        "train.epochs=3",
        "evaluator.max_examples=1000",
        "learner.lr=0.01",
        "seed=0",
        "scale=reduced",
    ]
    assert recorded_hash([*args, "evaluator.matched=false"]) == "dd53f96a017f6c92"  # then's run defaults
    assert validated_run_config(args).hash() != "dd53f96a017f6c92"


def test_an_mle_bp_step_on_a_tree_is_an_sgd_step_on_the_exact_gradient():
    """With one hidden unit BP is exact, so MLE-BP's step is lr × the exact gradient of the mean
    conditional log-likelihood (data minus enumerated model statistics)."""
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS

    rng = np.random.default_rng(7)
    model, (x, v) = random_crbm(rng, n_h=1), task(rng)
    batch = Batch(x, targets=v, mask=x[:, :N_V] != v)
    learner = LEARNERS.build(
        LEARNERS.parse({"name": "mle_bp", "lr": 0.1, "batch_size": N, "tol": 1e-13, "base_iterations": 300})
    )
    state = learner.init_state(model, batch, rng)
    new, state = learner.step(model, state, batch, rng)
    exact = exact_model_statistics(model, x)
    data = statistics(x, v, model.hidden_given(v, x))
    for name in CRBM.PARAMS:
        np.testing.assert_allclose(
            getattr(new, name) - getattr(model, name),
            0.1 * (data[name] - exact[name]),
            atol=1e-10,
            err_msg=name,
        )
    assert learner.diagnostics(state) == {"inference_converged": 100.0}


def test_conditional_learners_count_epochs_and_the_converged_share_per_epoch():
    """T = base + epoch with 1-indexed epochs (our reading of crbm_bp Sec. 6: T = 17 at epoch 10);
    the share of converged instances restarts with each epoch (Figure 4)."""
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS

    learner = LEARNERS.build(LEARNERS.parse({"name": "mle_mf", "batch_size": 3}))
    x = np.zeros((6, N_X))
    state = learner.init_state(
        random_crbm(np.random.default_rng(8)), Batch(x, targets=np.zeros((6, N_X))), None
    )
    assert learner.epoch(state) == 1 and np.isnan(learner.diagnostics(state)["inference_converged"])
    assert learner.iterations(state) == 8 and learner.inference_iterations(state) == 7  # before training
    state = learner.advance(state, np.array([True, False, True]))
    assert learner.epoch(state) == 1 and isinstance(state["steps"], int)  # counted on the host
    state = learner.advance(state, np.array([True, True, True]))
    assert learner.epoch(state) == 2 and learner.diagnostics(state) == {"inference_converged": 100 * 5 / 6}
    assert learner.inference_iterations(state) == 8  # the T epoch 1 trained with, for the evaluation after it
    assert LEARNERS.build(LEARNERS.parse({"name": "conditional_cd"})).inference_iterations(state) is None
    state = learner.advance(state, np.array([False, False, False]))
    assert learner.diagnostics(state) == {"inference_converged": 0.0}


def test_the_inference_schedule_grows_by_per_epoch_each_epoch_and_per_epoch_0_holds_it_fixed():
    """T = base_iterations + per_epoch × epoch: the paper's 7 + epoch at per_epoch = 1, a fixed T
    at 0 (a control), 5 + 3 × epoch at 3; the test-time budget is the T the last epoch used."""
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS

    x = np.zeros((4, N_X))
    for options, trained_with in [
        ({}, [8, 9, 10]),
        ({"per_epoch": 0}, [7, 7, 7]),
        ({"base_iterations": 5, "per_epoch": 3}, [8, 11, 14]),
    ]:
        learner = LEARNERS.build(LEARNERS.parse({"name": "mle_bp", "batch_size": 2, **options}))
        state = learner.init_state(
            random_crbm(np.random.default_rng(8)), Batch(x, targets=np.zeros((4, N_X))), None
        )
        seen = []
        for _ in range(3):  # three epochs of two batches
            seen.append(learner.iterations(state))
            state = learner.advance(learner.advance(state, np.ones(2, bool)), np.ones(2, bool))
            assert learner.inference_iterations(state) == seen[-1]
        assert seen == trained_with, options


def test_an_mle_bp_run_killed_mid_training_resumes_to_identical_metrics(tmp_path):
    """The epoch counter and the converged tallies live in the checkpointed learner state."""
    import json

    import pandas as pd

    from tests.test_cli import straight_and_resumed

    args = [
        "model=crbm",
        "model.n_hidden=4",
        "dataset=bars_stripes",
        "task=flip",
        "task.rate=0.2",
        "learner=mle_bp",
        "learner.batch_size=5",
        "evaluator=pixel_error",
        "train.epochs=6",
        "train.checkpoint_every=2",
        "train.progress=false",
    ]
    ref, run, _, out = straight_and_resumed(tmp_path, args, kill_after_epoch=3)
    assert "at epoch 2" in out.stdout
    a, b = (json.loads((d / "summary.json").read_text()) for d in (ref, run))
    assert b["status"] == "completed" and b["final"] == a["final"]
    ma, mb = pd.read_csv(ref / "metrics.csv"), pd.read_csv(run / "metrics.csv")
    pd.testing.assert_frame_equal(ma.drop(columns="wall_time"), mb.drop(columns="wall_time"))
    assert "inference_converged" in ma.columns


def test_the_lr_baseline_is_exact_logistic_regression_and_leaves_the_rest_at_zero():
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS

    rng = np.random.default_rng(9)
    model, (x, v) = random_crbm(rng), task(rng)
    learner = LEARNERS.build(LEARNERS.parse({"name": "logistic", "lr": 0.5, "batch_size": N}))
    model = learner.initial_model(model, pretrained=False)
    assert not model.W.any() and not model.W_xh.any() and not model.b_h.any()
    state = learner.init_state(model, Batch(x, targets=v), rng)
    new, _ = learner.step(model, state, Batch(x, targets=v), rng)
    # with W = 0 the CRBM is the logistic regressions: the step is 0.5 × the exact gradient

    def finite_difference(name: str, eps: float = 1e-6) -> np.ndarray:
        value, grad = getattr(model, name), np.zeros_like(getattr(model, name))
        for index in np.ndindex(grad.shape):
            step = np.zeros_like(grad)
            step[index] = eps
            grad[index] = (
                conditional_log_likelihood(model.replace(**{name: value + step}), x, v)
                - conditional_log_likelihood(model.replace(**{name: value - step}), x, v)
            ) / (2 * eps)
        return grad

    for name in ("W_xv", "b_v"):
        np.testing.assert_allclose(
            getattr(new, name) - getattr(model, name), 0.5 * finite_difference(name), atol=1e-9
        )
    assert not new.W.any() and not new.W_xh.any() and not new.b_h.any()


def test_an_lssvm_step_on_a_tree_uses_the_exact_loss_augmented_joint_map():
    """With one hidden unit max-product BP is exact: LSSVM's step is lr × (statistics at
    (vⁿ, argmax_h p(h | vⁿ, x)) − statistics at argmax_{v,h} [Hamming(v, vⁿ) − E(v, h, x)])."""
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS

    rng = np.random.default_rng(10)
    model, (x, v) = random_crbm(rng, n_h=1, scale=1.5), task(rng)
    learner = LEARNERS.build(
        LEARNERS.parse({"name": "lssvm", "lr": 0.1, "batch_size": N, "tol": 1e-13, "base_iterations": 300})
    )
    new, _ = learner.step(
        model, learner.init_state(model, Batch(x, targets=v), rng), Batch(x, targets=v), rng
    )
    V, H, p = joint(model, x)
    hamming = np.abs(V[None, :, :] - v[:, None, :]).sum(-1)  # (N, 2^|v|)
    score = np.log(p) + hamming[:, :, None]
    best = [np.unravel_index(np.argmax(s), s.shape) for s in score]
    v_hat, h_hat = V[[a for a, _ in best]], H[[b for _, b in best]]
    h_star = (v @ model.W + model.conditional_biases(x)[1] > 0).astype(float)
    expected = {
        k: 0.1 * (a - b)
        for (k, a), b in zip(statistics(x, v, h_star).items(), statistics(x, v_hat, h_hat).values())
    }
    for name in CRBM.PARAMS:
        np.testing.assert_allclose(getattr(new, name) - getattr(model, name), expected[name], atol=1e-12)


@pytest.mark.parametrize("name", ["mssvm", "lssvm"])
def test_a_max_margin_step_is_zero_once_the_truth_wins_by_the_margin(name):
    """Where the loss-augmented prediction is the target itself the hinge is flat: no update."""
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS

    rng = np.random.default_rng(11)
    model, (x, v) = random_crbm(rng, scale=0.3), task(rng)
    model = model.replace(b_v=np.zeros(N_V), W_xv=np.zeros((N_X, N_V)))
    x = np.zeros((1, N_X))
    v = v[:1]
    model = model.replace(b_v=20.0 * (2 * v[0] - 1))  # vⁿ wins by far more than 1 per pixel
    learner = LEARNERS.build(LEARNERS.parse({"name": name, "lr": 0.1, "batch_size": 1}))
    new, _ = learner.step(
        model, learner.init_state(model, Batch(x, targets=v), rng), Batch(x, targets=v), rng
    )
    for p in CRBM.PARAMS:
        np.testing.assert_allclose(getattr(new, p), getattr(model, p), atol=1e-12)


def test_the_perceptron_search_keeps_the_lowest_free_energy_state_it_visits():
    from rbmlab.backend.ops import bernoulli, sigmoid
    from rbmlab.learners.conditional_cd import lowest_free_energy_search
    from rbmlab.models.crbm import free_energy

    rng = np.random.default_rng(12)
    model, (x, _) = random_crbm(rng, scale=1.5), task(rng)
    b1, b2 = model.conditional_biases(x)
    best = lowest_free_energy_search(model.W, b1, b2, np.random.default_rng(5), k=10)
    replay, visited = np.random.default_rng(5), []
    v = bernoulli(sigmoid(b1), replay)
    visited.append(v)
    for _ in range(10):
        h = bernoulli(sigmoid(v @ model.W + b2), replay)
        v = bernoulli(sigmoid(h @ model.W.T + b1), replay)
        visited.append(v)
    f = np.stack([free_energy(s, model.W, b1, b2) for s in visited])  # (11, N)
    np.testing.assert_allclose(free_energy(best, model.W, b1, b2), f.min(axis=0))


def test_conditional_cd_samples_the_x_conditioned_model():
    """With no coupling to h the chain's end is v ~ σ(b¹) whatever k: the model term's b_v
    statistic is the mean of σ(b¹) (Monte Carlo over 4,000 instances)."""
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS

    rng = np.random.default_rng(13)
    model = random_crbm(rng).replace(W=np.zeros((N_V, N_H)))
    x = (rng.random((4000, N_X)) < 0.5).astype(float)
    v = np.ones((4000, N_V))
    learner = LEARNERS.build(
        LEARNERS.parse({"name": "conditional_cd", "lr": 1.0, "batch_size": 4000, "k": 3})
    )
    new, state = learner.step(
        model, learner.init_state(model, Batch(x, targets=v), rng), Batch(x, targets=v), rng
    )
    b1 = model.conditional_biases(x)[0]
    # b_v moves by lr × (mean v − mean of the chain's v) = 1 − mean σ(b¹), up to sampling noise
    np.testing.assert_allclose(new.b_v - model.b_v, 1 - (1 / (1 + np.exp(-b1))).mean(axis=0), atol=0.03)
    assert learner.diagnostics(state) == {}


def test_conditional_cd_carries_its_chain_through_the_k_sweeps():
    """CD-k from the clean targets (crbm_bp §2): the model term is the state after k sweeps, each
    from the one before. Replayed here draw by draw from the same stream on a coupled model, the
    b_v step (lr × mean of v_data − v_k) is the learner's to 1e-12."""
    from rbmlab.backend.ops import bernoulli, sigmoid
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS

    rng = np.random.default_rng(14)
    model, (x, v_data) = random_crbm(rng, scale=1.5), task(rng)
    learner = LEARNERS.build(
        LEARNERS.parse({"name": "conditional_cd", "lr": 1.0, "batch_size": len(x), "k": 3})
    )
    state = learner.init_state(model, Batch(x, targets=v_data), rng)
    new, _ = learner.step(model, state, Batch(x, targets=v_data), np.random.default_rng(5))
    b1, b2 = model.conditional_biases(x)
    replay, v = np.random.default_rng(5), v_data
    for _ in range(3):
        h = bernoulli(sigmoid(v @ model.W + b2), replay)
        v = bernoulli(sigmoid(h @ model.W.T + b1), replay)
    np.testing.assert_allclose(new.b_v - model.b_v, (v_data - v).mean(axis=0), atol=1e-12)


@pytest.mark.parametrize(
    "name, module, core",
    [
        ("mle_mf", "rbmlab.learners.mle_mf", "mean_field"),
        ("mle_bp", "rbmlab.learners.mle_bp", "loopy_bp"),
        ("mssvm", "rbmlab.learners.max_margin", "loopy_bp"),
    ],
)
def test_each_step_runs_its_inference_on_the_epochs_budget(name, module, core, monkeypatch):
    """The budget each step hands its inference, step by step: T = 5 + 3 × epoch (1-indexed) over
    three epochs of two mini-batches, at non-default base_iterations and per_epoch; the tolerance
    (and MLE-BP's damping) at non-default values too."""
    import importlib

    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS

    target, handed = importlib.import_module(module), []
    real = getattr(target, core)
    monkeypatch.setattr(
        target,
        core,
        lambda *a, max_iter, **kw: (handed.append((max_iter, kw)), real(*a, max_iter=max_iter, **kw))[1],
    )
    rng = np.random.default_rng(15)
    model, (x, v) = random_crbm(rng), task(rng)
    x, v = x[:4], v[:4]
    options = {"batch_size": 2, "base_iterations": 5, "per_epoch": 3, "tol": 0.02}
    options.update({"damping": 0.3} if name == "mle_bp" else {})  # BP's damping, off its default
    learner = LEARNERS.build(LEARNERS.parse({"name": name, **options}))
    state = learner.init_state(model, Batch(x, targets=v), rng)
    for _ in range(3):
        for i in (0, 2):
            model, state = learner.step(model, state, Batch(x[i : i + 2], targets=v[i : i + 2]), rng)
    assert [t for t, _ in handed] == [8, 8, 11, 11, 14, 14]
    assert all(kw["tol"] == 0.02 for _, kw in handed)
    assert name != "mle_bp" or all(kw["damping"] == 0.3 for _, kw in handed)


@pytest.mark.parametrize("inference", ["mf", "sum"])
def test_pixel_error_runs_its_inference_to_the_tolerance_it_is_given(inference):
    """evaluator.tol reaches the solver: on three iterations of a coupled CRBM, every instance has
    converged to tol 0.5, and not all to 1e-9."""
    from rbmlab.data.batch import Batch
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.evaluators.base import Context

    rng = np.random.default_rng(16)
    model, (x, v) = random_crbm(rng, scale=1.5), task(rng)
    changed = np.ones_like(v, dtype=bool)
    shares = {}
    for tol in (0.5, 1e-9):
        options = {"name": "pixel_error", "inference": inference, "tol": tol, "max_iter": 3, "matched": False}
        out = EVALUATORS.build(EVALUATORS.parse(options)).evaluate(
            model, {"test": Batch(x, targets=v, mask=changed)}, Context(rng=None, final=True)
        )
        shares[tol] = out["test_converged"]
    assert shares[0.5] == 100.0 and shares[1e-9] < 100.0, shares


def test_cd_percloss_steps_toward_the_lowest_free_energy_state_it_found():
    """CD-PercLoss (crbm_bp §2): the model term is v* = the search's lowest-F state and
    E[h | v*, x] = σ(v* W + b²): the b_h step (lr 1, SGD) is the batch mean of σ(v W + b²) −
    σ(v* W + b²), with v* replayed from the same stream."""
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS
    from rbmlab.learners.conditional_cd import lowest_free_energy_search

    rng = np.random.default_rng(17)
    model, (x, v) = random_crbm(rng, scale=1.5), task(rng)
    learner = LEARNERS.build(LEARNERS.parse({"name": "cd_percloss", "lr": 1.0, "batch_size": len(x), "k": 4}))
    state = learner.init_state(model, Batch(x, targets=v), rng)
    new, _ = learner.step(model, state, Batch(x, targets=v), np.random.default_rng(5))
    b1, b2 = model.conditional_biases(x)
    best = lowest_free_energy_search(model.W, b1, b2, np.random.default_rng(5), 4)
    sig = lambda z: 1 / (1 + np.exp(-z))  # noqa: E731
    np.testing.assert_allclose(
        new.b_h - model.b_h, (sig(v @ model.W + b2) - sig(best @ model.W + b2)).mean(0), atol=1e-12
    )


def test_mle_mf_steps_toward_mean_fields_beliefs():
    """MLE-MF (crbm_bp §4.1): the model term is naive mean field's (τ^v, τ^h) at the x-conditioned
    RBM; with lr 1 and SGD the b_v step is the batch mean of v − τ^v, τ^v from mean_field run here
    on the same budget (T = 7 + 1 at epoch 1) and tolerance."""
    from rbmlab.data.batch import Batch
    from rbmlab.inference.mean_field import mean_field
    from rbmlab.learners import LEARNERS

    rng = np.random.default_rng(18)
    model, (x, v) = random_crbm(rng, scale=1.5), task(rng)
    learner = LEARNERS.build(LEARNERS.parse({"name": "mle_mf", "lr": 1.0, "batch_size": len(x)}))
    state = learner.init_state(model, Batch(x, targets=v), rng)
    new, _ = learner.step(model, state, Batch(x, targets=v), rng)
    b1, b2 = model.conditional_biases(x)
    tau_v = mean_field(model.W, b1, b2, max_iter=8, tol=learner.config.tol).tau_v
    np.testing.assert_allclose(new.b_v - model.b_v, (v - tau_v).mean(0), atol=1e-12)
    assert np.abs((v - tau_v).mean(0)).max() > 1e-3
