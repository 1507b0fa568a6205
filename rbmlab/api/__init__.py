"""The Python API: rbmlab's models as scikit-learn estimators (``from rbmlab import RBM``)."""
from rbmlab.api.estimator import RBM

__all__ = ["RBM"]
