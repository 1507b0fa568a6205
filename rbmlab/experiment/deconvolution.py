"""pmp Sec. 5.6's Bayesian binary blind deconvolution (Figure 4 bottom, Figure 5 right), an
``inference`` problem (rbmlab.experiment.inference): perturb-and-max-product posterior samples
(App. C.3), and the paper's failing baselines: single-site Gibbs (``sampler=gibbs``) and informed
single-flip proposals, the Gibbs-with-gradients scheme with exact flip differences (``sampler=gwg``).

The posterior p(W, S | X) of the OR-convolution model (rbmlab.models.convolution_or, pmp Eq. 1)
given the images X: Bernoulli(p_w) features W (K, fh, fw), Bernoulli(p_s) locations S (N, K, h, w)
as unary log-odds logit(p), the observed X as hard evidence ±(−logit(p_e)) = ±230.26. A PMP sample
adds Logistic(0, 1) to the W and S log-odds only (X is not perturbed), runs ``sweeps`` damped
flooding max-product sweeps (rbmlab.inference.max_product) from zero messages and decodes
belief > 0; the B = ``n_samples`` samples are solved at once (the authors ran seeds 40–44 one at
a time; the samples are independent either way). ``sampler=gibbs``: ``n_samples`` independent
single-site Gibbs chains (rbmlab.inference.deconvolution_gibbs) from draws of the priors, each for
``sweeps`` sweeps or, with ``seconds`` > 0, for its share of that wall-clock budget (an equal-time
comparison with PMP's); ``sampler=gwg``: the same chains moved by rbmlab.inference.deconvolution_gwg
(``sweeps`` counts full sweeps of single-flip proposals, one per site); ``sampler=lp``: PmapLP,
one LP relaxation of the perturbed MAP problem a sample (rbmlab.inference.deconvolution_lp), the
Discussion's "LP-based MAP solvers". Their ``objective`` is the unperturbed ln p(W, S, X).

Nothing is trained and the single "model" is the whole posterior of one dataset (W is shared by
every image), so this is not a runner model family but an experiment of the ``inference`` kind:
experiments/pmp/figure-4-deconvolution{,-gibbs,-gwg}.yaml, ``inference: {problem: deconvolution,
<DeconvolutionConfig options>, dataset: {<rbmlab.data.deconvolution.DeconvolutionOptions>}}``.
:func:`run` is the experiment (data, samples, metrics, figure) as a function.

Metrics per sample: ``reconstruction``, the share of X's pixels that the OR-convolution of the
sampled (W, S) reproduces (1 for a sample that explains the data); ``features_matching``, the
sampled features equal to a ground-truth feature up to translation inside the fh × fw frame;
``truth_recovered``, the ground-truth features so found (of 4); ``empty_features``, all-zero ones.
"""

from __future__ import annotations

import io
import json
import math
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rbmlab.backend import host_rng, namespace
from rbmlab.inference.max_product import logistic_noise, perturb_and_max_product
from rbmlab.limits import CHAINS, EVALUATION_STEPS, UNITS
from rbmlab.models.convolution_or import deconvolution_graph, or_convolve
from rbmlab.storage.fileio import write_error
from rbmlab.storage.publish import publish
from rbmlab.validation import invalid, option, parse_options


@dataclass(frozen=True)
class DeconvolutionConfig:
    """The posterior and the sampler (defaults: pmp Sec. 5.6's sizes and sweeps; the priors p_s, p_w,
    p_e are the authors' code's, the paper does not give them)."""

    n_features: int = option(5, "features K sampled (the data have 4)", lo=1, hi=UNITS)
    feature_side: int = option(6, "feature side fh = fw (the data's are 5)", lo=1, hi=UNITS)
    p_s: float = option(0.01, "prior P(S = 1)", lo=0.0, hi=1.0, open_lo=True, open_hi=True)
    p_w: float = option(0.25, "prior P(W = 1)", lo=0.0, hi=1.0, open_lo=True, open_hi=True)
    p_e: float = option(
        1e-100, "evidence flip probability: X log-odds ±(−logit(p_e))", lo=0.0, hi=0.5, open_lo=True
    )
    n_samples: int = option(5, "posterior samples, solved at once", lo=1, hi=CHAINS)
    sweeps: int = option(1000, "max-product sweeps from zero messages", lo=1, hi=EVALUATION_STEPS)
    damping: float = option(0.5, "m ← m + damping (m_new − m); 1 = undamped", lo=0.0, hi=1.0, open_lo=True)
    seed: int = option(0, "seed of the perturbations", lo=0)
    sampler: str = option(
        "pmp",
        "pmp (the paper's), gibbs (single-site Gibbs chains), gwg (informed "
        "single-flip proposals): its baselines; lp: perturb-and-MAP with the LP "
        "relaxation (PmapLP, the Discussion's LP-based MAP solver)",
        choices=("pmp", "gibbs", "gwg", "lp"),
    )
    seconds: float = option(
        0.0,
        "gibbs, gwg: the wall-clock budget of all chains together (0: run ``sweeps`` sweeps each)",
        lo=0.0,
    )
    clamp: str = option(
        "none",
        "gwg: hold W or S at the ground truth and sample the other (Sec. 5.6: "
        "'GWG did work when S or W were clamped to the true values'); needs "
        "the truth's sizes, n_features=4 and feature_side=5",
        choices=("none", "W", "S"),
    )

    def __post_init__(self) -> None:
        from rbmlab.data.deconvolution import FEATURES  # noqa: PLC0415

        if self.sampler == "lp" and self.seconds:
            raise invalid("seconds", "applies to sampler=gibbs or gwg, not lp (one LP solve a sample)")
        if self.clamp == "none":
            return
        if self.sampler != "gwg":
            raise invalid("clamp", f"applies to sampler=gwg only, not {self.sampler}")
        K, side, _ = FEATURES.shape
        if (self.n_features, self.feature_side) != (K, side):
            raise invalid(
                "clamp",
                f"holds a block at the ground truth, which has {K} features of "
                f"{side} x {side}: set n_features={K} and feature_side={side} "
                f"(got {self.n_features} and {self.feature_side})",
            )


@dataclass(frozen=True)
class PosteriorSamples:
    W: Any  # (B, K, fh, fw) {0, 1}
    S: Any  # (B, N, K, h, w) {0, 1}
    objective: Any  # (B,) perturbed log-posterior (unnormalised) at each sample


def sample_posterior(X, config: DeconvolutionConfig, rng) -> PosteriorSamples:
    """``config.n_samples`` PMP samples of p(W, S | X) for images X (N, H, W') in {0, 1}."""
    c = config
    graph = deconvolution_graph(
        X, c.n_features, (c.feature_side, c.feature_side), p_s=c.p_s, p_w=c.p_w, p_e=c.p_e, dtype=X.dtype
    )
    group = graph.groups[0]
    noise = logistic_noise(rng, (c.n_samples, graph.n), graph.unary.dtype)
    noise[:, graph.n - group.sizes[2] :] = 0.0  # the observed X is not perturbed
    x, objective = perturb_and_max_product(graph, rng, c.n_samples, c.sweeps, damping=c.damping, noise=noise)
    W, S, _ = group.split(x)
    return PosteriorSamples(W, S, objective)


def chain_posterior(X, config: DeconvolutionConfig, rng, truth=None) -> tuple[PosteriorSamples, list[float]]:
    """(samples, sweeps run by each chain): ``config.n_samples`` Gibbs or GWG chains from the
    priors (GWG: proposals / sites; with ``config.clamp``, the clamped block starts and stays at
    ``truth`` = (W, S) and a sweep is one proposal per site of the other block)."""
    from rbmlab.inference import deconvolution_gibbs as dg  # noqa: PLC0415
    from rbmlab.inference import deconvolution_gwg as gwg  # noqa: PLC0415

    c = config
    priors = {"p_w": c.p_w, "p_s": c.p_s, "p_e": c.p_e}
    chains = [dg.start(rng, X, c.n_features, c.feature_side, c.p_w, c.p_s) for _ in range(c.n_samples)]
    if c.clamp != "none":
        for chain in chains:
            chain.W, chain.S = (
                (truth[0].astype(np.int8), chain.S) if c.clamp == "W" else (chain.W, truth[1].astype(np.int8))
            )
            chain.C = dg.counts(chain.W, chain.S)
    # a Gibbs chain counts sweeps; a GWG chain counts proposals, one sweep's worth per (free) site
    sites = {"none": chains[0].W.size + chains[0].S.size, "W": chains[0].S.size, "S": chains[0].W.size}[
        c.clamp
    ]
    run_chain, unit, per_sweep, own = (
        (dg.run_chain, "sweeps", 1, {})
        if c.sampler == "gibbs"
        else (gwg.run_chain, "steps", sites, {"clamp": c.clamp})
    )
    budget = {"seconds": c.seconds / c.n_samples} if c.seconds else {unit: c.sweeps * per_sweep}
    for chain in chains:
        run_chain(chain, X, rng, **budget, **priors, **own)
    sweeps = [chain.sweeps / per_sweep for chain in chains]
    W = np.stack([chain.W for chain in chains]).astype(X.dtype)
    S = np.stack([chain.S for chain in chains]).astype(X.dtype)
    objective = np.array([dg.log_joint(chain.W, chain.S, X, c.p_w, c.p_s, c.p_e) for chain in chains])
    return PosteriorSamples(W, S, objective), sweeps


def lp_posterior(X, config: DeconvolutionConfig, rng) -> tuple[PosteriorSamples, list[float]]:
    """(samples, the share of each relaxed solution's sites that are fractional): PmapLP, the W and
    S log-odds perturbed by Logistic(0, 1) noise as PMP's (X is not), one LP solve each
    (rbmlab.inference.deconvolution_lp), rounded ½ → 0; the objective is the unperturbed
    ln p(W, S, X) of the rounded state."""
    from rbmlab.inference import deconvolution_gibbs as dg  # noqa: PLC0415
    from rbmlab.inference import deconvolution_lp as dlp  # noqa: PLC0415

    c = config
    X = np.asarray(X, dtype=np.float64)
    N, H, Wd = X.shape
    lp = dlp.constraints(X, c.n_features, c.feature_side)
    shape_w = (c.n_features, c.feature_side, c.feature_side)
    shape_s = (N, c.n_features, H - c.feature_side + 1, Wd - c.feature_side + 1)
    Ws, Ss, objective, fractional = [], [], [], []
    for _ in range(c.n_samples):
        noise = logistic_noise(rng, (lp.n_w + lp.n_s,), np.float64)
        relaxed, _ = dlp.solve(lp, dg.logit(c.p_w) + noise[: lp.n_w], dg.logit(c.p_s) + noise[lp.n_w :])
        x = dlp.rounded(relaxed)
        fractional.append(float(np.mean(np.abs(relaxed - x) > 1e-6)))
        Ws.append(x[: lp.n_w].reshape(shape_w))
        Ss.append(x[lp.n_w :].reshape(shape_s))
        objective.append(dg.log_joint(Ws[-1], Ss[-1], X, c.p_w, c.p_s, c.p_e))
    return PosteriorSamples(np.stack(Ws), np.stack(Ss), np.array(objective)), fractional


def reconstruction(W, S, X):
    """(B,) share of the pixels of X (N, H, W') that OR-convolving each sample's S and W reproduces."""
    return (or_convolve(S, W) == X).reshape(W.shape[0], -1).mean(axis=1)


def translations(features, side: int):
    """(G, D, side, side): each feature (G, f, f) placed at every offset inside a side × side frame."""
    xp = namespace(features)
    G, fh, fw = features.shape
    offsets = [(dy, dx) for dy in range(side - fh + 1) for dx in range(side - fw + 1)]
    out = xp.zeros((G, len(offsets), side, side), dtype=features.dtype)
    for d, (dy, dx) in enumerate(offsets):  # a handful of offsets (4 for 5 × 5 in 6 × 6)
        out[:, d, dy : dy + fh, dx : dx + fw] = features
    return out


def feature_matches(W, truth):
    """(B, K, G) booleans: sampled feature k of sample b equals ground-truth feature g (G, f, f) up
    to a translation inside the sample's frame."""
    placed = translations(truth, W.shape[-1])  # (G, D, fh, fw)
    same = (W[:, :, None, None] == placed[None, None]).all(axis=(-1, -2))
    return same.any(axis=-1)


def metrics(samples: PosteriorSamples, X, truth_W) -> dict[str, list[float]]:
    """Per sample: reconstruction, features_matching, truth_recovered, empty_features, objective."""
    match = feature_matches(samples.W, truth_W)
    as_list = lambda a: [float(v) for v in np.asarray(a).tolist()]  # noqa: E731
    return {
        "reconstruction": as_list(reconstruction(samples.W, samples.S, X)),
        "features_matching": as_list(match.any(axis=2).sum(axis=1)),
        "truth_recovered": as_list(match.any(axis=1).sum(axis=1)),
        "empty_features": as_list((samples.W.sum(axis=(2, 3)) == 0).sum(axis=1)),
        "objective": as_list(samples.objective),
    }


def run(
    out: Path,
    dataset: dict[str, Any] | None = None,
    config: DeconvolutionConfig = DeconvolutionConfig(),
    echo=print,
) -> dict[str, Any]:
    """The Sec. 5.6 experiment: the ``deconvolution`` dataset (``dataset``: its options), PMP
    posterior samples, their metrics; writes samples.npz, metrics.json, figure-4.png and
    figure-5-data.png (the whole dataset) to ``out``."""
    from rbmlab.data import load_dataset  # noqa: PLC0415
    from rbmlab.data.deconvolution import truth_arrays  # noqa: PLC0415
    from rbmlab.report.deconvolution import plot_dataset, plot_posterior_features  # noqa: PLC0415

    data = load_dataset("deconvolution", **(dataset or {}))
    X = data.train.reshape((-1,) + data.image_shape)
    truth_W, truth_S = truth_arrays(data)
    try:  # before the sampling: a bad OUT_DIR must not cost the run
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise write_error(out, e, "deconvolution results") from None
    budget = (
        "one LP solve"
        if config.sampler == "lp"
        else f"{config.seconds:g} s"
        if config.sampler != "pmp" and config.seconds
        else f"{config.sweeps} sweeps"
    )
    clamped = "" if config.clamp == "none" else f", {config.clamp} clamped to the truth"
    echo(
        f"deconvolution: {X.shape[0]} images {X.shape[1]}x{X.shape[2]}, {config.n_samples} {config.sampler} "
        f"samples x {budget}, K={config.n_features}, "
        f"{config.feature_side}x{config.feature_side} features{clamped}"
    )
    start = time.perf_counter()
    extra = {}
    if config.sampler == "lp":
        samples, extra["fractional"] = lp_posterior(X, config, host_rng(config.seed))
        sweeps = [1.0] * config.n_samples  # one LP solve a sample
    elif config.sampler != "pmp":
        samples, sweeps = chain_posterior(X, config, host_rng(config.seed), (truth_W, truth_S))
    else:
        samples, sweeps = (
            sample_posterior(X, config, host_rng(config.seed)),
            [config.sweeps] * config.n_samples,
        )
    seconds = time.perf_counter() - start
    result = {
        "config": asdict(config),
        "dataset": data.info["options"],
        "seconds": seconds,
        "sweeps": sweeps,  # per sample; PMP sweeps all samples at once, the Gibbs chains one by one
        "seconds_per_sweep": seconds / (config.sweeps if config.sampler == "pmp" else sum(sweeps)),
        **metrics(samples, X, truth_W),
        **extra,
    }
    if config.clamp != "none":  # the ground truth's own ln p(W, S, X), for the samples' objective
        from rbmlab.inference.deconvolution_gibbs import log_joint  # noqa: PLC0415

        result["truth_objective"] = log_joint(truth_W, truth_S, X, config.p_w, config.p_s, config.p_e)
    arrays = io.BytesIO()
    np.savez_compressed(arrays, W=samples.W, S=samples.S, objective=samples.objective, X=X)
    publish(
        {
            out / "samples.npz": arrays.getvalue(),  # all four or none
            out / "metrics.json": json.dumps(result, indent=2) + "\n",
            out / "figure-4.png": plot_posterior_features(samples.W, truth_W, X[:9]),
            out / "figure-5-data.png": plot_dataset(X),
        },
        what="deconvolution results",
    )
    summary = {
        k: (float(np.mean(v)) if isinstance(v, list) else v)
        for k, v in result.items()
        if k not in ("config", "dataset")
    }
    echo(
        json.dumps(
            {k: round(v, 4) if isinstance(v, float) and math.isfinite(v) else v for k, v in summary.items()}
        )
    )
    return result


@dataclass(frozen=True)
class Options:
    """A deconvolution experiment's checked options: the sampler's and the dataset's."""

    config: DeconvolutionConfig
    dataset: dict[str, Any]


class Deconvolution:
    """The ``deconvolution`` problem of the ``inference`` kind: options as ``DeconvolutionConfig``'s
    keys and ``dataset: {DeconvolutionOptions}``; writes samples.npz, metrics.json, figure-4.png
    and figure-5-data.png to its results directory (:func:`run`)."""

    name = "deconvolution"

    def parse(self, options: dict[str, Any], prefix: str) -> Options:
        """The options checked (one line naming ``<prefix>.<key>`` on a bad one), data unloaded."""
        from rbmlab.data.deconvolution import DeconvolutionOptions  # noqa: PLC0415

        own = {k: v for k, v in options.items() if k != "dataset"}
        dataset = options.get("dataset") or {}
        config = parse_options(DeconvolutionConfig, own, prefix, f"inference problem {self.name}")
        checked = parse_options(DeconvolutionOptions, dataset, f"{prefix}.dataset", "dataset deconvolution")
        return Options(config, asdict(checked))

    def run(self, options: Options, out: Path, echo=print) -> dict[str, Any]:
        return run(out, options.dataset, options.config, echo)
