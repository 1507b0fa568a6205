"""``rbmlab.IsingModel``: the fully visible pairwise binary model as a scikit-learn density estimator."""

from __future__ import annotations

from sklearn.base import DensityMixin
from sklearn.utils.validation import check_is_fitted

from rbmlab.api.base import EnergyModel


class IsingModel(DensityMixin, EnergyModel):
    """Ising model p(x) ∝ exp(Σ_{i<j} J_ij x_i x_j + Σ_i h_i x_i), one unit per feature, trained by
    moment matching (``learner="pcd"``: persistent chains of the colour-class Gibbs sampler).

    The arguments are rbmlab.RBM's without ``n_components`` (learning_rate and batch_size default
    to None: pcd at lr 0.05 and batch 100, the rate pcd.yaml had before the default run moved to
    0.01; other learners their yaml's); ``model_options`` takes ``{"spins": "pm1"}`` for x in
    {−1, +1} (default "01"), ``coupling_std``, ``field_init`` and ``tie``. X in [0, 1] ([−1, 1]
    under "pm1") is read as the units' means, as by rbmlab.RBM: the data moments E[x_i x_j] are
    then those of the means (rbmlab.api.base). ``score_samples`` is exact (all 2^n states
    enumerated, n ≤ 25; at rows of means log p̃(x) − log Z, rbmlab.api.scoring); ``sample``'s
    "gibbs" is the colour-class Gibbs sampler.

    Attributes
    ----------
    model_ : rbmlab.models.ising.Ising
        The fitted model (host arrays).
    coupling_ : ndarray of shape (n_features, n_features)
        J, symmetric with a zero diagonal.
    field_ : ndarray of shape (n_features,)
        h.
    learner_state_, n_iter_, n_updates_, seed_, data_mean_
        As those of :class:`rbmlab.RBM`.
    """

    family = "ising"
    small_data_defaults = {"pcd": {"lr": 0.05}}  # its moment matching's rate (kept when pcd.yaml's fell)

    def __init__(
        self,
        *,
        learner="pcd",
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

    score = EnergyModel.score  # the mean log-likelihood (DensityMixin's is a placeholder)

    @property
    def coupling_(self):
        check_is_fitted(self, "model_")
        return self.model_.J

    @property
    def field_(self):
        check_is_fitted(self, "model_")
        return self.model_.h
