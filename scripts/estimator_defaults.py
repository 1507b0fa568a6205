"""rbmlab.RBM() against scikit-learn's BernoulliRBM() on load_digits (issue 56, item 3).

Both fit the first 1437 digits (X / 16, binarised at 0.5 or as probabilities) with their default
settings, or rbmlab's with the overrides given; both are scored by one function, the exact full
pseudo-log-likelihood Σ_i log σ(F(x^(i)) − F(x)) (Besag 1975), x^(i) = x with x_i → 1 − x_i (on
{0, 1} rows log p(x_i | x_−i); BernoulliRBM's score_samples draws one i of it), on the training
rows and on the 360 held out. Mean and spread over seeds; fit wall time.

    python scripts/estimator_defaults.py [--seeds 0 1 2] [key=value ...]   (RBM arguments)
"""

from __future__ import annotations

import argparse
import ast
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.neural_network import BernoulliRBM

from rbmlab import RBM


def free_energy(W, b_v, b_h, x):
    """F(x) = −b_v·x − Σ_j softplus(x W + b_h)_j, per row, float64 (W: n_visible × n_hidden)."""
    return -x @ b_v - np.logaddexp(0.0, x @ W + b_h).sum(axis=1)


def pseudo_log_likelihood(W, b_v, b_h, x):
    """Per-row Σ_i log σ(F(x^(i)) − F(x)), x^(i): x_i → 1 − x_i."""
    W, b_v, b_h, x = (np.asarray(a, np.float64) for a in (W, b_v, b_h, x))
    f = free_energy(W, b_v, b_h, x)
    total = np.zeros(len(x))
    for i in range(x.shape[1]):
        flipped = x.copy()
        flipped[:, i] = 1 - flipped[:, i]
        total += -np.logaddexp(0.0, f - free_energy(W, b_v, b_h, flipped))  # log σ(F(x^(i)) − F(x))
    return total


def bernoulli_rbm(seed, overrides):
    return BernoulliRBM(random_state=seed), lambda m: (
        m.components_.T,
        m.intercept_visible_,
        m.intercept_hidden_,
    )


def rbmlab_rbm(seed, overrides):
    return RBM(random_state=seed, **overrides), lambda m: (m.model_.W, m.model_.b_v, m.model_.b_h)


def run(make, seed, overrides, train, test):
    """(PL on train, PL on test, fit seconds) of the estimator ``make`` builds."""
    estimator, params = make(seed, overrides)
    start = time.perf_counter()
    estimator.fit(train)
    seconds = time.perf_counter() - start
    W, b_v, b_h = params(estimator)
    return (
        pseudo_log_likelihood(W, b_v, b_h, train).mean(),
        pseudo_log_likelihood(W, b_v, b_h, test).mean(),
        seconds,
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("overrides", nargs="*", help="RBM arguments, key=value")
    args = parser.parse_args()
    overrides = {k: ast.literal_eval(v) for k, v in (o.split("=", 1) for o in args.overrides)}
    digits = load_digits().data / 16
    start = time.perf_counter()
    RBM(n_iter=1).fit(digits[:10])
    print(f"first RBM fit of a process (composes its yaml, once): {time.perf_counter() - start:.2f} s")
    label = f"RBM({', '.join(f'{k}={v!r}' for k, v in overrides.items())})"
    for name, X in (("binarised at 0.5", digits > 0.5), ("probabilities", digits)):
        X = X.astype(np.float32)
        train, test = X[:1437], X[1437:]
        print(f"load_digits / 16, {name}: mean over seeds {args.seeds} (± spread)")
        for row, make in (("BernoulliRBM()", bernoulli_rbm), (label, rbmlab_rbm)):
            r = np.array([run(make, seed, overrides, train, test) for seed in args.seeds])
            m, s = r.mean(axis=0), r.std(axis=0)
            print(
                f"  {row:40s} PL train {m[0]:8.3f} ± {s[0]:.3f}  held out {m[1]:8.3f} ± {s[1]:.3f}"
                f"  fit {m[2]:6.2f} s ± {s[2]:.2f}"
            )


if __name__ == "__main__":
    main()
