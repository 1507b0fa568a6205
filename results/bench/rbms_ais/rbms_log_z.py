"""One-off (issue 38): log Z of an rbmlab checkpoint by `rbms`'s own AIS, for comparison.

Runs in a separate virtualenv that has `rbms` and torch (never rbmlab's); rbms is not a
dependency of rbmlab. The checkpoint is read with numpy only:
rbmlab's W is (n_visible, n_hidden), b_v, b_h; rbms's BBRBM takes weight_matrix
(num_visibles, num_hiddens), vbias, hbias in the same orientation, so no transpose.

    python rbms_log_z.py CHECKPOINT --chains 500 --betas 14501 --seeds 0 1 2 --out rbms.json
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from importlib.metadata import version

import numpy as np
import torch
from rbms.bernoulli_bernoulli.classes import BBRBM
from rbms.partition_function.ais import compute_partition_function_ais


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint")
    ap.add_argument("--chains", type=int, default=500)
    ap.add_argument("--betas", type=int, default=14501, help="rbms's num_beta: points of linspace(0, 1)")
    ap.add_argument("--seeds", type=int, nargs="+", default=[0])
    ap.add_argument("--dtype", choices=("float32", "float64"), default="float64")
    ap.add_argument("--out", required=True)
    args = ap.parse_args()

    torch.set_num_threads(1)
    dtype = getattr(torch, args.dtype)
    with np.load(args.checkpoint) as ck:
        W, b_v, b_h = (torch.from_numpy(np.asarray(ck[k], dtype=np.float64)) for k in ("W", "b_v", "b_h"))
    params = BBRBM(weight_matrix=W, vbias=b_v, hbias=b_h, device=torch.device("cpu"), dtype=dtype)

    runs = []
    for seed in args.seeds:
        torch.manual_seed(seed)
        t0 = time.perf_counter()
        with torch.no_grad():
            log_z = compute_partition_function_ais(num_chains=args.chains, num_beta=args.betas, params=params)
        runs.append({"seed": seed, "log_z": log_z, "seconds": time.perf_counter() - t0})
        print(json.dumps(runs[-1]), flush=True)

    values = np.array([r["log_z"] for r in runs])
    out = {
        "checkpoint": args.checkpoint,
        "chains": args.chains,
        "num_beta": args.betas,
        "schedule": "linear (torch.linspace(0, 1, num_beta))",
        "dtype": args.dtype,
        "torch_threads": torch.get_num_threads(),
        "runs": runs,
        "log_z_mean": float(values.mean()),
        "log_z_std_between_seeds": float(values.std(ddof=1)) if values.size > 1 else None,
        "versions": {
            "rbms": version("rbms"),
            "torch": torch.__version__,
            "numpy": np.__version__,
            "python": platform.python_version(),
        },
    }
    with open(args.out, "w") as f:
        json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
