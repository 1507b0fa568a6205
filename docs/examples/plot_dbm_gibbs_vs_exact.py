"""
Block Gibbs on a deep Boltzmann machine against its enumerated marginal
=======================================================================

A deep Boltzmann machine couples each layer only to its neighbours (tap App. E, Eq. 119), so
given the even layers the odd ones are independent and vice versa: block Gibbs sampling
alternates the two parities, and a chain's state is the even layers side by side. Here a DBM of
layers 6–5–4 with {0, 1} units and strong random couplings, built by ``DBM.of``, is sampled by
``block_gibbs`` from 4,000 chains whose visible units start uniform, and the frequencies of the
64 visible states are set against p(v) = p̃(v) / Z, with p̃(v) and Z summed exactly over the
hidden layers (``log_unnormalized``, ``exact_log_partition``). Look at the total-variation
distance: within a few sweeps it falls to the level of 4,000 exact draws (the band: 20 sets drawn
by ``sample_exact`` on ``DBM.as_rbm()``, the same machine as an RBM between its parities), and
stays there.
"""

import matplotlib.pyplot as plt
import numpy as np

from rbmlab.backend import host_rng
from rbmlab.inference import INFERENCE
from rbmlab.models.dbm import DBM
from rbmlab.models.rbm import sample_exact
from rbmlab.units import Bernoulli

sizes, n_chains = (6, 5, 4), 4000
rng = np.random.default_rng(0)
dbm = DBM.of(
    [rng.normal(0, 2.0, (p, q)) for p, q in zip(sizes, sizes[1:])],  # W1 (6, 5), W2 (5, 4)
    [rng.normal(0, 0.5, m) for m in sizes],  # b0, b1, b2
)
V = Bernoulli.states(np, sizes[0], 0, 2 ** sizes[0], np.float64)  # the 64 visible states
p = np.exp(dbm.log_unnormalized(V) - dbm.exact_log_partition())
code = 2 ** np.arange(sizes[0])  # a visible row's index among V


def frequencies(v):
    return np.bincount((v @ code).astype(int), minlength=len(V)) / len(v)


def total_variation(q):
    return 0.5 * np.abs(q - p).sum()


# the sampling noise: TV of 20 sets of n_chains exact draws (as_rbm's visible layer: v, then layer 2)
floor = [
    total_variation(frequencies(sample_exact(dbm.as_rbm(), host_rng(1, r), n_chains)[:, : sizes[0]]))
    for r in range(20)
]
print(f"TV of {n_chains} exact draws: {np.mean(floor):.3f} on average, {min(floor):.3f} to {max(floor):.3f}")

gibbs = INFERENCE.build(INFERENCE.parse("block_gibbs"))
stream = host_rng(2)
chains = dbm.chain_start(Bernoulli.uniform_states(stream, (n_chains, sizes[0]), np.float64), stream)
sweeps, tv, done = [1, 2, 3, 5, 10, 20, 50, 100], [], 0
for k in sweeps:
    chains = gibbs.run(dbm, chains, stream, k - done)  # odd layers given even, then even given odd
    done = k
    tv.append(total_variation(frequencies(dbm.visible_part(chains))))
    print(f"{k:3d} sweeps: TV {tv[-1]:.3f}")

fig, (ax, ax2) = plt.subplots(1, 2, figsize=(8.5, 3.3))
order = np.argsort(p)[::-1]
ax.bar(np.arange(len(V)), p[order], color="0.75", label="exact p(v)")
ax.plot(np.arange(len(V)), frequencies(dbm.visible_part(chains))[order], "C0.", label=f"Gibbs, {done} sweeps")
ax.set_xlabel("visible state (by exact probability)")
ax.set_ylabel("probability")
ax.legend(fontsize=8)
ax2.semilogx(sweeps, tv, "o-", label="block Gibbs chains")
ax2.axhline(np.mean(floor), color="k", ls="--", lw=1, label=f"{n_chains} exact draws (mean, range of 20)")
ax2.axhspan(min(floor), max(floor), color="0.85")
ax2.set_xlabel("sweeps")
ax2.set_ylabel("total variation to p(v)")
ax2.legend(fontsize=8)
fig.tight_layout()
