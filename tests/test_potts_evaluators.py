"""AIS and pseudo-likelihood on RBMs with Potts (categorical) visible units, against enumeration."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from rbmlab.errors import RbmlabError
from rbmlab.evaluators import ais
from rbmlab.evaluators.ais import AIS, AISConfig
from rbmlab.evaluators.base import Context
from rbmlab.evaluators.pseudo_likelihood import (
    PseudoLikelihood,
    PseudoLikelihoodConfig,
    pseudo_log_likelihood,
)
from rbmlab.models.rbm import RBM
from rbmlab.units import unit_type

N, Q, H = 4, 3, 5
POTTS = unit_type("potts", Q)


def potts_rbm(seed: int = 0, w_std: float = 1.0, n: int = N, q: int = Q, h: int = H) -> RBM:
    g = np.random.default_rng(seed)
    return RBM(
        w_std * g.standard_normal((n * q, h)),
        g.standard_normal(n * q),
        0.5 * g.standard_normal(h),
        visible="potts",
        visible_states=str(q),
    )


def all_codes(n: int = N, q: int = Q) -> np.ndarray:
    return np.array(list(itertools.product(range(q), repeat=n)))


def brute_neg_free_energy(rbm: RBM, codes) -> np.ndarray:
    """−F(v) of integer-coded rows, summing all 2^H hidden states of −E(v, h) (float64)."""
    v = POTTS.encode(np.asarray(codes), np.float64)
    hs = np.array(list(itertools.product([0.0, 1.0], repeat=rbm.n_hidden)))
    neg_e = v @ rbm.W @ hs.T + (v @ rbm.b_v)[:, None] + (hs @ rbm.b_h)[None, :]
    return logsumexp(neg_e, axis=1)


def brute_log_z(rbm: RBM) -> float:
    """logsumexp of −E(v, h) over all Q^N × 2^H joint states."""
    return float(logsumexp(brute_neg_free_energy(rbm, all_codes())))


# ------------------------------------------------------------------ AIS
def test_base_log_z_is_the_base_models_enumerated_log_z():
    b = np.random.default_rng(3).standard_normal(N * Q)
    base = RBM(np.zeros((N * Q, H)), b, np.zeros(H), visible="potts", visible_states=str(Q))
    assert ais._log_z_base(b, H, POTTS) == pytest.approx(brute_log_z(base), abs=1e-12)


def test_base_samples_are_one_hot_with_the_base_models_marginals():
    rbm = potts_rbm()
    b = np.random.default_rng(4).standard_normal(N * Q)
    v = ais._base_samples(rbm, np.random.default_rng(5), b, 20000)
    groups = v.reshape(-1, N, Q)
    assert set(np.unique(v)) == {0.0, 1.0} and np.all(groups.sum(axis=2) == 1)
    p = np.exp(b.reshape(N, Q) - logsumexp(b.reshape(N, Q), axis=1, keepdims=True))
    np.testing.assert_allclose(groups.mean(axis=0), p, atol=4 * np.sqrt(0.25 / 20000))


@pytest.mark.parametrize(
    "kind, n_t, chains, seed, base_rate",
    [
        ("linear", 1000, 100, 1, True),  # the base-rate start (field_for_mean of the data mean)
        ("linear", 300, 400, 2, False),  # uniform base model, a shorter schedule, more chains
    ],
)
def test_ais_log_z_of_a_potts_rbm_within_its_interval(kind, n_t, chains, seed, base_rate):
    rbm = potts_rbm()
    truth = brute_log_z(rbm)
    assert rbm.exact_log_partition() == pytest.approx(truth, abs=1e-9)
    mean = np.random.default_rng(seed).dirichlet(np.ones(Q), size=N).ravel() if base_rate else None
    base = ais.base_rate_bias(mean, units=POTTS) if base_rate else np.zeros(N * Q)
    res = ais.ais_log_partition(
        rbm,
        np.random.default_rng(seed),
        base_bias=base,
        betas=ais.temperature_schedule(kind, n_t),
        n_chains=chains,
    )
    assert res.log_z_lower <= truth <= res.log_z_upper
    assert abs(res.log_z - truth) < 0.05
    assert res.log_z_base == pytest.approx(ais._log_z_base(base, H, POTTS))


def test_reverse_ais_of_a_potts_rbm_within_its_interval():
    rbm = potts_rbm(seed=1)
    truth = brute_log_z(rbm)
    init = ais.target_samples(rbm, np.random.default_rng(6), 200)  # exact: 2^5 hidden states
    assert np.all(init.reshape(-1, N, Q).sum(axis=2) == 1)
    res = ais.reverse_ais_log_partition(
        rbm,
        np.random.default_rng(7),
        base_bias=np.zeros(N * Q),
        betas=ais.temperature_schedule("linear", 500),
        init_v=init,
    )
    assert res.log_z_lower <= truth <= res.log_z_upper


@pytest.mark.slow
def test_ais_default_schedule_on_a_potts_rbm():
    rbm = potts_rbm(seed=2)
    truth = brute_log_z(rbm)
    res = ais.ais_log_partition(
        rbm,
        np.random.default_rng(8),
        base_bias=np.zeros(N * Q),
        betas=ais.temperature_schedule("salakhutdinov"),
        n_chains=100,
    )
    assert res.log_z_lower <= truth <= res.log_z_upper


def test_ais_evaluator_scores_a_potts_rbm_and_refuses_potts_hidden_units():
    rbm = potts_rbm()
    codes = all_codes()[::7]
    data = POTTS.encode(codes, np.float64)
    cfg = AISConfig(schedule="linear", n_temperatures=500, n_chains=100, exact_check=True)
    batch = type("Batch", (), {"inputs": data})()
    ctx = Context(rng=np.random.default_rng(0), final=True, data_mean=data.mean(axis=0))
    m = AIS(cfg).evaluate(rbm, {"test": batch}, ctx)
    assert m["log_z_within"] == 1.0
    exact_ll = float(np.mean(brute_neg_free_energy(rbm, codes))) - brute_log_z(rbm)
    assert m["test_log_likelihood_lower"] <= exact_ll <= m["test_log_likelihood_upper"]
    hidden_potts = RBM(
        np.zeros((N * Q, 2 * Q)),
        rbm.b_v,
        np.zeros(2 * Q),
        visible="potts",
        hidden="potts",
        visible_states=str(Q),
        hidden_states=str(Q),
    )
    with pytest.raises(RbmlabError, match="evaluator=ais: written for Bernoulli .* hidden units"):
        AIS(cfg).evaluate(hidden_potts, {"test": batch}, ctx)


# ------------------------------------------------------------------ pseudo-likelihood
def enumerated_conditionals(rbm: RBM, codes: np.ndarray) -> np.ndarray:
    """(rows, units) log p(v_i | v_−i): −F of the row with unit i set to each of its Q states."""
    out = np.zeros(codes.shape)
    for r, i in itertools.product(range(codes.shape[0]), range(codes.shape[1])):
        alts = np.repeat(codes[r : r + 1], Q, axis=0)
        alts[:, i] = np.arange(Q)
        neg_f = brute_neg_free_energy(rbm, alts)
        out[r, i] = neg_f[codes[r, i]] - logsumexp(neg_f)
    return out


def test_potts_pseudo_likelihood_is_the_enumerated_conditionals():
    rbm = potts_rbm(seed=3)
    codes = np.random.default_rng(9).integers(0, Q, (9, N))
    cond = enumerated_conditionals(rbm, codes)
    v = POTTS.encode(codes, np.float64)
    np.testing.assert_allclose(pseudo_log_likelihood(rbm, v, chunk_size=4), cond.sum(axis=1), atol=1e-10)
    # every unit drawn: the same sum; one unit drawn: N × its term, the unit the uniforms' argsort picks
    np.testing.assert_allclose(
        pseudo_log_likelihood(rbm, v, rng=np.random.default_rng(1), n_units=N), cond.sum(axis=1), atol=1e-10
    )
    picked = np.argsort(np.random.default_rng(2).random((9, N)), axis=1)[:, 0]
    np.testing.assert_allclose(
        pseudo_log_likelihood(rbm, v, rng=np.random.default_rng(2), n_units=1),
        N * cond[np.arange(9), picked],
        atol=1e-10,
    )


def test_pl_evaluator_counts_potts_units_not_columns():
    rbm = potts_rbm()
    batch = type("Batch", (), {"inputs": POTTS.encode(all_codes()[:5], np.float64)})()
    ctx = Context(rng=np.random.default_rng(0), final=True)
    PseudoLikelihood(PseudoLikelihoodConfig(n_units=N)).evaluate(rbm, {"test": batch}, ctx)
    with pytest.raises(RbmlabError, match=f"evaluator.n_units: {N + 1} exceeds the {N} visible units"):
        PseudoLikelihood(PseudoLikelihoodConfig(n_units=N + 1)).evaluate(rbm, {"test": batch}, ctx)
