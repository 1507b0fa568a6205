"""Structured-prediction error of a conditional model (crbm_bp, Tables 1–3): the percentage of
wrongly predicted output pixels, over all pixels ("All") and over the pixels the corruption
changed ("Changed"), pooled over the split (Table 1's caption; pooling is our choice).

The prediction is the decoded state of a solver (rbmlab.inference.solvers), by default the
inference the model was trained with (the paper's guideline); ``inference`` takes a solver's
name or one of the historic short names:

    mf      mean_field: 1[τ^v > 1/2] (CD-k, CD-PercLoss and MLE-MF models)
    sum     bp_sum: sum-product BP's marginal mode 1[τ^v > 1/2] (MLE-BP)
    max     bp_max: max-product BP, the joint MAP's v (LSSVM)
    mixed   bp_mixed: mixed-product BP, the marginal MAP (MSSVM)
    none    unary: the input-dependent visible biases alone, 1[b¹ > 0] (the logistic-regression baseline)

BP and mean field run to ``tol`` on the budget the model trained with (the paper's matched
inference: T = 7 + epoch for MLE-BP, MLE-MF and the SSVMs, from Context.inference_iterations)
when ``matched`` and the learner has one; on ``max_iter`` otherwise (CD-k and CD-PercLoss models,
``rbmlab evaluate``). It also records the share of instances on which the iteration converged.
Instances run ``chunk`` at a time (BP holds 4 × chunk × |v| × |h| floats).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rbmlab.backend import to_numpy
from rbmlab.data.corruption import pixel_errors
from rbmlab.errors import RbmlabError
from rbmlab.evaluators.base import Evaluator, EvaluatorConfig
from rbmlab.evaluators.metrics import MetricSpec
from rbmlab.inference.solvers import SOLVERS
from rbmlab.limits import CHAINS, EVALUATION_STEPS
from rbmlab.models.base import Conditional
from rbmlab.validation import option

# the historic values of ``inference`` (in the identities of the runs made with them) -> solvers
SHORT_NAMES = {"mf": "mean_field", "sum": "bp_sum", "max": "bp_max", "mixed": "bp_mixed", "none": "unary"}


def _inference(value, key: str) -> str:
    if not isinstance(value, str):
        raise RbmlabError(f"{key}: expected a string, got {value!r}")
    if SHORT_NAMES.get(value, value) not in SOLVERS:
        raise RbmlabError(
            f"{key}: unknown inference {value!r}; choose one of {', '.join([*SHORT_NAMES, *SOLVERS.names()])}"
        )
    return value


@dataclass
class PixelErrorConfig(EvaluatorConfig):
    name: str = option("pixel_error", "evaluator")
    inference: str = option(
        "sum",
        "how outputs are predicted: a solver (rbmlab.inference.solvers) or "
        "mf | sum | max | mixed (BP) | none (the biases alone)",
        parse=_inference,
        label="prediction method",
    )
    max_iter: int = option(
        50, "iterations of mean field or BP (without a matched budget)", lo=1, hi=EVALUATION_STEPS
    )
    matched: bool = option(
        True,
        "run the learner's own budget T = base + epoch where it has one",
        neutral=False,
        label="test budget matched to learning",
    )
    tol: float = option(1e-3, "converged: no message (BP) or mean (MF) moved by more", lo=0)
    chunk: int = option(100, "instances per inference call", lo=1, hi=CHAINS)


def predict(model, x, inference: str, max_iter: int, tol: float):
    """(predicted outputs (B, |v|), converged (B,) bool) for the input rows ``x``."""
    beliefs = solver(inference, tol).solve(model, x, max_iter)
    return beliefs.state, beliefs.converged


def solver(inference: str, tol: float):
    """The solver named by ``inference`` (a short name or a solver's), with ``tol`` where it
    has one."""
    name = SHORT_NAMES.get(inference, inference)
    options = {"tol": tol} if "tol" in SOLVERS.get(name).config_class.__dataclass_fields__ else {}
    return SOLVERS.build(SOLVERS.parse({"name": name, **options}))


class PixelError(Evaluator):
    """Structured-prediction pixel error of a conditional model (crbm_bp Tables 1–3): % of wrongly
    predicted output pixels, over all pixels ("All") and over those the corruption changed
    ("Changed"), the prediction a solver's decoded state.

    Registered as ``pixel_error``; options (``inference``: mf, sum, max, mixed, none or a solver's
    name; ``max_iter``, ``tol``, ...) in :class:`PixelErrorConfig`.
    """

    config_class = PixelErrorConfig
    requires = (Conditional,)
    metrics = (
        MetricSpec(
            "pixel_error", "%", False, description="wrong output pixels among all (All)", label="pixel error"
        ),
        MetricSpec(
            "changed_error",
            "%",
            False,
            description="wrong output pixels among those the corruption changed (Changed)",
            label="error on changed pixels",
        ),
        MetricSpec(
            "converged",
            "%",
            True,
            description="instances on which inference converged",
            label="inferences converged",
        ),
    )

    def check(self, model_class, sizes):
        super().check(model_class, sizes)
        name = SHORT_NAMES.get(self.config.inference, self.config.inference)
        if not SOLVERS.get(name).supports(model_class):
            raise RbmlabError(
                f"evaluator.inference: solver {name} does not run on model {model_class.family}"
            )

    def budget(self, inference_iterations: int | None) -> int:
        """Iterations of BP or mean field: the learner's T (``inference_iterations``) when matched
        and it has one, else max_iter."""
        matched = self.config.matched and inference_iterations is not None
        return inference_iterations if matched else self.config.max_iter

    def evaluate(self, model, splits, context):
        cfg = self.config
        budget = self.budget(context.inference_iterations)
        method = solver(cfg.inference, cfg.tol)
        out = {}
        for name, batch in splits.items():
            if batch.targets is None or batch.mask is None:
                raise RbmlabError(
                    f"evaluator=pixel_error: split {name} has no clean targets and "
                    "changed-pixel mask; use task=flip or task=occlude"
                )
            n = (
                batch.inputs.shape[0]
                if not cfg.max_examples
                else min(cfg.max_examples, batch.inputs.shape[0])
            )
            predicted, converged = [], []
            for start in range(0, n, cfg.chunk):
                beliefs = method.solve(model, batch.inputs[start : min(n, start + cfg.chunk)], budget)
                predicted.append(to_numpy(beliefs.state))
                converged.append(to_numpy(beliefs.converged))
            errors = pixel_errors(
                np.concatenate(predicted), to_numpy(batch.targets[:n]), to_numpy(batch.mask[:n])
            )
            out[f"{name}_pixel_error"] = errors["all"]
            out[f"{name}_changed_error"] = errors["changed"]
            out[f"{name}_converged"] = 100.0 * float(np.concatenate(converged).mean())
        return out
