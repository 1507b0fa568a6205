"""Model families, by name (see rbmlab.models.base for what a family provides)."""

from rbmlab.registry import Registry

MODELS = Registry(
    "model",
    {
        "rbm": "rbmlab.models.rbm:RBM",
        "ising": "rbmlab.models.ising:Ising",
        "crbm": "rbmlab.models.crbm:CRBM",
        "grbm": "rbmlab.models.grbm:GRBM",
        "dbm": "rbmlab.models.dbm:DBM",
        "fractional_rbm": "rbmlab.models.fractional_rbm:FractionalRBM",
    },
)
