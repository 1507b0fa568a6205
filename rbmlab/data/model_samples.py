"""Datasets sampled from a known ground-truth model: ``ising_samples``.

A ground-truth Ising model (rbmlab.models.ising, eq. 1: log p̃(x) = Σ_{i<j} J_ij x_i x_j + hᵀx)
is built from ``model_seed``, then n_train + n_test states are drawn from it with
``sample_seed``, exactly (inverse CDF over all 2ⁿ states, n ≤ 20) or by chromatic Gibbs
sampling (rbmlab.inference.site_gibbs). ``info`` keeps the ground truth (J, h, spins, exact
log Z for n ≤ 25 and the true model's mean log-likelihood of each split), so learned models can
be compared with it.

The pmp paper's Sec 5.4 data (pmp App. B.1): lattice with ``spins=pm1``,
``coupling=-0.2`` (θ = −0.1 counted twice), side 25, ``sampler=gibbs``, ``burn_in=1600``;
Erdős–Rényi with n 200, density 0.02, coupling 1.0 (its 0.5·N(0,1), counted twice) and the
constant field 0.1 (``fields=constant field=0.1``), ``sampler=gibbs``, ``burn_in=5000``. Sec 5.1's toy
(θ = 0.5 on all 6 pairs of 4 spins, counted once) is ``structure=dense n=4 weights=constant
coupling=0.5 spins=pm1``.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from rbmlab.backend import host_rng
from rbmlab.data import files as F
from rbmlab.data.dataset import Dataset
from rbmlab.limits import (
    ARRAY_ELEMENTS,
    CHAINS,
    ENUMERATION_UNITS,
    EVALUATION_STEPS,
    EXACT_SAMPLING_UNITS,
    EXAMPLES,
    exceeds,
)
from rbmlab.validation import invalid, option

STRUCTURES = ("lattice", "chain", "dense", "erdos_renyi")
WEIGHTS = ("normal", "uniform", "constant")
EXACT_SAMPLING_MAX = EXACT_SAMPLING_UNITS  # rbmlab.limits
EXACT_LOG_Z_MAX = ENUMERATION_UNITS
CACHED_LOG_Z_FROM = 20  # enumerating more variables than this takes ~0.1 s and up: kept in the cache


@dataclass(frozen=True)
class IsingSamplesOptions:
    """Options of dataset ``ising_samples``."""

    structure: str = option(
        "lattice",
        "ground-truth graph: lattice (side x side) | chain (n "
        "variables in a row, open ends) | dense | erdos_renyi",
        choices=STRUCTURES,
    )
    side: int = option(
        4, "structure=lattice: grid side (side^2 variables)", lo=2, hi=64, label="lattice side"
    )
    periodic: bool = option(True, "structure=lattice: cyclic boundary (4 neighbours per site)")
    n: int = option(
        10, "structure=chain|dense|erdos_renyi: number of variables", lo=2, hi=4096, label="variables (n)"
    )
    coupling: float = option(
        0.3,
        "lattice|chain: J_ij on every edge; dense|erdos_renyi: std of "
        "J_ij ~ N(0, coupling^2) on each (present) pair",
        label="coupling J",
    )
    field: float = option(
        0.0, "lattice|chain: h_i on every site; dense|erdos_renyi: std of h_i ~ N(0, field^2)"
    )
    density: float = option(0.1, "structure=erdos_renyi: probability p of each edge", lo=0.0, hi=1.0)
    fields: str = option(
        "random",
        "dense (weights=normal) | erdos_renyi: random (h_i ~ N(0, field^2)) "
        "| constant (h_i = field on every site: pmp's Erdos-Renyi model, 0.1)",
        choices=("random", "constant"),
    )
    weights: str = option(
        "normal",
        "structure=dense: normal (J_ij ~ N(0, coupling^2), h_i ~ N(0, "
        "field^2)) | uniform (pmp Sec 5.2: J_ij = coupling (u_ij + u_ji)/2, "
        "u ~ U[-1, 1]; h_i ~ U[-field, field]) | constant (pmp Sec 5.1's "
        "toy: J_ij = coupling, h_i = field)",
        choices=WEIGHTS,
    )
    spins: str = option(
        "01",
        "values of the model and of the data: 01 (x in {0,1}) | pm1 (x in {-1,+1})",
        choices=("01", "pm1"),
    )
    model_seed: int = option(
        0, "seed of the ground-truth model's random draws", lo=0, label="ground-truth model seed"
    )
    sample_seed: int = option(0, "seed of the sampler", lo=0, label="seed of the data's sampler")
    n_train: int = option(2000, "training samples", lo=1, hi=EXAMPLES, label="training examples")
    n_test: int = option(1000, "test samples (drawn after the training samples)", lo=1, hi=EXAMPLES)
    sampler: str = option(
        "exact", "exact (inverse CDF over all states, n <= 20) | gibbs", choices=("exact", "gibbs")
    )
    burn_in: int = option(
        1000, "sampler=gibbs: sweeps before the first stored state", lo=0, hi=EVALUATION_STEPS
    )
    thin: int = option(
        10, "sampler=gibbs: sweeps between stored states of one chain", lo=1, hi=EVALUATION_STEPS
    )
    chains: int | None = option(
        None,
        "sampler=gibbs: parallel chains (null = one chain per sample, each stored once after burn_in)",
        lo=1,
        hi=CHAINS,
    )

    @property
    def n_variables(self) -> int:
        return self.side * self.side if self.structure == "lattice" else self.n

    @property
    def dimension(self) -> int:
        """Columns of the data, known without loading them (pre-flight checks)."""
        return self.n_variables

    def __post_init__(self) -> None:
        rows = self.n_train + self.n_test
        if problem := exceeds(
            ARRAY_ELEMENTS,
            rows * self.n_variables,
            f"(n_train + n_test) x {self.n_variables} variables (elements of the data)",
        ):
            raise invalid("n_train", problem)
        if self.sampler == "exact" and self.n_variables > EXACT_SAMPLING_MAX:
            where = f"side={self.side}" if self.structure == "lattice" else f"n={self.n}"
            raise invalid(
                "sampler",
                f"exact sampling needs at most {EXACT_SAMPLING_MAX} variables, "
                f"{where} gives {self.n_variables}; use sampler=gibbs",
            )
        if self.weights != "normal" and self.structure != "dense":
            raise invalid(
                "weights",
                f"{self.weights} is for structure=dense; {self.structure} draws "
                "normal weights (weights=normal)",
            )
        if self.fields != "random" and (self.structure in ("lattice", "chain") or self.weights != "normal"):
            raise invalid(
                "fields",
                "constant is for structure=erdos_renyi or dense with weights=normal; "
                "the others set their own fields",
            )
        signed = self.structure in ("lattice", "chain") or self.weights == "constant"  # values, not stds
        if self.coupling < 0 and not signed:
            raise invalid(
                "coupling",
                f"is a standard deviation for structure={self.structure}; must be >= 0, got {self.coupling}",
            )
        if self.field < 0 and not signed and self.fields == "random":
            raise invalid(
                "field",
                f"is a standard deviation for structure={self.structure}; must be >= 0, got {self.field}",
            )


def ising_ground_truth(opts: IsingSamplesOptions):
    """The ground-truth model (float64, numpy) of ``opts``, drawn from ``host_rng(model_seed, 0)``."""
    from rbmlab.models import ising  # noqa: PLC0415 - models are imported only when sampling

    rng = host_rng(opts.model_seed, 0)
    kw = {"spins": opts.spins, "xp": np, "dtype": "float64"}
    if opts.structure == "lattice":
        return ising.lattice_2d(
            opts.side, coupling=opts.coupling, field=opts.field, periodic=opts.periodic, **kw
        )
    if opts.structure == "chain":
        return ising.chain(opts.n, coupling=opts.coupling, field=opts.field, **kw)
    if opts.structure == "dense" and opts.weights == "constant":
        return ising.constant_dense(opts.n, coupling=opts.coupling, field=opts.field, **kw)
    if opts.structure == "dense" and opts.weights == "uniform":
        return ising.uniform_dense(opts.n, rng=rng, coupling=opts.coupling, field=opts.field, **kw)
    field_std = opts.field if opts.fields == "random" else 0.0  # fields are drawn last
    if opts.structure == "dense":
        model = ising.fully_connected(opts.n, rng=rng, coupling_std=opts.coupling, field_std=field_std, **kw)
    else:
        model = ising.erdos_renyi(
            opts.n, opts.density, rng=rng, coupling_std=opts.coupling, field_std=field_std, **kw
        )
    return model if opts.fields == "random" else model.replace(h=np.full(opts.n, opts.field))


def _gibbs_samples(model, opts: IsingSamplesOptions, count: int, rng) -> np.ndarray:
    """``count`` states from chains started uniformly at random: after ``burn_in`` sweeps each
    chain's state is stored, then again every ``thin`` sweeps, round by round (rows: round-major)."""
    from rbmlab.inference.site_gibbs import SiteGibbs  # noqa: PLC0415

    chains = min(opts.chains or count, count)
    lo, hi = model.units.values
    x = lo + (hi - lo) * (rng.random((chains, model.n)) < 0.5)
    sampler = SiteGibbs()
    x = sampler.run(model, x, rng, opts.burn_in)
    rounds = [x]
    while len(rounds) * chains < count:
        x = sampler.run(model, x, rng, opts.thin)
        rounds.append(x)
    return np.concatenate(rounds)[:count]


GIBBS_CACHE_VERSION = 1  # bump when the Gibbs draws of given options change


def _model_key(model, **extra) -> hashlib._Hash:
    """A hash of the model's parameters (a changed generator misses the cache) and ``extra``."""
    key = hashlib.sha256(json.dumps(extra, sort_keys=True).encode())
    for array in (model.J, model.h):
        key.update(np.ascontiguousarray(array, dtype=np.float64).tobytes())
    return key


def _cached(path: Path, read, compute, write):
    """``read(path)`` when the cache holds a usable value (None: unusable), else ``compute()``,
    written atomically through ``write(file, value)``; an unreadable or unwritable cache only
    costs the computation."""
    try:
        value = read(path)
        if value is not None:
            return value
    except (OSError, ValueError, EOFError):
        pass
    value = compute()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            write(f, value)
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)
    return value


def _cached_gibbs_samples(model, opts: IsingSamplesOptions, count: int, rng) -> np.ndarray:
    """:func:`_gibbs_samples`, kept in the cache (``<cache>/ising_samples/<options hash>.npy``):
    they are a pure function of the options, and long chains (pmp's Erdős–Rényi data: 2,000 chains
    of 5,000 sweeps) cost a minute that every run of a sweep would otherwise repeat."""
    key = _model_key(model, version=GIBBS_CACHE_VERSION, **asdict(opts))

    def read(path):
        x = np.load(path)
        return x if x.shape == (count, model.n) and x.dtype == np.float32 else None

    return _cached(
        F.cache_dir() / "ising_samples" / f"{key.hexdigest()[:24]}.npy",
        read,
        lambda: np.ascontiguousarray(_gibbs_samples(model, opts, count, rng), dtype=np.float32),
        np.save,
    )


def _cached_log_partition(model) -> float:
    """The model's exact log Z, kept in the cache beside the samples: enumerating 2^25 states
    takes seconds that every load of the dataset would otherwise repeat."""
    key = _model_key(model, what="exact_log_partition", spins=model.units.values)
    return _cached(
        F.cache_dir() / "ising_samples" / f"log_z-{key.hexdigest()[:24]}.json",
        lambda path: float(json.loads(path.read_text())["log_partition"]),
        model.exact_log_partition,
        lambda f, value: f.write(json.dumps({"log_partition": float(value)}).encode()),
    )


def _rule(opts: IsingSamplesOptions, n: int) -> str:
    values = "{0,1}" if opts.spins == "01" else "{-1,+1}"
    if opts.structure == "lattice":
        graph = (
            f"{opts.side}x{opts.side} {'periodic' if opts.periodic else 'open'} lattice, "
            f"J = {opts.coupling} on every edge, h = {opts.field} on every site"
        )
    elif opts.structure == "chain":
        graph = (
            f"open chain of {n} variables, J = {opts.coupling} on every edge, h = {opts.field} on every site"
        )
    elif opts.structure == "dense" and opts.weights == "constant":
        graph = f"fully connected, {n} variables, J_ij = {opts.coupling} for i<j, h_i = {opts.field}"
    elif opts.structure == "dense" and opts.weights == "uniform":
        graph = (
            f"fully connected, {n} variables, J_ij = {opts.coupling} (u_ij + u_ji)/2 with "
            f"u ~ U[-1, 1], h_i ~ U[-{opts.field}, {opts.field}]"
        )
    else:
        fields = f"h_i ~ N(0, {opts.field}^2)" if opts.fields == "random" else f"h_i = {opts.field}"
        graph = (
            f"fully connected, {n} variables, J_ij ~ N(0, {opts.coupling}^2) for i<j (mirrored), "
            if opts.structure == "dense"
            else f"Erdos-Renyi G({n}, {opts.density}), J_ij ~ N(0, {opts.coupling}^2) on edges, "
        ) + fields
    if opts.sampler == "exact":
        how = "independent exact draws (inverse CDF over all 2^n states in index order)"
    else:
        how = (
            f"chromatic systematic-scan Gibbs from uniform random states, {opts.burn_in} burn-in "
            f"sweeps, then every {opts.thin} sweeps, "
            f"{'one chain per sample' if opts.chains is None else f'{opts.chains} chains'}"
        )
    return (
        f"Ising p(x) ∝ exp(sum_{{i<j}} J_ij x_i x_j + sum_i h_i x_i), x in {values}^{n}; "
        f"{graph}; model drawn from seed {opts.model_seed}; samples: {how}, seed "
        f"{opts.sample_seed}"
    )


def load_ising_samples(opts: IsingSamplesOptions) -> Dataset:
    """n_train + n_test samples of the ground-truth Ising model of ``opts``: float32 (N, n) arrays
    in the model's values ({0,1} or {-1,+1}); train = the first n_train draws, test = the rest."""
    from rbmlab.models.ising import sample_exact  # noqa: PLC0415

    model = ising_ground_truth(opts)
    n, count = model.n, opts.n_train + opts.n_test
    rng = host_rng(opts.sample_seed, 1)
    if opts.sampler == "exact":
        x = sample_exact(model, rng, count)
    else:
        x = _cached_gibbs_samples(model, opts, count, rng)
    x = np.ascontiguousarray(x, dtype=np.float32)
    truth = {
        "family": "ising",
        "spins": opts.spins,
        "J": model.J.tolist(),
        "h": model.h.tolist(),
        "log_partition": None,
        "mean_loglik": None,
    }
    if n <= EXACT_LOG_Z_MAX:
        log_z = _cached_log_partition(model) if n > CACHED_LOG_Z_FROM else model.exact_log_partition()
        train, test = x[: opts.n_train], x[opts.n_train :]
        truth["log_partition"] = log_z
        truth["mean_loglik"] = {
            split: float(np.mean(model.log_unnormalized(part.astype(np.float64)))) - log_z
            for split, part in (("train", train), ("test", test))
        }
    return Dataset(
        name="ising_samples",
        train=x[: opts.n_train],
        test=x[opts.n_train :],
        valid=None,
        image_shape=(opts.side, opts.side) if opts.structure == "lattice" else None,
        info={
            "source": "synthetic",
            "generation": _rule(opts, n),
            "split": f"train = the first {opts.n_train} draws, test = the next {opts.n_test}",
            "binarize": "none needed: samples are " + ("{0,1}" if opts.spins == "01" else "{-1,+1}"),
            "ground_truth": truth,
            "options": asdict(opts),
            "deviations": [],
        },
    )
