"""The layered Boltzmann machine (model=dbm) at every depth, against exact answers: one hidden
layer is the RBM (same log Z, log p̃, statistics, TAP solution, and block Gibbs draws bit for
bit); a unit type per layer enumerates as the energy says; depth is the config's, with no
layer held that the model does not have; the per-layer unit setting is checked in one line."""

from __future__ import annotations

import itertools

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


# ---------------------------------------------------------------- Potts (categorical) layers
def potts_machine(
    visible: str, hidden: str, units: list[int], vq: int = 2, hq: int = 2, seed: int = 0
) -> DBM:
    """A machine of ``units`` units per layer (a Potts layer's columns: units × q)."""
    types = [(visible, vq)] + [(h, hq) for h in (hidden.split(",") * len(units))[: len(units) - 1]]
    n = [k * (q if name == "potts" else 1) for k, (name, q) in zip(units, types)]
    rng = np.random.default_rng(seed)
    return DBM.of(
        [rng.normal(0, 0.9, (p, q)) for p, q in zip(n, n[1:])],
        [rng.normal(0, 0.5, k) for k in n],
        visible=visible,
        hidden=hidden,
        visible_states=vq,
        hidden_states=hq,
    )


def layer_values(units, columns: int) -> np.ndarray:
    """Every state of one layer, written out here: a Potts unit of q states as the q one-hot
    columns e_s of each code s, a binary unit as its two values."""
    if units.name == "potts":
        codes = np.array(list(itertools.product(range(units.q), repeat=columns // units.q)))
        return np.eye(units.q)[codes].reshape(len(codes), columns)
    return np.array(list(itertools.product(units.values, repeat=columns)), dtype=np.float64)


def every_joint_state(m: DBM):
    """(each layer's rows, ln P̃) over every joint state, by the energy (tap App. E, Eq. 119)."""
    per_layer = [layer_values(u, b.shape[-1]) for u, b in zip(m.layer_units, m.biases())]
    index = np.array(list(itertools.product(*(range(len(s)) for s in per_layer))))
    layers = [s[index[:, l]] for l, s in enumerate(per_layer)]
    log_w = sum(h @ b for h, b in zip(layers, m.biases()))
    return layers, log_w + sum(
        ((layers[l - 1] @ W) * layers[l]).sum(-1) for l, W in enumerate(m.couplings(), 1)
    )


POTTS_MACHINES = {  # visible, hidden, units per layer, visible q, hidden q
    "potts visible q=3, bernoulli and potts q=3 hidden": ("potts", "bernoulli,potts", [2, 2, 1], 3, 3),
    "bernoulli visible, potts q=4 and spin hidden": ("bernoulli", "potts,spin", [3, 2, 2], 2, 4),
}


@pytest.mark.parametrize("case", POTTS_MACHINES.values(), ids=POTTS_MACHINES.keys())
def test_potts_layers_enumerate_and_sum_out_as_the_energy_says(case):
    visible, hidden, units, vq, hq = case
    m = potts_machine(visible, hidden, units, vq, hq, seed=3)
    assert [u.width() for u in m.layer_units] == [vq if visible == "potts" else 1] + [
        hq if h == "potts" else 1 for h in hidden.split(",")
    ]
    layers, log_w = every_joint_state(m)
    assert m.exact_log_partition() == pytest.approx(float(logsumexp(log_w)), abs=1e-10)
    x = np.unique(layers[0], axis=0)
    want = np.array([float(logsumexp(log_w[np.all(layers[0] == v, axis=1)])) for v in x])
    np.testing.assert_allclose(m.log_unnormalized(x), want, atol=1e-10)
    bound = m.log_unnormalized_bound(x, 30)  # a lower bound (Jensen), within a nat here
    assert np.all(bound <= want + 1e-10) and np.all(bound > want - 1.0)
    # chain statistics: the odd layers summed out given the even ones, as the enumeration says
    even = np.concatenate([layers[l] for l in range(0, m.depth + 1, 2)], axis=1)
    rows = even[[0, 5, len(even) // 2, -1]]
    got = m.statistics(rows)
    for name in ("W1", "W2", "b1"):
        want_stat = 0.0
        for row in rows:
            match = np.all(even == row, axis=1)
            w = np.exp(log_w[match] - logsumexp(log_w[match]))
            if name == "b1":
                want_stat = want_stat + w @ layers[1][match] / len(rows)
            else:
                l = int(name[1:])
                pair = layers[l - 1][match][:, :, None] * layers[l][match][:, None, :]
                want_stat = want_stat + np.tensordot(w, pair, axes=1) / len(rows)
        np.testing.assert_allclose(got[name], want_stat, atol=1e-10, err_msg=name)


def test_block_gibbs_by_parity_leaves_a_potts_machine_invariant():
    """Chains from exact draws of p(even layers) (a Potts visible layer of q = 3 and a Potts
    layer 2, Bernoulli layer 1 between them) stay so distributed after 2 sweeps: each of the 27
    states' frequency among 60,000 chains within 5 standard errors of its probability."""
    visible, hidden, units, vq, hq = POTTS_MACHINES["potts visible q=3, bernoulli and potts q=3 hidden"]
    m = potts_machine(visible, hidden, units, vq, hq, seed=4).astype(np.float32)
    layers, log_w = every_joint_state(m.astype(np.float64))
    even = np.concatenate([layers[0], layers[2]], axis=1)
    keys, inverse = np.unique(even, axis=0, return_inverse=True)
    p = np.bincount(inverse.ravel(), weights=np.exp(log_w - logsumexp(log_w)), minlength=len(keys))
    n = 60_000
    start = keys[np.random.default_rng(1).choice(len(keys), size=n, p=p)].astype(np.float32)
    end = INFERENCE.build(INFERENCE.parse("block_gibbs")).run(m, start, host_rng(2), 2)
    assert end.shape == start.shape and not np.array_equal(end, start)
    assert np.all(end.reshape(n, -1, 3).sum(-1) == 1)  # one-hot: one state per Potts unit
    found = (end[:, None, :] == keys[None]).all(-1)
    assert np.all(found.sum(1) == 1)
    freq = found.mean(0)
    se = np.sqrt(p * (1 - p) / n)
    assert np.all(np.abs(freq - p) < 5 * se + 1e-12), np.max(np.abs(freq - p) / se)


@pytest.mark.parametrize("states", [(3, 2), (2, 4)], ids=["potts visible q=3", "potts hidden q=4"])
def test_an_rbm_with_potts_units_is_its_layered_form(states):
    vq, hq = states
    visible, hidden = ("potts" if vq > 2 else "bernoulli"), ("potts" if hq > 2 else "bernoulli")
    rng = np.random.default_rng(7)
    m_cols, n_cols = 3 * vq if vq > 2 else 4, 2 * hq if hq > 2 else 3
    r = RBM(
        rng.normal(0, 0.8, (m_cols, n_cols)),
        rng.normal(0, 0.5, m_cols),
        rng.normal(0, 0.5, n_cols),
        visible=visible,
        hidden=hidden,
        visible_states=str(vq),
        hidden_states=str(hq),
    )
    m = DBM.from_rbm(r)
    assert m.layer_units == (r.visible_units, r.hidden_units) and m.data_dimension == r.data_dimension
    x = layer_values(r.visible_units, m_cols)
    assert m.exact_log_partition() == pytest.approx(r.exact_log_partition(), abs=1e-12)
    np.testing.assert_allclose(m.log_unnormalized(x), r.log_unnormalized(x), atol=1e-12)
    np.testing.assert_allclose(m.log_unnormalized_bound(x, 2), r.log_unnormalized(x), atol=1e-10)
    ours, theirs = m.statistics(x), r.statistics(x)
    for a, b in (("W1", "W"), ("b0", "b_v"), ("b1", "b_h")):
        np.testing.assert_allclose(ours[a], theirs[b], atol=1e-12)
    back = m.as_rbm()
    assert (back.visible, back.hidden, back.visible_states, back.hidden_states) == (
        visible,
        hidden,
        str(vq),
        str(hq),
    )
    # the same random stream, the same conditionals in the same order: bit-identical chains
    r32, m32 = r.astype(np.float32), m.astype(np.float32)
    sampler = INFERENCE.build(INFERENCE.parse("block_gibbs"))
    a = sampler.run(r32, x.astype(np.float32), host_rng(4), 5)
    b = sampler.run(m32, m32.chain_start(x.astype(np.float32), host_rng(9)), host_rng(4), 5)
    np.testing.assert_array_equal(a, b)


def test_potts_settings_are_configured_checked_and_kept(tmp_path):
    cfg = MODELS.parse(
        {
            "name": "dbm",
            "n_hidden": [2, 3],
            "visible_units": "potts",
            "visible_states": 3,
            "hidden_units": "potts,bernoulli",
            "hidden_states": 4,
        }
    )
    assert DBM.sizes(cfg, 5) == {"n_visible": 15, "n_hidden1": 8, "n_hidden2": 3}
    mean = np.tile([0.2, 0.3, 0.5], 5)
    m = DBM.initialize(cfg, xp=np, rng=np.random.default_rng(0), data_mean=mean, dtype="float32")
    assert [b.shape for b in m.biases()] == [(15,), (8,), (3,)] and m.b0.dtype == np.float32
    np.testing.assert_allclose(m.visible_units.mean(m.b0), mean, atol=1e-6)  # the base rates
    assert m.data_dimension == 5 and m.data_mismatch(15) == "n_visible=5 units of 3 states"
    back, _, _ = load_checkpoint(save_checkpoint(tmp_path / "m.npz", m))
    assert (back.visible_states, back.hidden_states) == ("3", "4") and back.layer_units == m.layer_units
    for key, extra in (
        ("visible_states", {"visible_states": 3}),
        ("hidden_states", {"hidden_units": "spin,bernoulli", "hidden_states": 5}),
    ):
        with pytest.raises(
            RbmlabError,
            match=rf"^model.{key}: \S+ units have 2 states, got \d \(q states per unit: "
            rf"model.{key[:-7]}_units=potts\)$",
        ):
            MODELS.parse({"name": "dbm", "n_hidden": [4, 3], **extra})
    with pytest.raises(
        RbmlabError, match=r"^checkpoint: model dbm: 8 hidden1 columns do not make units of 3"
    ):
        DBM.of(
            [np.zeros((3, 8)), np.zeros((8, 2))],
            [np.zeros(3), np.zeros(8), np.zeros(2)],
            hidden="potts,spin",
            hidden_states=3,
        )


def test_what_needs_one_unit_type_per_parity_or_tap_refuses_potts_layers_in_one_line():
    """PT and AIS on a DBM use the RBM between its parities (one unit type and q on each); TAP
    has no Potts maths: each refuses before any work, naming the key."""
    from rbmlab.evaluators import EVALUATORS
    from rbmlab.learners import LEARNERS
    from rbmlab.units.requirements import check_configured_units

    def configured(**model):
        return MODELS.parse({"name": "dbm", "visible_units": "potts", "visible_states": 3, **model})

    pt = LEARNERS.build(LEARNERS.parse({"name": "pcd", "sampler": "parallel_tempering"}))
    ais = EVALUATORS.build(EVALUATORS.parse("ais"))
    deep = configured(n_hidden=[3, 2])  # layers 0 (potts) and 2 (bernoulli) are the even parity
    for learner, evaluator, who in (
        (pt, None, "learner.sampler=parallel_tempering"),
        (None, ais, "evaluator=ais"),
    ):
        with pytest.raises(
            RbmlabError,
            match=rf"^model.hidden_units: .*its even layers are potts \(q=3\) and bernoulli\b.*\({who}\)$",
        ):
            check_configured_units(deep, DBM, learner, evaluator)
    check_configured_units(configured(n_hidden=[3]), DBM, pt, ais)  # one hidden layer: an RBM
    check_configured_units(
        configured(n_hidden=[3, 2], hidden_units="bernoulli,potts", hidden_states=3), DBM, pt
    )
    for learner, evaluator in (
        (LEARNERS.build(LEARNERS.parse("tap_dbm")), None),
        (None, EVALUATORS.build(EVALUATORS.parse("tap_dbm"))),
    ):
        with pytest.raises(
            RbmlabError, match=r"^model.visible_units: potts visible units; \S+=tap_dbm is written for"
        ):
            check_configured_units(configured(n_hidden=[3, 2]), DBM, learner, evaluator)
    with pytest.raises(
        RbmlabError, match=r"no RBM between its parities .*its even layers are potts \(q=3\) and bernoulli$"
    ):
        potts_machine("potts", "bernoulli", [2, 2, 1], 3).as_rbm()


def test_a_dbm_with_potts_layers_trains_as_a_run(tmp_path):
    """Integer-coded categorical data (potts_samples, q = 3) one-hot encoded for a Potts visible
    layer, a Potts layer 2 of its own q: PCD by block Gibbs by parity, scored exactly."""
    from rbmlab.hydra_app import validated_run_config
    from rbmlab.run.runner import train

    cfg = validated_run_config(
        [
            "model=dbm",
            "model.n_hidden=[3,2]",
            "model.visible_units=potts",
            "model.visible_states=3",
            "model.hidden_units='bernoulli,potts'",
            "model.hidden_states=4",
            "dataset=potts_samples",
            "dataset.n=4",
            "dataset.n_hidden=3",
            "dataset.n_train=200",
            "dataset.n_test=50",
            "learner=pcd",
            "learner.batch_size=50",
            "evaluator=exact",
            "train.epochs=2",
            "train.eval_every=2",
            "train.progress=false",
        ]
    )
    assert train(cfg, tmp_path / "run", echo=lambda s: None)["status"] == "completed"
    model, _, _ = load_checkpoint(tmp_path / "run" / "checkpoint.npz")
    assert model.model_sizes() == {"n_visible": 12, "n_hidden1": 3, "n_hidden2": 8}
    assert (model.visible, model.hidden, model.visible_states, model.hidden_states) == (
        "potts",
        "bernoulli,potts",
        "3",
        "4",
    )
    import pandas as pd

    ll = pd.read_csv(tmp_path / "run" / "metrics.csv").test_log_likelihood.iloc[-1]
    assert -4 * np.log(3) < ll < 0  # better than uniform codes: the base rates at least
