"""S-DCP, CS-DCP and CG (dcp paper) against CD, the paper's pseudo-code, and exact enumeration."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import all_binary, random_rbm

from rbmlab.data.batch import Batch
from rbmlab.evaluators.exact import log_partition
from rbmlab.inference.block_gibbs import gibbs_chain
from rbmlab.learners.base import difference
from rbmlab.learners.cd import CD, CDConfig
from rbmlab.learners.cg import CG, CGConfig
from rbmlab.learners.csdcp import CSDCP, CSDCPConfig
from rbmlab.learners.sdcp import SDCP, SDCPConfig
from rbmlab.models.centered import CenteredRBM
from rbmlab.models.rbm import RBM, free_energy
from rbmlab.optimizers.spectral import polar_factor


def ssd(**options):
    """SSD (learner=ssd): CD-K with the spectral optimizer; ``bias_lr`` goes to the optimizer."""
    optimizer = {"name": "spectral", **({"bias_lr": options.pop("bias_lr")} if "bias_lr" in options else {})}
    return CD(CDConfig(name="ssd", optimizer=optimizer, **options))


def _batch(backend, n=8, m=6, seed=5):
    return backend.asarray(np.random.default_rng(seed).integers(0, 2, (n, m)).astype(float))


def _assert_same(a: RBM, b: RBM, backend, **tol):
    for name in ("W", "b_v", "b_h"):
        np.testing.assert_allclose(
            backend.to_numpy(getattr(a, name)), backend.to_numpy(getattr(b, name)), **tol
        )


def test_sdcp_with_d_1_is_cd_k_step_for_step(backend):
    """d = 1: the same parameters as CD-K' after every step, from the same random stream (Alg. 2)."""
    rbm_cd = rbm_dcp = random_rbm(backend, 6, 4, scale=0.3, seed=1)
    cd, sdcp = CD(CDConfig(lr=0.1, k=3)), SDCP(SDCPConfig(lr=0.1, d=1, k=3))
    rng_cd, rng_dcp = backend.rng(9), backend.rng(9)
    for step in range(6):
        batch = _batch(backend, seed=step)
        rbm_cd, _ = cd.step(rbm_cd, {}, Batch(batch), rng_cd)
        rbm_dcp, _ = sdcp.step(rbm_dcp, {}, Batch(batch), rng_dcp)
        _assert_same(rbm_cd, rbm_dcp, backend, rtol=0, atol=0)


def _sig(x, xp):
    return 1.0 / (1.0 + xp.exp(-x))


def test_sdcp_follows_algorithm_3(backend):
    """d = 3: ∇g frozen at θ(t), chain carried across inner steps, fresh ∇f each step
    (we read Alg. 3's never-reset Δθ as a typo)."""
    xp = backend.xp
    rbm0 = random_rbm(backend, 6, 4, scale=2.0, seed=2)  # coupled: where the chain starts shows
    V0, eta = _batch(backend, seed=3), 0.2
    got, _ = SDCP(SDCPConfig(lr=eta, d=3, k=2)).step(rbm0, {}, Batch(V0), backend.rng(4))

    rng = backend.rng(4)
    W, b, c = rbm0.W, rbm0.b_v, rbm0.b_h
    P0 = _sig(V0 @ W + c, xp)
    pW, pb, pc = V0.T @ P0 / len(V0), V0.mean(0), P0.mean(0)
    Vc = V0
    for _ in range(3):
        Vc = gibbs_chain(RBM(W, b, c), Vc, rng, 2)
        Pn = _sig(Vc @ W + c, xp)
        W, b, c = (
            W + eta * (pW - Vc.T @ Pn / len(Vc)),
            b + eta * (pb - Vc.mean(0)),
            c + eta * (pc - Pn.mean(0)),
        )
    _assert_same(got, RBM(W, b, c), backend, rtol=1e-12, atol=1e-12)


def _random_centered(backend, m, n, seed):
    rng = np.random.default_rng(seed)
    return CenteredRBM(
        random_rbm(backend, m, n, seed=seed),
        backend.asarray(rng.uniform(0, 1, m)),
        backend.asarray(rng.uniform(0, 1, n)),
    )


def test_centered_to_plain_keeps_log_z_and_every_log_p(backend):
    """Enumerating every (v, h) of the centered energy gives the plain RBM's log Z and log p(v)."""
    xp = backend.xp
    centered = _random_centered(backend, 5, 4, seed=6)
    plain = centered.to_plain()
    v, h = backend.asarray(all_binary(5)), backend.asarray(all_binary(4))
    # −E(v, h) for all 32 × 16 pairs, centered form
    neg_e = xp.stack([-centered.energy(v, xp.broadcast_to(hh, (32, 4))) for hh in h], axis=1)
    log_pv_unnorm = np.logaddexp.reduce(backend.to_numpy(neg_e), axis=1)
    log_z_centered = np.logaddexp.reduce(log_pv_unnorm)
    log_z_plain = log_partition(plain)
    log_p_plain = -backend.to_numpy(free_energy(plain, v)) - log_z_plain
    np.testing.assert_allclose(log_pv_unnorm - log_z_centered, log_p_plain, rtol=0, atol=1e-10)
    # the energies differ by the constant μᵀWλ − bᵀμ − cᵀλ, so log Z does too
    W, b, c, mu, lam = (
        backend.to_numpy(a)
        for a in (centered.W, centered.params.b_v, centered.params.b_h, centered.mu, centered.lam)
    )
    np.testing.assert_allclose(log_z_centered, log_z_plain + mu @ W @ lam - b @ mu - c @ lam, rtol=1e-12)
    # and back: from_plain inverts to_plain
    again = CenteredRBM.from_plain(plain, centered.mu, centered.lam)
    _assert_same(again.params, centered.params, backend, rtol=1e-12, atol=1e-12)


def test_moving_offsets_leaves_the_distribution_unchanged(backend):
    centered = _random_centered(backend, 5, 4, seed=7)
    moved = centered.move_offsets(centered.mu * 0.3 + 0.1, centered.lam * 0.5 + 0.2)
    _assert_same(moved.to_plain(), centered.to_plain(), backend, rtol=1e-12, atol=1e-12)


def _csdcp_reference(backend, rbm, V0, rng, eta, d, k, nu, lam0):  # nu: (ν_μ, ν_λ)
    """dcp Alg. 4 as printed, in centered coordinates, W visible × hidden."""
    xp = backend.xp
    mu, lam = backend.asarray(np.full(V0.shape[1], 0.4)), xp.full(rbm.n_hidden, lam0)
    W, b, c = rbm.W, rbm.b_v + rbm.W @ lam, rbm.b_h + rbm.W.T @ mu  # plain → centered
    B = len(V0)
    Hp = _sig((V0 - mu) @ W + c, xp)
    mu_b, lam_b = V0.mean(0), Hp.mean(0)
    Vn = V0
    for step in range(d):
        Vn = gibbs_chain(RBM(W, b - W @ lam, c - W.T @ mu), Vn, rng, k)
        Hn = _sig((Vn - mu) @ W + c, xp)
        nu_mu, nu_lam = nu
        b = b + nu_lam * (W @ (lam_b - lam))
        c = c + nu_mu * (W.T @ (mu_b - mu))
        mu, lam = (1 - nu_mu) * mu + nu_mu * mu_b, (1 - nu_lam) * lam + nu_lam * lam_b
        if step == 0:
            gW_pos = (V0 - mu).T @ (Hp - lam) / B
        gW = gW_pos - (Vn - mu).T @ (Hn - lam) / B
        W, b, c = W + eta * gW, b + eta * (V0.mean(0) - Vn.mean(0)), c + eta * (Hp.mean(0) - Hn.mean(0))
    return RBM(W, b - W @ lam, c - W.T @ mu), mu, lam


@pytest.mark.parametrize("d", [1, 3])
def test_csdcp_follows_algorithm_4(backend, d):
    # coupled enough that where an inner step's chain starts shows in its draws (at scale 0.3 a
    # chain restarted from the batch drew the very same states)
    rbm = random_rbm(backend, 6, 4, scale=2.0, seed=8)
    V0, eta, nu = _batch(backend, seed=9), 0.3, (0.2, 0.35)  # the two offsets' rates apart
    learner = CSDCP(CSDCPConfig(lr=eta, d=d, k=2, nu_mu=nu[0], nu_lam=nu[1], lam0=0.5))
    state = learner.init_state(rbm, Batch(V0), None)
    np.testing.assert_allclose(backend.to_numpy(state["mu"]), backend.to_numpy(V0.mean(0)))
    state = {**state, "mu": backend.asarray(np.full(6, 0.4))}  # offsets away from this batch's mean
    got, new_state = learner.step(rbm, state, Batch(V0), backend.rng(10))
    want, mu, lam = _csdcp_reference(backend, rbm, V0, backend.rng(10), eta, d, 2, nu, 0.5)
    _assert_same(got, want, backend, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(backend.to_numpy(new_state["mu"]), backend.to_numpy(mu), rtol=1e-12)
    np.testing.assert_allclose(backend.to_numpy(new_state["lam"]), backend.to_numpy(lam), rtol=1e-12)


def test_cg_is_csdcp_with_one_inner_step(backend):
    rbm = random_rbm(backend, 6, 4, scale=0.3, seed=11)
    V0 = _batch(backend, seed=12)
    cg, cs = CG(CGConfig(lr=0.2, k=5)), CSDCP(CSDCPConfig(lr=0.2, d=1, k=5))
    data = Batch(V0)
    a, sa = cg.step(rbm, cg.init_state(rbm, data, None), data, backend.rng(13))
    b, sb = cs.step(rbm, cs.init_state(rbm, data, None), data, backend.rng(13))
    _assert_same(a, b, backend, rtol=0, atol=0)


def test_learners_run_many_trials_as_one_computation(backend):
    """A (T, m, n) model and one shared batch: each learner keeps T independent trials. From one
    shared initialisation, the T trials of a batched step must be distributed like T separate
    steps of the model alone with independent random streams: same mean update (within 5
    standard errors) and same spread. A chain shared by the trials would give no spread, chains
    or statistics mixed across trials too little (1/T of the variance for an average)."""
    xp = backend.xp
    T, m, n = 64, 6, 4
    rbm0 = random_rbm(backend, m, n, scale=0.3, seed=14)
    rbm = RBM(*(xp.array(xp.broadcast_to(a, (T,) + a.shape)) for a in (rbm0.W, rbm0.b_v, rbm0.b_h)))
    data = Batch(_batch(backend, seed=15))

    def flat(model):  # each trial's parameters as one row, (T, m·n + m + n)
        rows = [getattr(model, k).reshape(model.W.shape[:-2] + (-1,)) for k in ("W", "b_v", "b_h")]
        return backend.to_numpy(xp.concatenate(rows, axis=-1))

    for learner in (
        CD(CDConfig(k=2)),
        SDCP(SDCPConfig(d=2, k=2)),
        CSDCP(CSDCPConfig(d=2, k=2)),
        CG(CGConfig(k=2)),
        ssd(k=2, lr=0.01),
    ):
        state = learner.init_state(rbm, data, backend.rng(0))
        new, state = learner.step(rbm, state, data, backend.rng(1))
        assert new.W.shape == (T, m, n) and new.b_v.shape == (T, m) and new.b_h.shape == (T, n)
        together = flat(new) - flat(rbm)
        alone = np.stack(
            [
                flat(
                    learner.step(
                        rbm0, learner.init_state(rbm0, data, backend.rng(0)), data, backend.rng(100 + s)
                    )[0]
                )
                - flat(rbm0)
                for s in range(T)
            ]
        )
        name = learner.config.name
        spread_together, spread_alone = together.var(axis=0).sum(), alone.var(axis=0).sum()
        assert spread_alone > 0, name
        assert 0.5 < spread_together / spread_alone < 2.0, (name, spread_together, spread_alone)
        se = np.sqrt(together.var(axis=0, ddof=1) / T + alone.var(axis=0, ddof=1) / T)
        gap = np.abs(together.mean(axis=0) - alone.mean(axis=0))
        assert np.all(gap <= 5 * se + 1e-12), (name, np.max(gap / np.maximum(se, 1e-300)))


class _HalfRNG:
    """Uniforms that are all 0.5: sampling becomes thresholding, the same for any batch shape."""

    def __init__(self, xp):
        self.xp = xp

    def random(self, shape, dtype=None):
        return self.xp.full(shape, 0.5, dtype=dtype)


def test_a_trial_of_a_batched_step_equals_the_same_step_alone(backend):
    """With deterministic sampling, trial t of a (T, m, n) step is the step of model t alone:
    nothing leaks between trials (statistics, chains, offsets, the SSD polar factor)."""
    T, m, n = 3, 6, 4
    rng = np.random.default_rng(21)
    rbm = RBM(
        *(
            backend.asarray(a)
            for a in (
                0.5 * rng.standard_normal((T, m, n)),
                0.3 * rng.standard_normal((T, m)),
                0.3 * rng.standard_normal((T, n)),
            )
        )
    )
    V0 = _batch(backend, seed=22)
    from rbmlab.learners.pcd import PCD, PCDConfig

    def two_steps(learner, model):  # the state of the first step feeds the second
        state = learner.init_state(model, Batch(V0), backend.rng(0))
        for _ in range(2):
            model, state = learner.step(model, state, Batch(V0), _HalfRNG(backend.xp))
        return model, state

    for learner in (
        CD(CDConfig(k=2)),
        PCD(PCDConfig(k=2)),
        SDCP(SDCPConfig(d=3, k=2)),
        CSDCP(CSDCPConfig(d=3, k=2)),
        CG(CGConfig(k=2)),
        ssd(k=2, lr=0.01),
    ):
        together, state_t = two_steps(learner, rbm)
        for t in range(T):
            alone, state_1 = two_steps(learner, rbm.trial(t))
            _assert_same(together.trial(t), alone, backend, rtol=1e-6, atol=1e-6)
            for key, value in state_1.items():
                np.testing.assert_allclose(
                    backend.to_numpy(state_t[key][t]), backend.to_numpy(value), rtol=1e-6, atol=1e-6
                )


def test_ssd_step_of_a_diverged_trial_is_nan_and_the_others_go_on(backend):
    G = np.random.default_rng(23).standard_normal((3, 6, 4))
    G[1, 2, 3] = np.nan
    polar, nuclear = polar_factor(backend.asarray(G))
    polar, nuclear = backend.to_numpy(polar), backend.to_numpy(nuclear)
    assert np.isnan(polar[1]).all() and np.isnan(nuclear[1])
    for t in (0, 2):
        U, s, Vt = np.linalg.svd(G[t], full_matrices=False)
        np.testing.assert_allclose(polar[t], U @ Vt, atol=1e-10)
        np.testing.assert_allclose(nuclear[t], s.sum(), rtol=1e-12)


@pytest.mark.parametrize("shape", [(7, 4), (4, 7), (3, 6, 5)])
def test_polar_factor_is_u_vt_of_the_svd(backend, shape):
    G = np.random.default_rng(16).standard_normal(shape)
    polar, nuclear = polar_factor(backend.asarray(G))
    U, s, Vt = np.linalg.svd(G, full_matrices=False)
    np.testing.assert_allclose(backend.to_numpy(polar), U @ Vt, atol=1e-10)
    np.testing.assert_allclose(backend.to_numpy(nuclear), s.sum(-1), rtol=1e-12)


def test_polar_factor_of_a_rank_deficient_matrix_spans_its_range(backend):
    rng = np.random.default_rng(17)
    G = rng.standard_normal((8, 2)) @ rng.standard_normal((2, 5))  # rank 2
    polar, nuclear = polar_factor(backend.asarray(G))
    U, s, Vt = np.linalg.svd(G, full_matrices=False)
    np.testing.assert_allclose(backend.to_numpy(polar), U[:, :2] @ Vt[:2], atol=1e-8)
    np.testing.assert_allclose(float(nuclear), s[:2].sum(), rtol=1e-10)


def test_ssd_step_is_the_sharp_operator_formula(backend):
    """W += lr ‖G‖_S1 U Vᵀ, b += bias_lr ‖g‖₁ sign(g), G the CD-k gradient from the same stream."""
    rbm = random_rbm(backend, 6, 4, scale=0.3, seed=18)
    V0 = _batch(backend, seed=19)
    got, _ = ssd(lr=0.01, bias_lr=0.02, k=3).step(rbm, {}, Batch(V0), backend.rng(20))
    g = difference(rbm.statistics(V0), rbm.statistics(gibbs_chain(rbm, V0, backend.rng(20), 3)))
    G, gb, gc = (backend.to_numpy(g[k]) for k in ("W", "b_v", "b_h"))
    U, s, Vt = np.linalg.svd(G, full_matrices=False)
    want = RBM(
        backend.to_numpy(rbm.W) + 0.01 * s.sum() * U @ Vt,
        backend.to_numpy(rbm.b_v) + 0.02 * np.abs(gb).sum() * np.sign(gb),
        backend.to_numpy(rbm.b_h) + 0.02 * np.abs(gc).sum() * np.sign(gc),
    )
    _assert_same(got.map(backend.to_numpy), want, backend, rtol=1e-9, atol=1e-12)


def test_a_diverged_trial_is_set_aside_and_the_others_go_on():
    from rbmlab.run.runner import _trial_records, newly_diverged

    W = np.zeros((3, 4, 2))
    W[1, 0, 0] = np.nan
    rbm = RBM(W, np.zeros((3, 4)), np.zeros((3, 2)))
    assert rbm.finite_trials() == [True, False, True]
    rows = [{"trial": 0, "x": 1.0}, {"trial": 2, "x": float("inf")}]
    assert newly_diverged(rbm.finite_trials(), rows, {}) == [1, 2]
    assert newly_diverged(rbm.finite_trials(), rows, {1: 5}) == [2]
    records = _trial_records(rbm, [{"trial": 0, "x": 1.0}], {1: 5, 2: 7})
    assert records["diverged_trials"] == [1, 2]
    assert records["final_trials"][0] == {"trial": 0, "x": 1.0}
    assert records["final_trials"][1] == {"trial": 1, "status": "diverged", "diverged_epoch": 5}


def test_the_polar_factor_of_a_float32_gradient_is_formed_in_float64():
    """A float32 G with singular values from 1 down to 1e-3: G^T G spans 1e-6 of float32's 1e-7
    resolution, so formed in float32 its small directions come out wrong by ~2e-3; formed in
    float64 and rounded once to float32, U V^T is right to float32's rounding (~1e-6)."""
    rng = np.random.default_rng(23)
    U, _ = np.linalg.qr(rng.standard_normal((40, 10)))
    V, _ = np.linalg.qr(rng.standard_normal((10, 10)))
    s = np.logspace(0, -3, 10)
    G = ((U * s) @ V.T).astype(np.float32)
    polar, nuclear = polar_factor(G)
    Ug, sg, Vtg = np.linalg.svd(G.astype(np.float64), full_matrices=False)
    assert polar.dtype == np.float32
    np.testing.assert_allclose(polar, Ug @ Vtg, atol=2e-5)
    assert float(nuclear) == pytest.approx(sg.sum(), rel=1e-6)
