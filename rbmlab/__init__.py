"""rbmlab: restricted Boltzmann machines and discrete energy-based models, reproduced."""

__version__ = "0.1.0"
