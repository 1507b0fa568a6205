"""The Python API: rbmlab's models as scikit-learn estimators (``from rbmlab import RBM, IsingModel``)."""

from rbmlab.api.ising import IsingModel
from rbmlab.api.rbm import RBM

__all__ = ["IsingModel", "RBM"]
