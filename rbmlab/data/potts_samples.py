"""Samples of a known Potts RBM: ``potts_samples``, categorical data whose log-likelihood is known.

The ground truth is an RBM (rbmlab.models.rbm) with ``n`` Potts visible units of ``q`` states
(q one-hot columns each, rbmlab.units.potts) and ``n_hidden`` Bernoulli hidden units, drawn from
``model_seed``: W ~ N(0, coupling²) on every (column, hidden) pair, b_v ~ N(0, field²), b_h = 0.
n_train + n_test rows (and n_valid, from a stream of their own) are drawn from it exactly with
``sample_seed`` (rbmlab.models.rbm.sample_exact: the layer of fewer states by inverse CDF over all
of them, then the other given it), stored as integer codes 0 … q − 1, one column per unit (encoded
one-hot by the run, rbmlab.data.encoding).
``info`` keeps the truth's parameters, its exact log Z and its mean log-likelihood of each split;
``model.init=truth`` starts a run from the truth itself (e.g. ``train.epochs=0 evaluator=exact``).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np

from rbmlab.backend import host_rng
from rbmlab.data.dataset import Dataset
from rbmlab.limits import ARRAY_ELEMENTS, EXACT_SAMPLING_UNITS, EXAMPLES, STATES, UNITS, exceeds
from rbmlab.validation import invalid, option


@dataclass(frozen=True)
class PottsSamplesOptions:
    """Options of dataset ``potts_samples``."""

    n: int = option(10, "visible Potts units (columns of the data)", lo=1, hi=4096, label="variables (n)")
    q: int = option(
        3,
        "states per unit: codes 0 .. q-1 (model.visible_states)",
        lo=2,
        hi=STATES,
        label="states per unit (q)",
    )
    n_hidden: int = option(
        8,
        "Bernoulli hidden units of the ground-truth RBM (exact sampling "
        "enumerates the 2^n_hidden or q^n states of the smaller layer)",
        lo=1,
        hi=UNITS,
        label="ground-truth hidden units",
    )
    coupling: float = option(1.0, "std of W ~ N(0, coupling^2) on every (column, hidden) pair", lo=0.0)
    field: float = option(0.5, "std of the visible fields b_v ~ N(0, field^2)", lo=0.0)
    model_seed: int = option(
        0, "seed of the ground-truth model's random draws", lo=0, label="ground-truth model seed"
    )
    sample_seed: int = option(0, "seed of the sampler", lo=0)
    n_train: int = option(2000, "training samples", lo=1, hi=EXAMPLES, label="training examples")
    n_test: int = option(1000, "test samples (drawn after the training samples)", lo=1, hi=EXAMPLES)
    n_valid: int = option(
        0,
        "validation samples, drawn after the test samples (0: no valid split)",
        lo=0,
        hi=EXAMPLES,
        neutral=0,
        label="validation examples",
    )

    @property
    def dimension(self) -> int:
        """Columns of the data, known without loading them (pre-flight checks)."""
        return self.n

    def __post_init__(self) -> None:
        rows = self.n_train + self.n_test + self.n_valid
        if problem := exceeds(
            ARRAY_ELEMENTS,
            rows * self.n * self.q,
            f"(n_train + n_test + n_valid) x {self.n} units x {self.q} one-hot columns",
        ):
            raise invalid("n_train", problem)
        if min(self.n_hidden, self.n * math.log2(self.q)) > EXACT_SAMPLING_UNITS:
            raise invalid(
                "n_hidden",
                f"exact sampling enumerates the smaller layer, at most "
                f"2^{EXACT_SAMPLING_UNITS} states; 2^{self.n_hidden} hidden "
                f"states and {self.q}^{self.n} visible ones are more",
            )


def potts_ground_truth(opts: PottsSamplesOptions):
    """The ground-truth RBM (float64, numpy) of ``opts``, drawn from ``host_rng(model_seed, 0)``."""
    from rbmlab.models.rbm import RBM  # noqa: PLC0415 - models are imported only when sampling

    rng = host_rng(opts.model_seed, 0)
    columns = opts.n * opts.q
    W = opts.coupling * rng.standard_normal((columns, opts.n_hidden))
    b_v = opts.field * rng.standard_normal(columns)
    return RBM(
        W, b_v, np.zeros(opts.n_hidden), visible="potts", hidden="bernoulli", visible_states=str(opts.q)
    )


def _rule(opts: PottsSamplesOptions) -> str:
    return (
        f"RBM with {opts.n} Potts visible units of {opts.q} states (one-hot) and {opts.n_hidden} "
        f"Bernoulli hidden units, W ~ N(0, {opts.coupling}^2), b_v ~ N(0, {opts.field}^2), b_h = 0; "
        f"model drawn from seed {opts.model_seed}; samples: independent exact draws (the layer of "
        f"fewer states by inverse CDF over all of them, then the other), seed {opts.sample_seed}; "
        f"rows are integer codes 0..{opts.q - 1}, one column per unit"
    )


def load_potts_samples(opts: PottsSamplesOptions) -> Dataset:
    """Exact samples of the ground-truth RBM of ``opts``, float32 (N, n) integer codes: train = the
    first n_train draws, test = the next n_test; valid = n_valid draws of a stream of their own
    (none when n_valid = 0)."""
    from rbmlab.models.rbm import log_likelihood, log_partition, sample_exact  # noqa: PLC0415

    model = potts_ground_truth(opts)
    units = model.visible_units

    def draws(n: int, stream: int) -> np.ndarray:
        return np.ascontiguousarray(
            units.decode(sample_exact(model, host_rng(opts.sample_seed, stream), n)), dtype=np.float32
        )

    x = draws(opts.n_train + opts.n_test, 1)
    parts = {"train": x[: opts.n_train], "test": x[opts.n_train :]}
    if opts.n_valid:  # a stream of its own: train and test are the same with or without it
        parts["valid"] = draws(opts.n_valid, 2)
    log_z = log_partition(model)
    mean_loglik = {
        split: float(np.mean(log_likelihood(model, units.encode(part, np.float64), log_z)))
        for split, part in parts.items()
    }
    truth = {
        "family": "rbm",
        "visible": "potts",
        "q": opts.q,
        "W": model.W.tolist(),
        "b_v": model.b_v.tolist(),
        "b_h": model.b_h.tolist(),
        "log_partition": log_z,
        "mean_loglik": mean_loglik,
    }
    return Dataset(
        name="potts_samples",
        train=parts["train"],
        test=parts["test"],
        valid=parts.get("valid"),
        image_shape=None,
        info={
            "source": "synthetic",
            "generation": _rule(opts),
            "split": f"train = the first {opts.n_train} draws, test = the next {opts.n_test}"
            + (f"; valid = {opts.n_valid} draws of their own stream" if opts.n_valid else ""),
            "binarize": f"none: integer codes 0..{opts.q - 1} for model.visible_units=potts "
            f"model.visible_states={opts.q}",
            "ground_truth": truth,
            "options": asdict(opts),
            "deviations": [],
        },
    )
