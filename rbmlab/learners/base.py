"""What every learner shares: its config fields, its sampler and optimizer, and the protocol.

A learner is a pair of functions around its own state (persistent chains, optimizer buffers,
centering offsets...): ``init_state`` and ``step``. The runner owns the loop. A learner never
names a sampler or an update rule: the negative phase comes from ``learner.sampler`` (an
inference method; null: the model family's default) and the step from ``learner.optimizer``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rbmlab.errors import RbmlabError
from rbmlab.inference import INFERENCE
from rbmlab.inference.base import InferenceMethod
from rbmlab.learners import greedy
from rbmlab.limits import EPOCHS, EXAMPLES, UPDATE_STEPS
from rbmlab.models.base import GradientStatistics, MeanFieldPositive, supports
from rbmlab.optimizers import OPTIMIZERS
from rbmlab.units.requirements import undeclared_is_binary
from rbmlab.validation import Config, option

State = dict[str, Any]  # name → array; saved in checkpoints as-is


@dataclass
class LearnerConfig(Config):
    """Hyperparameters every learner shares."""

    name: str = option("cd", "learner")
    lr: float = option(0.01, "step size", lo=0, open_lo=True, label="learning rate")
    batch_size: int | str = option(
        100, "examples per update, or 'full'", lo=1, hi=EXAMPLES, choices=("full",), label="mini-batch size"
    )
    optimizer: Any = option(
        {"name": "sgd"},
        "update rule (learner/optimizer=sgd|adam|spectral)",
        parse=OPTIMIZERS.parse,
        label="optimizer",
    )
    sampler: Any = option(
        None,
        "negative-phase inference method; null: the model family's",
        parse=INFERENCE.parse_optional,
        label="training sampler",
    )

    def model_unread(self, model: Any) -> dict[str, str]:
        """The options of the model configuration ``model`` that this learner leaves unread,
        ``{key: why}`` (a run refuses one set away from its default, as Config.unread)."""
        return {}

    def unread_given(self, model: Any) -> dict[str, str]:
        """This learner's own options that the model configuration ``model`` leaves unread,
        ``{key: why}`` (refused away from their defaults, as Config.unread)."""
        return {}


PRETRAIN_STREAM = 7306  # the key of CD pretraining's mini-batch orders: (PRETRAIN_STREAM, layer, epoch)


@dataclass
class MeanFieldConfig(LearnerConfig):
    """The option of a sampling learner that also trains a DBM (rbmlab.models.base.MeanFieldPositive)."""

    mean_field_iterations: int = option(
        10,
        "a DBM's positive phase: mean-field sweeps over its hidden layers given the data (tap "
        "App. E, after Salakhutdinov & Hinton 2009; the count is our choice)",
        lo=1,
        hi=UPDATE_STEPS,
        neutral=10,
        label="mean-field sweeps of the positive phase",
    )

    pretrain_epochs: int = option(
        0,
        "a DBM: greedy layer-wise CD-k epochs per RBM before joint training (tap App. E.2, Alg. 4; "
        "Salakhutdinov & Hinton 2009); 0: none",
        lo=0,
        hi=EPOCHS,
        neutral=0,
        label="pretraining epochs per layer",
    )
    pretrain_lr: float | None = option(
        None,
        "step size of pretraining; null: learner.lr",
        lo=0,
        open_lo=True,
        neutral=None,
        label="pretraining learning rate",
    )

    def unread(self) -> dict[str, str]:
        if self.pretrain_epochs:
            return {}
        return {"pretrain_lr": "applies with pretrain_epochs > 0"}

    def unread_given(self, model: Any) -> dict[str, str]:
        from rbmlab.models import MODELS  # noqa: PLC0415

        if not supports(MODELS.get(model.name), MeanFieldPositive):
            why = f"applies to a DBM; model={model.name}'s hidden units sum out given the data"
            return dict.fromkeys(("mean_field_iterations", "pretrain_epochs", "pretrain_lr"), why)
        return pretraining_unread(model, self.pretrain_epochs)


def pretraining_unread(model: Any, epochs: int) -> dict[str, str]:
    """A learner's pretraining options, unread when the model starts from ``model.init``
    (pretraining builds a fresh model: rbmlab.learners.greedy): its step size, and its epochs
    when they ask for any (pretrain_epochs=0 says there is none)."""
    if not getattr(model, "init", None):
        return {}
    why = "pretraining builds a fresh model; model.init starts from a checkpoint"
    return dict.fromkeys(("pretrain_epochs", "pretrain_lr") if epochs else ("pretrain_lr",), why)


def difference(positive: dict, negative: dict) -> dict:
    """Data minus model statistics, per parameter: the log-likelihood ascent direction."""
    return {name: positive[name] - negative[name] for name in positive}


class Learner:
    """Base class: sampler and optimizer from the config; subclasses write ``step``."""

    config_class = LearnerConfig
    requires: tuple[type, ...] = (GradientStatistics,)  # model capabilities the step uses
    # the unit types its maths handles, per layer setting (rbmlab.units.requirements): every
    # learner declares them, for "visible" and "hidden"; None (undeclared) trains nothing
    units: dict[str, tuple[str, ...]] | None = None
    updates_per_step = 1  # parameter updates per call of step (S-DCP makes d)
    grows: tuple[str, ...] = ()  # model sizes the learner changes (metrics.csv records them)
    trains_trials = True  # can train a batched model (train.trials > 1) in one computation
    # trains packed runs (rbmlab.run.packed): every draw of its step and every array it keeps
    # carries the model's leading run axis (a test shows each packed run equals it alone)
    packs = False
    samples = True  # draws its negative phase from learner.sampler (checked with it)
    # forms a DBM's data statistics by mean field (its config a MeanFieldConfig): cd and pcd
    mean_field_positive = False
    requires_hint = ""  # what a model lacking ``requires`` should be ("{name}": the learner)
    requires_one_of: tuple[type, ...] = ()  # capabilities of which a model needs at least one
    # Fits p(v) of a bipartite binary RBM from data: an entrant of the cross-paper leaderboard
    # (rbmlab.experiment.leaderboard), under its registry name and each of ``entrants``.
    generative = False
    entrants: dict[str, tuple[str, ...]] = {}  # further entrants: name → overrides (adaTAP, PMP)

    def __init__(self, config):
        self.config = config
        self.lr = config.lr  # the step size (packed runs: one per run, rbmlab.optimizers.base.RunRates)
        self.optimizer = OPTIMIZERS.build(config.optimizer)
        self._samplers: dict[type, Any] = {}

    def check(self, model_class: type) -> None:
        """One-line error, before any work, if this learner cannot train ``model_class``."""
        if not self.samples and self.config.sampler is not None:
            raise RbmlabError(
                f"learner.sampler: learner={self.config.name} draws no samples (its negative "
                "phase is its own inference); leave learner.sampler out"
            )
        if self.requires_one_of and not any(supports(model_class, c) for c in self.requires_one_of):
            raise RbmlabError(
                f"learner={self.config.name}: model {model_class.family} lacks "
                f"{' or '.join(c.__name__ for c in self.requires_one_of)}"
                + (f" ({self.requires_hint.format(name=self.config.name)})" if self.requires_hint else "")
            )
        sampler = self.sampler_for(model_class) if self.samples else None
        for capability in (*self.requires, *(sampler.requires if sampler else ())):
            if not supports(model_class, capability):
                hint = (
                    self.requires_hint.format(name=self.config.name)
                    if self.requires_hint
                    else f"needed by the learner or its sampler {sampler.config.name}"
                )
                raise RbmlabError(
                    f"learner={self.config.name}: model {model_class.family} lacks "
                    f"{capability.__name__} ({hint})"
                )
        if self.samples and supports(model_class, MeanFieldPositive) and not self.mean_field_positive:
            raise RbmlabError(
                f"learner={self.config.name}: model {model_class.family}'s hidden layers do not sum "
                "out given the data, and this learner has no mean-field positive phase "
                "(learner=cd or pcd have one; tap_dbm trains a DBM by TAP)"
            )

    def check_schedule(self, epochs: int) -> None:
        """One-line error if a per-update count this learner grows with the epoch would pass its
        bound by the last of ``epochs`` (none grows here)."""

    def unit_needs(self, model_class: type) -> dict[str, tuple[str, ...]]:
        """The unit types the learner (its own declaration, which names every layer) and its
        negative-phase sampler are written for: each setting, what both allow."""
        if self.units is None:  # nothing is accepted by default (tests/test_conformance.py)
            raise RbmlabError(
                f"learner={self.config.name}: declares no unit types (Learner.units: the unit "
                "types its maths handles, per layer)"
            )
        sampler = self.sampler_for(model_class).units if self.samples else {}
        sampler = undeclared_is_binary(sampler, self.units)
        needs = {s: tuple(a for a in allowed if a in sampler[s]) for s, allowed in self.units.items()}
        return {**sampler, **needs}

    def sampler_for(self, model_class: type):
        if model_class not in self._samplers:
            default = getattr(model_class, "default_sampler", None)
            if self.config.sampler is None and default is None:
                raise RbmlabError(
                    f"learner={self.config.name}: model {model_class.family} has no "
                    "default sampler; set learner.sampler"
                )
            config = self.config.sampler or INFERENCE.parse(default, "learner.sampler")
            self._samplers[model_class] = INFERENCE.build(config)
        return self._samplers[model_class]

    def sample(self, model, x, rng, steps: int, first_product=None):
        """``steps`` transitions of the negative-phase sampler from the states ``x`` (with the
        first half-step's product xW when :meth:`positive_phase` formed it)."""
        sampler = self.sampler_for(type(model))
        if first_product is None:
            return sampler.run(model, x, rng, steps)
        return sampler.run(model, x, rng, steps, first_product=first_product)

    def _fusable(self, model, *xs) -> bool:
        """Whether the hidden products of ``xs`` can be shared with the block sampler."""
        return (
            self.sampler_for(type(model)).takes_first_product
            and hasattr(model, "contrast")
            and all(x.shape[:-2] == model.W.shape[:-2] for x in xs)
        )

    def data_statistics(self, model, x):
        """The statistics of data rows ``x``: exact where the hidden units sum out (an RBM), else
        under the mean-field posterior (a DBM: MeanFieldPositive)."""
        if supports(type(model), MeanFieldPositive):
            return model.positive_statistics(x, self.config.mean_field_iterations)
        return model.statistics(x)

    def positive_phase(self, model, x):
        """(statistics(x), xW for a chain starting at ``x`` under the same parameters, or None):
        the data's hidden product serves the chain's first half-step too."""
        if not self._fusable(model, x):
            return model.statistics(x), None
        product = x @ model.W
        first = product.copy()
        product += model.b_h[..., None, :]
        return model.statistics_given(x, model.hidden_units.mean(product, out=product)), first

    def contrastive_gradient(self, model, x, start, rng, steps: int, sampler_state=None, **sampler_kwargs):
        """(statistics(x) − statistics(chain end), chain end) for ``steps`` sampler steps from
        ``start`` (``start is x``: CD). For a bipartite model with a block sampler, the data's
        and the chains' hidden products are one matmul (CD: the same one, the chain starting at
        the data under the same parameters) and both phases' W statistics one more; otherwise
        the plain two-statistics form. Same draws, same algorithm. ``sampler_kwargs`` go to
        the sampler's run (``position`` of a scan that continues). With ``sampler_state`` (a
        persistent sampler's), the sampler's new state comes third."""
        sampler = self.sampler_for(type(model))
        if sampler_state is not None:
            sampler_kwargs["state"] = sampler_state
        if not self._fusable(model, x, start):
            if start is x:  # CD: a DBM's chains also hold layer 2
                start = model.chain_start(x, rng)
            end = sampler.run(model, start, rng, steps, **sampler_kwargs)
            end, new = end if sampler_state is not None else (end, None)
            grad = difference(self.data_statistics(model, x), model.statistics(end))
            return (grad, end) if sampler_state is None else (grad, end, new)
        xp, n = model.xp, x.shape[-2]
        if start is x:
            product = x @ model.W
            first = product.copy()
        else:
            product = xp.concatenate([x, start], axis=-2) @ model.W
            product, first = product[..., :n, :], product[..., n:, :]
        product += model.b_h[..., None, :]
        p_pos = model.hidden_units.mean(product, out=product)
        end = sampler.run(model, start, rng, steps, first_product=first, **sampler_kwargs)
        end, new = end if sampler_state is not None else (end, None)
        grad = model.contrast(x, p_pos, end, model.hidden_probs(end))
        return (grad, end) if sampler_state is None else (grad, end, new)

    def update(self, model, grad: dict, state: State):
        return self.optimizer.update(model, grad, state, self.lr)

    def initial_model(self, model, pretrained: bool, train=None, rng=None):
        """The model training starts from, given the family's initialisation or the checkpoint
        of ``model.init`` (``pretrained``) and the training Batch ``train``: a learner that builds
        its model (Frank-Wolfe adds units to an empty one; tap_dbm, and cd or pcd with
        ``pretrain_epochs``, pretrain a DBM layer by layer, drawing from ``rng``) shapes it here.
        One-line RbmlabError if it cannot train it."""
        epochs = getattr(self.config, "pretrain_epochs", 0)
        if pretrained or not epochs or train is None or not supports(type(model), MeanFieldPositive):
            return model
        lr = self.config.pretrain_lr or self.lr
        return greedy.pretrain(
            model,
            train.inputs.astype(model.dtype),
            depth=model.depth,
            epochs=epochs,
            batch_size=self.config.batch_size,
            stream=PRETRAIN_STREAM,
            ascend=greedy.contrastive_ascend(self.optimizer, lr, self.config.k, rng),
            means=greedy.conditional_means,
        )

    def sizes_reached(self, sizes: dict[str, int], epochs: int, pretrained: bool) -> dict[str, int]:
        """The model sizes at the end of ``epochs`` epochs from ``sizes`` (the family's, or the
        checkpoint's when ``pretrained``): what an evaluator must handle. A learner that grows
        its model says how."""
        return sizes

    def inference_iterations(self, state: State) -> int | None:
        """The iteration budget of the learner's own inference at this point of training (crbm_bp's
        T = 7 + epoch), for an evaluator that matches it at test time; None: it has none."""
        return None

    def diagnostics(self, state: State) -> dict[str, float]:
        """Scalars of the learner's state recorded with every metrics row (none by default)."""
        return {}

    def init_state(self, model, train, rng) -> State:
        """Learner state before the first mini-batch (``train`` is the whole training Batch)."""
        return {}

    def step(self, model, state: State, batch, rng):
        """One mini-batch (a Batch): new parameters and state."""
        raise NotImplementedError

    def step_cost(self, model, rows: int, state: State) -> float | None:
        """Multiply-adds (MACs) of the matrix products one call of :meth:`step` does on a
        mini-batch of ``rows`` examples, per model (trial), given the model and learner state the
        step returned (a learner whose work varies reads tallies it keeps there).

        Counted: every product with W (or a matrix of W's size) of every sampler or fixed-point
        step, of the gradient statistics and of the update rule, an (m, k) · (k, n) product
        costing m·k·n; factorisations are charged their declared count (rbmlab.backend.macs).
        Elementwise work (draws, nonlinearities, bias updates) is not. A machine-independent
        proxy for compute, for budgets (``train.budget_unit=gmac``). None: not declared (the
        default; such a learner cannot run on such a budget)."""
        return None

    def declares_cost(self, model_class: type) -> bool:
        """Whether this learner (and, if it samples, its sampler for ``model_class``) declares a
        step cost at all: train.budget_unit=gmac is refused before any work where it does not (a
        cost that a particular model's shapes leave undeclared is refused at the first step)."""
        if type(self).step_cost is Learner.step_cost:
            return False
        return (
            not self.samples or type(self.sampler_for(model_class)).step_cost is not InferenceMethod.step_cost
        )

    def sampler_cost(self, model, rows: int, steps: int, first_product: bool = False) -> float | None:
        """MACs of :meth:`sample` (``steps`` sampler steps on ``rows`` chains; ``first_product``:
        the first half-step's product was formed by the caller), or None when the sampler
        declares none."""
        sampler = self.sampler_for(type(model))
        if first_product and sampler.takes_first_product:
            return sampler.step_cost(model, rows, steps, first_product=True)
        return sampler.step_cost(model, rows, steps)

    def contrastive_cost(self, model, rows: int, chains: int | None, steps: int) -> float | None:
        """MACs of :meth:`contrastive_gradient` for ``rows`` examples and ``chains`` chains
        (None: CD, the chains start at the examples), the two paths it takes counted apart."""
        from rbmlab.models.rbm import BinaryLayers  # noqa: PLC0415 - a learner of other families imports no RBM code

        if not isinstance(model, BinaryLayers):
            return None
        n = chains or rows
        fused = self._fusable(model) and not model.n_trials  # batched trials share a 2-D batch
        sampler = self.sampler_cost(model, n, steps, first_product=fused)
        if sampler is None:
            return None
        unit = model.n_visible * model.n_hidden
        if not fused:  # statistics of each phase: E[h|v] and vᵀE[h|v]
            return sampler + 2 * (rows + n) * unit
        first = rows if chains is None else rows + n  # [x; start] W
        return sampler + (first + n + rows + n) * unit  # E[h|end], then [v; v']ᵀ[p; p']

    def update_cost(self, model, updates: int = 1) -> float | None:
        """MACs of ``updates`` optimizer updates (None when the optimizer declares none)."""
        cost = self.optimizer.update_cost(model)
        return None if cost is None else updates * cost


def total(*costs: float | None) -> float | None:
    """The sum of declared costs; None if any is undeclared."""
    return None if any(c is None for c in costs) else float(sum(costs))
