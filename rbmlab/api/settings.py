"""The estimator's hyperparameters as the run configuration's groups, validated by their own parsers.

A learner, model or evaluator starts from its yaml in ``conf/`` exactly as ``rbmlab run
learner=<name>`` composes it (so ``RBM(learner="sdcp")`` has the CLI's defaults), the estimator's
own arguments and option dicts are laid over it, and the registry parses the result. An error
names the estimator's argument (``learning_rate``, ``learner_options['k']``) instead of the config
key, and is a ValueError, as scikit-learn expects of a bad parameter.
"""

from __future__ import annotations

import contextlib
import functools
import json
import re
from collections.abc import Mapping
from typing import Any

from rbmlab.errors import RbmlabError
from rbmlab.validation import merged

# config key → the estimator's argument (the rest of a group: its options dict)
ARGUMENTS = {
    "learner.name": "learner",
    "learner.lr": "learning_rate",
    "learner.batch_size": "batch_size",
    "model.n_hidden": "n_components",
    "evaluator.name": "evaluator",
    "train.epochs": "n_iter",
    "backend.name": "backend",
    "backend.dtype": "dtype",
    "method.name": "method",
    "seed": "random_state",
}
OPTION_DICTS = {"learner": "learner_options", "model": "model_options", "evaluator": "evaluator_options"}


def argument_of(key: str) -> str:
    """The estimator argument behind config key ``key`` (learner.k → learner_options['k'])."""
    if key in ARGUMENTS:
        return ARGUMENTS[key]
    group, _, rest = key.partition(".")
    if group in OPTION_DICTS and rest:
        first, _, deeper = rest.partition(".")
        return f"{OPTION_DICTS[group]}[{first!r}]" + (f".{deeper}" if deeper else "")
    return key


class ParameterError(RbmlabError, ValueError):
    """A bad hyperparameter or input: rbmlab's one-line message, raised as a ValueError."""


@contextlib.contextmanager
def as_value_error():
    """Re-raise rbmlab's one-line errors as :class:`ParameterError`, the key renamed to the
    estimator's argument."""
    try:
        yield
    except ParameterError:
        raise
    except RbmlabError as e:
        key, sep, problem = str(e).partition(": ")
        if sep and re.fullmatch(r"[\w.]+", key):
            raise ParameterError(f"{argument_of(key)}: {problem}") from None
        raise ParameterError(str(e)) from None


@functools.lru_cache(maxsize=64)
def _composed(overrides: tuple[str, ...]) -> str:
    from rbmlab.config import resolved  # noqa: PLC0415
    from rbmlab.hydra_app import compose  # noqa: PLC0415 - Hydra only when a group is composed

    return json.dumps(resolved(compose("config", list(overrides))))


def composed_group(group: str, name: str, extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """Config group ``group`` chosen as ``name`` as ``rbmlab run {group}={name}`` composes it (a
    fresh copy; ``extra``: further group overrides, e.g. learner/optimizer=adam)."""
    return json.loads(_composed((f"{group}={name}", *extra)))[group]


def options_dict(value: Any, argument: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ParameterError(f"{argument}: must be a dict of options or None, got {value!r}")
    return dict(value)


def learner_config(name: Any, learning_rate: Any, batch_size: Any, options: Any):
    """The learner's parsed config: conf/learner/<name>.yaml, the arguments given and
    ``options`` (``optimizer``: a name or a dict with one composes conf/learner/optimizer/<it>)."""
    from rbmlab.learners import LEARNERS  # noqa: PLC0415

    with as_value_error():
        LEARNERS.get(name, "learner")
        options = options_dict(options, "learner_options")
        optimizer = options.get("optimizer")
        chosen = optimizer.get("name") if isinstance(optimizer, Mapping) else optimizer
        extra = (f"learner/optimizer={chosen}",) if isinstance(chosen, str) else ()
        if isinstance(optimizer, str):
            options.pop("optimizer")
        for key in ("name", "lr", "batch_size"):
            if key in options:
                raise ParameterError(
                    f"learner_options[{key!r}]: an argument of its own; give it as "
                    f"{argument_of('learner.' + key)}=..."
                )
        given = {
            **({"lr": learning_rate} if learning_rate is not None else {}),
            **({"batch_size": batch_size} if batch_size is not None else {}),
        }
        return LEARNERS.parse(merged(composed_group("learner", name, extra), {**options, **given}))


def model_config(family: str, arguments: dict[str, Any], options: Any):
    """The model's parsed config: conf/model/<family>.yaml, the estimator's own ``arguments``
    (config key → value: an RBM's n_hidden) and ``options`` (init is the CLI's: here ``load``
    starts from a checkpoint)."""
    from rbmlab.models import MODELS  # noqa: PLC0415

    with as_value_error():
        options = options_dict(options, "model_options")
        for key in ("name", "init", *arguments):
            if key in options:
                hint = {"init": "load(path) and partial_fit", "name": "another estimator class"}.get(
                    key, f"{argument_of('model.' + key)}=..."
                )
                raise ParameterError(f"model_options[{key!r}]: not an option here; use {hint}")
        return MODELS.parse(merged(composed_group("model", family), {**options, **arguments}))


def evaluator_config(name: Any, options: Any, progress: bool):
    """The evaluator's parsed config: conf/evaluator/<name>.yaml and ``options``."""
    from rbmlab.evaluators import EVALUATORS  # noqa: PLC0415

    with as_value_error():
        EVALUATORS.get(name, "evaluator")
        options = options_dict(options, "evaluator_options")
        return EVALUATORS.parse(merged(composed_group("evaluator", name), {"progress": progress, **options}))


def train_config(n_iter: Any, verbose: Any):
    from rbmlab.config import TrainConfig  # noqa: PLC0415
    from rbmlab.validation import parse_options  # noqa: PLC0415

    with as_value_error():
        if not isinstance(verbose, (bool, int)):
            raise ParameterError(f"verbose: must be true or false, got {verbose!r}")
        return parse_options(TrainConfig, {"epochs": n_iter, "progress": bool(verbose)}, "train")


def backend_config(backend: Any, dtype: Any):
    from rbmlab.config import BackendConfig  # noqa: PLC0415
    from rbmlab.validation import parse_options  # noqa: PLC0415

    with as_value_error():
        return parse_options(BackendConfig, {"name": backend, "dtype": dtype}, "backend")
