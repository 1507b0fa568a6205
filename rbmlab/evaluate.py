"""``rbmlab evaluate``: score any saved RBM on a dataset split and return a JSON-able dict."""
from __future__ import annotations

from typing import Any

from omegaconf import DictConfig, OmegaConf

from rbmlab.backend import get_backend
from rbmlab.checkpoint import load_checkpoint
from rbmlab.config import BackendConfig, EvaluatorConfig, check_seed, structured
from rbmlab.data import load_dataset
from rbmlab.errors import RbmlabError
from rbmlab.evaluation import check_feasible, evaluate
from rbmlab.models.rbm import base_rate_bias


def evaluate_checkpoint(cfg: DictConfig) -> dict[str, Any]:
    """Metrics of the checkpoint's model. ``backend.dtype: saved`` (the default of
    conf/evaluate.yaml) evaluates it in the precision it was saved in, float32 or float64."""
    evaluator = structured(EvaluatorConfig, cfg.evaluator, "evaluator")
    check_seed(cfg.seed)
    if cfg.split not in ("train", "valid", "test"):
        raise RbmlabError(f"split: must be train, valid or test, got {cfg.split!r}")
    rbm_np, meta, _ = load_checkpoint(cfg.checkpoint)
    backend_node = OmegaConf.to_container(cfg.backend, resolve=True)
    if backend_node.get("dtype") == "saved":
        saved = str(rbm_np.W.dtype)
        backend_node["dtype"] = saved if saved in ("float32", "float64") else "float32"
    backend_cfg = structured(BackendConfig, backend_node, "backend")
    trial = cfg.get("trial")
    if rbm_np.n_trials:
        if not isinstance(trial, int) or isinstance(trial, bool) or not 0 <= trial < rbm_np.n_trials:
            raise RbmlabError(f"trial: {cfg.checkpoint} holds {rbm_np.n_trials} trials; choose one "
                              f"with trial=N, N in 0..{rbm_np.n_trials - 1} (got {trial!r})")
        rbm_np = rbm_np.trial(trial)
    elif trial is not None:
        raise RbmlabError(f"trial: {cfg.checkpoint} holds a single model; drop trial={trial}")
    options = OmegaConf.to_container(cfg.dataset, resolve=True)
    data = load_dataset(**options)
    x = data.split(cfg.split)
    if x.shape[1] != rbm_np.n_visible:
        raise RbmlabError(f"checkpoint: {cfg.checkpoint} has {rbm_np.n_visible} visible units but "
                          f"dataset {options['name']} has {x.shape[1]} dimensions")
    check_feasible(evaluator, rbm_np.n_visible, rbm_np.n_hidden)
    backend = get_backend(backend_cfg.name, backend_cfg.dtype)
    rbm = rbm_np.map(backend.asarray)
    evaluator.splits = [cfg.split]
    metrics = evaluate(rbm, {cfg.split: backend.asarray(x)}, evaluator,
                       rng=backend.rng(cfg.seed),
                       base_bias=backend.asarray(base_rate_bias(data.train.mean(axis=0))),
                       final=True, progress=evaluator.progress,
                       train=backend.asarray(data.train) if evaluator.reverse else None)
    n = min(x.shape[0], evaluator.max_examples or x.shape[0])
    result: dict[str, Any] = {"checkpoint": str(cfg.checkpoint), "dataset": options["name"],
                              "split": cfg.split, "evaluator": evaluator.name, "n_examples": n,
                              "n_visible": rbm_np.n_visible, "n_hidden": rbm_np.n_hidden,
                              "dtype": backend_cfg.dtype}
    if trial is not None:
        result["trial"] = trial
    renames = {f"{cfg.split}_log_likelihood": "mean_log_likelihood",
               f"{cfg.split}_log_likelihood_lower": "mean_log_likelihood_lower",
               f"{cfg.split}_log_likelihood_upper": "mean_log_likelihood_upper",
               f"{cfg.split}_pseudo_log_likelihood": "pseudo_log_likelihood",
               f"{cfg.split}_reconstruction_error": "reconstruction_error"}
    result.update({renames.get(k, k): v for k, v in metrics.items()})
    if evaluator.name == "ais":
        result.update(ais_chains=evaluator.n_chains, ais_schedule=evaluator.schedule)
    if meta.get("epoch") is not None:
        result["trained_epochs"] = meta["epoch"]
    return result
