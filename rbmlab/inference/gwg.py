"""Gibbs-with-gradients for pairwise models (Grathwohl et al. 2021; pmp's baseline, Secs 5.3–5.4).

Each step proposes flipping one site i of each chain, drawn from q(i | x) = softmax(δ(x)/2)_i,
where δ_i(x) = log p̃(x with x_i flipped) − log p̃(x). For a pairwise model (zero-diagonal J)

    δ_i(x) = a_i (x̄_i − x_i),    a = h + xJ the local fields, x̄_i the flipped value,        (1)

exactly, so GWG's gradient estimate of δ is exact here. The flip is accepted with probability

    min(1, exp(δ_i(x) + log q(i | x') − log q(i | x)))                                      (2)

(Metropolis–Hastings; x' = x with x_i flipped, and flipping i again is the reverse move). The
fields are updated by J[i] (x̄_i − x_i) on acceptance, so a step costs O(n) per chain. A sweep is
n steps; every chain (and trial) steps at once. ``step=site`` counts run's steps in single
proposals instead of sweeps (the persistent panels of pmp Figure 2: k proposals per learning
iteration, pmp Sec 5.4).

On numpy with numba (the ``fast`` extra) the steps run in one compiled kernel
(rbmlab.inference.gwg_numba: the same uniforms and moves up to rounding, one chain at a time, each
step one vectorised pass; in float32 3–4× its earlier scalar version, itself 7–9× the numpy path, on
pmp's shapes: 20 × 200, 50 × 900, 256 × 625 chains × sites); ``RBMLAB_NUMBA=0`` selects the numpy
path.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.backend import numba_kernels, reads_are_free
from rbmlab.backend.ops import is_numpy_generator, uniform
from rbmlab.inference.base import InferenceConfig, InferenceMethod, chain_rows
from rbmlab.models.base import LocalFields, PairwiseCouplings
from rbmlab.validation import option


@dataclass
class GWGConfig(InferenceConfig):
    name: str = option(
        "gwg", "inference method: Gibbs-with-gradients (one proposed flip per step, n steps per sweep)"
    )
    temperature: float = option(
        2.0, "proposal softmax(δ / temperature) (GWG's DiffSampler: 2)", lo=1e-6, label="GWG temperature"
    )
    step: str = option(
        "sweep",
        "one step: sweep (n proposals) | site (one proposal)",
        choices=("sweep", "site"),
        neutral="sweep",
        label="sampler step",
    )


def _log_softmax(a, xp):
    m = a.max(axis=-1, keepdims=True)
    out = a - m
    out -= xp.log(xp.exp(out).sum(axis=-1, keepdims=True))
    return out


def _take(a, i, xp):
    """a[..., b, i[..., b]] for a (..., B, n) and i (..., B)."""
    return xp.take_along_axis(a, i[..., None], axis=-1)[..., 0]


class GibbsWithGradients(InferenceMethod):
    """``run(model, x, rng, steps)``: ``steps`` sweeps of n Metropolis–Hastings flips (1)–(2), or
    (``step=site``) ``steps`` flips."""

    config_class = GWGConfig
    requires = (LocalFields, PairwiseCouplings)

    def run(self, model, x, rng, steps: int):
        xp = model.xp
        units = model.units
        t = self.config.temperature
        x = xp.broadcast_to(x, chain_rows(model, x) + x.shape[-1:]).copy()
        if steps < 1:
            return x
        n = x.shape[-1]
        a = model.local_fields(x, slice(None))  # (..., B, n)
        proposals = steps * n if self.config.step == "sweep" else steps
        if _compiled(model, x, a, rng):
            return _run_compiled(model, x, a, rng, proposals, t)
        sites = xp.arange(n)
        for _ in range(proposals):
            change = units.flip(x) - x
            delta = a * change  # (1)
            log_q = _log_softmax(delta / t, xp)
            cdf = xp.cumsum(xp.exp(log_q), axis=-1)
            u = uniform(rng, x.shape[:-1] + (1,), x.dtype) * cdf[..., -1:]
            i = xp.minimum((cdf <= u).sum(axis=-1), n - 1)  # i ~ q(· | x)
            step = _take(change, i, xp)
            rows = xp.take_along_axis(model.J, i[..., None], axis=-2)  # J[i], (..., B, n)
            a_new = a + rows * step[..., None]
            x_new = xp.where(sites == i[..., None], x + change, x)
            log_q_back = _take(_log_softmax(a_new * (units.flip(x_new) - x_new) / t, xp), i, xp)
            log_accept = _take(delta, i, xp) + log_q_back - _take(log_q, i, xp)  # (2)
            accept = (xp.log(uniform(rng, x.shape[:-1], x.dtype)) < log_accept)[..., None]
            x = xp.where(accept, x_new, x)
            a = xp.where(accept, a_new, a)
        return x


def _compiled(model, x, a, rng) -> bool:
    """Whether the numba kernel takes these steps: host numpy arrays (not an array standing for a
    device's: rbmlab.backend.reads_are_free) of one float dtype, a numpy Generator (the kernel
    draws its counter-based uniforms), J per chain group."""
    J = model.J
    groups = int(np.prod(J.shape[:-2], dtype=np.int64))
    return (
        numba_kernels.available()
        and reads_are_free(x)
        and reads_are_free(J)
        and x.dtype in (np.float32, np.float64)
        and a.dtype == x.dtype
        and is_numpy_generator(rng)
        and (groups == 1 or groups == int(np.prod(x.shape[:-2], dtype=np.int64)))
    )


def _run_compiled(model, x, a, rng, proposals: int, temperature: float):
    kernel = numba_kernels.load("rbmlab.inference.gwg_numba")
    n, dtype = x.shape[-1], x.dtype.type
    chains = x.reshape(-1, n)  # views: x and a are ours
    fields = a.reshape(-1, n)
    J = np.ascontiguousarray(model.J, dtype=x.dtype).reshape(-1, n, n)
    per_group = chains.shape[0] // J.shape[0]
    keys = rng.bit_generator.random_raw(2 * proposals)  # ops.uniform's keys, in its order
    kernel.flip_steps_(
        chains,
        fields,
        J,
        dtype(model.units.flip(dtype(0.0))),
        dtype(temperature),
        keys,
        per_group,
        x.dtype == np.float32,
    )
    return x
