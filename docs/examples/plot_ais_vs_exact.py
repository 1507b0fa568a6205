"""
AIS against the exact log Z
===========================

Annealed importance sampling estimates log Z of an RBM; on one small enough to enumerate, the
exact value can be set beside the estimate. Here: RBMs of 12 visible and 8 hidden units with
growing weights, scored by ``evaluator=ais`` (its ±3σ interval) and by enumeration.
"""

import matplotlib.pyplot as plt
import numpy as np

from rbmlab.backend import host_rng
from rbmlab.evaluators.ais import ais_log_partition, schedule
from rbmlab.models.rbm import RBM

rng = np.random.default_rng(0)
scales = [0.5, 1.0, 1.5, 2.0, 2.5]
exact, estimate, lower, upper = [], [], [], []
for scale in scales:
    rbm = RBM(
        scale * rng.standard_normal((12, 8)) / np.sqrt(12),
        0.1 * rng.standard_normal(12),
        0.1 * rng.standard_normal(8),
    )
    exact.append(rbm.exact_log_partition())
    result = ais_log_partition(
        rbm, host_rng(1), base_bias=np.zeros(12), betas=schedule("linear", 500, 0, True), n_chains=100
    )
    estimate.append(result.log_z)
    lower.append(result.log_z_lower)
    upper.append(result.log_z_upper)

estimate, lower, upper = map(np.array, (estimate, lower, upper))
fig, ax = plt.subplots(figsize=(5, 3.5))
ax.plot(scales, exact, "k-", label="exact (enumeration)")
ax.errorbar(scales, estimate, yerr=[estimate - lower, upper - estimate], fmt="o", label="AIS, ±3σ")
ax.set_xlabel("weight scale")
ax.set_ylabel("log Z")
ax.legend()
fig.tight_layout()
