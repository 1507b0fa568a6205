"""``evaluator=map_time``: the sweeps a sampler takes to reach an answer known exactly.

pmp Sec. 3: "consider a simple chain EBM: Gibbs sampling can be exponentially slow [1], whereas
PMP finds the optimal configuration in linear time" (and its Discussion: "exponentially faster
than Gibbs sampling, both theoretically in the case of chains and ..."). For a fully visible
model small enough to enumerate, each of ``n_chains`` trials is timed in full sweeps:

  Markov chains (gibbs, gwg): a chain starts at the mirror image of the model's MAP state x*
  (every unit at its other value: the far mode of a ferromagnet) and runs one sweep at a time;
  its time is the first sweep after which it is at x*.                                      (1)

  PMP: a trial is one perturbed problem (the sampler's Logistic(0, 1) noise on the unary
  log-odds, pmp Sec. 2.2), whose MAP is found by enumerating every state; its time is the first
  sweep count from which damped max-product's decoding is that MAP at every sweep up to
  ``max_sweeps`` (pmp Alg. 1 run one sweep at a time).                                       (2)

Reported: the median time over the trials (NaN when fewer than half reach the answer within
``max_sweeps``), the largest (NaN when any does not), and the share that reach it. Both times
count sweeps, not seconds (a max-product sweep costs about as much as three Gibbs sweeps here;
see pmp/speed). Float64 throughout: a near tie of two states in float32 could make the
enumerated answer and the sampler's disagree for a reason that is not the sampler's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rbmlab.backend import namespace, to_numpy
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.base import Evaluator, EvaluatorConfig
from rbmlab.evaluators.kl import all_visible_states
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.evaluators.sampling import as_binary, parse_sampler, sampler_for
from rbmlab.inference.max_product import decode, logistic_noise, max_product
from rbmlab.limits import CHAINS, EVALUATION_STEPS, EXACT_SAMPLING_UNITS, exceeds
from rbmlab.models.base import Enumerable
from rbmlab.validation import option

CHAIN_SAMPLERS = ("gibbs", "gwg")  # Markov chains that go on from the states they are given: (1)
MAX_PRODUCT_SAMPLERS = ("pmp",)  # perturbed problems solved by max-product sweeps: (2)
CHECK_EVERY = 256  # sweeps between the host's looks at whether every chain arrived
SCORE_ELEMENTS = 1 << 23  # (problems x states) scores held at once in (2)


@dataclass
class MapTimeConfig(EvaluatorConfig):
    reads_examples = False  # times the sampler on the model alone
    name: str = option("map_time", "evaluator")
    sampler: Any = option(
        None,
        "gibbs | gwg (chains from the mirror of the MAP state, (1)) | pmp "
        "(perturbed problems by max-product, (2))",
        parse=parse_sampler,
        label="sampler",
    )
    n_chains: int = option(
        100, "trials: chains (1) or perturbed problems (2)", lo=1, hi=CHAINS, label="trials"
    )
    max_sweeps: int = option(
        10_000, "sweeps before a trial counts as not arrived", lo=1, hi=EVALUATION_STEPS, label="sweep cap"
    )


def unique_argmax(scores, what: str):
    """The row index of the largest of ``scores`` (..., S) along its last axis; a one-line error
    when the top two are tied to 1e-9 (the answer would not be one state)."""
    top2 = np.sort(to_numpy(scores), axis=-1)[..., -2:]
    if np.any(top2[..., 1] - top2[..., 0] <= 1e-9 * np.maximum(1.0, np.abs(top2[..., 1]))):
        raise RbmlabError(
            f"evaluator=map_time: {what} has more than one MAP state (a tie); "
            "give the model a field that breaks it"
        )
    return scores.argmax(axis=-1)


def chain_times(model, sampler, n_chains: int, max_sweeps: int, rng):
    """(1): (n_chains,) int sweeps to first reach x*, 0 for a chain that did not within max_sweeps."""
    xp = model.xp
    states = all_visible_states(model)
    x_star = states[int(unique_argmax(model.log_unnormalized(states), "the model"))]
    lo, hi = model.visible_units.values
    x = xp.broadcast_to(lo + hi - x_star, (n_chains, x_star.shape[0])).astype(model.dtype)
    target = x_star.astype(model.dtype)
    first = xp.zeros(n_chains, dtype=xp.int64)
    for sweep in range(1, max_sweeps + 1):
        x = sampler.run(model, x, rng, 1)
        arrived = (x == target).all(axis=1) & (first == 0)
        first = xp.where(arrived, sweep, first)
        if sweep % CHECK_EVERY == 0 and bool((first > 0).all()):
            break
    return to_numpy(first)


def perturbed_answers(graph, states, noise):
    """(B, n) {0, 1}: each perturbed problem's MAP over ``states`` (every {0, 1} state of
    ``graph``), the argmax of noise·x + log p̃(x), scored a block of problems at a time."""
    xp = namespace(noise)
    base = graph.log_unnormalized(states)[None, :]
    rows = max(1, SCORE_ELEMENTS // states.shape[0])
    return xp.concatenate(
        [
            states[unique_argmax(noise[i : i + rows] @ states.T + base, "a perturbed problem")]
            for i in range(0, noise.shape[0], rows)
        ]
    )


def max_product_times(model, damping: float, n_chains: int, max_sweeps: int, rng):
    """(2): (n_chains,) int sweeps from which max-product decodes each perturbed problem's MAP
    for good, 0 for a problem still decoded wrong at sweep max_sweeps."""
    xp = model.xp
    graph = model.factor_graph()
    noise = logistic_noise(rng, (n_chains, graph.n), xp.float64)
    answer = perturbed_answers(graph, as_binary(model.visible_units, all_visible_states(model)), noise)
    unary = graph.unary[None, :] + noise
    last_wrong = xp.zeros(n_chains, dtype=xp.int64)
    messages = None
    for sweep in range(1, max_sweeps + 1):
        result = max_product(graph, unary, 1, damping=damping, messages=messages)
        messages = result.messages
        wrong = (decode(result.beliefs) != answer).any(axis=1)
        last_wrong = xp.where(wrong, sweep, last_wrong)
    times = to_numpy(last_wrong) + 1
    return np.where(times > max_sweeps, 0, times)


def summary(times: np.ndarray, max_sweeps: int) -> dict[str, float]:
    """Median and largest of the times (0: not arrived, counted as beyond max_sweeps) and the
    share arrived; a median or maximum that a non-arrival decides is NaN."""
    arrived = times > 0
    censored = np.where(arrived, times, max_sweeps + 1).astype(np.float64)
    median = float(np.median(censored))
    return {
        "sweeps_to_map": median if median <= max_sweeps else float("nan"),
        "sweeps_to_map_max": float(censored.max()) if arrived.all() else float("nan"),
        "map_reached": float(arrived.mean()),
    }


class MapTime(Evaluator):
    """Time to the MAP (pmp Sec. 3): the sweeps a Markov chain takes from the mirror of the MAP state to
    reach it, or that max-product takes to decode a perturbed problem's exact MAP, on a model small
    enough to enumerate.

    Registered as ``map_time``; options (``sampler``, ``n_chains``, ``max_sweeps``) in
    :class:`MapTimeConfig`.
    """

    config_class = MapTimeConfig
    requires = (Enumerable,)
    without_data = "times the sampler on the model alone (no data read)"
    metrics = (
        MetricSpec(
            "sweeps_to_map",
            "sweeps",
            False,
            per_split=False,
            description="median over the trials of the full sweeps to the exact answer: "
            "x* for a chain (1), the perturbed MAP for PMP (2)",
            label="sweeps to the MAP (median)",
        ),
        MetricSpec(
            "sweeps_to_map_max",
            "sweeps",
            False,
            per_split=False,
            description="the largest trial's sweeps to the exact answer",
            label="sweeps to the MAP (largest)",
        ),
        MetricSpec(
            "map_reached",
            "fraction",
            True,
            per_split=False,
            description="share of the trials at the answer within max_sweeps",
            label="trials arrived",
        ),
    )

    def check(self, model_class, sizes):
        super().check(model_class, sizes)
        declaration = model_class.DECLARATION
        if set(declaration.sizes) - set(declaration.data_sizes):
            raise RbmlabError(
                f"evaluator=map_time: times samplers on fully visible models; model "
                f"{model_class.family} has latent units"
            )
        n = sizes[declaration.data_sizes[0]]
        if problem := exceeds(EXACT_SAMPLING_UNITS, n, f"{n} units (every state's score is listed)"):
            raise RbmlabError(f"evaluator=map_time: {problem}")
        sampler = sampler_for(self.config.sampler, model_class, "map_time")
        if sampler.config.name not in CHAIN_SAMPLERS + MAX_PRODUCT_SAMPLERS:
            raise RbmlabError(
                f"evaluator=map_time: sampler {sampler.config.name} is neither a chain "
                f"({', '.join(CHAIN_SAMPLERS)}) nor max-product ({', '.join(MAX_PRODUCT_SAMPLERS)})"
            )
        if getattr(sampler.config, "step", "sweep") != "sweep":
            raise RbmlabError("evaluator=map_time: counts full sweeps; the sampler's step must be sweep")

    def evaluate(self, model, splits, context):
        c = self.config
        sampler = sampler_for(c.sampler, type(model), "map_time")
        model = model.astype(model.xp.float64)
        if sampler.config.name in MAX_PRODUCT_SAMPLERS:
            times = max_product_times(model, sampler.config.damping, c.n_chains, c.max_sweeps, context.rng)
        else:
            times = chain_times(model, sampler, c.n_chains, c.max_sweeps, context.rng)
        return summary(times, c.max_sweeps)

    def headline(self, metrics, split):
        return (
            f"sweeps to the MAP: median {metrics['sweeps_to_map']:g}, largest "
            f"{metrics['sweeps_to_map_max']:g}, {100 * metrics['map_reached']:.0f} % arrived"
        )
