"""Denoising the binary symmetric channel with an RBM as the prior (tap paper §VII.4, Figs. 8–9).

A clean binary image x ∈ {0, 1}^N is observed through the BSC: each pixel flipped independently
with probability p. With the sign of Eqs. 44 and 46 corrected (we read the printed ln(p/(1 − p))
as a sign error: the OPE must return y at p = 0, §VII.4),

    P(y | x) ∝ exp(Σ_i D_i x_i),    D_i = ln((1 − p)/p) (2y_i − 1)                   (Eq. 44)

and three estimators of x from y are scored, each against the clean image by the Matthews
correlation coefficient, per image and then averaged (our choice, as is MCC = 0 where its
denominator is 0; the paper does not say):

    OPE    P(x_i = 1 | y_i) = σ(logit m_i + D_i), m_i the training pixel means clipped to
           [1e-6, 1 − 1e-6] (Eq. 46); y at p = 0, m at p = ½
    1-NN   the training image nearest to y (squared distance: Hamming for binary images)
    TAP    the posterior is the RBM with visible fields U_i + D_i (Eq. 47): Alg. 1 from the OPE,
           a^v⁽⁰⁾ = OPE, c^v⁽⁰⁾ = 0, to convergence
    const  the training mean image rounded at ½, whatever y is (our baseline, not the paper's):
           what an estimate that ignores the observation scores (the OPE at p = ½ is this image)

``tap_distinct``: the distinct binary TAP estimates over the split, per image (1/n: every noisy
image mapped to one and the same image, so its MCC is a constant image's, however high).

OPE and TAP estimates are their magnetisations rounded at ½ (x̂_i = 1 where a_i > ½). At p = 0 the
log-ratio is +∞ and D_i = ±∞: σ(±∞) = 1 or 0 exactly, so the OPE returns y and TAP stays at y
(c^v = 0, converged after one iteration), with no special case and no clipping. The channel noise
is one uniform draw u per pixel from a host stream keyed by ``seed`` alone, flipped where u < p:
every model and method sees the same noisy images, and the flips at p are a subset of those at
p' > p (Fig. 9: "the same noise realization is used for each method").
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from rbmlab.backend import host_rng, namespace, to_numpy
from rbmlab.backend.ops import sigmoid
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.base import Evaluator, EvaluatorConfig
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.inference import tap
from rbmlab.limits import EVALUATION_STEPS
from rbmlab.models.base import TapForm
from rbmlab.units.requirements import BERNOULLI
from rbmlab.validation import invalid, option

METHODS = ("tap", "ope", "nn", "const")
NN_BYTES = 2**28  # working memory of one 1-NN chunk (distances and training rows, float32)


@dataclass
class DenoisingConfig(EvaluatorConfig):
    name: str = option("denoising", "evaluator")
    flip: float = option(
        0.1, "p: probability that the channel flips a pixel", lo=0, hi=0.5, label="pixel flip probability"
    )
    seed: int = option(
        0, "the channel noise (the same for every model and method)", lo=0, label="channel noise seed"
    )
    methods: list[str] = option(list(METHODS), "estimators scored", choices=METHODS)
    damping: float = option(0.5, "new ← d·f + (1 − d)·old", lo=0, hi=1, open_lo=True)
    tol: float = option(1e-8, "convergence: mean-square change of the magnetisations", lo=0, open_lo=True)
    max_iter: int = option(1000, "TAP iteration cap", lo=1, hi=EVALUATION_STEPS)

    def check(self) -> None:
        super().check()
        if not self.methods:
            raise invalid("methods", f"must name at least one of {', '.join(METHODS)}")


def channel_field(y, p: float) -> np.ndarray:
    """D = ln((1 − p)/p)(2y − 1) (Eq. 44, sign corrected), float64 on the host: ±∞ at p = 0,
    0 at p = ½."""
    log_ratio = np.inf if p == 0 else np.log((1.0 - p) / p)
    return log_ratio * (2.0 * np.asarray(to_numpy(y), dtype=np.float64) - 1.0)


def bsc(x, p: float, rng: np.random.Generator) -> np.ndarray:
    """x (host, {0, 1}) through the binary symmetric channel: flipped where u < p, u ~ U[0, 1)."""
    x = np.asarray(x)
    return np.where(rng.random(x.shape) < p, 1 - x, x)


def ope(y, m, p: float) -> np.ndarray:
    """The optimal pointwise estimate P(x_i = 1 | y_i) (Eq. 46, sign corrected), float64."""
    m = np.clip(np.asarray(m, dtype=np.float64), 1e-6, 1 - 1e-6)
    return sigmoid(np.log(m) - np.log1p(-m) + channel_field(y, p))


def nearest_neighbour(y, train, max_bytes: int = NN_BYTES) -> np.ndarray:
    """Index (host) of the row of ``train`` nearest to each row of ``y`` in squared distance
    (Hamming for binary rows), ties to the lowest index: |t|² − 2 y·t by matmuls over chunks of
    training rows, in ``train``'s namespace, float32 (exact for counts below 2²⁴)."""
    xp = namespace(train)
    y = xp.asarray(y, dtype=xp.float32)
    chunk = max(1, max_bytes // (4 * (y.shape[0] + y.shape[1])))
    best = xp.full(y.shape[0], xp.inf, dtype=xp.float32)
    index = xp.zeros(y.shape[0], dtype=xp.int64)
    rows = xp.arange(y.shape[0])
    for lo in range(0, train.shape[0], chunk):
        t = xp.asarray(train[lo : lo + chunk], dtype=xp.float32)
        d = xp.sum(t * t, axis=1)[None, :] - 2.0 * (y @ t.T)
        j = xp.argmin(d, axis=1)
        better = d[rows, j] < best  # strict: an earlier chunk wins ties
        best = xp.where(better, d[rows, j], best)
        index = xp.where(better, j + lo, index)
    return to_numpy(index)


def tap_denoise(
    model, y, p: float, init, *, damping: float = 0.5, tol: float = 1e-8, max_iter: int = 1000
) -> tap.Solution:
    """TAP fixed points of the posterior of ``model`` given the noisy rows ``y``, started at the
    magnetisations ``init`` (the OPE) with c^v = 0; on the model's device."""
    xp, dtype = model.xp, model.dtype
    visible, hidden = model.tap_layers()
    D = xp.asarray(channel_field(y, p), dtype=dtype)
    return tap.solve(
        model.W,
        replace(visible, offset=D),
        hidden,
        xp.asarray(init, dtype=dtype),
        damping=damping,
        tol=tol,
        max_iter=max_iter,
    )


def mcc(estimate, truth) -> np.ndarray:
    """Matthews correlation coefficient of each row of the binary ``estimate`` against ``truth``
    (last axis: pixels), float64; 0 where (TP+FP)(TP+FN)(TN+FP)(TN+FN) = 0."""
    e, t = np.asarray(estimate, dtype=bool), np.asarray(truth, dtype=bool)
    tp, tn, fp, fn = (np.sum(c, axis=-1, dtype=np.float64) for c in (e & t, ~e & ~t, e & ~t, ~e & t))
    den = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return np.where(den > 0, (tp * tn - fp * fn) / np.where(den > 0, den, 1.0), 0.0)


@dataclass(frozen=True)
class Denoised:
    """What each method makes of the noisy images (host, rows): magnetisations for OPE and TAP
    (Fig. 9 shows them), the nearest training images for 1-NN; None for methods not run."""

    noisy: np.ndarray
    ope: np.ndarray
    nn: np.ndarray | None
    tap: np.ndarray | None
    const: np.ndarray  # the training mean image, one row per image
    iterations: int  # TAP iterations until every image converged (or the cap)

    def estimate(self, method: str) -> np.ndarray:
        """The binary estimate of ``method``: its magnetisations rounded at ½."""
        return getattr(self, method) > 0.5


def denoise_images(model, x, train, data_mean, config: DenoisingConfig) -> Denoised:
    """The clean rows ``x`` through the channel (p = ``config.flip``, noise keyed by
    ``config.seed``), then denoised by each of ``config.methods``; ``train``: the 1-NN exemplars,
    ``data_mean``: the OPE's pixel means."""
    p = config.flip
    y = bsc(to_numpy(x), p, host_rng(config.seed))
    a = ope(y, to_numpy(data_mean), p)
    nn = tap_a = None
    iterations = 0
    if "nn" in config.methods:
        nn = to_numpy(train[namespace(train).asarray(nearest_neighbour(y, train))])
    if "tap" in config.methods:
        s = tap_denoise(model, y, p, a, damping=config.damping, tol=config.tol, max_iter=config.max_iter)
        tap_a, iterations = to_numpy(s.a_v), s.iterations
    const = np.broadcast_to(np.asarray(to_numpy(data_mean), dtype=np.float64), y.shape)
    return Denoised(y, a, nn, tap_a, const, iterations)


def require_binary_visible(model) -> None:
    """The channel flips {0, 1} pixels: refuse other visible units (spins, real-valued priors)."""
    if model.visible != "bernoulli":
        raise RbmlabError(
            f"evaluator=denoising: the bit-flip channel needs Bernoulli {{0, 1}} "
            f"visible units; this model has visible={model.visible}"
        )


class Denoising(Evaluator):
    """Denoising through the binary symmetric channel with the model as prior (tap paper Sec. VII.4,
    Figs. 8–9): the estimators (such as the OPE of Eq. 46 and TAP) scored against the clean images by
    the Matthews correlation coefficient.

    Registered as ``denoising``; options (``flip``, ``methods``, ``max_iter``, ...) in
    :class:`DenoisingConfig`.
    """

    config_class = DenoisingConfig
    units = {"visible": BERNOULLI}  # the bit-flip channel of {0, 1} pixels
    requires = (TapForm,)
    metrics = (
        *(
            MetricSpec(
                f"mcc_{m}",
                "MCC",
                True,
                description=f"mean Matthews correlation of "
                f"the {name} estimate with the clean image (tap Fig. 8)",
                label=f"MCC of the {name.split(' (')[0]} estimate",
            )
            for m, name in zip(
                METHODS, ("TAP-RBM", "optimal pointwise", "1-NN", "constant (training mean image, rounded)")
            )
        ),
        MetricSpec(
            "tap_distinct",
            "fraction",
            False,
            description="distinct binary TAP estimates per image of the split (1/n: one constant image)",
            label="distinct TAP estimates per image",
        ),
        MetricSpec(
            "denoise_iterations",
            "iterations",
            False,
            description="TAP iterations until every image of the split converged (or the cap)",
            label="TAP denoising iterations",
        ),
    )

    def evaluate(self, model, splits, context):
        require_binary_visible(model)
        train = context.train.inputs
        mean = context.data_mean if context.data_mean is not None else to_numpy(train).mean(axis=0)
        metrics = {}
        for name, batch in splits.items():
            d = denoise_images(model, batch.inputs, train, mean, self.config)
            truth = to_numpy(batch.inputs) > 0.5
            metrics.update(
                {f"{name}_mcc_{m}": float(mcc(d.estimate(m), truth).mean()) for m in self.config.methods}
            )
            if "tap" in self.config.methods:
                metrics[f"{name}_denoise_iterations"] = d.iterations
                estimates = d.estimate("tap")
                metrics[f"{name}_tap_distinct"] = len(np.unique(estimates, axis=0)) / len(estimates)
        return metrics

    def headline(self, metrics, split):
        scores = ", ".join(f"{m} {metrics[f'{split}_mcc_{m}']:.4f}" for m in self.config.methods)
        return f"{split} denoising MCC at p = {self.config.flip:g}: {scores}"
