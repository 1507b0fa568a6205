"""The visible-bias loop of Frank-Wolfe for infinite RBMs (frank_wolfe Alg. 1 lines 6–10, Eq. 10).

After each new unit Alg. 1 repeats b ← b + η (mean of the data − mean of M model samples)
"until" a condition the paper's text has lost. The log-likelihood is concave in b (Prop. 3.1),
so the loop has one fixed point, E_p[v] = d (the data means), and the question is only how to
reach it with noisy model means. Two forms:

``fixed``     K plain steps of size η (the loop as printed, K fixed): it lags wherever the model
              moved far, and at small λ (large units) 500 steps leave b far from its optimum.
``converge``  Fisher steps until the residual d − m is at its Monte-Carlo noise floor, then
              the average of ``average`` more iterates (Polyak–Ruppert) as the answer.

Fisher step. b is the natural parameter of an exponential family, so the Hessian of the
log-likelihood in b is −Cov_p(v), the Fisher information. It is estimated from the M chains
(rank < M) plus the ridge diag(ρ), ρ = d̃(1 − d̃) + 1/M: the Bernoulli variances the model has at
the fixed point (d̃: the data means clipped as the base rate), floored by the resolution 1/M of a
mean over M chains: without the floor a pixel on in 0.1 % of the data moves by lr/(Mρ) ≈ 5 lr
when one chain flips (b drifted to 15 on Caltech's near-constant pixels). Ĉ's own diagonal is
≈ ρ too, so along weakly correlated pixels the step is about half a Newton step (lr = 1 is not a
full one); along strongly correlated ones Ĉ dominates and it is nearly Newton's. The step is

    b ← b + lr · (Ĉ + diag(ρ))⁻¹ (d − m),        Ĉ = (1/M) Σ_m (v_m − m)(v_m − m)ᵀ,

solved in the smaller of M and D dimensions (Woodbury). Strongly correlated pixels (Caltech's
silhouettes: the correlation matrix's top eigenvalue is ≈ 90) make a diagonal or plain step
either unstable or slow; this one is a Newton step along them and a damped one elsewhere.

Stopping rule. With the chains at equilibrium and b at its optimum, each m_j has Monte-Carlo
variance d̃_j(1 − d̃_j)/M, so z² = mean_j M (d_j − m_j)² / ρ_j has expectation ≤ 1 (a little more
with the iterates' own noise; ρ's floor keeps a rare pixel's single flips from dominating it). The
descent ends when z² averaged over the last ``window`` steps is ≤ 1 + ``tol``; ``max_steps`` caps
descent and averaging together, and a fit that hits it says so (:class:`BiasFit`). Where a window
of the descent does not lower z² (the chains lag a step that moved b too far, or the Fisher
estimate from few distinct chains is poor), the step halves, down to lr/32; a window that does not
lower z² at lr/32 ends the descent too (the chains' lag keeps z² above 1 + tol: on Caltech at λ/t,
z² settles near 2.2 from the 14th unit). The averaging goes on past ``average`` steps until the
chains' R̂ over it is ≤ ``rhat``: the chains must have mixed over the window, or the model means
they report are those of the modes they started in, and a residual at its noise floor says nothing
(on the shifting bar at λ = 0.01 a fixed 130-step fit left b 0.3–1.0 nats from its optimum with z²
at the floor; R̂ ≤ 1.1 brings it within 0.02).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from rbmlab.backend import macs, namespace


@dataclass(frozen=True)
class BiasFit:
    steps: int  # bias steps taken (descent + averaging)
    converged: bool  # False: ``max_steps`` was hit before the rules ended descent and averaging
    plateau: bool  # the descent ended because z² stopped falling at lr/32, not at 1 + tol
    z2: float  # the descent's last window's mean z² (≈ 1 at the noise floor)
    rhat: float  # the chains' R̂ over the averaging phase (≈ 1: they mixed)


def fisher_step(chains, residual, ridge):
    """(Ĉ + diag(ridge))⁻¹ residual, Ĉ the chains' covariance, by Woodbury when M < D."""
    xp = namespace(chains)
    m = chains.shape[0]
    u = (chains - chains.mean(axis=0)) * (1.0 / m) ** 0.5  # (M, D): Ĉ = uᵀu
    inv_ridge = 1.0 / ridge
    if m >= chains.shape[1]:
        return xp.linalg.solve(u.T @ u + xp.diag(ridge), residual)
    scaled = u * inv_ridge  # u diag(ridge)⁻¹
    core = xp.eye(m, dtype=u.dtype) + scaled @ u.T  # I + u D⁻¹ uᵀ
    return residual * inv_ridge - scaled.T @ xp.linalg.solve(core, scaled @ residual)


def fisher_step_cost(m: int, d: int) -> float:
    """Multiply-adds of :func:`fisher_step` with M = ``m`` chains of D = ``d`` pixels: uᵀu
    (M·D²) and a D-system (rbmlab.backend.macs.lu_solve) when M ≥ D; by Woodbury u D⁻¹ uᵀ
    (M²·D), an M-system and two matrix-vector products (2·M·D) otherwise."""
    if m >= d:
        return m * d * d + macs.lu_solve(d)
    return m * m * d + 2 * m * d + macs.lu_solve(m)


def ridge_variance(data_mean, n_chains: int, clip: float = 1e-3):
    """ρ = d̃(1 − d̃) + 1/M: each pixel's Bernoulli variance at the fixed point (d̃ clipped as the
    base rate), floored by the resolution of a mean over ``n_chains`` chains."""
    p = namespace(data_mean).clip(data_mean, clip, 1.0 - clip)
    return p * (1.0 - p) + 1.0 / n_chains


def fit_to_convergence(
    b,
    chains,
    data_mean,
    advance,
    *,
    lr: float,
    tol: float,
    window: int,
    average: int,
    rhat: float,
    max_steps: int,
):
    """The ``converge`` form of the module docstring. ``advance(b, chains)`` moves the chains
    (a kernel invariant for the model with visible bias ``b``); returns (b, chains, BiasFit)."""
    xp = namespace(b)
    n_chains = chains.shape[0]
    ridge = ridge_variance(data_mean, n_chains).astype(b.dtype)
    lr_floor = lr / 32
    z2s: deque[float] = deque(maxlen=window)
    averaging, step, previous, plateau = None, 0, float("inf"), False
    while step < max_steps:
        step += 1
        chains = advance(b, chains)
        residual = data_mean - chains.mean(axis=0)
        b = b + lr * fisher_step(chains, residual, ridge)
        if averaging is not None:
            averaging.add(b, chains)
            if averaging.steps >= average and averaging.rhat() <= rhat:
                return averaging.b(), chains, BiasFit(step, True, plateau, _mean(z2s), averaging.rhat())
            continue
        z2s.append(float((residual * residual / ridge).mean()) * n_chains)
        if len(z2s) < window or step % window:
            continue
        z2 = _mean(z2s)
        plateau = z2 > 1.0 + tol and z2 >= previous and lr == lr_floor
        if z2 <= 1.0 + tol or plateau:  # at the noise floor, or as low as the chains' lag lets it
            if average == 0:
                return b, chains, BiasFit(step, True, plateau, z2, float("nan"))
            averaging = Averages(xp.zeros_like(b), xp.zeros_like(chains))
        elif z2 >= previous:  # a window that did not lower z²: a smaller step
            lr = max(lr / 2, lr_floor)
        previous = z2
    if averaging is not None and averaging.steps:
        return averaging.b(), chains, BiasFit(step, False, plateau, _mean(z2s), averaging.rhat())
    return b, chains, BiasFit(step, False, plateau, _mean(z2s), float("nan"))


class Averages:
    """Running sums over the averaging phase: the bias iterates (Polyak–Ruppert) and each chain's
    states, whose time means give the chains' potential scale reduction R̂ (Gelman & Rubin 1992)."""

    def __init__(self, b_sum, chain_sums):
        self.b_sum, self.chain_sums, self.steps = b_sum, chain_sums, 0

    def add(self, b, chains):
        self.b_sum += b
        self.chain_sums += chains
        self.steps += 1

    def b(self):
        return self.b_sum / self.steps

    def rhat(self) -> float:
        """√(V̂ / W) pooled over pixels: W the mean within-chain variance, V̂ = (T − 1)/T W + B/T
        with B/T the variance of the chains' time means. Binary states: a chain's within variance
        is p(1 − p) of its time mean p. ≈ 1 once every chain has visited what the others have;
        large while chains sit in different modes over many pixels (pooled, a few stuck pixels
        among many mixing ones barely move it); ∞ when no chain moved at all."""
        t = self.steps
        if t < 2:
            return float("inf")
        means = self.chain_sums / t
        within = float((means * (1.0 - means)).mean(axis=0).sum()) * t / (t - 1)
        between = float(means.var(axis=0).sum())
        if within == 0.0:  # no chain moved: nothing says they mixed
            return float("inf")
        return ((t - 1) / t + between / within) ** 0.5


def _mean(values) -> float:
    return sum(values) / len(values) if values else float("nan")
