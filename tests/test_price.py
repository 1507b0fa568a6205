"""rbmlab.bench.price: the device model the paper tiers are priced with (issue 55, item 4)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from rbmlab.bench.ops import counting
from rbmlab.bench.price import (
    Counted,
    DeviceRates,
    as_counting,
    count,
    launch_for,
    measured_seconds,
    per_unit,
)

RATES = DeviceRates(launch=10e-6, macs_per_s=1e12, bytes_per_s=1e11)


def test_each_operation_records_its_multiply_adds_and_bytes():
    a, b = counting(np.ones((3, 4), np.float32)), np.ones((4, 2), np.float32)

    def work():
        c = a @ b  # (3·4·2 macs; 48 + 32 bytes in, 24 out)
        np.exp(c, out=c)  # 24 in, 24 out
        c.copy()  # 24 read, 24 written
        return c.sum(axis=0)  # 24 in, 8 out

    counted = count(work)
    assert counted.work == ((24, 104), (0, 48), (0, 48), (0, 32))
    assert counted.ops == 4 and counted.macs == 24


def test_an_operation_costs_its_launch_or_its_work_times_the_runs_whichever_is_more():
    counted = Counted(((0, 100), (2_000_000, 0), (0, 10_000_000)))  # 1 ns; 2 µs; 100 µs of work
    assert counted.seconds(RATES) == pytest.approx(10e-6 + 10e-6 + 100e-6)
    # 8 packed runs: the small op still costs its launch, the others 8 times their work
    assert counted.seconds(RATES, 8) == pytest.approx(10e-6 + 16e-6 + 800e-6)


@pytest.mark.parametrize("launch", [3e-6, 20e-6, 150e-6])
def test_the_launch_time_solved_from_a_timing_is_the_one_that_made_it(launch):
    counted = Counted(((0, 100), (2_000_000, 0), (0, 10_000_000), (5_000_000, 400_000)))
    timed = counted.seconds(DeviceRates(launch, RATES.macs_per_s, RATES.bytes_per_s))
    assert launch_for(counted, timed, RATES) == pytest.approx(launch)


def test_a_row_its_work_alone_fills_says_nothing_of_the_launch():
    counted = Counted(((0, 10_000_000),))  # 100 µs of bytes
    assert launch_for(counted, 90e-6, RATES) is None
    assert launch_for(counted, 100e-6, RATES) is None


def test_one_more_unit_counts_the_loop_body_without_the_setup_and_pairs_growing_operations():
    x = counting(np.ones(8, np.float32))

    def run(k):
        y = x * 2.0  # setup: once
        for _ in range(k):
            np.exp(y, out=y)  # the body: 32 + 32 bytes
        return counting(np.zeros(k + 1, np.float32)) + 1.0  # grows with k: paired with its twin

    unit = per_unit(run, 2)
    assert unit.work == ((0, 64),)

    def not_repeating(k):  # a product at 2 units that 3 units do not do
        return x @ x if k == 2 else x.sum()

    with pytest.raises(ValueError, match="per_unit"):
        per_unit(not_repeating, 2)


def test_bench_rows_are_read_as_seconds_and_a_shapeless_ratio_takes_the_row_above():
    rows = [
        {"name": "Gibbs sweep (a), ms", "unit": "ms", "median": 2.0},
        {"name": "bare matmuls / Gibbs sweep", "unit": "ratio", "median": 0.5},
        {"name": "Gibbs sweep (b), ms", "unit": "ms", "median": 4.0},
        {"name": "bare matmuls / Gibbs sweep", "unit": "ratio", "median": 0.8},
        {"name": "bare exp / BP (c)", "unit": "ratio", "median": 0.6},
        {"name": "throughput", "unit": "1/s", "median": 9.0},
    ]
    assert measured_seconds(rows) == {
        "Gibbs sweep (a), ms": 0.002,
        "bare matmuls / Gibbs sweep | Gibbs sweep (a), ms": 0.5,
        "Gibbs sweep (b), ms": 0.004,
        "bare matmuls / Gibbs sweep | Gibbs sweep (b), ms": 0.8,
        "bare exp / BP (c)": 0.6,
    }


@pytest.mark.slow
def test_calibration_recovers_the_rates_a_table_was_made_with():
    """A bench table written by the model at planted rates (every timed row priced, the two
    ratio rows from the planted F and BW) is fitted back to those rates, launch included."""
    from rbmlab.bench import price
    from rbmlab.bench.crbm_bp import transcendental_floor

    planted = DeviceRates(12e-6, 2e13, 1.5e12)
    rows = []
    for name, units, make in price.TIMED_ROWS:
        rows.append({"name": name, "unit": "ms", "median": 1e3 * units * per_unit(make()).seconds(planted)})
        if name == price.MATMUL_ROW[1]:
            bare = price.MATMUL_ROW[2] / planted.macs_per_s
            rows.append(
                {"name": price.MATMUL_ROW[0], "unit": "ratio", "median": bare / (rows[-1]["median"] / 1e3)}
            )
    floor = count(lambda: transcendental_floor((1, 10_000, 2_000), np.float32, 10, np)())
    bp = next(r for r in rows if r["name"] == price.ELEMENTWISE_ROW[1])["median"] / 1e3
    bare = sum(b for _, b in floor.work) / planted.bytes_per_s
    rows.append({"name": price.ELEMENTWISE_ROW[0], "unit": "ratio", "median": bare / bp})
    rates, spread, table = price.calibrate(rows)
    assert rates.macs_per_s == pytest.approx(planted.macs_per_s)
    assert rates.bytes_per_s == pytest.approx(planted.bytes_per_s)
    assert spread["min"] == pytest.approx(planted.launch) and spread["max"] == pytest.approx(planted.launch)
    assert all(t["predicted"] == pytest.approx(t["measured"]) for t in table)


def test_a_loop_priced_from_one_and_two_turns_is_the_loop_counted_whole():
    """Scaled's linear and bilinear extensions against the whole count: an evaluation of
    ``chunks`` chunks of ``T`` iterations each, with work before and after."""
    from rbmlab.bench.tier_price import Bilinear, Linear

    x = counting(np.ones((4, 8), np.float32))

    def evaluation(chunks: int, iterations: int):
        y = x.sum(axis=0)  # once
        for _ in range(chunks):
            z = x * 2.0  # once a chunk
            for _ in range(iterations):
                np.exp(z, out=z)  # every iteration
        return y + 1.0

    whole = count(lambda: evaluation(5, 7)).seconds(RATES)
    bilinear = Bilinear(
        count(lambda: evaluation(1, 1)),
        count(lambda: evaluation(2, 1)),
        5,
        count(lambda: evaluation(1, 2)),
        7,
    )
    assert bilinear.seconds(RATES) == pytest.approx(whole)
    linear = Linear(count(lambda: evaluation(1, 7)), count(lambda: evaluation(2, 7)), 5)
    assert linear.seconds(RATES) == pytest.approx(whole)


def test_a_job_set_is_its_packs_updates_over_the_epochs_and_each_runs_evaluations():
    from rbmlab.bench.tier_price import JobPrice, Linear

    one = Counted(((0, 10_000_000),))  # 100 µs of bytes: 100 µs for one run, 800 for 8
    two = Counted(((0, 10_000_000), (0, 10_000_000)))
    update = Linear(one, two)  # 100 µs a run at epoch 1, +100 µs each epoch after
    evaluation = Linear(one, one, 1)
    job = JobPrice(
        "x",
        [8, 1],
        epochs=3,
        updates=10,
        update=update,
        evaluation=evaluation,
        final=evaluation,
        evaluations=4,
    )
    train, evaluate = job.seconds(RATES)
    # epochs 1, 2, 3 cost 1, 2, 3 units of 100 µs a run, 10 updates each: 60 units per run
    assert train == pytest.approx(10 * (1 + 2 + 3) * 100e-6 * (8 + 1))
    assert evaluate == pytest.approx((4 + 1) * 100e-6 * (8 + 1))  # every run's own
    assert job.jobs == 9


def test_an_experiment_is_priced_job_by_job_as_its_runs_would_pack():
    """demo/bars-cd-vs-pcd at the smoke tier: its 6 jobs (2 learners × 3 seeds) as 2 packs of 3,
    each job's schedule as composed, and a pack priced below its runs alone (launch-bound sizes)."""
    from rbmlab.bench.tier_price import price_experiment
    from rbmlab.experiment.tier_jobs import jobs_of
    from rbmlab.hydra_app import validated_run_config

    prices = price_experiment("demo/bars-cd-vs-pcd", jobs_of("demo/bars-cd-vs-pcd", "smoke"))
    combos = [c for c, _ in jobs_of("demo/bars-cd-vs-pcd", "smoke")]
    cfg = validated_run_config(combos[0])
    assert sorted(p.runs for p in prices) == [[3], [3]] and sum(p.jobs for p in prices) == len(combos) == 6
    assert all(p.epochs == cfg.train.epochs and p.update is not None for p in prices)
    train, evaluate = prices[0].seconds(RATES)
    assert train > 0 and evaluate > 0
    alone = replace(prices[0], runs=[1, 1, 1])
    assert alone.seconds(RATES)[0] > train  # three launches of every operation, not one
    assert alone.seconds(RATES)[1] == pytest.approx(evaluate)  # each run evaluates on its own either way


def test_a_learner_steps_once_a_mini_batch_whatever_updates_its_step_makes():
    """dcp/figure-3 at the smoke tier: 400 training images at batch 200 are 2 steps an epoch for
    every learner, S-DCP's and CS-DCP's too (their d updates a step are counted inside it)."""
    from rbmlab.bench.tier_price import price_experiment
    from rbmlab.experiment.tier_jobs import jobs_of

    prices = price_experiment("dcp/figure-3", jobs_of("dcp/figure-3", "smoke"))
    assert len(prices) == 5 and all(p.updates == 400 // 200 for p in prices)


def test_a_factorisation_is_charged_its_textbook_multiply_adds():
    from rbmlab.backend import macs

    stack = counting(np.eye(6, dtype=np.float64)[None].repeat(3, axis=0) * 2.0)
    counted = count(
        lambda: (np.linalg.inv(stack), np.linalg.eigvalsh(stack[0]), np.linalg.solve(stack, stack))
    )
    assert [m for m, _ in counted.work] == [3 * macs.inverse(6), macs.eigvalsh(6), 3 * macs.lu_solve(6, 6)]


def _loop_names():
    from rbmlab.bench.tier_price import LOOPS

    return sorted(LOOPS)


@pytest.mark.parametrize("name", _loop_names())
def test_each_evaluator_loop_names_options_its_config_has_and_its_length(name):
    """The loops an evaluation is counted in: one and two turns set through options the
    evaluator's config declares, and each length read from its settings (a split of 250 rows)."""
    from dataclasses import fields
    from types import SimpleNamespace

    from rbmlab.bench.tier_price import LOOPS
    from rbmlab.evaluators import EVALUATORS

    config = EVALUATORS.parse({"name": name})
    run = SimpleNamespace(splits={"test": [0] * 250, "train": [0] * 100}, evaluator=EVALUATORS.build(config))
    loop = LOOPS[name](run, config, True, 12)
    declared = {f.name for f in fields(config)}
    for turns in filter(None, (loop.outer, loop.inner)):
        assert set(turns.one) <= declared and set(turns.one) == set(turns.two) and turns.one != turns.two
        assert turns.length >= 1
    assert set(loop.fixed) <= declared
    if name in ("tap", "tap_dbm", "denoising"):
        assert (loop.outer.one, loop.outer.two, loop.outer.length) == (
            {"max_iter": 1},
            {"max_iter": 2},
            config.max_iter,
        )
    if name == "pixel_error":  # 250 rows in chunks of the config's size, each its budget of iterations
        assert loop.outer.length == -(-250 // config.chunk)
        assert loop.outer.two["max_examples"] == 2 * loop.outer.one["max_examples"]
        assert loop.inner.length == run.evaluator.budget(12) and not loop.budget
    if name in ("mmd", "moments", "recognised", "variety", "kl"):  # draws in chunks × sweeps
        drawn = config.n_samples or 250
        assert loop.outer.length == -(-drawn // loop.outer.one["n_samples"])
        assert loop.inner.length == config.sweeps and loop.inner.two == {"sweeps": 2}


@pytest.mark.parametrize("sampler", ["gibbs", "pmp"])
def test_an_evaluation_of_draws_priced_from_its_loops_is_the_evaluation_counted_whole(sampler):
    """The draws loop (chunks × sweeps) of a real evaluation, extended from its counts at one and
    two turns, against the same evaluation counted whole: 5 draws in chunks of 2 (a short last
    chunk), 3 sweeps."""
    from rbmlab.bench.tier_price import Bilinear, _evaluation, _prepared
    from rbmlab.hydra_app import validated_run_config
    from rbmlab.run.runner import evaluate_trials
    from rbmlab.run.training import initial_model

    overrides = [
        "dataset=ising_samples",
        "dataset.structure=lattice",
        "dataset.side=3",
        "dataset.n_train=20",
        "dataset.n_test=5",
        "model=ising",
        "learner=reset",
        "train.epochs=0",
        "evaluator=mmd",
        f"evaluator.sampler={sampler}",
        "evaluator.n_samples=6",
        "evaluator.chunk=2",
        "evaluator.sweeps=3",
    ]
    run = _prepared(validated_run_config(overrides))
    model = initial_model(run.model_class, run.cfg.model, run.backend, 0, run.data_mean, run.fit_data)
    priced = _evaluation(run, model, {}, final=True)
    assert isinstance(priced, Bilinear) and (priced.length, priced.inner_length) == (3, 3)
    counted_run = replace(run, splits={k: v.map(as_counting) for k, v in run.splits.items()})
    whole = count(lambda: evaluate_trials(counted_run, as_counting(model), (0, 0, 0), final=True))
    assert priced.seconds(RATES) == pytest.approx(whole.seconds(RATES), rel=1e-9)


def test_an_evaluation_whose_map_solver_runs_on_the_host_is_named_not_priced():
    """pmp Figure 1 (centre): MPLP is sequential, on the host (solvers declare ``on_host``), so
    its jobs' evaluations are left out of the device price and named; PMP's are priced."""
    from rbmlab.bench.tier_price import price_experiment
    from rbmlab.experiment.tier_jobs import jobs_of
    from rbmlab.inference.solvers import SOLVERS

    assert SOLVERS.get("mplp").on_host and SOLVERS.get("lp").on_host
    assert not SOLVERS.get("max_product").on_host
    prices = price_experiment("pmp/figure-1b", jobs_of("pmp/figure-1b", "smoke"))
    on_host = [p for p in prices if "runs on the host" in p.note]
    on_device = [p for p in prices if p not in on_host]
    assert on_host and on_device
    assert all(p.final is None and p.evaluation is None for p in on_host)
    assert all(p.final is not None and p.final.seconds(RATES) > 0 for p in on_device)
