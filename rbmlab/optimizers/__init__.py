"""Optimizers, by name: how a gradient estimate becomes a parameter update.

An optimizer has ``config_class`` and ``update(model, grad, state, lr) -> (model, state)``:
``grad`` maps parameter names to the ascent direction of the log-likelihood (data minus model
statistics), ``state`` is the learner state dict (optimizer buffers live in it under their own
keys, so checkpoints and resume carry them), ``lr`` the learner's step size. ``grad`` is handed
over: its arrays are fresh from the learner, and an optimizer may reuse them for its result (SGD
without momentum turns the gradient into the new parameters in place: no (m, n) temporary).
"""

from rbmlab.registry import Registry

OPTIMIZERS = Registry(
    "optimizer",
    {
        "sgd": "rbmlab.optimizers.sgd:SGD",
        "adam": "rbmlab.optimizers.adam:Adam",
        "spectral": "rbmlab.optimizers.spectral:Spectral",
    },
)
