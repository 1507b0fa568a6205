"""Deterministic inference methods, by name: message passing, mean field, TAP, MAP by max-product,
MPLP or LP, with one calling shape (rbmlab.inference.solvers.base). Consumers choose one by
config (``evaluator.inference``, ``learner.inference``, ``evaluator.solver``) as learners choose
samplers; adding one is its module, its yaml in conf/solver/ and one line here."""

from rbmlab.registry import Registry

SOLVERS = Registry(
    "solver",
    {
        "bp_sum": "rbmlab.inference.solvers.loopy_bp:SumProduct",
        "bp_max": "rbmlab.inference.solvers.loopy_bp:MaxProduct",
        "bp_mixed": "rbmlab.inference.solvers.loopy_bp:MixedProduct",
        "mean_field": "rbmlab.inference.solvers.mean_field:MeanField",
        "unary": "rbmlab.inference.solvers.unary:Unary",
        "tap": "rbmlab.inference.solvers.tap:Tap",
        "adatap": "rbmlab.inference.solvers.tap:AdaTap",
        "nmf": "rbmlab.inference.solvers.tap:NaiveMeanField",
        "max_product": "rbmlab.inference.solvers.max_product:MaxProduct",
        "mplp": "rbmlab.inference.solvers.mplp:MPLP",
        "lp": "rbmlab.inference.solvers.lp:LP",
    },
)
