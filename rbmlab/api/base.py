"""What rbmlab's scikit-learn estimators share (rbmlab.api.rbm.RBM, rbmlab.api.ising.IsingModel).

They train with the CLI's cores: the learner, model and evaluator registries, the configuration
yaml of ``rbmlab run`` (defaults included), the runner's random streams and epoch pass
(rbmlab.run.training) and its checkpoint files. With the same data, settings and seed, ``fit(X)``
ends in the parameters ``rbmlab run`` ends in.

Visible values are values of the visible units or, for binary units, their means: X in [0, 1]
under {0, 1} units is read as probabilities of 1 (scikit-learn's BernoulliRBM reads it so), and the
learners use it as the visible values (CD's data statistics x p(h | x)ᵀ, as BernoulliRBM's: the
row read at its means, not averaged over Bernoulli(x) draws). Spin units take [−1, 1] likewise.
That is the estimator's choice only: ``rbmlab run`` refuses grey data under binary units
(rbmlab.data.domain says why); rbmlab.api.scoring says what the scores are on such rows.
"""

from __future__ import annotations

import dataclasses
import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.exceptions import ConvergenceWarning, DataConversionWarning
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from rbmlab.api import files, scoring
from rbmlab.api.settings import (
    ParameterError,
    as_value_error,
    backend_config,
    evaluator_config,
    learner_config,
    model_config,
    train_config,
)
from rbmlab.models.base import DIVERGENCE_REPORTED
from rbmlab.units.requirements import CATEGORICAL as _CATEGORICAL

SAMPLE_STREAM = 5  # sample()'s random stream, after the runner's five (rbmlab.run.training)


def non_negative(values) -> bool:
    """Does a ValueSet hold no negative value (Bernoulli {0, 1}: scikit-learn's positive_only)?"""
    return all(p >= 0 for p in values.points) and (values.interval is None or values.interval[0] >= 0)


def seed_of(random_state) -> int:
    """The run seed of a ``random_state``: an int as it is; a RandomState (or None: numpy's global
    one) draws one."""
    from rbmlab.config import check_seed  # noqa: PLC0415

    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        with as_value_error():
            return check_seed(int(random_state))
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def visible_prior(family: str, config_value) -> str:
    """The unit type (or prior) of a family's visible units when the config key that chooses them
    holds ``config_value`` (the family's declaration, rbmlab.models.declaration.VisibleUnits)."""
    from rbmlab.data.domain import visible_declaration  # noqa: PLC0415

    return visible_declaration(family).prior_name(None if config_value is None else str(config_value))


class EnergyModel(BaseEstimator):
    """The shared machinery: a subclass names its ``family``, writes ``__init__`` with the shared
    arguments (below) and its own, and says which of them are model config keys
    (:meth:`_model_arguments`).

    Shared arguments: learner, learning_rate, batch_size, n_iter, learner_options, model_options,
    evaluator, evaluator_options, dtype, backend, random_state, verbose (see rbmlab.api.rbm.RBM).
    Fitted: model_, learner_state_, n_iter_, n_updates_, seed_, data_mean_, n_features_in_.
    """

    family = ""
    # learner name → its lr and batch_size where learning_rate and batch_size are None (else the
    # learner's yaml): the CLI's defaults are the papers' runs on MNIST-sized sets, too few
    # updates on the hundreds of rows an estimator is often given
    small_data_defaults: dict[str, dict] = {}

    def _model_arguments(self) -> dict:
        """The estimator's own arguments as model config keys (an RBM's n_components: n_hidden)."""
        return {}

    # ---------------------------------------------------------------- configuration
    def _backend(self):
        from rbmlab.backend import get_backend  # noqa: PLC0415

        cfg = backend_config(self.backend, self.dtype)
        return get_backend(cfg.name, cfg.dtype)

    def _components(self):
        """(model class, model config, learner) of the arguments, checked against each other."""
        from rbmlab.learners import LEARNERS  # noqa: PLC0415
        from rbmlab.models import MODELS  # noqa: PLC0415
        from rbmlab.units.requirements import check_configured_units  # noqa: PLC0415

        model_cfg = model_config(self.family, self._model_arguments(), self.model_options)
        with as_value_error():
            default = self.small_data_defaults.get(self.learner, {}) if isinstance(self.learner, str) else {}
            learner = LEARNERS.build(
                learner_config(
                    self.learner,
                    default.get("lr") if self.learning_rate is None else self.learning_rate,
                    default.get("batch_size") if self.batch_size is None else self.batch_size,
                    self.learner_options,
                )
            )
            model_class = MODELS.get(model_cfg.name)
            learner.check(model_class)
            check_configured_units(model_cfg, model_class, learner)
        self._check_model_read(learner, model_cfg)
        return model_class, model_cfg, learner

    def _check_model_read(self, learner, model_cfg) -> None:
        """A model setting the learner does not read (Frank-Wolfe grows its hidden units from
        none) is refused, as the CLI refuses it: n_components away from its default, or a key of
        model_options."""
        import inspect  # noqa: PLC0415

        unread = learner.config.model_unread(model_cfg)
        signature = inspect.signature(type(self).__init__).parameters
        if "n_hidden" in unread and "n_components" in signature:
            if self.n_components != signature["n_components"].default:
                raise ValueError(f"n_components: {unread['n_hidden']}; leave it at its default")
        for key in sorted(set(self.model_options or {}) & set(unread)):
            raise ValueError(f"model_options[{key!r}]: {unread[key]}; remove it")
        from rbmlab.validation import is_default  # noqa: PLC0415

        for key, why in learner.config.unread_given(model_cfg).items():
            if not is_default(learner.config, key):
                raise ValueError(f"learner_options[{key!r}]: {why}; remove it")

    def _units(self, model_cfg=None) -> tuple[str, int]:
        """The visible units' type and states per unit: of ``model_cfg``, or of the fitted model."""
        from rbmlab.data.domain import configured_choice, saved_choice  # noqa: PLC0415

        value, states = configured_choice(model_cfg) if model_cfg is not None else saved_choice(self.model_)
        return visible_prior(self.family, value), states

    def _validate(self, X, reset: bool, units: tuple[str, int]):
        """X as a 2-D array of the model's dtype, its values checked against the visible units,
        in their columns (integer codes of Potts units one-hot: rbmlab.units.potts)."""
        from rbmlab.units import unit_type  # noqa: PLC0415

        dtype = np.dtype(backend_config(self.backend, self.dtype).dtype)
        with np.errstate(over="ignore"):  # a value beyond the dtype: validate_data's ValueError says so
            X = validate_data(self, X, reset=reset, dtype=dtype)
        X = self._check_values(X, units)
        return unit_type(*units).encode(X, dtype) if units[0] in _CATEGORICAL else X

    def _check_values(self, X, units: tuple[str, int]):
        """X, if its values are values of ``units`` (rbmlab.units: a type and its states per unit)
        or, for a binary type, means of them: X in [0, 1] under {0, 1} units (in [−1, 1] under
        {−1, +1}) is read as the units' means, each x_i the probability of the upper value, as
        scikit-learn's BernoulliRBM reads it. Values beyond the upper value (below the lower one
        under spins) are clipped to it with a DataConversionWarning; negative values under {0, 1}
        units and values that are not codes of categorical units are a one-line ValueError
        (scikit-learn's words for positive_only)."""
        from rbmlab.data.domain import data_values, visible_declaration  # noqa: PLC0415
        from rbmlab.units.values import ValueSet, observed  # noqa: PLC0415

        (units, states), values = units, observed(X)
        allowed = data_values(units, states)
        if allowed.contains(values):
            return X
        if units in _CATEGORICAL:
            raise ParameterError(
                f"X: holds {values}; {units} visible units of {states} states take "
                f"the codes {allowed} (model_options={{'visible_states': ...}})"
            )
        key = visible_declaration(self.family).key
        if non_negative(allowed) and float(X.min()) < 0:
            raise ParameterError(
                f"X: holds {values}; {units} visible units take {allowed} or probabilities of 1 in "
                f"[0, 1] (Negative values in data passed to {type(self).__name__}"
                + (f"; for other units choose model_options={{{key!r}: ...}})" if key else ")")
            )
        means = ValueSet.between(allowed.points[0], allowed.points[-1])
        if not means.contains(values):
            warnings.warn(
                f"X: holds {values}; {units} visible units take their means in {means}: clipped to "
                "it (scale X into it, e.g. X / X.max())",
                DataConversionWarning,
                stacklevel=5,  # the caller of fit, transform, score_samples
            )
            X = np.clip(X, *means.interval)
        return X

    # ---------------------------------------------------------------- training
    def fit(self, X, y=None):
        """Train a fresh model for ``n_iter`` epochs on the rows of X; returns self."""
        epochs = train_config(self.n_iter, self.verbose).epochs
        for attribute in ("model_", "learner_state_"):
            self.__dict__.pop(attribute, None)
        self._train(X, epochs, reset=True)
        return self

    def partial_fit(self, X, y=None):
        """One more epoch on the rows of X (the first call starts a fresh model from them), drawn
        from the streams of the next epoch: k calls on the same X equal ``fit`` with n_iter=k."""
        self._train(X, 1, reset=not hasattr(self, "model_"))
        return self

    def _train(self, X, epochs: int, reset: bool) -> None:
        from tqdm.auto import tqdm  # noqa: PLC0415

        from rbmlab.data.batch import Batch  # noqa: PLC0415
        from rbmlab.run.training import epoch_pass, initial_model, learner_start  # noqa: PLC0415

        model_class, model_cfg, learner = self._components()
        backend = self._backend()
        X = self._validate(X, reset=reset, units=self._units(model_cfg if reset else None))
        train = Batch(backend.asarray(X))
        if reset:
            self.seed_, self.data_mean_ = seed_of(self.random_state), X.mean(axis=0)
            with as_value_error():
                model = initial_model(
                    model_class, model_cfg, backend, self.seed_, self.data_mean_, train.inputs
                )
                model, state = learner_start(learner, model, backend, self.seed_, train)
            self.n_iter_, self.n_updates_ = 0, 0
        else:
            self._check_continues(model_class, model_cfg, learner, train, backend)
            model = self.model_.map(backend.asarray)
            state = self.learner_state_
            if state is None:  # a checkpoint without one (a trial of a batched run's): a fresh one
                _, state = learner_start(learner, model, backend, self.seed_, train, pretrained=True)
            state = backend.learner_state(state)
        batch_size = learner.config.batch_size
        for _ in tqdm(
            range(epochs), desc=f"train {learner.config.name}", disable=not self.verbose, leave=False
        ):
            with np.errstate(**DIVERGENCE_REPORTED):  # the ConvergenceWarning below says it, once
                model, state, updates = epoch_pass(
                    learner,
                    backend,
                    self.seed_,
                    self.n_iter_ + 1,
                    train,
                    X.shape[0],
                    batch_size,
                    model,
                    state,
                )
            self.n_iter_, self.n_updates_ = self.n_iter_ + 1, self.n_updates_ + updates
            if not model.is_finite():
                warnings.warn(
                    f"{type(self).__name__}: training diverged at epoch {self.n_iter_} (parameters "
                    "non-finite or beyond ±1e6); lower learning_rate",
                    ConvergenceWarning,
                    stacklevel=3,
                )
                break
        self.model_ = model.map(backend.to_numpy)
        self.learner_state_ = {k: backend.to_numpy(v) for k, v in state.items()}

    def _reshaped(self, model_class, model_cfg, learner) -> str | None:
        """The argument that no longer describes the fitted model (a size the learner does not
        grow, a unit type), as ``argument: value is not the fitted model's value``; or None."""
        from rbmlab.api.settings import argument_of  # noqa: PLC0415

        fitted, settings = self.model_.model_sizes(), self.model_.settings()
        wanted = model_class.sizes(model_cfg, self.model_.data_dimension)
        differ = [
            (k, v, fitted.get(k)) for k, v in wanted.items() if k not in learner.grows and fitted.get(k) != v
        ]
        differ += [
            (key, getattr(model_cfg, key), settings[setting])
            for key, setting in model_class.CONFIG_SETTINGS.items()
            if str(getattr(model_cfg, key)) != str(settings[setting])
        ]
        return next(
            (
                f"{argument_of('model.' + key)}: {value} is not the fitted model's {have}"
                for key, value, have in differ
            ),
            None,
        )

    def _check_continues(self, model_class, model_cfg, learner, train, backend) -> None:
        """partial_fit continues the fitted model and learner state: the arguments that shape the
        model and the learner whose state it holds must still be those (fit starts afresh). The
        state's shapes may follow the rows given (pcd's chains: one per batch row)."""
        if (reshaped := self._reshaped(model_class, model_cfg, learner)) is not None:
            raise ParameterError(f"{reshaped}; partial_fit continues the fitted model (fit starts a new one)")
        if self.learner_state_ is None:
            return
        fresh = learner.init_state(self.model_.map(backend.asarray), train, backend.rng(0))
        missing = [key for key in fresh if key not in self.learner_state_]
        if missing:
            raise ParameterError(
                f"learner: {learner.config.name} does not continue the fitted state (it has no "
                f"{', '.join(missing)}); partial_fit continues with the learner it was fitted "
                "by (fit starts afresh)"
            )

    # ---------------------------------------------------------------- the fitted model
    def _fitted(self, X=None):
        """(backend, the model on it, X validated against its units)."""
        check_is_fitted(self, "model_")
        backend = self._backend()
        model = self.model_.map(backend.asarray)
        if X is None:
            return backend, model, None
        return backend, model, backend.asarray(self._validate(X, reset=False, units=self._units()))

    def score_samples(self, X, evaluator=None):
        """log p(x) per row, log Z by ``evaluator`` (exact, ais, tap, or pl for the
        pseudo-log-likelihood; default: the estimator's, with ``evaluator_options``; another
        one given here has its yaml's options). ``"auto"``: exact where the smaller layer
        enumerates, else pl (rbmlab.api.scoring.auto_evaluator), so a model search over sizes
        that crosses that line compares log-likelihoods with pseudo-log-likelihoods: fix
        ``evaluator`` there. Rows of probabilities: rbmlab.api.scoring says what each scorer
        computes on them."""
        from rbmlab.evaluators import EVALUATORS  # noqa: PLC0415
        from rbmlab.run.training import FINAL_EVAL_STREAM  # noqa: PLC0415

        backend, model, X = self._fitted(X)
        own = evaluator is None or evaluator == self.evaluator
        name = self.evaluator if evaluator is None else evaluator
        name = scoring.auto_evaluator(model) if name == "auto" else name
        with as_value_error():
            config = evaluator_config(name, self.evaluator_options if own else None, bool(self.verbose))
            ev = EVALUATORS.build(config)
            scoring.check_scorer(ev, model)
            context = scoring.context_for(
                backend.rng(self.seed_, FINAL_EVAL_STREAM), X, self.data_mean_, bool(self.verbose)
            )
            with np.errstate(over="ignore"):
                return scoring.score_samples(ev, model, X, context)

    def score(self, X, y=None, evaluator=None):
        """Mean of :meth:`score_samples` (mean log-likelihood, or pseudo-log-likelihood): what
        GridSearchCV and cross_val_score maximise."""
        return float(np.mean(self.score_samples(X, evaluator=evaluator)))

    def sample(self, n_samples=1, *, method="gibbs", n_steps=1000, random_state=None):
        """``n_samples`` visible configurations: ``n_steps`` transitions of ``method`` from uniform
        states (gibbs: the family's sampler, block Gibbs for an RBM and colour-class Gibbs for an
        Ising model; pmp: perturb-and-max-product; any inference method by name), or an RBM's
        ``method="exact"`` (small models). ``random_state``: None for the estimator's seed (the
        same draws each call)."""
        from rbmlab.limits import CHAINS, EVALUATION_STEPS  # noqa: PLC0415

        backend, model, _ = self._fitted()
        for name, value, hi in (("n_samples", n_samples, CHAINS), ("n_steps", n_steps, EVALUATION_STEPS)):
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or not 1 <= value <= hi:
                raise ParameterError(f"{name}: must be an integer in [1, {int(hi)}], got {value!r}")
        seed = self.seed_ if random_state is None else seed_of(random_state)
        with as_value_error():
            x = scoring.draw(model, method, int(n_samples), int(n_steps), backend.rng(seed, SAMPLE_STREAM))
        units = getattr(model, "visible_units", None)
        return backend.to_numpy(x if units is None else units.decode(x))  # Potts: codes, as X

    # ---------------------------------------------------------------- files
    def save(self, path):
        """Write the fitted estimator as a checkpoint (.npz) in the CLI's format; returns the path."""
        from rbmlab.run.checkpoint import save_checkpoint  # noqa: PLC0415

        check_is_fitted(self, "model_")
        model_class, model_cfg, learner = self._components()
        if (reshaped := self._reshaped(model_class, model_cfg, learner)) is not None:
            raise ParameterError(
                f"{reshaped}; save records the arguments with the fitted model (fit again, or set them back)"
            )
        configs = {
            "model": model_cfg,
            "learner": learner.config,
            "train": {"epochs": self.n_iter_},
            "backend": backend_config(self.backend, self.dtype),
        }
        meta = files.checkpoint_meta(
            self.get_params(), self.seed_, configs, self.n_iter_, self.n_updates_, self.data_mean_
        )
        with as_value_error():
            return save_checkpoint(path, self.model_, meta, self.learner_state_)

    @classmethod
    def load(cls, path, trial=None):
        """The estimator of a checkpoint: one ``save`` wrote, a run's (``rbmlab run``: its learner,
        options and seed become the arguments), or a hand-written file (the model's arrays)."""
        from rbmlab.run.checkpoint import load_checkpoint  # noqa: PLC0415

        with as_value_error():
            model, meta, state = load_checkpoint(path)
            model, state = files.single(model, state, trial, path, cls.family)
        estimator = cls(**files.arguments_of(meta, model, cls._get_param_names()))
        model = model.astype(backend_config(estimator.backend, estimator.dtype).dtype)
        mean = meta.get("data_mean")
        estimator.model_, estimator.learner_state_ = model, state
        estimator.n_iter_, estimator.n_updates_ = int(meta.get("epoch", 0)), int(meta.get("updates", 0))
        estimator.seed_ = int((meta.get("config") or {}).get("seed", 0))
        estimator.data_mean_ = (
            np.asarray(mean, dtype=model.dtype) if mean is not None else estimator._fallback_mean(model)
        )
        estimator.n_features_in_ = model.data_dimension
        return estimator

    def _fallback_mean(self, model):
        """The training mean for a checkpoint that has none (what AIS's base rate reads)."""
        return None

    def __sklearn_tags__(self):
        from rbmlab.data.domain import data_values, visible_declaration  # noqa: PLC0415
        from rbmlab.models import MODELS  # noqa: PLC0415

        tags = super().__sklearn_tags__()
        key = visible_declaration(self.family).key
        options = self.model_options if isinstance(self.model_options, dict) else {}
        default = {f.name: f.default for f in dataclasses.fields(MODELS.get(self.family).config_class)}.get(
            key
        )
        try:
            units = visible_prior(self.family, options.get(key, default) if key else None)
        except KeyError:  # not a unit type: fit says so
            return tags
        tags.input_tags.positive_only = non_negative(data_values(units))  # Potts codes: ≥ 0
        return tags
