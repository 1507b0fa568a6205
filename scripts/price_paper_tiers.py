"""The paper tiers' GPU price from counted operations and a committed ``make bench-gpu`` table
(issue 55, item 4), written to results/bench/gpu-price.md and results/bench/gpu-price/.

    python scripts/price_paper_tiers.py [parts=fit,crbm_bp,dcp,tap,frank_wolfe,pmp] [out=results/bench]
        [bench=results/bench/bench-cupy.json]

``fit`` writes <out>/gpu-price.md (the model's fit, its checks, one update of each paper's
learners packed 1 to 128 times); each paper <out>/gpu-price/<paper>.md (its whole paper tier).

rbmlab.bench.price fits a device's time per operation, matmul rate and elementwise rate to the
bench table; rbmlab.bench.tier_price prices every job of a paper's tier (its update and its
evaluations counted on the paths a device runs, packed as hydra/launcher=packed packs them).
Every price is given at the fitted time per operation and at the smallest and largest of the
rows it was fitted to. What runs on the host (Frank-Wolfe's oracle, HiGHS) is not in a price and
is named beside it; it stays priced in CPU-hours in the paper's README. Run the parts in
separate processes to use both cores (OMP_NUM_THREADS=1 each).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from rbmlab.errors import fail
from rbmlab.validation import typed_key_values

ROOT = Path(__file__).resolve().parents[1]
PAPERS = ("crbm_bp", "dcp", "tap", "frank_wolfe", "pmp")
DEFAULTS = {
    "out": "results/bench",
    "bench": "results/bench/bench-cupy.json",
    "parts": ",".join(("fit", *PAPERS)),
}


# ---- the counted computations -------------------------------------------------------------


def crbm_update(name: str, options: dict, epoch: int, n_v=784, n_h=256, batch=20):
    """One update of a crbm_bp learner in epoch ``epoch`` (T = 7 + epoch), device path."""
    from rbmlab.bench.crbm_bp import at_epoch, random_crbm
    from rbmlab.bench.price import step_count
    from rbmlab.data.batch import Batch
    from rbmlab.learners import LEARNERS

    model, x, v = random_crbm(n_v, n_h, batch)
    data = Batch(x, targets=v)
    learner = LEARNERS.build(LEARNERS.parse({"name": name, "batch_size": batch, **options}))
    state = at_epoch(learner.init_state(model, data, np.random.default_rng(1)), epoch)
    return step_count(learner, model, state, data)


def rbm_update(learner: dict, n_hidden: int, batch: int):
    """One update of an RBM learner (cd, pcd, cg, sdcp, csdcp, tap) at 784 × ``n_hidden``."""
    from rbmlab.backend import get_backend
    from rbmlab.bench.core import binary
    from rbmlab.bench.packed import _runs
    from rbmlab.bench.price import step_count
    from rbmlab.data.batch import Batch

    backend = get_backend("numpy", "float32")
    x = binary(backend, max(batch, 1000), 784, 0.13, 4)  # MNIST's share of ones; the count is the same
    (one, model, state), *_ = _runs(backend, {**learner, "batch_size": batch}, 1, x, n_hidden)[0]
    return step_count(one, model, state, Batch(x[:batch]))


CRBM_LEARNERS = (  # (variant, learner, options) of crbm_bp's Sec. 6, for the update table
    ("LR", "logistic", {}),
    ("CD-1", "conditional_cd", {"k": 1}),
    ("CD-10", "conditional_cd", {"k": 10}),
    ("CD-PercLoss", "cd_percloss", {}),
    ("MLE-MF", "mle_mf", {}),
    ("MLE-BP", "mle_bp", {}),
    ("LSSVM", "lssvm", {}),
    ("MSSVM", "mssvm", {}),
)


KIND_NOT_PRICED = {
    "figure": "a figure drawn from another experiment's runs: its own scoring is not counted",
    "inference": "one inference run, no training: not counted",
}


def tier_rows(paper: str, scale: str, rates, low, high) -> tuple[list[str], list[float], list[str]]:
    """The table rows of one paper's sweep experiments at ``scale``: (rows, [hours, low, high],
    experiments not priced with why)."""
    from rbmlab.bench.tier_price import price_experiment
    from rbmlab.experiment.kinds import kind_of
    from rbmlab.experiment.spec import available, load_spec
    from rbmlab.experiment.tier_jobs import jobs_of

    rows, total, skipped = [], [0.0, 0.0, 0.0], []
    for name in available():
        spec = load_spec(name)
        if name.split("/")[0] != paper or scale not in spec.get("scales", {}):
            continue
        kind = kind_of(spec, name)
        if kind.section is not None:  # not a sweep of runs: no jobs to price
            skipped.append(f"{name} ({KIND_NOT_PRICED.get(kind.name, f'a {kind.name} experiment')})")
            continue
        try:
            prices = price_experiment(name, jobs_of(name, scale))
        except Exception as e:  # noqa: BLE001 - reported in the table, the others priced
            skipped.append(f"{name} ({type(e).__name__}: {str(e).splitlines()[0][:120]})")
            print(f"{name}: not priced: {e}", file=sys.stderr)
            continue
        train = evaluate = lo = hi = 0.0
        jobs, packs, notes = 0, 0, set()
        for price in prices:
            t, e = price.seconds(rates)
            train, evaluate = train + t, evaluate + e
            lo += sum(price.seconds(low))
            hi += sum(price.seconds(high))
            jobs, packs = jobs + price.jobs, packs + len(price.runs)
            notes.update(n for n in price.note.split("; ") if n)
        for i, v in enumerate((train + evaluate, lo, hi)):
            total[i] += v
        rows.append(
            f"| {name} | {jobs} | {packs} | {fmt_hours(train)} | {fmt_hours(evaluate)} | "
            f"{fmt_hours(train + evaluate)} ({fmt_hours(lo)} – {fmt_hours(hi)}) | "
            f"{'; '.join(sorted(notes))} |"
        )
        print(f"{name}: {fmt_hours(train + evaluate)} h", file=sys.stderr)
    return rows, total, skipped


# ---- the table ----------------------------------------------------------------------------


def fmt_hours(seconds: float) -> str:
    return f"{seconds / 3600:.2f}" if seconds < 36_000 else f"{seconds / 3600:.0f}"


def main(argv: list[str]) -> None:
    from rbmlab.bench.price import DeviceRates, calibrate

    opts = typed_key_values(argv, DEFAULTS, {})
    parts = [p for p in opts["parts"].split(",") if p]
    unknown = sorted(set(parts) - {"fit", *PAPERS})
    if unknown:
        fail(f"parts: unknown {', '.join(unknown)}; known: fit, {', '.join(PAPERS)}")
    bench = json.loads((ROOT / opts["bench"]).read_text())
    rates, launch, table = calibrate(bench["rows"])
    low, high = (DeviceRates(launch[k], rates.macs_per_s, rates.bytes_per_s) for k in ("min", "max"))
    commit = subprocess.run(
        ["git", "describe", "--always", "--dirty=+dirty"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    source = (
        f"`python scripts/price_paper_tiers.py parts={opts['parts']}` at {commit}: `rbmlab.bench.price` "
        f"fitted to `{opts['bench']}` ({bench.get('machine', {}).get('gpu', 'a lent GPU')}): "
        f"{launch['median'] * 1e6:.1f} µs per counted operation ({launch['min'] * 1e6:.1f} – "
        f"{launch['max'] * 1e6:.1f}), F = {rates.macs_per_s / 1e12:.1f} T multiply-adds/s, "
        f"BW = {rates.bytes_per_s / 1e12:.2f} TB/s."
    )
    out = ROOT / opts["out"]
    if "fit" in parts:
        write(out / "gpu-price.md", fit_lines(source, rates, launch, table))
    for paper in (p for p in parts if p != "fit"):
        rows, (mid, lo, hi), skipped = tier_rows(paper, "paper", rates, low, high)
        lines = [
            f"# {paper}: the paper tier's GPU price, from counted operations",
            "",
            source,
            "",
            "A price, not a measurement (../gpu-price.md: the model, its fit, its checks). Every job of",
            "every sweep experiment at the paper tier, priced by `rbmlab.bench.tier_price`: its update and",
            "its evaluations counted as a device runs them, its runs packed as `hydra/launcher=packed`",
            "packs them. Device hours at the fitted time per operation (in brackets at the smallest and",
            "largest fitted); what runs on the host is not in the price and is named in the last column.",
            "",
            f"**Whole paper tier: {fmt_hours(mid)} device hours ({fmt_hours(lo)} – {fmt_hours(hi)}).**",
            "",
            "| experiment | jobs | packs | training, h | evaluation, h | total, h (range) "
            "| not in the price |",
            "|---|---|---|---|---|---|---|",
            *rows,
        ]
        if skipped:
            lines += ["", "Not priced: " + "; ".join(skipped) + "."]
        write(out / "gpu-price" / f"{paper}.md", lines)


def write(path: Path, lines: list[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")
    print(f"wrote {path}", file=sys.stderr)


def fit_lines(source: str, rates, launch, table) -> list[str]:
    """gpu-price.md: the fit, its checks, and one update of each paper's learners, packed."""
    lines = [
        "# GPU price of the paper tiers, from counted operations",
        "",
        source,
        "",
        "A price, not a measurement: each workload's operations are counted here on the paths a",
        "device runs and priced at the rates the bench table measured (the model in",
        "`rbmlab/bench/price.py`); `make bench-gpu`'s packed rows replace it where a GPU is lent.",
        "Each paper's whole paper tier, job by job: `gpu-price/<paper>.md`.",
        "",
        "## The fit",
        "",
        f"- matmul rate F = {rates.macs_per_s / 1e12:.1f} T multiply-adds/s (the bare matmuls of the",
        "  10,000-chain Gibbs sweep);",
        f"- elementwise rate BW = {rates.bytes_per_s / 1e12:.2f} TB/s (BP's bare exp + log1p at",
        "  10,000 × 2,000, its bytes counted);",
        f"- time per counted operation = {launch['median'] * 1e6:.1f} µs, the median over the "
        f"{launch['n']} launch-bound rows (min {launch['min'] * 1e6:.1f}, max {launch['max'] * 1e6:.1f}).",
        "",
        "| bench row | operations per unit | measured, µs | priced, µs | priced / measured "
        "| its own time per operation, µs |",
        "|---|---|---|---|---|---|",
    ]
    for t in table:
        own = "— (not launch-bound)" if t["launch"] is None else f"{t['launch'] * 1e6:.1f}"
        lines.append(
            f"| {t['row']} | {t['unit'].ops} | {t['measured'] * 1e6:.0f} | {t['predicted'] * 1e6:.0f} | "
            f"{t['predicted'] / t['measured']:.2f} | {own} |"
        )
    lines += [
        "",
        "The rows that are not launch-bound are priced high (1.3–2.4×): the numpy device path",
        "counts as several passes what cupy fuses into one kernel (the Bernoulli draw, BP's",
        "messages, TAP's move), and BW is the transcendental rate, below the memory's. So a",
        "price is within the launch-bound rows' spread where launches dominate (the papers'",
        "small batches) and errs high where bytes do.",
        "",
        "## One update, packed",
        "",
        "Device milliseconds per update of a pack (all its runs) and per run, at the fitted rates;",
        "`bound`: the update's arithmetic and bytes at F and BW / its price (1.0: no launch overhead).",
        "",
        "| learner (sizes, batch) | operations | runs | ms per pack update | ms per run | bound |",
        "|---|---|---|---|---|---|",
    ]
    updates = [
        (f"crbm_bp {v} (784 × 256, batch 20, epoch 1)", crbm_update(n, o, 1)) for v, n, o in CRBM_LEARNERS
    ] + [
        ("PCD-1 (784 × 500, batch 100)", rbm_update({"name": "pcd"}, 500, 100)),
        ("S-DCP (6, 4) (784 × 500, batch 200)", rbm_update({"name": "sdcp", "d": 6, "k": 4}, 500, 200)),
        ("TAP (784 × 500, batch 100)", rbm_update({"name": "tap", "max_iter": 10}, 500, 100)),
    ]
    for what, counted in updates:
        for runs in (1, 8, 32, 128):
            s = counted.seconds(rates, runs)
            busy = runs * sum(rates.busy(m, b) for m, b in counted.work)
            lines.append(
                f"| {what} | {counted.ops} | {runs} | {s * 1e3:.2f} | {s * 1e3 / runs:.3f} | {busy / s:.2f} |"
            )
    return lines


if __name__ == "__main__":
    main(sys.argv[1:])
