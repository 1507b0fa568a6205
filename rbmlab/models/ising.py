"""Ising models: pairwise binary Markov random fields, fully visible.

With x ∈ {0, 1}ⁿ (``spins="01"``) or x ∈ {−1, +1}ⁿ (``spins="pm1"``), J symmetric with zero
diagonal (shape (n, n)) and h of shape (n,):

    log p̃(x) = Σ_{i<j} J_ij x_i x_j + Σ_i h_i x_i  =  ½ xᵀJx + hᵀx,     p(x) = p̃(x) / Z     (1)
    p(x_i | x_−i) ∝ exp(a_i x_i),   a_i = h_i + Σ_j J_ji x_j                (local field)    (2)
    ∂ log p̃(x) / ∂J_ij = x_i x_j   (J_ij and J_ji moving together),   ∂ log p̃ / ∂h_i = x_i    (3)

so by (3) the mean log-likelihood gradient is the data-minus-model difference of
:meth:`Ising.statistics` (E[x xᵀ] with zero diagonal, and E[x]).

The pmp paper's conventions (E1: App. C.1, Eq. 5; E2: App. B.1, its "energy" read as the
log-probability, as in the authors' code) map onto (1) as follows: E1 ({0,1},
−E1 = ½ xᵀWx + bᵀx) is J = W, h = b; E2 (±1, −E2 = sᵀWs + bᵀs, every pair counted twice) is
J = 2W, h = b. So the pmp lattice (θ = −0.1 per the code) is
``lattice_2d(side, coupling=-0.2, spins="pm1")``.

Parameters may carry one leading trial axis (T independent models, J (T, n, n), h (T, n));
every method broadcasts over it as the RBM's do. A batch without a trial axis is shared by all
trials. Numerical cores use the array namespace of the parameters (numpy or cupy); numpy itself
is used only for host-side bookkeeping (colouring, checkpoint validation, constructor defaults).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from rbmlab.backend import namespace, to_numpy
from rbmlab.backend.ops import logsumexp
from rbmlab.errors import RbmlabError
from rbmlab.limits import ENUMERATION_UNITS, EXACT_SAMPLING_UNITS, TRANSFER_MATRIX_SIDE
from rbmlab.models.base import PARAMETER_LIMIT, Model, ModelConfig
from rbmlab.models.declaration import Declaration, Setting, VisibleUnits
from rbmlab.models.factor_graph import from_ising
from rbmlab.units import Bernoulli, Spin
from rbmlab.validation import invalid, option

SPINS = ("01", "pm1")
TIES = ("none", "uniform")
MAX_ENUMERATION = ENUMERATION_UNITS  # exact log Z: 2^n states (rbmlab.limits)
MAX_EXACT_SAMPLING = EXACT_SAMPLING_UNITS  # inverse-CDF sampling keeps all 2^n probabilities


@dataclass
class IsingConfig(ModelConfig):
    """Model group ``model=ising``."""

    name: str = option("ising", "model family (pairwise binary MRF, fully visible)")
    spins: str = option("01", "unit values: 01 (x in {0,1}) | pm1 (x in {-1,+1})", choices=SPINS)
    coupling_std: float = option(
        0.0,
        "initial J_ij ~ N(0, coupling_std^2) for i < j, mirrored; zero diagonal",
        lo=0.0,
        hi=PARAMETER_LIMIT,
    )
    field_init: str = option(
        "base_rate",
        "base_rate: h = the field whose mean is the training mean (clipped) | zero",
        choices=("base_rate", "zero"),
    )
    tie: str = option(
        "none",
        "none: every J_ij and h_i free | uniform: one coupling θ on every pair "
        "and no field, J = θ(11ᵀ − I), h = 0, starting at θ = 0 (pmp Sec 5.1)",
        choices=TIES,
    )

    def check(self) -> None:
        if self.tie == "uniform" and (self.coupling_std > 0 or self.field_init != "zero"):
            raise invalid(
                "tie", "uniform starts at θ = 0 with no field: set model.coupling_std=0 model.field_init=zero"
            )


def _row(a):
    """A field vector (..., n) as a row (..., 1, n) that broadcasts against a batch (..., B, n)."""
    return a[..., None, :]


def _upper_mask(xp, n: int):
    """Strict upper triangle of an n×n matrix, as a boolean mask."""
    return xp.triu(xp.ones((n, n), dtype=bool), k=1)


def _mirror_upper(a, mask):
    """Symmetric, zero-diagonal matrices from the strict upper triangles of ``a`` (..., n, n)."""
    upper = a * mask
    return upper + upper.swapaxes(-1, -2)


def _zero_diagonal_(a):
    """In place: the diagonal of each (..., n, n) matrix becomes 0."""
    idx = namespace(a).arange(a.shape[-1])
    a[..., idx, idx] = 0
    return a


@functools.lru_cache(maxsize=16)
def _greedy_colouring(pattern: bytes, n: int) -> tuple[tuple[int, ...], ...]:
    """Greedy (DSatur) colouring of the graph whose packed n×n adjacency bits are ``pattern``.

    Repeatedly colour the uncoloured site seeing the most distinct colours among its neighbours
    (ties: most neighbours, then lowest index) with the smallest colour none of them has. Exact
    on bipartite graphs (an even-side periodic lattice: 2 colours), 3 on odd-side tori, n on a
    complete graph; O(n²). Returns the colour classes, each in increasing site order."""
    adj = np.unpackbits(np.frombuffer(pattern, np.uint8), count=n * n).reshape(n, n).astype(bool)
    adj |= adj.T
    np.fill_diagonal(adj, False)
    degree = adj.sum(axis=1)
    seen = np.zeros((n, n + 1), dtype=bool)  # seen[u, c]: a neighbour of u has colour c
    saturation = np.zeros(n, dtype=np.int64)
    colours = np.full(n, -1, dtype=np.int64)
    for _ in range(n):
        key = np.where(colours < 0, saturation * (n + 1) + degree, -1)
        v = int(np.argmax(key))
        c = int(np.argmin(seen[v]))
        colours[v] = c
        new = adj[v] & ~seen[:, c]
        seen[new, c] = True
        saturation[new] += 1
    return tuple(tuple(int(i) for i in np.flatnonzero(colours == c)) for c in range(int(colours.max()) + 1))


@dataclass(frozen=True)
class Ising(Model):
    """p(x) ∝ exp(Σ_{i<j} J_ij x_i x_j + Σ_i h_i x_i), eq. (1); x in the unit type of ``spins``."""

    DECLARATION = Declaration(
        arrays={"J": ("n", "n"), "h": ("n",)},
        data_sizes=("n",),
        settings={"spins": Setting(SPINS), "tie": Setting(TIES, "none")},
        config_settings={"spins": "spins", "tie": "tie"},
        visible=VisibleUnits("spins", {"01": "bernoulli", "pm1": "spin"}),
    )
    INTERACTIONS = ("J",)
    family = "ising"
    config_class = IsingConfig
    default_sampler = "gibbs"

    J: Any  # (..., n, n) symmetric, zero diagonal
    h: Any  # (..., n)
    spins: str = "01"
    tie: str = "none"  # uniform: J = θ(11ᵀ − I), h = 0, and statistics() projects onto θ (eq. 4)

    def __post_init__(self) -> None:
        if self.spins not in SPINS:
            raise ValueError(f"spins must be one of {', '.join(SPINS)}, got {self.spins!r}")
        if self.tie not in TIES:
            raise ValueError(f"tie must be one of {', '.join(TIES)}, got {self.tie!r}")

    # ------------------------------------------------------------ family interface
    @classmethod
    def sizes(cls, config: IsingConfig, n_visible: int) -> dict[str, int]:
        return {"n": int(n_visible)}

    @classmethod
    def parameter_count(cls, sizes: dict[str, int]) -> int:
        return sizes["n"] ** 2 + sizes["n"]

    @classmethod
    def enumeration_size(cls, sizes: dict[str, int]) -> int:
        return int(sizes["n"])

    @classmethod
    def initialize(
        cls, config: IsingConfig, *, xp, rng, data_mean, dtype="float32", trials: int = 0, data=None
    ) -> Ising:
        """J_ij ~ N(0, coupling_std²) for i < j, mirrored, zero diagonal (no draw when the std
        is 0); h = ``units.field_for_mean(data_mean)`` ("base_rate") or 0 ("zero"). ``data_mean``
        (n,) also gives n; it is in the model's unit values. ``trials`` > 0: that many models
        along a leading axis (one draw of J each, the same h)."""
        if data_mean is None:
            raise ValueError("Ising.initialize needs data_mean (it also gives the number of units)")
        dtype = xp.dtype(dtype)
        mean = xp.asarray(data_mean, dtype=dtype)
        n, lead = mean.shape[-1], ((trials,) if trials else ())
        if config.coupling_std > 0:
            J = _mirror_upper(
                config.coupling_std * rng.standard_normal(lead + (n, n), dtype=dtype), _upper_mask(xp, n)
            )
        else:
            J = xp.zeros(lead + (n, n), dtype=dtype)
        units = _units(config.spins)
        if config.field_init == "base_rate":
            h = units.field_for_mean(mean).astype(dtype)
        elif config.field_init == "zero":
            h = xp.zeros(n, dtype=dtype)
        else:
            raise ValueError(f"field_init must be 'base_rate' or 'zero', got {config.field_init!r}")
        return cls(J.astype(dtype), xp.array(xp.broadcast_to(h, lead + (n,))), config.spins, config.tie)

    @classmethod
    def build(cls, arrays: dict[str, Any], settings: dict[str, str]) -> Ising:
        """A model from arrays and settings that agree with DECLARATION (J (n, n) or (T, n, n), h
        matching, spins and tie known), checked further: J symmetric (to float rounding; made
        exact) with zero diagonal, and for tie=uniform one value on every pair and h = 0.
        Non-finite entries (a diverged trial) are left to :meth:`finite_trials`. Bad input is a
        one-line ``RbmlabError('checkpoint: ...')``."""

        def bad(msg: str) -> RbmlabError:
            return RbmlabError(f"checkpoint: ising model {msg}")

        J, h = arrays["J"], arrays["h"]
        Jt = J.swapaxes(-1, -2)
        with np.errstate(invalid="ignore"):
            gap = np.abs(J - Jt)
        gap = gap[np.isfinite(gap)]
        finite = np.abs(J[np.isfinite(J)])
        tol = 16 * np.finfo(J.dtype).eps * max(1.0, float(finite.max()) if finite.size else 1.0)
        if gap.size and float(gap.max()) > tol:
            raise bad(f"J must be symmetric, got max |J - J^T| = {float(gap.max()):.3g}")
        diag = np.diagonal(J, axis1=-2, axis2=-1)
        if np.any(np.isfinite(diag) & (diag != 0)):
            raise bad(
                f"J must have a zero diagonal, got max |J_ii| = "
                f"{float(np.abs(diag[np.isfinite(diag)]).max()):.3g}"
            )
        J = (J + Jt) * J.dtype.type(0.5)  # exactly symmetric
        tie = settings["tie"]
        if tie == "uniform":
            off = ~np.eye(J.shape[-1], dtype=bool)
            theta = J[..., :1, 1:2] if J.shape[-1] > 1 else np.zeros_like(J)
            with np.errstate(invalid="ignore"):  # a diverged trial is finite_trials' business
                uneven = np.where(off & np.isfinite(J) & np.isfinite(theta), J != theta, False)
            if np.any(uneven) or np.any(np.isfinite(h) & (h != 0)):
                raise bad("with tie=uniform must have one value on every pair and h = 0")
        return cls(J, h.copy(), settings["spins"], tie)

    # ------------------------------------------------------------ basic properties
    @property
    def units(self):
        """The unit type: :class:`~rbmlab.units.Bernoulli` ("01") or :class:`~rbmlab.units.Spin`."""
        return _units(self.spins)

    @property
    def visible_units(self):
        """The unit type of the observed units (all of them): :attr:`units`."""
        return self.units

    @property
    def n(self) -> int:
        return self.J.shape[-1]

    @property
    def n_visible(self) -> int:
        return self.n

    # ------------------------------------------------------------ probabilities
    def log_unnormalized(self, x):
        """log p̃(x) = Σ_i x_i (½ (xJ)_i + h_i) per row, eq. (1) (J has zero diagonal); x is
        (..., B, n), the result (..., B) with the trial axis broadcast."""
        xp = self.xp
        a = x @ self.J
        a *= 0.5
        a += _row(self.h)
        return xp.sum(a * x, axis=-1)

    def _log_unnormalized_chunks(self, chunk_size: int):
        """log p̃ of all 2ⁿ states in index order, as float64 chunks (..., chunk)."""
        xp, n = self.xp, self.n
        model = self.astype(xp.float64)
        total = 2**n
        for start in range(0, total, chunk_size):
            states = self.units.states(xp, n, start, min(start + chunk_size, total), xp.float64)
            yield model.log_unnormalized(states)

    def exact_log_partition(self, chunk_size: int = 4096):
        """log Z = log Σ_x p̃(x) over all 2ⁿ states (in float64, chunks of ``chunk_size``).

        A float for a single model; a float64 array (T,) for a model with a trial axis.
        Refuses n > 25 (ValueError)."""
        if self.n > MAX_ENUMERATION:
            raise ValueError(f"exact log Z enumerates 2^n states; n = {self.n} > {MAX_ENUMERATION}")
        xp = self.xp
        parts = xp.stack([logsumexp(c, axis=-1) for c in self._log_unnormalized_chunks(chunk_size)], axis=-1)
        log_z = logsumexp(parts, axis=-1)
        return float(log_z) if log_z.ndim == 0 else log_z

    def log_probability(self, x):
        """Exact log p(x) per row (n ≤ 25): log p̃(x) − log Z, in float64."""
        xp = self.xp
        log_z = self.exact_log_partition()
        lz = log_z[..., None] if not isinstance(log_z, float) else log_z
        return self.astype(xp.float64).log_unnormalized(xp.asarray(x, dtype=xp.float64)) - lz

    # ------------------------------------------------------------ learning and sampling
    def statistics(self, x) -> dict[str, Any]:
        """Batch averages of −∂E/∂θ, eq. (3): J → xᵀx / B (exactly symmetric, zero diagonal),
        h → mean x. Their data-minus-model difference is the mean log-likelihood gradient, with
        J_ij and J_ji moving together. With ``tie="uniform"`` the one statistic is that of θ,

            ∂ log p̃ / ∂θ = Σ_{i<j} x_i x_j,                                                (4)

        its batch mean on every off-diagonal entry of J and 0 for h: an update of J by any rule
        that treats entries alike (SGD, Adam, weight decay) is that rule's update of θ."""
        c = x.swapaxes(-1, -2) @ x
        c *= 1.0 / x.shape[-2]
        c = c + c.swapaxes(-1, -2)
        c *= 0.5
        return self.moment_statistics(_zero_diagonal_(c), x.mean(axis=-2))

    def moment_statistics(self, pair, mean) -> dict[str, Any]:
        """:meth:`statistics` from moments instead of a batch: ``pair`` E[x_i x_j] (..., n, n),
        symmetric with a zero diagonal, and ``mean`` E[x_i] (..., n) — of samples, or of beliefs
        (rbmlab.inference.bethe)."""
        if self.tie == "uniform":
            xp = namespace(pair)
            pairs = 0.5 * pair.sum(axis=(-2, -1))[..., None, None]  # (4)
            off = xp.ones(pair.shape[-2:], dtype=pair.dtype) - xp.eye(pair.shape[-1], dtype=pair.dtype)
            return {"J": pairs * off, "h": xp.zeros_like(mean)}
        return {"J": pair, "h": mean}

    def scalar_parameters(self) -> dict[str, float]:
        """θ of a tied model (single, no trial axis); none otherwise."""
        if self.tie == "uniform" and self.J.ndim == 2 and self.n > 1:
            return {"theta": float(self.J[0, 1])}
        return {}

    def local_fields(self, x, sites):
        """a_sites = h_sites + x J[:, sites], eq. (2): (..., B, len(sites)), trials broadcast.
        Exact conditionals given the other sites because J has zero diagonal."""
        out = x @ self.J[..., :, sites]
        bias = _row(self.h[..., sites])
        if out.ndim < bias.ndim or out.dtype != bias.dtype:
            return out + bias
        out += bias
        return out

    def factor_graph(self):
        """One dense pairwise group over {0, 1} variables: this model, converted from ±1 spins
        with :func:`to_spins` when needed (the same distribution; its log Z differs by the
        conversion's shift, which the graph does not carry: a perturbed objective from it
        estimates the {0, 1} model's log Z)."""
        binary = self if self.spins == "01" else to_spins(self, "01")[0]
        return from_ising(binary.J, binary.h)

    def from_binary(self, x):
        """{0, 1} states as this model's units (2x − 1 for ±1 spins)."""
        return x if self.spins == "01" else 2.0 * x - 1.0

    def color_classes(self) -> list:
        """Sites split into groups with no coupling inside a group (greedy DSatur colouring of
        J's nonzero pattern, union over trials), as numpy int arrays. An even-side periodic
        lattice gets 2 colours (a checkerboard); a dense model n colours."""
        xp, n = self.xp, self.n
        pattern = self.J != 0
        if pattern.ndim > 2:
            pattern = xp.any(pattern, axis=tuple(range(pattern.ndim - 2)))
        packed = np.packbits(to_numpy(pattern)).tobytes()
        return [np.asarray(c, dtype=np.intp) for c in _greedy_colouring(packed, n)]


def _units(spins: str):
    return Bernoulli if spins == "01" else Spin


def _lead(model: Ising) -> tuple[int, ...]:
    return model.J.shape[:-2]


# ---------------------------------------------------------------- conventions
def to_spins(model: Ising, spins: str) -> tuple[Ising, Any]:
    """The same distribution in the other convention: (model', shift), log Z' = log Z + shift.

    With r = J1 (row sums), S_J = 1ᵀJ1 = 2 Σ_{i<j} J_ij, S_h = 1ᵀh:

    {0,1} → ±1, substituting x = (s + 1)/2 in (1) (x_i x_j = (s_i s_j + s_i + s_j + 1)/4 and
    Σ_{i<j} J_ij (s_i + s_j) = Σ_i r_i s_i):
        log p̃(x) = Σ_{i<j} (J_ij/4) s_i s_j + Σ_i (h_i/2 + r_i/4) s_i + (S_J/8 + S_h/2)
        ⇒ J' = J/4,  h' = h/2 + r/4,  shift = −(S_J/8 + S_h/2)
    ±1 → {0,1}, substituting s = 2x − 1 (s_i s_j = 4x_i x_j − 2x_i − 2x_j + 1):
        log p̃(s) = Σ_{i<j} 4J_ij x_i x_j + Σ_i (2h_i − 2r_i) x_i + (S_J/2 − S_h)
        ⇒ J' = 4J,  h' = 2h − 2r,  shift = S_h − S_J/2

    Each is log p̃(x) = log p̃'(s) + c with the constant c = −shift, so Z = e^c Z' and
    log p(x) = log p'(s) for every pair x ↔ s: the conversions are exact and mutually inverse.
    (The pmp authors' code's ``stob`` is the second with J = 2W: W1 = 8W2, b1 = 2b2 − 4W2 1,
    log Z1 = log Z2 + Σb2 − ΣW2.) ``shift`` is a float, or a float64 array (T,) with trials.
    """
    if spins not in SPINS:
        raise ValueError(f"spins must be one of {', '.join(SPINS)}, got {spins!r}")
    xp = model.xp
    if spins == model.spins:
        shift = xp.zeros(_lead(model), dtype=xp.float64)
        return model, (float(shift) if shift.ndim == 0 else shift)
    J, h = model.J, model.h
    r = J.sum(axis=-1)
    s_j = xp.sum(J, axis=(-2, -1), dtype=xp.float64)
    s_h = xp.sum(h, axis=-1, dtype=xp.float64)
    if model.spins == "01":
        new = Ising(J * 0.25, h * 0.5 + r * 0.25, "pm1")
        shift = -(s_j / 8.0 + s_h / 2.0)
    else:
        new = Ising(J * 4.0, 2.0 * (h - r), "01")
        shift = s_h - s_j / 2.0
    return new, (float(shift) if shift.ndim == 0 else shift)


# ---------------------------------------------------------------- ground-truth constructors
def _normal(rng, xp, shape, dtype):
    """N(0, 1) draws in float64 (the same model at any precision), as ``xp`` arrays of ``dtype``."""
    return xp.asarray(rng.standard_normal(shape), dtype=dtype)


def fully_connected(
    n: int, *, rng, coupling_std: float, field_std: float = 0.0, spins: str = "01", xp=np, dtype="float32"
) -> Ising:
    """Dense model: J_ij ~ N(0, coupling_std²) for i < j (mirrored, zero diagonal),
    h_i ~ N(0, field_std²); J is drawn before h."""
    J = _mirror_upper(coupling_std * _normal(rng, xp, (n, n), xp.float64), _upper_mask(xp, n))
    h = field_std * _normal(rng, xp, (n,), xp.float64)
    return Ising(J.astype(dtype), h.astype(dtype), spins)


def uniform_dense(
    n: int, *, rng, coupling: float, field: float = 0.0, spins: str = "01", xp=np, dtype="float32"
) -> Ising:
    """Dense model of pmp Sec 5.2 (the authors' ``rand_ising``): J_ij = coupling ·
    (u_ij + u_ji) / 2 with u ~ U[−1, 1] (n, n), an average of two uniforms (triangular on
    [−coupling, coupling]), zero diagonal; then h_i ~ U[−field, field]. The paper's w ~ U[−2, 2]
    counted twice in ±1 spins (E2) is coupling = 4, field = 0.1, spins="pm1"."""
    u = xp.asarray(rng.uniform(-1.0, 1.0, (n, n)), dtype=xp.float64)
    J = coupling * 0.5 * (u + u.T)
    _zero_diagonal_(J)
    h = field * xp.asarray(rng.uniform(-1.0, 1.0, n), dtype=xp.float64)
    return Ising(J.astype(dtype), h.astype(dtype), spins)


def constant_dense(
    n: int, *, coupling: float, field: float = 0.0, spins: str = "01", xp=np, dtype="float32"
) -> Ising:
    """Every pair coupled by ``coupling``, every site's field ``field``: pmp Sec 5.1's toy is
    n = 4, coupling = 0.5 (θ, each pair counted once), spins="pm1"."""
    J = xp.full((n, n), coupling, dtype=xp.float64)
    _zero_diagonal_(J)
    return Ising(J.astype(dtype), xp.full(n, field, dtype=dtype), spins)


def lattice_edges(side: int, periodic: bool = True) -> np.ndarray:
    """(E, 2) site pairs of a side×side grid (site = row·side + column), right and down
    neighbours, wrapping around when ``periodic`` (4 neighbours each); duplicates removed."""
    r, c = np.divmod(np.arange(side * side), side)
    pairs = []
    for dr, dc in ((0, 1), (1, 0)):
        rr, cc = r + dr, c + dc
        keep = np.ones_like(r, dtype=bool) if periodic else (rr < side) & (cc < side)
        pairs.append(np.stack([(r * side + c)[keep], ((rr % side) * side + cc % side)[keep]], 1))
    pairs = np.sort(np.concatenate(pairs), axis=1)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return np.unique(pairs, axis=0)


def lattice_2d(
    side: int,
    *,
    coupling: float,
    field: float = 0.0,
    periodic: bool = True,
    spins: str = "01",
    xp=np,
    dtype="float32",
) -> Ising:
    """side×side grid (cyclic when ``periodic``): J_ij = ``coupling`` on every edge of
    :func:`lattice_edges` (once, even where side 2 makes two wrap-arounds coincide), h = ``field``."""
    n = side * side
    edges = lattice_edges(side, periodic)
    J = np.zeros((n, n))
    J[edges[:, 0], edges[:, 1]] = coupling
    J[edges[:, 1], edges[:, 0]] = coupling
    return Ising(xp.asarray(J, dtype=dtype), xp.full(n, field, dtype=dtype), spins)


def chain(n: int, *, coupling: float, field: float = 0.0, spins: str = "01", xp=np, dtype="float32") -> Ising:
    """An open chain x_1 - x_2 - ... - x_n: J_{i,i+1} = ``coupling`` on its n - 1 edges, h = ``field``
    (pmp Sec. 3's "simple chain EBM")."""
    i = np.arange(n - 1)
    J = np.zeros((n, n))
    J[i, i + 1] = J[i + 1, i] = coupling
    return Ising(xp.asarray(J, dtype=dtype), xp.full(n, field, dtype=dtype), spins)


def erdos_renyi(
    n: int,
    p: float,
    *,
    rng,
    coupling_std: float,
    field_std: float = 0.0,
    spins: str = "01",
    xp=np,
    dtype="float32",
) -> Ising:
    """Random graph G(n, p): each pair i < j is an edge with probability p, with
    J_ij ~ N(0, coupling_std²) on edges (0 elsewhere); h_i ~ N(0, field_std²). Draw order:
    edge uniforms (n, n), weights (n, n), fields (n,)."""
    edge = xp.asarray(rng.random((n, n))) < p
    weights = coupling_std * _normal(rng, xp, (n, n), xp.float64)
    J = _mirror_upper(weights * edge, _upper_mask(xp, n))
    h = field_std * _normal(rng, xp, (n,), xp.float64)
    return Ising(J.astype(dtype), h.astype(dtype), spins)


# ---------------------------------------------------------------- exact log Z beyond enumeration
def lattice_parameters(model: Ising, rtol: float = 1e-6) -> tuple[int, float, float] | None:
    """(side, J, h) of a single model that is a homogeneous cyclic side×side lattice in ±1 spins
    (log p̃(s) = J Σ_edges s_i s_j + h Σ_i s_i, edges as :func:`lattice_edges`, side ≥ 3), in
    this model's log Z up to :func:`to_spins`' shift; None for any other model. Equal to ``rtol``
    (float32 parameters converted between conventions)."""
    side = math.isqrt(model.n)
    if model.n_trials or side * side != model.n or side < 3:
        return None
    spins, _ = to_spins(model, "pm1")
    J, h = to_numpy(spins.J).astype(np.float64), to_numpy(spins.h).astype(np.float64)
    edges = lattice_edges(side)
    coupling, field = float(J[edges[0, 0], edges[0, 1]]), float(h[0])
    expected = np.zeros_like(J)
    expected[edges[:, 0], edges[:, 1]] = expected[edges[:, 1], edges[:, 0]] = coupling
    scale = max(abs(coupling), abs(field), 1e-300)
    if not (
        np.allclose(J, expected, rtol=0, atol=rtol * scale)
        and np.allclose(h, field, rtol=0, atol=rtol * scale)
    ):
        return None
    return side, coupling, field


def exact_log_z(model: Ising) -> float | None:
    """log Z of a single model: by enumeration (n ≤ 25), else by the column transfer matrix when it
    is a cyclic lattice (:func:`lattice_parameters`; rbmlab.models.transfer_matrix), else None."""
    if model.n <= MAX_ENUMERATION:
        return float(model.exact_log_partition())
    lattice = lattice_parameters(model)
    if lattice is None or lattice[0] > TRANSFER_MATRIX_SIDE:
        return None
    from rbmlab.models.transfer_matrix import lattice_log_partition  # noqa: PLC0415

    _, shift = to_spins(model, "pm1")  # log Z(±1 form) = log Z + shift
    side, coupling, field = lattice
    return lattice_log_partition(side, coupling, field) - float(shift)


# ---------------------------------------------------------------- exact sampling
def sample_exact(model: Ising, rng, n_samples: int):
    """``n_samples`` independent draws by inverse CDF over all 2ⁿ states (n ≤ 20): u ~ U[0, 1),
    x = the first state (in index order) whose cumulative probability exceeds u. Returns
    (..., n_samples, n) in the model's dtype and unit values, trials broadcast."""
    n, xp = model.n, model.xp
    if n > MAX_EXACT_SAMPLING:
        raise ValueError(f"exact sampling enumerates 2^n states; n = {n} > {MAX_EXACT_SAMPLING}")
    log_p = xp.concatenate(list(model._log_unnormalized_chunks(65536)), axis=-1)
    log_p = log_p - logsumexp(log_p, axis=-1)[..., None]
    cdf = xp.cumsum(xp.exp(log_p), axis=-1)
    cdf /= cdf[..., -1:]
    lead = _lead(model)
    u = xp.asarray(rng.random(lead + (n_samples,)), dtype=xp.float64)
    # one sorted search for all trials: trial t's CDF and uniforms are offset by t
    offset = xp.arange(int(np.prod(lead)) if lead else 1, dtype=xp.float64).reshape(lead + (1,))
    flat = (cdf + offset).reshape(-1)
    idx = xp.searchsorted(flat, (u + offset).reshape(-1), side="right").reshape(lead + (n_samples,))
    idx = idx - (offset.astype(idx.dtype) << n)
    idx = xp.clip(idx, 0, 2**n - 1)
    return model.units.states_of(xp, idx, n, model.dtype)
