"""What an AIS run returns, and the checks and statistics every AIS path shares (the RBM's,
rbmlab.evaluators.ais, and the fractional RBM's, rbmlab.evaluators.ais_fractional)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rbmlab.backend import to_numpy


@dataclass
class AISResult:
    log_z: float  # the AIS estimate log Ẑ
    log_z_lower: float  # log of the lower end of mean(w) ± 3σ (−inf when non-positive)
    log_z_upper: float  # log of the upper end (+inf for reverse AIS when non-positive)
    log_z_base: float  # exact log Z_A of the base-rate model
    log_w: np.ndarray  # per-chain log importance weights, float64
    n_chains: int
    n_temperatures: int  # number of β values in the schedule, endpoints included
    direction: str  # 'forward' or 'reverse'


def _check_betas(betas) -> np.ndarray:
    betas = np.asarray(betas, dtype=np.float64)
    if betas.ndim != 1 or betas.size < 2:
        raise ValueError("betas must be a 1-D schedule with at least two points")
    if betas[0] != 0.0 or betas[-1] != 1.0 or np.any(np.diff(betas) < 0):
        raise ValueError("betas must be non-decreasing from 0.0 to 1.0")
    return betas


def _stats(log_w) -> tuple[float, float, float]:
    """(log r, log(r + 3σ_r), log(r − 3σ_r) or −inf) for r = mean(w), σ_r = std(w)/√M, stably."""
    lw = to_numpy(log_w).astype(np.float64)
    m = float(lw.max())
    w = np.exp(lw - m)
    r = float(w.mean())
    se = float(w.std(ddof=1) / math.sqrt(w.size)) if w.size > 1 else 0.0
    lower = r - 3.0 * se
    return (m + math.log(r), m + math.log(r + 3.0 * se), m + math.log(lower) if lower > 0 else -math.inf)
