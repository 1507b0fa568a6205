"""
TAP estimates of log Z, first and second order
==============================================

The TAP free energy (tap Eq. 36) is Plefka's expansion of an RBM's Gibbs free energy in its
weights: kept to first order it is naive mean field, to second order it adds the Onsager
term. Each solution of its fixed-point equations (tap Eqs. 33–35, iterated by
``rbmlab.inference.tap.solve`` from 50 exact draws of the RBM, standing in for the data the
paper starts from) gives a free energy F, and −F averaged over the distinct solutions estimates
log Z (the paper's rule, Fig. 2). Here the error of that estimate against the exact log Z
(enumerating the 10 hidden units) is followed as the weights of an RBM of 16 visible and 10
hidden units grow, W = scale · N(0, 1) / √16, with {0, 1} units (the paper's binary RBM) and with
±1 units. Look at the orders: the second-order error stays far below the first-order one while
the couplings are weak; with ±1 units and strong couplings the first order finds several
solutions (their number marked) and the second overshoots.
"""

import matplotlib.pyplot as plt
import numpy as np

from rbmlab.backend import host_rng
from rbmlab.inference import tap
from rbmlab.models.rbm import RBM, sample_exact

rng = np.random.default_rng(0)
W = rng.standard_normal((16, 10)) / np.sqrt(16)
b_v, b_h = 0.1 * rng.standard_normal(16), 0.1 * rng.standard_normal(10)
scales = np.linspace(0.2, 2.0, 10)

fig, axes = plt.subplots(1, 2, figsize=(8.5, 3.3), sharex=True)
for ax, units in zip(axes, ("bernoulli", "spin")):
    error = {1: [], 2: []}
    for scale in scales:
        rbm = RBM(scale * W, b_v, b_h, visible=units, hidden=units)
        exact = rbm.exact_log_partition()
        starts = sample_exact(rbm, host_rng(1), 50)  # the "data" the solutions start from (Eqs. 37–38)
        visible, hidden = rbm.tap_layers()
        line = f"{units:>9}, scale {scale:.1f}: log Z {exact:6.3f}"
        for order in (1, 2):
            s = tap.solve(rbm.W, visible, hidden, starts, order=order, damping=0.2, tol=1e-12, max_iter=3000)
            log_z, f_unique = tap.log_partition(rbm.W, visible, hidden, s)  # mean of −F, distinct solutions
            error[order].append(log_z - exact)
            if len(f_unique) > 1:
                ax.annotate(
                    str(len(f_unique)), (scale, log_z - exact), xytext=(3, 3), textcoords="offset points"
                )
            converged = int(s.converged.sum())
            line += f" | order {order}: {log_z - exact:+.3f} ({len(f_unique)} sol., {converged}/50 conv.)"
        print(line)
    ax.axhline(0, color="k", lw=0.8)
    ax.plot(scales, error[1], "o-", label="first order (naive mean field)")
    ax.plot(scales, error[2], "s-", label="second order (TAP)")
    ax.set_title(f"{'{0, 1}' if units == 'bernoulli' else '±1'} units", fontsize=10)
    ax.set_xlabel("weight scale")
axes[0].set_ylabel("log Z_TAP − log Z (nats)")
axes[0].legend(fontsize=8)
fig.tight_layout()
