"""
An RBM with categorical (Potts) visible units
=============================================

Visible units need not be binary: with ``model_options={"visible_units": "potts",
"visible_states": q}`` each unit takes one of q categories, held as q one-hot columns of W, and
the estimator takes (and ``sample`` returns) rows of integer codes. Here the data are strings of
8 units over 3 categories, each a copy of one of three prototypes with 15% of its units redrawn
uniformly; an RBM of 6 Bernoulli hidden units is trained by CD-1 on 300 of them, and after every
epoch its exact mean log-likelihood on 300 held-out strings (``score``: log Z by enumerating the
2⁶ hidden states) is set beside the score of the distribution the data were drawn from, computed
exactly on the same strings. Look at the curve closing on that line, and at the model's exact
samples (``sample(method="exact")``) beside held-out data on the right.
"""

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import ListedColormap

from rbmlab import RBM

q, noise = 3, 0.15
prototypes = np.array([[0, 0, 0, 0, 1, 1, 1, 1], [1, 1, 2, 2, 1, 1, 2, 2], [2, 0, 2, 0, 2, 0, 2, 0]])
rng = np.random.default_rng(0)


def draw(m):
    """m strings: a prototype each, every unit redrawn uniformly with probability ``noise``."""
    x = prototypes[rng.integers(0, len(prototypes), m)]
    return np.where(rng.random(x.shape) < noise, rng.integers(0, q, x.shape), x)


def true_log_p(x):
    """log p(x) under the mixture the strings come from: a prototype, then each unit kept or redrawn."""
    per_unit = np.where(x[:, None, :] == prototypes[None], 1 - noise + noise / q, noise / q)
    return np.log(per_unit.prod(axis=2).mean(axis=1))


X_train, X_test = draw(300), draw(300)
rbm = RBM(6, model_options={"visible_units": "potts", "visible_states": q}, random_state=0)
curve = []
for _ in range(20):
    rbm.partial_fit(X_train)  # one epoch of CD-1 (lr 0.1, batch 10)
    curve.append(rbm.score(X_test))  # exact mean log-likelihood
truth = true_log_p(X_test).mean()
print(f"held-out log-likelihood after {len(curve)} epochs: {curve[-1]:.2f} nats; the truth's: {truth:.2f}")
samples = rbm.sample(12, method="exact")

fig, (ax, ax2) = plt.subplots(1, 2, figsize=(8.5, 3.3), width_ratios=[1.4, 1])
ax.plot(np.arange(1, len(curve) + 1), curve, "o-", ms=3, label="Potts RBM, 6 hidden units")
ax.axhline(truth, color="k", ls="--", lw=1, label="the data's own distribution")
ax.set_xlabel("epoch")
ax.set_ylabel("held-out log-likelihood (nats)")
ax.legend(fontsize=8)
colours = ListedColormap(["#4477aa", "#ee6677", "#ccbb44"])
gap = np.full((12, 1), np.nan)
ax2.imshow(np.hstack([X_test[:12], gap, samples]), cmap=colours, vmin=0, vmax=q - 1)
ax2.set_xticks([3.5, 12.5], ["held-out data", "model samples"])
ax2.set_yticks([])
fig.tight_layout()
