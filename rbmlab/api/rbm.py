"""``rbmlab.RBM``: a restricted Boltzmann machine as a scikit-learn transformer (hidden means)."""

from __future__ import annotations

import numbers

from sklearn.base import ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted

from rbmlab.api.base import EnergyModel
from rbmlab.api.settings import ParameterError


class RBM(ClassNamePrefixFeaturesOutMixin, TransformerMixin, EnergyModel):
    """Restricted Boltzmann machine trained by any rbmlab learner.

    X: values of the visible units, or (binary units) their means: X in [0, 1] is read as
    probabilities of 1, as scikit-learn's BernoulliRBM reads it (rbmlab.api.base; the scores of
    such rows: rbmlab.api.scoring).

    Parameters
    ----------
    n_components : int, default=256
        Hidden units (``model.n_hidden``).
    learner : str, default="cd"
        A learner of the registry (cd, pcd, sdcp, csdcp, cg, ssd, frank_wolfe, reset, tap, ...),
        with the defaults of ``conf/learner/<learner>.yaml``.
    learning_rate, batch_size : float, int or "full", default=None
        ``learner.lr`` and ``learner.batch_size``. None: 0.1 and 10 for cd and pcd (BernoulliRBM's
        defaults; on load_digits they train CD-1 to a better pseudo-likelihood than BernoulliRBM
        reaches, in as much time: scripts/estimator_defaults.py), the learner's yaml default for
        the others (their papers' settings; frank_wolfe's batch is the whole set).
    n_iter : int, default=10
        Epochs (passes over the training set) of ``fit``.
    learner_options, model_options, evaluator_options : dict, default=None
        The other options of the learner (``{"k": 5}``, ``{"optimizer": "adam"}``), the model
        (``{"weight_std": 0.1, "visible_units": "spin"}``) and the evaluator, as
        ``learner.<key>=...`` etc. on the command line; validated by their own parsers.
        ``evaluator_options`` belong to ``evaluator``.
    evaluator : {"auto", "exact", "ais", "tap", "pl"}, default="auto"
        What ``score_samples`` and ``score`` compute: log p(x) with log Z exact, by AIS or TAP,
        or the pseudo-log-likelihood (pl, no log Z); auto: exact where the smaller layer can be
        enumerated, else pl (milliseconds; AIS takes seconds per call).
    dtype : {"float32", "float64"}, backend : {"numpy", "cupy"}
        Precision and array library of training and scoring.
    random_state : int, RandomState or None
        The run's seed (``seed=``): initialisation, mini-batches and sampling derive from it.
    verbose : bool
        Progress bars.

    Attributes
    ----------
    model_ : rbmlab.models.rbm.RBM
        The fitted model (host arrays).
    components_ : ndarray of shape (n_components, n_features)
        Wᵀ, as in sklearn.neural_network.BernoulliRBM.
    intercept_hidden_, intercept_visible_ : ndarray
        b_h and b_v.
    learner_state_ : dict
        Persistent chains, optimizer buffers.
    n_iter_ : int
        Epochs trained.
    n_updates_ : int
        Parameter updates.
    seed_ : int
        The seed used.
    data_mean_ : ndarray
        The training mean.
    """

    family = "rbm"
    small_data_defaults = {name: {"lr": 0.1, "batch_size": 10} for name in ("cd", "pcd")}

    def __init__(
        self,
        n_components=256,
        *,
        learner="cd",
        learning_rate=None,
        batch_size=None,
        n_iter=10,
        learner_options=None,
        model_options=None,
        evaluator="auto",
        evaluator_options=None,
        dtype="float32",
        backend="numpy",
        random_state=None,
        verbose=False,
    ):
        self.n_components = n_components
        self.learner = learner
        self.learning_rate = learning_rate
        self.batch_size = batch_size
        self.n_iter = n_iter
        self.learner_options = learner_options
        self.model_options = model_options
        self.evaluator = evaluator
        self.evaluator_options = evaluator_options
        self.dtype = dtype
        self.backend = backend
        self.random_state = random_state
        self.verbose = verbose

    def _model_arguments(self) -> dict:
        if isinstance(self.n_components, bool) or not isinstance(self.n_components, numbers.Integral):
            raise ParameterError(f"n_components: must be an integer, got {self.n_components!r}")
        return {"n_hidden": int(self.n_components)}

    def _fallback_mean(self, model):
        """The visible means of the model at W = 0: AIS then starts from its own biases."""
        return model.visible_units.mean(model.b_v.copy())

    def transform(self, X):
        """Hidden means E[h | v] (p(h = 1 | v) for Bernoulli hidden units), (n_samples, n_components)."""
        from rbmlab.evaluators.feature_classifier import features  # noqa: PLC0415

        _, model, X = self._fitted(X)
        return features(model, X)

    @property
    def _n_features_out(self):  # get_feature_names_out: rbm0, rbm1, ...
        return self.model_.n_hidden

    @property
    def components_(self):
        check_is_fitted(self, "model_")
        return self.model_.W.T

    @property
    def intercept_hidden_(self):
        check_is_fitted(self, "model_")
        return self.model_.b_h

    @property
    def intercept_visible_(self):
        check_is_fitted(self, "model_")
        return self.model_.b_v

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        if self.dtype in ("float32", "float64"):
            tags.transformer_tags.preserves_dtype = [self.dtype]
        return tags
