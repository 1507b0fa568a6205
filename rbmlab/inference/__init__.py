"""Inference methods, by name: samplers and fixed-point iterations with one calling shape
(rbmlab.inference.base)."""

from rbmlab.registry import Registry

INFERENCE = Registry(
    "inference",
    {
        "block_gibbs": "rbmlab.inference.block_gibbs:BlockGibbs",
        "parallel_tempering": "rbmlab.inference.parallel_tempering:ParallelTempering",
        "gibbs": "rbmlab.inference.site_gibbs:SiteGibbs",
        "gwg": "rbmlab.inference.gwg:GibbsWithGradients",
        "pmp": "rbmlab.inference.pmp:PMP",
        "perturb_descend": "rbmlab.inference.perturb_descend:PerturbDescend",
        "pmap_lp": "rbmlab.inference.pmap_lp:PmapLP",
        "fractional_mh": "rbmlab.inference.fractional_mh:FractionalMH",
    },
)
