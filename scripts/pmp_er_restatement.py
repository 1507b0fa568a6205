"""A cross-check of pmp Figure 5's PMP learning, outside rbmlab's learner, model and sampler code.

    python scripts/pmp_er_restatement.py [T=10] [lr=0.001] [l1=0.01] [iterations=1000] [seed=0]
                                         [model_seed=0] [every=100]

The authors' non-persistent loop (pmp Sec 5.4, App. B.1, C.1; their ``ising_modeling.learn`` read
for its order of operations, not copied) written out in plain float64 numpy: a dense ±1 Ising model
in the paper's E2 weights (log p̃ = sᵀWs + bᵀs), from zero; each iteration 20 PMP samples (logistic
perturbation of the {0,1} biases after ``stob``, T sweeps of parallel max-product with damping
1/2 from zero messages, decode); gradient 2 (C_data − C_model) − l1 sign(W) on W and μ_data − μ_model
on b; Adam (0.9, 0.999, 1e-8) at lr on both. Every ``every`` iterations: log MMD² of 2,000 PMP
samples (T sweeps) against the data. Only the data (rbmlab's Erdős–Rényi ``ising_samples``, the
options of experiments/pmp/figure-5-mmd.yaml with ``model_seed``) and the MMD
(rbmlab.evaluators.mmd.log_mmd2) come from rbmlab. Prints one line per evaluation.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from rbmlab.data.model_samples import IsingSamplesOptions, load_ising_samples
from rbmlab.errors import fail
from rbmlab.evaluators.mmd import log_mmd2

DEFAULTS = {"T": 10, "lr": 0.001, "l1": 0.01, "iterations": 1000, "seed": 0, "model_seed": 0, "every": 100}
CHAINS, EVAL_SAMPLES = 20, 2000


def moments(s):
    """μ and the symmetrised, zero-diagonal C = E[s sᵀ] of ±1 samples (N, d)."""
    c = s.T @ s / s.shape[0]
    c = (c + c.T) / 2
    np.fill_diagonal(c, 0.0)
    return s.mean(axis=0), c


def to_01(W, b):
    """E2 (±1, log p̃ = sᵀWs + bᵀs) → E1 ({0,1}, log p̃ = ½ xᵀW₁x + b₁ᵀx): the authors' code's
    ``stob``."""
    return 8.0 * W, 2.0 * b - 4.0 * W.sum(axis=1)


def pmp_samples(W1, b1, count, sweeps, rng):
    """PMP in the {0,1} model: N[s, i, j] is the message i → j of sample s (pmp App. C.1)."""
    d = b1.size
    perturbed = b1 + rng.logistic(size=(count, d))
    N = np.zeros((count, d, d))
    for _ in range(sweeps):
        into = perturbed + N.sum(axis=1)  # belief of each node
        cavity = into[:, :, None] - N.transpose(0, 2, 1)  # i's belief without j's message
        N += 0.5 * (np.maximum(0.0, cavity + W1) - np.maximum(0.0, cavity) - N)
    return (perturbed + N.sum(axis=1) > 0).astype(np.float64)


def main(argv: list[str]) -> None:
    opts = dict(DEFAULTS)
    for item in argv:
        key, eq, value = item.partition("=")
        if not eq or key not in DEFAULTS:
            fail(f"{item}: expected key=value with key one of {', '.join(DEFAULTS)}")
        try:
            opts[key] = type(DEFAULTS[key])(value)
        except ValueError:
            fail(f"{key}: expected {type(DEFAULTS[key]).__name__}, got {value!r}")
    data = load_ising_samples(
        IsingSamplesOptions(
            structure="erdos_renyi",
            n=200,
            density=0.02,
            coupling=1.0,
            fields="constant",
            field=0.1,
            spins="pm1",
            model_seed=opts["model_seed"],
            sampler="gibbs",
            burn_in=5000,
            n_train=2000,
            n_test=10,
        )
    )
    s = data.train.astype(np.float64)
    mu_data, c_data = moments(s)
    d, rng, lr = s.shape[1], np.random.default_rng(opts["seed"]), opts["lr"]
    W, b = np.zeros((d, d)), np.zeros(d)
    adam = {name: (np.zeros_like(p), np.zeros_like(p)) for name, p in (("W", W), ("b", b))}
    start = time.perf_counter()
    for t in range(1, opts["iterations"] + 1):
        x = pmp_samples(*to_01(W, b), CHAINS, opts["T"], rng)
        mu, c = moments(2.0 * x - 1.0)
        grads = {"W": 2.0 * (c_data - c) - opts["l1"] * np.sign(W), "b": mu_data - mu}
        for name, param in (("W", W), ("b", b)):
            m, v = adam[name]
            g = grads[name]
            m += 0.1 * (g - m)
            v += 0.001 * (g * g - v)
            param += lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
        if t % opts["every"] == 0:
            W1, b1 = to_01(W, b)
            samples = np.concatenate(
                [pmp_samples(W1, b1, 200, opts["T"], rng) for _ in range(EVAL_SAMPLES // 200)]
            )
            score = log_mmd2(((s + 1) / 2).astype(np.float32), samples.astype(np.float32))
            print(
                f"iteration {t}: log MMD² {score:.3f}, mean |W| {np.abs(W).mean():.4f}, "
                f"{time.perf_counter() - start:.0f} s",
                flush=True,
            )


if __name__ == "__main__":
    main(sys.argv[1:])
