"""Run identities: ``RunConfig.hash`` is in every run's summary and checkpoints and decides what
resume continues, so a refactor of the configuration must leave it as it is. The hashes below
were recorded from the code before options declared their identity-neutral values themselves,
under the run defaults of that time (RECORDED_UNDER)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rbmlab.config import TrainConfig
from rbmlab.data.registry import SPECS
from rbmlab.data.tasks import TASKS
from rbmlab.evaluators import EVALUATORS
from rbmlab.hydra_app import validated_run_config
from rbmlab.inference import INFERENCE
from rbmlab.inference.solvers import SOLVERS
from rbmlab.learners import LEARNERS
from rbmlab.models import MODELS
from rbmlab.optimizers import OPTIMIZERS
from rbmlab.validation import Config, identity_neutral, option, parse_options, to_plain, without_neutral

CRBM = [
    "model=crbm",
    "dataset=mnist",
    "task=flip",
    "evaluator=pixel_error",
    "learner=logistic",
    "evaluator.inference=none",
]
ISING = ["dataset=ising_samples", "model=ising", "learner=pcd"]
VALID = ["train.stop_rule=valid", "train.stop_metric=valid_log_likelihood", "dataset.validation=true"]

# every option added after runs existed, at its identity-neutral value and away from it
NEUTRAL_OPTIONS = {
    "default": ([], "3cb5a7421c576754"),
    "matched_neutral": ([*CRBM, "evaluator.matched=false"], "5d26c5dc25b609ac"),
    "matched_default": (CRBM, "f8dff3b3b89f60d1"),
    "sgd_l1_neutral": (["learner.optimizer.l1=0.0"], "3cb5a7421c576754"),
    "sgd_l1": (["learner.optimizer.l1=0.001"], "4a72f1a7662209da"),
    "sgd_momentum": (["learner.optimizer.momentum=0.5"], "b1c9dab68417ed8c"),
    "sgd_momentum_on_neutral": (
        ["learner.optimizer.momentum=0.5", "learner.optimizer.momentum_on=all"],
        "b1c9dab68417ed8c",
    ),
    "sgd_momentum_on": (
        ["learner.optimizer.momentum=0.5", "learner.optimizer.momentum_on=interactions"],
        "d3f0ce42b93c54d0",
    ),
    "adam_neutral": (
        ["learner/optimizer=adam", "learner.optimizer.l1=0.0", "learner.optimizer.interaction_lr_scale=1.0"],
        "78d73a600ae72c33",
    ),
    "adam_l1": (["learner/optimizer=adam", "learner.optimizer.l1=0.001"], "4fbfb09baec30478"),
    "adam_scale": (
        ["learner/optimizer=adam", "learner.optimizer.interaction_lr_scale=0.5"],
        "b515d87dd3b78fb1",
    ),
    "hidden_bias_neutral": (["model.hidden_bias=zero"], "3cb5a7421c576754"),
    "hidden_bias_normal": (["model.hidden_bias=normal"], "9c87d4ef8260c61a"),
    "mnist_neutral": (["dataset.digits=null", "dataset.contours=false"], "3cb5a7421c576754"),
    "mnist_digits": (["dataset.digits=[0,1]"], "a2317a827298692e"),
    "mnist_contours": (["dataset.contours=true"], "411ffda3845699ed"),
    "pcd": (["learner=pcd"], "fb64657497b8db5b"),
    "pcd_uniform": (["learner=pcd", "learner.chain_init=uniform"], "9f0339c3b0fb769d"),
    "learner_gibbs_sweep": ([*ISING, "+learner.sampler={name:gibbs,step:sweep}"], "8b38b8e49123061a"),
    "learner_gibbs_site": ([*ISING, "+learner.sampler={name:gibbs,step:site}"], "2374881ad4b33c56"),
    "learner_gwg_sweep": ([*ISING, "+learner.sampler={name:gwg,step:sweep}"], "de25f871ab97ecdc"),
    "learner_gwg_site": ([*ISING, "+learner.sampler={name:gwg,step:site}"], "fee65e281e479077"),
    "evaluator_gibbs_sweep": (
        [*ISING, "evaluator=kl", "+evaluator.sampler={name:gibbs,step:sweep}"],
        "565282e07b84f341",
    ),
    "evaluator_gibbs_site": (
        [*ISING, "evaluator=kl", "+evaluator.sampler={name:gibbs,step:site}"],
        "c455099cf6539ef5",
    ),
    "evaluator_gwg_site": (
        [*ISING, "evaluator=mmd", "+evaluator.sampler={name:gwg,step:site}"],
        "2cd3f5ff5a9a7ea1",
    ),
    "stop_none_neutral": (
        ["train.stop_rule=none", "train.stop_metric=null", "train.patience=5"],
        "3cb5a7421c576754",
    ),
    "stop_gap": (["train.stop_rule=gap"], "89e3f541e765f633"),
    "stop_valid": (VALID, "0284b0cbb15769f1"),
    "stop_valid_patience_neutral": ([*VALID, "train.patience=5"], "0284b0cbb15769f1"),
    "tap_count_neutral": (["evaluator=tap", "evaluator.count=converged"], "c30e9b7e25697afb"),
    "tap_count_all": (["evaluator=tap", "evaluator.count=all"], "ff60ddbc873471a4"),
    "stop_valid_patience": ([*VALID, "train.patience=7"], "3c0574b3c005a0ba"),
    "frank_wolfe": (["learner=frank_wolfe"], "3d03e675f407850e"),
    "frank_wolfe_neutral": (
        ["learner=frank_wolfe", "learner.step=whole", "learner.step_points=13"],
        "3d03e675f407850e",
    ),
    "frank_wolfe_line_search": (["learner=frank_wolfe", "learner.step=line_search"], "7f44a0c6155be87a"),
    "frank_wolfe_points": (
        ["learner=frank_wolfe", "learner.step=line_search", "learner.step_points=9"],
        "9306cd1d65a0c1ed",
    ),
    "frank_wolfe_pools_neutral": (["learner=frank_wolfe", "learner.chain_pool=two"], "3d03e675f407850e"),
    "frank_wolfe_one_pool": (
        ["learner=frank_wolfe", "learner.chain_pool=one", "learner.bias_chains=1000"],
        "c3158c16ab07c8cb",
    ),
    "frank_wolfe_held_neutral": (
        ["learner=frank_wolfe", "learner.step=line_search", "learner.step_bias=held"],
        "7f44a0c6155be87a",
    ),
    "frank_wolfe_refit": (
        ["learner=frank_wolfe", "learner.step=line_search", "learner.step_bias=refit"],
        "5dc10494bd05b431",
    ),
}

# every component's conf/ defaults, the rest of the config as the default job's
COMPONENT_DEFAULTS = {
    "learner=cd": "3cb5a7421c576754",
    "learner=cd_percloss": "83939c151ab1927c",
    "learner=cg": "f32b409e6f4add51",
    "learner=conditional_cd": "a84ac11089032988",
    "learner=csdcp": "2fcf34bd92f9b300",
    "learner=frank_wolfe": "3d03e675f407850e",
    "learner=logistic": "2a0f937d2a3d6344",
    "learner=lssvm": "a03f07cca9850c8c",
    "learner=mle_bp": "4794298f96609ca7",
    "learner=mle_mf": "fc08d9436367bbad",
    "learner=mssvm": "29263b45c066cfb9",
    "learner=pcd": "fb64657497b8db5b",
    "learner=reset": "95b83110ec77407c",
    "learner=sdcp": "074c43970367cda2",
    "learner=ssd": "66bce281a499de72",
    "learner=tap": "a32e68b25b8fd813",
    "learner=tap_dbm": "09bbf1361b1d18f1",
    "evaluator=ais": "3cb5a7421c576754",
    "evaluator=denoising": "200a36308d777958",
    "evaluator=exact": "71bd1d3b288aad6f",
    "evaluator=free_energy": "822fb8022c7e21be",
    "evaluator=kl": "52abb7c01a15cf62",
    "evaluator=mmd": "69a73e9d252b0124",
    "evaluator=param_rmse": "ad311fe15674b97f",
    "evaluator=pixel_error": "f30272d039360f36",
    "evaluator=pl": "8dfaf206b64e777f",
    "evaluator=pmap_log_z": "62055832b7bfec4c",
    "evaluator=reconstruction": "b24beddeda58abc5",
    "evaluator=tap": "c30e9b7e25697afb",
    "evaluator=tap_dbm": "35e6784a902308eb",
    "evaluator=test_error": "895a99f12c417295",
    "model=crbm": "8bd55df36a027474",
    "model=dbm": "36737f2dfbfeb877",
    "model=grbm": "c2b95e88416c7985",
    "model=ising": "0c19cef289256a07",
    "model=rbm": "3cb5a7421c576754",
    "dataset=bars_stripes": "f8fd447802aa609f",
    "dataset=binarized_mnist": "b56a88a12700cf1b",
    "dataset=caltech101": "5a7be8c0113cab9a",
    "dataset=cbcl_faces": "e05d11adf6b73d34",
    "dataset=deconvolution": "37777cf77c8054c5",
    "dataset=ising_samples": "20c7394596d8d823",
    "dataset=mnist": "3cb5a7421c576754",
    "dataset=ocr_letters": "9fcef1455507d231",
    "dataset=omniglot": "7c9bb650c4ccb49f",
    "dataset=shifting_bar": "4d8747db2f0a9012",
    "task=flip": "3cd40e60ae3676d6",
    "task=none": "3cb5a7421c576754",
    "task=occlude": "ca90a04158095058",
}


# The run defaults the hashes were recorded under; the default job has since changed (issue 56:
# PCD-1 at lr 0.01 for 40 epochs, scored every 10 with a cheaper curve): train.epochs 5 -> 40,
# train.eval_every 1 -> 10, the default learner cd -> pcd and pcd's lr 0.05 -> 0.01, evaluator=ais's
# curve_n_chains 0 -> 20 (0 is neutral: a run that sets it keeps its identity).
RECORDED_UNDER = ["learner=cd", "train.epochs=5", "train.eval_every=1"]
DEFAULT_JOB = "341cfbff7723135d"  # the default job's identity now


def recorded_hash(args: list[str]) -> str:
    cfg = validated_run_config([*RECORDED_UNDER, *args])
    then = [
        *(["learner.lr=0.05"] if cfg.learner.name == "pcd" else []),
        *(["evaluator.curve_n_chains=0"] if cfg.evaluator.name == "ais" else []),
    ]
    return validated_run_config([*RECORDED_UNDER, *then, *args]).hash() if then else cfg.hash()


def test_the_default_job_has_its_recorded_hash():
    assert validated_run_config([]).hash() == DEFAULT_JOB


def test_identity_neutral_options_keep_the_recorded_hashes():
    """At its neutral value an option stays out of the hash (old runs keep their identity);
    at any other value it is in it."""
    got = {name: recorded_hash(args) for name, (args, _) in NEUTRAL_OPTIONS.items()}
    assert got == {name: recorded for name, (_, recorded) in NEUTRAL_OPTIONS.items()}


def test_every_components_defaults_keep_the_recorded_hashes():
    got = {override: recorded_hash([override]) for override in COMPONENT_DEFAULTS}
    assert got == COMPONENT_DEFAULTS


@dataclass
class Inner(Config):
    name: str = option("inner", "component")
    step: str = option("sweep", "added later; sweep is what older runs did", neutral="sweep")


@dataclass
class Outer(Config):
    matched: bool = option(True, "added later, its default not what older runs did", neutral=False)
    digits: list[int] | None = option(None, "added later; null is what older runs did", neutral=None)
    limit: int | None = option(None, "null is a value like any other here")
    inner: Any = option(
        {"name": "inner"}, "a nested component", parse=lambda value, key: parse_options(Inner, value, key)
    )


def test_an_option_is_left_out_at_its_neutral_value_whatever_its_default():
    """As pixel_error's matched (default true, neutral false): the key goes at the neutral value
    only. neutral=None makes null neutral; an option declared without neutral is always kept."""

    def identity(**given):
        config = Outer(**given)
        return without_neutral(to_plain(config), config)

    assert identity() == {"matched": True, "limit": None, "inner": {"name": "inner"}}
    assert identity(matched=False, digits=[1], limit=3, inner={"step": "site"}) == {
        "digits": [1],
        "limit": 3,
        "inner": {"name": "inner", "step": "site"},
    }
    assert identity_neutral(Outer) == {"matched": False, "digits": None}
    assert identity_neutral(Inner()) == {"step": "sweep"}


def declared_neutral():
    """(group, config class, key, neutral value) of every option declared identity-neutral."""
    groups = {"train": [TrainConfig], "dataset": [spec.options for spec in SPECS.values()]}
    for registry in (MODELS, LEARNERS, EVALUATORS, OPTIMIZERS, INFERENCE, SOLVERS, TASKS):
        groups[registry.kind] = [component.config_class for _, component in registry.items()]
    return [
        (group, cls, key, value)
        for group, classes in groups.items()
        for cls in dict.fromkeys(classes)
        for key, value in identity_neutral(cls).items()
    ]


def test_every_identity_neutral_value_is_one_its_option_accepts():
    """A neutral value is what older runs did, so it must be a valid setting; it may differ from
    the option's default."""
    found = declared_neutral()
    assert ("evaluator", EVALUATORS.get("pixel_error").config_class, "matched", False) in found
    required = {"FileOptions": {"path": "data.csv"}}  # options a class cannot be made without
    for group, cls, key, value in found:
        options = {**required.get(cls.__name__, {}), key: value}
        assert getattr(parse_options(cls, options, group), key) == value, (group, cls.__name__, key)
