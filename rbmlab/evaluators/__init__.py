"""Evaluators, by name: each declares its config, the model capabilities it needs, a
feasibility check made before any work, and the metrics it writes
(rbmlab.evaluators.metrics.MetricSpec)."""

from rbmlab.registry import Registry

EVALUATORS = Registry(
    "evaluator",
    {
        "exact": "rbmlab.evaluators.exact:Exact",
        "ais": "rbmlab.evaluators.ais:AIS",
        "pl": "rbmlab.evaluators.pseudo_likelihood:PseudoLikelihood",
        "reconstruction": "rbmlab.evaluators.reconstruction:Reconstruction",
        "test_error": "rbmlab.evaluators.feature_classifier:FeatureClassifier",
        "pixel_error": "rbmlab.evaluators.pixel_error:PixelError",
        "mmd": "rbmlab.evaluators.sample_mmd:SampleMMD",
        "recognised": "rbmlab.evaluators.recognised:Recognised",
        "variety": "rbmlab.evaluators.variety:Variety",
        "pmap_log_z": "rbmlab.evaluators.pmap_log_z:PerturbMAPLogZ",
        "kl": "rbmlab.evaluators.kl:KL",
        "map_time": "rbmlab.evaluators.map_time:MapTime",
        "bethe": "rbmlab.evaluators.bethe:BetheEvaluator",
        "param_rmse": "rbmlab.evaluators.param_rmse:ParamRMSE",
        "tap": "rbmlab.evaluators.tap:TapEvaluator",
        "tap_dbm": "rbmlab.evaluators.tap:TapDBMEvaluator",
        "denoising": "rbmlab.evaluators.denoising:Denoising",
        "free_energy": "rbmlab.evaluators.free_energy:FreeEnergy",
        "spectrum": "rbmlab.evaluators.spectrum:Spectrum",
        "moments": "rbmlab.evaluators.moments:Moments",
        "overlap": "rbmlab.evaluators.overlap:Overlap",
        "combined": "rbmlab.evaluators.combined:Combined",
    },
)


def declared_metrics():
    """Every metric any registered evaluator declares."""
    return tuple(spec for _, cls in EVALUATORS.items() for spec in cls.metrics)
