"""The layered Boltzmann machine (model=dbm) at every depth, against exact answers: one hidden
layer is the RBM (same log Z, log p̃, statistics, TAP solution, and block Gibbs draws bit for
bit); a unit type per layer enumerates as the energy says; depth is the config's, with no
layer held that the model does not have; the per-layer unit setting is checked in one line."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.special import logsumexp

from rbmlab.backend import host_rng
from rbmlab.errors import RbmlabError
from rbmlab.inference import INFERENCE, tap
from rbmlab.models import MODELS
from rbmlab.models.dbm import DBM
from rbmlab.models.rbm import RBM
from rbmlab.run.checkpoint import load_checkpoint, save_checkpoint
from rbmlab.units import unit_type
from rbmlab.units.requirements import check_unit_types


def rbm(units: str, seed: int = 0, n=(5, 3)) -> RBM:
    rng = np.random.default_rng(seed)
    return RBM(
        rng.normal(0, 0.8, n), rng.normal(0, 0.5, n[0]), rng.normal(0, 0.5, n[1]), visible=units, hidden=units
    )


def states(n: int, units: str) -> np.ndarray:
    lo, hi = unit_type(units).values
    return lo + (hi - lo) * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.float64)


@pytest.mark.parametrize("units", ["bernoulli", "spin"])
def test_one_hidden_layer_is_the_rbm(units):
    r = rbm(units)
    m = DBM.from_rbm(r)
    assert m.depth == 1 and set(m.arrays()) == {"W1", "b0", "b1"}
    x = states(5, units)
    assert m.exact_log_partition() == pytest.approx(r.exact_log_partition(), abs=1e-12)
    np.testing.assert_allclose(m.log_unnormalized(x), r.log_unnormalized(x), atol=1e-12)
    ours, theirs = m.statistics(x), r.statistics(x)
    for a, b in (("W1", "W"), ("b0", "b_v"), ("b1", "b_h")):
        np.testing.assert_allclose(ours[a], theirs[b], atol=1e-12)
    # the mean-field bound is log p̃ itself: one hidden layer sums out given x
    np.testing.assert_allclose(m.log_unnormalized_bound(x, 3), r.log_unnormalized(x), atol=1e-10)
    back = m.as_rbm()
    for a, b in (("W", r.W), ("b_v", r.b_v), ("b_h", r.b_h)):
        np.testing.assert_array_equal(getattr(back, a), b)
    # TAP sees one stack: the free solutions agree to the last digit the solver reaches
    layers, couplings = m.tap_stack()
    rbm_layers = r.tap_layers()
    got = tap.solve_layers(couplings, layers, x[:4], tol=1e-14, max_iter=2000)
    want = tap.solve_layers([r.W], list(rbm_layers), x[:4], tol=1e-14, max_iter=2000)
    for a, b in zip(got.a + got.c, want.a + want.c):
        np.testing.assert_allclose(a, b, atol=1e-12)


@pytest.mark.parametrize("units", ["bernoulli", "spin"])
def test_block_gibbs_draws_the_same_chains_for_the_rbm_and_its_layered_form(units):
    """The same random stream, the same conditionals in the same order: bit-identical chains."""
    r = rbm(units, seed=1).astype(np.float32)
    m = DBM.from_rbm(r)
    x = states(5, units).astype(np.float32)
    sampler = INFERENCE.build(INFERENCE.parse("block_gibbs"))
    a = sampler.run(r, x, host_rng(4), 5)
    b = sampler.run(m, m.chain_start(x, host_rng(9)), host_rng(4), 5)
    np.testing.assert_array_equal(a, b)


def joint_log_weights(m: DBM):
    """ln P̃ of every joint state, each layer in its own unit type's values (the energy written
    out here, apart from the package's sums)."""
    n = [b.shape[-1] for b in m.biases()]
    bits = ((np.arange(2 ** sum(n))[:, None] >> np.arange(sum(n))) & 1).astype(np.float64)
    layers = [
        u.values[0] + (u.values[1] - u.values[0]) * part
        for u, part in zip(m.layer_units, np.split(bits, np.cumsum(n)[:-1], axis=1))
    ]
    log_w = sum(h @ b for h, b in zip(layers, m.biases()))
    return layers, log_w + sum(
        ((layers[l - 1] @ W) * layers[l]).sum(-1) for l, W in enumerate(m.couplings(), 1)
    )


@pytest.mark.parametrize("hidden", ["spin,bernoulli", "bernoulli,spin,spin"])
def test_a_unit_type_per_layer_enumerates_as_the_energy_says(hidden):
    depth = len(hidden.split(","))
    n = [3, 2, 2, 2][: depth + 1]
    rng = np.random.default_rng(depth)
    m = DBM.of(
        [rng.normal(0, 0.9, (p, q)) for p, q in zip(n, n[1:])],
        [rng.normal(0, 0.5, k) for k in n],
        hidden=hidden,
    )
    assert [u.values for u in m.layer_units[1:]] == [unit_type(h).values for h in hidden.split(",")]
    layers, log_w = joint_log_weights(m)
    assert m.exact_log_partition() == pytest.approx(float(logsumexp(log_w)), abs=1e-10)
    x = np.unique(layers[0], axis=0)
    want = [float(logsumexp(log_w[np.all(layers[0] == v, axis=1)])) for v in x]
    np.testing.assert_allclose(m.log_unnormalized(x), want, atol=1e-10)


def test_the_per_layer_setting_is_checked_and_kept(tmp_path):
    cfg = MODELS.parse({"name": "dbm", "n_hidden": [4, 3], "hidden_units": "spin,bernoulli"})
    m = DBM.initialize(cfg, xp=np, rng=np.random.default_rng(0), data_mean=np.full(5, 0.4), dtype="float32")
    back, _, _ = load_checkpoint(save_checkpoint(tmp_path / "m.npz", m))
    assert back.hidden == "spin,bernoulli" and [u.values for u in back.layer_units] == [
        (0, 1),
        (-1, 1),
        (0, 1),
    ]
    with pytest.raises(RbmlabError, match=r"^model.hidden_units: 3 unit types for 2 hidden layers"):
        MODELS.parse({"name": "dbm", "n_hidden": [4, 3], "hidden_units": "spin,spin,spin"})
    with pytest.raises(RbmlabError, match=r"^model.hidden_units: unknown unit type 'gauss'"):
        MODELS.parse({"name": "dbm", "hidden_units": "spin,gauss"})
    with pytest.raises(RbmlabError, match=r"setting hidden='spin,bernoulli' names 2 unit types for 3 hidden"):
        DBM.of([np.zeros((2, 2))] * 3, [np.zeros(2)] * 4, hidden="spin,bernoulli")
    # a component written for one type refuses a machine with any layer of another
    check_unit_types({"hidden": "spin,bernoulli"}, {"hidden": ("spin", "bernoulli")}, "who", str)
    for hidden in ("spin,bernoulli", "bernoulli,spin"):  # the first layer allowed or not
        with pytest.raises(
            RbmlabError, match=rf"^hidden: {hidden} hidden units; who is written for Bernoulli"
        ):
            check_unit_types({"hidden": hidden}, {"hidden": ("bernoulli",)}, "who", str)
