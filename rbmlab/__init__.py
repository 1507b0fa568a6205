"""rbmlab: restricted Boltzmann machines and discrete energy-based models, reproduced.

``from rbmlab import RBM, IsingModel``: the Python API (rbmlab.api), scikit-learn estimators.
"""

__version__ = "0.1.0"

# The Python API by name ("module:attribute", as registry entries are): imported on first use, so
# ``import rbmlab`` stays cheap (no scikit-learn, no Hydra) and the bottom layer imports nothing above it.
_API = {"RBM": "rbmlab.api.rbm:RBM", "IsingModel": "rbmlab.api.ising:IsingModel"}
__all__ = list(_API)  # the public names (the documentation gives each a reference page)


def __getattr__(name: str):
    if name not in _API:
        raise AttributeError(f"module 'rbmlab' has no attribute {name!r}")
    import importlib  # noqa: PLC0415

    module, attribute = _API[name].split(":")
    return getattr(importlib.import_module(module), attribute)


def __dir__() -> list[str]:
    return sorted([*globals(), *_API])
