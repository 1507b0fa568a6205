"""Frank-Wolfe for infinite RBMs by enumeration: the exact answers its learner is checked against.

Written from the paper over every visible state of a small model, sharing no code with
rbmlab.learners.frank_wolfe: the exactly fitted visible bias (the log-likelihood is concave in b,
Prop. 3.1, so L-BFGS on the exact log-likelihood finds its optimum) and Frank-Wolfe with exact
expectations in the oracle (Alg. 1 line 4 with the model's probabilities in place of its S
samples) and that exact bias after each unit. The toys are the shifting bar (n = 9, bar = 3) and
bars & stripes 3 × 3, both on 9 pixels (tests/test_frank_wolfe_bias.py,
scripts/frank_wolfe_bias_exact.py).
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

N = 9  # shifting bar (n = 9, bar = 3) and bars & stripes 3 × 3 both have 9 pixels
STATES = np.array(list(itertools.product([0.0, 1.0], repeat=N)))


def shifting_bar(n=9, bar=3):
    return np.array([[1.0 if (j - s) % n < bar else 0.0 for j in range(n)] for s in range(n)])


def bars_and_stripes(d=3):
    rows = {tuple(np.repeat(bits, d)) for bits in itertools.product([0.0, 1.0], repeat=d)}
    patterns = rows | {tuple(np.array(r).reshape(d, d).T.ravel()) for r in rows}
    return np.array(sorted(patterns))


DATA = {
    "shifting_bar": (shifting_bar(), ["dataset=shifting_bar", "dataset.n=9", "dataset.bar=3"]),
    "bars_stripes": (bars_and_stripes(), ["dataset=bars_stripes", "dataset.size=3"]),
}
"""name → (the data, the rbmlab overrides that load the same data)"""


def neg_free_energy(v, W, c, b):
    """log Σ_h e^{−E(v, h)} = Σ_i softplus(v·w_i + c_i) + b·v (frank_wolfe Eq. 3)."""
    return np.logaddexp(0, v @ W + c).sum(axis=1) + v @ b


def mean_log_likelihood(x, W, c, b):
    return neg_free_energy(x, W, c, b).mean() - np.logaddexp.reduce(neg_free_energy(STATES, W, c, b))


def exact_bias(x, W, c, b0):
    """argmax_b of the mean log-likelihood: gradient d − E_p[v] (Eq. 10), concave in b."""

    def loss(b):
        f = neg_free_energy(STATES, W, c, b)
        p = np.exp(f - np.logaddexp.reduce(f))
        return -mean_log_likelihood(x, W, c, b), p @ STATES - x.mean(axis=0)

    return minimize(loss, b0, jac=True, method="L-BFGS-B", options={"gtol": 1e-10, "maxiter": 2000}).x


def exact_frank_wolfe(x, lam, units, scaling="constant", restarts=10, seed=0):
    """Alg. 1 with exact expectations in the oracle and the bias fitted exactly after each unit,
    from the base-rate model (rbmlab's default start): the mean log-likelihood after each unit."""
    rng = np.random.default_rng(seed)
    W, c = np.zeros((N, 0)), np.zeros(0)
    m = x.mean(axis=0).clip(1e-3, 1 - 1e-3)
    b = np.log(m / (1 - m))
    xa, va = np.hstack([x, np.ones((len(x), 1))]), np.hstack([STATES, np.ones((len(STATES), 1))])
    curve = []
    for t in range(1, units + 1):
        f = neg_free_energy(STATES, W, c, b)
        p = np.exp(f - np.logaddexp.reduce(f))
        lam_t = lam / t if scaling == "over_t" else lam

        def oracle(w):  # Alg. 1 line 4 and its gradient (Eq. 9)
            a, s = xa @ w, va @ w
            value = 0.5 * lam_t * w @ w + p @ np.logaddexp(0, s) - np.logaddexp(0, a).mean()  # noqa: B023 - minimized in this step
            return value, lam_t * w + va.T @ (p * expit(s)) - xa.T @ expit(a) / len(x)  # noqa: B023

        best = min(
            (
                minimize(
                    oracle,
                    0.01 * rng.standard_normal(N + 1),
                    jac=True,
                    method="L-BFGS-B",
                    options={"maxiter": 500, "gtol": 1e-8},
                )
                for _ in range(restarts)
            ),
            key=lambda r: r.fun,
        )
        W, c = np.hstack([W, best.x[:-1, None]]), np.append(c, best.x[-1])
        b = exact_bias(x, W, c, b)
        curve.append(mean_log_likelihood(x, W, c, b))
    return np.array(curve)
