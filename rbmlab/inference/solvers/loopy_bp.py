"""Loopy belief propagation on the binary-RBM view (crbm_bp Alg. 1, rbmlab.inference.matrix_bp):
``bp_sum`` (sum-product: marginals, the marginal mode and the Bethe log Z), ``bp_max``
(max-product: the joint MAP's visible states) and ``bp_mixed`` (mixed-product, Eq. 15: the
marginal MAP). One class per mode, the mode fixed by the entry."""

from __future__ import annotations

from dataclasses import dataclass

from rbmlab.inference.matrix_bp import bethe_log_z, decode, loopy_bp
from rbmlab.inference.solvers.base import Beliefs, BinaryBipartiteSolver, SolverConfig, binary_bipartite
from rbmlab.limits import EVALUATION_STEPS
from rbmlab.validation import option


@dataclass
class LoopyBPConfig(SolverConfig):
    name: str = option("bp_sum", "solver")
    max_iter: int = option(
        50, "BP iterations at most (each: all h → v, then all v → h messages)", lo=1, hi=EVALUATION_STEPS
    )
    tol: float = option(1e-3, "an instance stops once no message probability moves by more", lo=0)
    damping: float = option(
        0.0, "L ← (1 − d) L_new + d L_old (the paper uses none)", lo=0, hi=1, open_hi=True
    )


class SumProduct(BinaryBipartiteSolver):
    """Sum-product loopy belief propagation on the binary-RBM view (crbm_bp Alg. 1): marginals, their
    mode and the Bethe log Z.

    Registered as ``bp_sum``; options (``max_iter``, ``tol``, ``damping``) in :class:`LoopyBPConfig`.
    """

    config_class = LoopyBPConfig
    mode = "sum"

    def solve(self, model, evidence=None, budget=None, *, init=None, rng=None) -> Beliefs:
        c = self.config
        W, b_v, b_h = binary_bipartite(model, evidence)
        result = loopy_bp(
            W,
            b_v,
            b_h,
            mode=self.mode,
            max_iter=self.budget(budget),
            tol=c.tol,
            damping=c.damping,
            init=None if init is None else init.raw,
        )
        log_z = bethe_log_z(W, b_v, b_h, result) if self.mode == "sum" else None
        return Beliefs(
            (result.tau_v, result.tau_h),
            result.converged,
            result.iterations,
            state=decode(result),
            log_z=log_z,
            raw=result,
        )


@dataclass
class MaxProductBPConfig(LoopyBPConfig):
    name: str = option("bp_max", "solver")


@dataclass
class MixedProductBPConfig(LoopyBPConfig):
    name: str = option("bp_mixed", "solver")


class MaxProduct(SumProduct):
    """Max-product loopy belief propagation on the binary-RBM view (crbm_bp Alg. 1): the visible states
    of the joint MAP.

    Registered as ``bp_max``; options in :class:`MaxProductBPConfig`.
    """

    config_class = MaxProductBPConfig
    mode = "max"


class MixedProduct(SumProduct):
    """Mixed-product loopy belief propagation on the binary-RBM view (crbm_bp Eq. 15): the marginal MAP
    of the visible units, the hidden ones summed out.

    Registered as ``bp_mixed``; options in :class:`MixedProductBPConfig`.
    """

    config_class = MixedProductBPConfig
    mode = "mixed"
