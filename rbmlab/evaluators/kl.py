"""``evaluator=kl``: KL divergences from the dataset's ground truth, by enumeration (pmp Sec 5.1).

For a dataset sampled from a known model p (``dataset=ising_samples``; the runner passes it in
Context.truth) and a learned model p_θ over the same n ≤ 20 visible units (latent ones summed out):

    kl_model    KL(p ‖ p_θ) = Σ_x p(x) (log p(x) − log p_θ(x)), every state enumerated       (1)
    kl_samples  KL(p ‖ q),  q(x) = (c(x) + α) / Σ_x' (c(x') + α)                            (2)

where c counts ``n_samples`` draws of ``sampler`` (``sweeps`` steps from uniform states) and α is
the pseudo-count on every state (the pmp authors' code: 10,000 PMP samples, α = 0.5; Sec 5.1 does
not say). (1) asks whether the model's Gibbs density is the data's; (2) whether the sampler's draws
from it are, which for a sampler with a bias of its own (PMP learns a model whose PMP samples match
the data, Sec 5.1) is the question that counts. The data splits are not read. Both in nats, lower is
better.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from rbmlab.backend import to_numpy
from rbmlab.backend.ops import logsumexp
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.base import Evaluator, EvaluatorConfig, check_marginal
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.evaluators.sampling import draw, parse_sampler, sampler_for
from rbmlab.limits import CHAINS, ENUMERATION_UNITS, EVALUATION_STEPS, EXACT_SAMPLING_UNITS, EXAMPLES, exceeds
from rbmlab.models.base import Enumerable, LogProbability
from rbmlab.validation import option

MAX_UNITS = EXACT_SAMPLING_UNITS  # 2^n states, each with a probability and a count (rbmlab.limits)


@dataclass
class KLConfig(EvaluatorConfig):
    reads_examples = False  # the model against the dataset's ground truth
    name: str = option("kl", "evaluator")
    sampler: Any = option(
        None,
        "inference method whose draws make q of (2) (pmp, gibbs, gwg); null: the model family's",
        parse=parse_sampler,
        label="sampler",
    )
    sweeps: int = option(
        100, "sampler steps from fresh uniform states", lo=0, hi=EVALUATION_STEPS, label="sweeps"
    )
    n_samples: int = option(10_000, "draws counted for (2); 0: only (1)", lo=0, hi=EXAMPLES)
    pseudo_count: float = option(0.5, "α of (2), added to every state's count", lo=0.0, open_lo=True)
    chunk: int = option(1000, "draws per sampler call", lo=1, hi=CHAINS)

    def unread(self) -> dict[str, str]:
        out = super().unread()
        if not self.n_samples:
            why = "applies to the draws of (2); n_samples=0 draws none"
            out.update(dict.fromkeys(("sampler", "sweeps", "pseudo_count", "chunk"), why))
        return out


def state_index(units, x):
    """The enumeration index Σ_j b_j 2^j of each row of ``x`` (host), b the {0, 1} form of the
    unit values: the inverse of ``units.states_of``."""
    lo, hi = units.values
    bits = np.rint((to_numpy(x) - lo) / (hi - lo)).astype(np.int64)
    return bits @ (1 << np.arange(bits.shape[-1], dtype=np.int64))


def all_visible_states(model):
    """(2ⁿ, n) float64 visible states in the model's unit values, index order (units.states_of)."""
    return model.visible_units.states(model.xp, model.n_visible, 0, 2**model.n_visible, model.xp.float64)


def all_log_probabilities(model) -> np.ndarray:
    """(2ⁿ,) float64 log p(x) of every visible state in index order (units.states_of), latent
    units summed out: log p̃(x) − log Z, log Z = logsumexp of the same list (one enumeration)."""
    log_p = to_numpy(model.astype(model.xp.float64).log_unnormalized(all_visible_states(model))).astype(
        np.float64
    )
    return log_p - float(logsumexp(log_p))


def kl_divergence(log_p: np.ndarray, log_q: np.ndarray) -> float:
    """KL(p ‖ q) = Σ p (log p − log q) over states with p > 0 (float64)."""
    p = np.exp(log_p)
    keep = p > 0
    return float(np.sum(p[keep] * (log_p[keep] - log_q[keep])))


class KL(Evaluator):
    """KL divergences from the ground-truth model, by enumeration (pmp Sec. 5.1): KL(p ‖ p_θ) of the
    learned model and KL(p ‖ q) of a sampler's draws from it (pseudo-counts), in nats.

    Registered as ``kl``; options (``sampler``, ``sweeps``, ``n_samples``, ``pseudo_count``) in
    :class:`KLConfig`.
    """

    config_class = KLConfig
    requires = (Enumerable, LogProbability)
    needs_truth = True
    metrics = (
        MetricSpec(
            "kl_model",
            "nats",
            False,
            per_split=False,
            description="KL(p_truth ‖ p_model), every state enumerated (1)",
            label="KL(truth ‖ model)",
        ),
        MetricSpec(
            "kl_samples",
            "nats",
            False,
            per_split=False,
            description="KL(p_truth ‖ q), q the pseudo-counted histogram of the sampler's "
            "draws from the model (2)",
            label="KL(truth ‖ samples)",
        ),
    )

    def check(self, model_class, sizes):
        super().check(model_class, sizes)
        check_marginal("kl", model_class, sizes)
        n = sizes[model_class.DECLARATION.data_sizes[0]]  # every visible state is listed
        if n > MAX_UNITS:
            raise RbmlabError(
                f"evaluator=kl: enumerates every state; at most {MAX_UNITS} units, "
                f"this model has {n} visible units ({MAX_UNITS.why})"
            )
        marginal = getattr(model_class, "marginal_enumeration_size", lambda _: 0)(sizes)
        if problem := exceeds(
            ENUMERATION_UNITS,
            n + marginal,
            f"{n} visible + {marginal} summed-out latent "
            "units (enumerated together: every visible state's log p(x))",
        ):
            raise RbmlabError(f"evaluator=kl: {problem}")
        if self.config.n_samples:
            sampler_for(self.config.sampler, model_class, "kl")

    def evaluate(self, model, splits, context):
        truth = context.truth
        if truth is None:
            raise RbmlabError("evaluator=kl: needs the dataset's ground-truth model (dataset=ising_samples)")
        if truth.n_visible != model.n_visible:
            raise RbmlabError(
                f"evaluator=kl: the ground truth has {truth.n_visible} units, the model {model.n_visible}"
            )
        log_p = all_log_probabilities(truth)
        metrics = {"kl_model": kl_divergence(log_p, all_log_probabilities(model))}  # (1)
        c = self.config
        if c.n_samples:
            sampler = sampler_for(c.sampler, type(model), "kl")
            drawn = draw(model, sampler, c.n_samples, c.sweeps, c.chunk, context.rng)
            counts = np.bincount(state_index(model.visible_units, drawn), minlength=log_p.shape[0])
            q = (counts + c.pseudo_count) / (counts.sum() + c.pseudo_count * counts.shape[0])  # (2)
            metrics["kl_samples"] = kl_divergence(log_p, np.log(q))
        return metrics

    def headline(self, metrics, split):
        text = f"KL(truth ‖ model) {metrics['kl_model']:.4f} nats"
        if "kl_samples" in metrics:
            text += f", KL(truth ‖ its samples) {metrics['kl_samples']:.4f} nats"
        return text
