"""Perturb-and-descend (rbmlab.inference.perturb_descend) against exact answers: every half-step
lowers the perturbed energy and the descent stops at a fixed point of both half-steps; one step
from a fixed state is a block-Gibbs sweep (its transition probabilities by enumeration), at the
perturbation's default scale and at another (a temperature), for {0, 1} and ±1 units; and CD with
it as the sampler learns bars and stripes."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from rbmlab.cli import main
from rbmlab.errors import RbmlabError
from rbmlab.inference import INFERENCE
from rbmlab.inference.perturb_descend import descend, unit_noise
from rbmlab.models.rbm import RBM, energy


def small_rbm(units: str, seed: int = 0, m: int = 3, n: int = 2) -> RBM:
    rng = np.random.default_rng(seed)
    return RBM(
        rng.normal(0, 1.0, (m, n)), rng.normal(0, 0.5, m), rng.normal(0, 0.5, n), visible=units, hidden=units
    )


def perturbed(rbm: RBM, noise_v, noise_h) -> RBM:
    """The RBM whose biases carry the perturbation, one row per state."""
    return rbm.replace(b_v=rbm.b_v + noise_v, b_h=rbm.b_h + noise_h)


@pytest.mark.parametrize("units", ["bernoulli", "spin"])
def test_every_half_step_lowers_the_perturbed_energy_down_to_a_fixed_point(units):
    rbm = small_rbm(units, m=12, n=9)
    rng = np.random.default_rng(1)
    lo, hi = rbm.visible_units.values
    v = lo + (hi - lo) * (rng.random((200, 12)) < 0.5)
    noise_v = unit_noise(rbm.visible_units, rng, v.shape, v.dtype, 1.0)
    noise_h = unit_noise(rbm.hidden_units, rng, (200, 9), v.dtype, 1.0)
    energies, h = [], None
    for _ in range(30):
        v_next, h_next = descend(rbm, v, noise_v, noise_h, 1)
        rows = np.arange(200)
        for vv, hh in ((v, h_next), (v_next, h_next)):  # after the h half-step, then the v one
            energies.append(
                np.array(
                    [
                        energy(perturbed(rbm, noise_v[r], noise_h[r]), vv[r : r + 1], hh[r : r + 1])[0]
                        for r in rows
                    ]
                )
            )
        v, h = v_next, h_next
    steps = np.diff(np.stack(energies), axis=0)
    assert (steps <= 1e-12).all() and (steps < -1e-9).any()
    again_v, again_h = descend(rbm, v, noise_v, noise_h, 1)  # 30 steps: a fixed point
    np.testing.assert_array_equal(again_v, v)
    np.testing.assert_array_equal(again_h, h)


def transition(rbm: RBM, v, scale: float) -> np.ndarray:
    """Block Gibbs at temperature ``scale`` from v: T(v' | v) = Σ_h Π p(h_j | v) Π p(v'_i | h),
    p(x = hi | a) = σ((hi − lo) a / scale), over all v' in enumeration order."""
    lo, hi = rbm.visible_units.values
    sig = lambda a: 1.0 / (1.0 + np.exp(-(hi - lo) * a / scale))  # noqa: E731
    states = lambda k: np.array(list(itertools.product([lo, hi], repeat=k)))[:, ::-1]  # noqa: E731
    hs, vs = states(rbm.n_hidden), states(rbm.n_visible)
    p_h1 = sig(v @ rbm.W + rbm.b_h)
    out = np.zeros(len(vs))
    for h in hs:
        ph = np.prod(np.where(h == hi, p_h1, 1 - p_h1))
        p_v1 = sig(rbm.W @ h + rbm.b_v)
        out += ph * np.prod(np.where(vs == hi, p_v1, 1 - p_v1), axis=1)
    return out


@pytest.mark.parametrize("units, scale", [("bernoulli", 1.0), ("bernoulli", 0.5), ("spin", 1.0)])
def test_one_step_from_a_fixed_state_is_a_block_gibbs_sweep(units, scale):
    rbm = small_rbm(units, seed=2)
    lo, hi = rbm.visible_units.values
    v0 = np.array([hi, lo, hi])
    n = 200_000
    sampler = INFERENCE.build(INFERENCE.parse({"name": "perturb_descend", "scale": scale}))
    out = sampler.run(rbm, np.tile(v0, (n, 1)), np.random.default_rng(3), 1)
    index = (((out - lo) / (hi - lo)).astype(int) << np.arange(3)).sum(axis=1)
    freq = np.bincount(index, minlength=8) / n
    exact = transition(rbm, v0, scale)
    assert np.abs(freq - exact).max() < 4.5 * np.sqrt(exact.max() / n)
    if scale != 1.0:  # the temperature matters: the default scale's transition is far off
        assert np.abs(freq - transition(rbm, v0, 1.0)).max() > 0.02


def test_scale_must_be_positive():
    with pytest.raises(RbmlabError, match="scale"):
        INFERENCE.parse({"name": "perturb_descend", "scale": 0.0})


@pytest.mark.parametrize("steps", [1, pytest.param(10, marks=pytest.mark.slow)])
def test_cd_with_perturb_and_descend_learns_bars_and_stripes(tmp_path, steps):
    main(
        [
            "run",
            "dataset=bars_stripes",
            "model.n_hidden=8",
            "learner=cd",
            "learner.sampler=perturb_descend",
            f"learner.k={steps}",
            "learner.lr=1.0",
            "learner.batch_size=full",
            "train.epochs=400",
            "train.eval_every=400",
            "evaluator=exact",
            "evaluator.splits=[train]",
            "train.progress=false",
            f"hydra.run.dir={tmp_path}",
        ]
    )
    ll = pd.read_csv(tmp_path / "metrics.csv")["train_log_likelihood"].dropna()
    assert ll.iloc[-1] > ll.iloc[0] + 1.5, (
        ll.tolist()
    )  # from -6.24 (uniform) to -3.9 at 400 epochs; best -2.64
