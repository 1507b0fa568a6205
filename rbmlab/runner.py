"""The training loop: one place for epochs, the evaluation schedule, checkpoints and records.

A run directory holds:
    config.yaml      the resolved configuration
    overrides.yaml   the command-line overrides that produced it
    metrics.csv      one row per evaluation point: epoch, updates, wall_time, metrics...
                     (with train.trials > 1: one row per evaluation point and trial, column trial)
    summary.json     status (running | completed | diverged | failed), final metrics
                     (with trials: their mean, and each trial's in final_trials)
    checkpoint.npz   the model and learner state at the last saved epoch (see checkpoint.py)

Random numbers come from generators keyed by (seed, stream, epoch), so a run resumed from the
checkpoint of epoch e draws exactly what the uninterrupted run drew after epoch e.
"""
from __future__ import annotations

import csv
import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Collection

import numpy as np
from omegaconf import OmegaConf
from tqdm.auto import tqdm

from rbmlab import __version__
from rbmlab.backend import get_backend, host_rng
from rbmlab.checkpoint import load_checkpoint, save_checkpoint
from rbmlab.config import RunConfig, to_plain
from rbmlab.data import load_dataset
from rbmlab.errors import RbmlabError
from rbmlab.evaluation import ais_schedule, check_feasible, evaluate
from rbmlab.learners import make_learner
from rbmlab.models.rbm import base_rate_bias, init_rbm
from rbmlab.provenance import merge_sources, source_revision

# Random streams: (seed, stream, epoch) keys one generator each.
INIT_STREAM, TRAIN_STREAM, EVAL_STREAM, SHUFFLE_STREAM, FINAL_EVAL_STREAM = range(5)
FIXED_COLUMNS = ["epoch", "updates", "wall_time", "trial"]


def json_safe(obj: Any) -> Any:
    """NaN and ±inf (e.g. an AIS interval end of −inf) become null: the file stays valid JSON."""
    if isinstance(obj, float) and not np.isfinite(obj):
        return None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def write_json(path: Path, obj: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(json_safe(obj), indent=2, sort_keys=True, allow_nan=False) + "\n")
    tmp.replace(path)


class MetricsLog:
    """metrics.csv, appended one row per evaluation point; truncated to a checkpoint on resume."""

    def __init__(self, path: Path):
        self.path = path
        self.columns: list[str] | None = None

    def truncate(self, last_epoch: int) -> None:
        if not self.path.exists():
            return
        with open(self.path, newline="") as f:
            reader = csv.DictReader(f)
            self.columns = reader.fieldnames
            rows = [r for r in reader if int(r["epoch"]) <= last_epoch]
        if self.columns is None:   # an empty file
            return
        self._write(rows, mode="w")

    def append(self, row: dict[str, float]) -> None:
        if self.columns is None:
            self.columns = ([k for k in FIXED_COLUMNS if k in row]
                            + sorted(k for k in row if k not in FIXED_COLUMNS))
            self._write([], mode="w")
        self._write([row], mode="a")

    def _write(self, rows, mode: str) -> None:
        with open(self.path, mode, newline="") as f:
            writer = csv.DictWriter(f, fieldnames=self.columns, extrasaction="ignore")
            if mode == "w":
                writer.writeheader()
            writer.writerows(rows)


def all_finite(metrics: dict[str, float]) -> bool:
    """NaN/inf in any metric (AIS interval ends excepted: a lower end of −inf is legitimate)."""
    return all(np.isfinite(v) for k, v in metrics.items()
               if not k.endswith(("_lower", "_upper")))


def batches(n: int, batch_size: int | str, rng: np.random.Generator):
    """Index arrays of one shuffled epoch (None = the whole set in order, for full batch)."""
    if batch_size == "full" or batch_size >= n:
        yield None
        return
    order = rng.permutation(n)
    for start in range(0, n, batch_size):
        yield order[start:start + batch_size]


def describe(metrics: dict[str, float], cfg: RunConfig) -> str:
    """The headline line printed at the end of a run."""
    split = cfg.evaluator.splits[0]
    ll = metrics.get(f"{split}_log_likelihood")
    if ll is None:
        pl = metrics.get(f"{split}_pseudo_log_likelihood")
        if pl is not None:
            return f"{split} pseudo-log-likelihood: {pl:.4f} nats"
        return f"{split} reconstruction error: {metrics[f'{split}_reconstruction_error']:.4f}"
    if cfg.evaluator.name == "exact":
        return f"{split} log-likelihood (exact): {ll:.4f} nats"
    lo, hi = metrics[f"{split}_log_likelihood_lower"], metrics[f"{split}_log_likelihood_upper"]
    n_t = ais_schedule(cfg.evaluator, final=True).size - 1
    return (f"{split} log-likelihood (AIS, {n_t} temperatures, {cfg.evaluator.n_chains} chains): "
            f"{ll:.2f} nats, ±3σ interval [{lo:.2f}, {hi:.2f}]")


def evaluate_trials(rbm, splits, cfg: RunConfig, backend, key: tuple[int, ...],
                    skip: Collection[int] = (), **kwargs) -> list[dict[str, float]]:
    """Metrics of each trial of ``rbm`` not in ``skip`` (one dict, without a trial key, for a
    single model).

    Trial t draws from the stream ``key + (t,)``, so its numbers do not depend on the others.
    """
    if not rbm.n_trials:
        return [evaluate(rbm, splits, cfg.evaluator, rng=backend.rng(*key), **kwargs)]
    return [{"trial": t, **evaluate(rbm.trial(t), splits, cfg.evaluator,
                                     rng=backend.rng(*key, t), **kwargs)}
            for t in range(rbm.n_trials) if t not in skip]


def mean_over_trials(rows: list[dict[str, float]]) -> dict[str, float]:
    keys = [k for k in rows[0] if k != "trial"]
    return {k: float(np.mean([r[k] for r in rows])) for k in keys}


def newly_diverged(finite: list[bool], rows: list[dict[str, float]], diverged: dict[int, int]
                   ) -> list[int]:
    """Trials (0 for a single model) not yet in ``diverged`` whose parameters are not ``finite``
    (per trial, as from RBM.finite_trials) or whose metric ``rows`` hold NaN/inf."""
    bad = {t for t, ok in enumerate(finite) if not ok}
    bad |= {int(r.get("trial", 0)) for r in rows if not all_finite(r)}
    return sorted(bad - set(diverged))


def train(cfg: RunConfig, out_dir: str | Path, overrides: list[str] | None = None,
          echo: Callable[[str], None] = print) -> dict[str, Any]:
    """Train and evaluate one configuration in ``out_dir``; returns the summary dict."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    backend = get_backend(cfg.backend.name, cfg.backend.dtype)
    data = load_dataset(**cfg.dataset)
    train_x = backend.asarray(data.train)
    splits = {s: backend.asarray(data.split(s)) for s in cfg.evaluator.splits}
    train_mean = data.train.mean(axis=0)
    base_bias = backend.asarray(base_rate_bias(train_mean))
    check_feasible(cfg.evaluator, data.train.shape[1], cfg.model.n_hidden)
    learner = make_learner(cfg.learner)
    config_hash = cfg.hash()
    ckpt_path, summary_path = out / "checkpoint.npz", out / "summary.json"
    log = MetricsLog(out / "metrics.csv")
    progress = cfg.train.progress

    summary: dict[str, Any] = {
        "status": "running", "config_hash": config_hash, "scale": cfg.scale, "seed": cfg.seed,
        "dataset": cfg.dataset["name"], "learner": cfg.learner.name, "evaluator": cfg.evaluator.name,
        "n_hidden": cfg.model.n_hidden, "epochs": cfg.train.epochs, "rbmlab_version": __version__,
        "backend": cfg.backend.name, "dtype": cfg.backend.dtype, "n_train": int(data.train.shape[0]),
        "pid": os.getpid(), "trials": cfg.train.trials, "source": source_revision(),
    }
    previous: dict[str, Any] = {}
    if cfg.resume and summary_path.exists():
        previous = json.loads(summary_path.read_text())
        if previous.get("status") == "completed" and previous.get("config_hash") == config_hash:
            echo(f"run in {out} is already complete; nothing to resume")
            return previous
    if cfg.resume and ckpt_path.exists():
        rbm_np, meta, state_np = load_checkpoint(ckpt_path)
        if meta.get("config_hash") != config_hash:
            raise RbmlabError(f"resume: {ckpt_path} was written by a different configuration "
                              f"(hash {meta.get('config_hash')} ≠ {config_hash})")
        summary["source"] = merge_sources(previous.get("source"), summary["source"])
        rbm = rbm_np.map(backend.asarray)
        state = {k: backend.xp.asarray(v) for k, v in state_np.items()}
        epoch, updates, wall = meta["epoch"], meta["updates"], meta["wall_time"]
        diverged = {int(t): e for t, e in meta.get("diverged_trials", {}).items()}
        log.truncate(epoch)
        echo(f"resuming from {ckpt_path} at epoch {epoch}")
    else:
        rbm = init_rbm(backend.xp, backend.rng(cfg.seed, INIT_STREAM), data.train.shape[1],
                       cfg.model.n_hidden, weight_std=cfg.model.weight_std,
                       visible_bias=cfg.model.visible_bias, data_mean=backend.asarray(train_mean),
                       dtype=backend.dtype, trials=cfg.train.trials if cfg.train.trials > 1 else 0)
        state = learner.init_state(rbm, train_x, backend.rng(cfg.seed, INIT_STREAM, 1))
        epoch, updates, wall = 0, 0, 0.0
        diverged: dict[int, int] = {}   # trial → epoch its parameters or metrics went non-finite
        (out / "config.yaml").write_text(OmegaConf.to_yaml(OmegaConf.create(to_plain(cfg))))
        (out / "overrides.yaml").write_text(OmegaConf.to_yaml(list(overrides or [])))
        if log.path.exists():
            log.path.unlink()
        if cfg.train.eval_every:
            for row in evaluate_trials(rbm, splits, cfg, backend, (cfg.seed, EVAL_STREAM, 0),
                                       base_bias=base_bias, final=False):
                log.append({"epoch": 0, "updates": 0, "wall_time": 0.0, **row})
    write_json(summary_path, {**summary, "epochs_done": epoch})
    echo(f"run directory: {out}")

    bar = tqdm(total=cfg.train.epochs, initial=epoch, desc=f"train {cfg.learner.name}",
               unit="epoch", disable=not progress, leave=False)
    while epoch < cfg.train.epochs:
        epoch += 1
        t0 = time.perf_counter()
        rng = backend.rng(cfg.seed, TRAIN_STREAM, epoch)
        for idx in batches(train_x.shape[0], cfg.learner.batch_size,
                           host_rng(cfg.seed, SHUFFLE_STREAM, epoch)):
            batch = train_x if idx is None else train_x[backend.xp.asarray(idx)]
            rbm, state = learner.step(rbm, state, batch, rng)
            updates += learner.updates_per_step
        wall += time.perf_counter() - t0
        bar.update(1)
        every = cfg.train.eval_every
        rows = []
        due = (every and epoch % every == 0) or epoch == cfg.train.epochs
        diverged.update(dict.fromkeys(newly_diverged(rbm.finite_trials(), [], diverged), epoch))
        if due and len(diverged) < max(rbm.n_trials, 1):
            rows = evaluate_trials(rbm, splits, cfg, backend, (cfg.seed, EVAL_STREAM, epoch),
                                   skip=diverged, base_bias=base_bias, final=False)
            for row in rows:
                log.append({"epoch": epoch, "updates": updates, "wall_time": round(wall, 4), **row})
            diverged.update(dict.fromkeys(newly_diverged([], rows, diverged), epoch))
        if len(diverged) == max(rbm.n_trials, 1):   # every trial (or the single model) is gone
            summary.update(status="diverged", epochs_done=epoch, updates=updates, wall_time=wall,
                           final={}, **_trial_records(rbm, [], diverged))
            write_json(summary_path, summary)
            bar.close()
            echo(f"diverged: non-finite parameters or metrics at epoch {epoch}; recorded as diverged")
            return summary
        if epoch % cfg.train.checkpoint_every == 0 or epoch == cfg.train.epochs:
            save_checkpoint(ckpt_path, rbm.map(backend.to_numpy),
                            meta={"epoch": epoch, "updates": updates, "wall_time": wall,
                                  "config_hash": config_hash, "config": to_plain(cfg),
                                  "rbmlab_version": __version__,
                                  "diverged_trials": {str(t): e for t, e in diverged.items()}},
                            state={k: backend.to_numpy(v) for k, v in state.items()})
            write_json(summary_path, {**summary, "epochs_done": epoch})
    bar.close()

    finals = evaluate_trials(rbm, splits, cfg, backend, (cfg.seed, FINAL_EVAL_STREAM), skip=diverged,
                             base_bias=base_bias, final=True, train=train_x,
                             progress=progress and cfg.evaluator.progress)
    diverged.update(dict.fromkeys(newly_diverged([], finals, diverged), epoch))
    live = [f for f in finals if int(f.get("trial", 0)) not in diverged]
    final = (mean_over_trials(live) if rbm.n_trials else live[0]) if live else {}
    summary.update(status="completed" if live else "diverged", epochs_done=epoch, updates=updates,
                   wall_time=wall, final=final, **_trial_records(rbm, live, diverged))
    write_json(summary_path, summary)
    if not live:
        echo("diverged: non-finite final metrics; recorded as diverged")
        return summary
    trials = f" (mean over {len(live)} trials)" if rbm.n_trials else ""
    if diverged and rbm.n_trials:
        trials = f" (mean over {len(live)} of {rbm.n_trials} trials; {len(diverged)} diverged)"
    echo(describe(final, cfg) + trials)
    return summary


def _trial_records(rbm, live: list[dict[str, float]], diverged: dict[int, int]) -> dict[str, Any]:
    """summary.json entries of a batched run: every trial's final metrics or divergence epoch."""
    if not rbm.n_trials:
        return {}
    by_trial = {int(f["trial"]): f for f in live}
    records = [by_trial.get(t) or {"trial": t, "status": "diverged", "diverged_epoch": diverged.get(t)}
               for t in range(rbm.n_trials)]
    return {"final_trials": records, "diverged_trials": sorted(diverged)}
