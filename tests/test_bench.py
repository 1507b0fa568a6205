"""`make bench` pieces at toy shapes: they run, and the cost model counts what the learners do."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import pytest

import rbmlab.bench as bench
import rbmlab.bench.dcp as bench_dcp
from rbmlab.backend import get_backend
from rbmlab.bench import render
from rbmlab.bench.core import Row, binary, epoch_seconds, random_rbm, row
from rbmlab.bench.crbm_bp import bench_crbm_bp, bp_to_convergence
from rbmlab.bench.dcp import bench_dcp_costs, dcp_cost_rows
from rbmlab.bench.frank_wolfe import bench_fw_iteration, bench_fw_oracle
from rbmlab.bench.method import interleaved, ratio, spread
from rbmlab.bench.pmp import bench_pmp
from rbmlab.bench.rbm import bench_ais, bench_gibbs, bench_sampler
from rbmlab.data.batch import Batch
from rbmlab.errors import RbmlabError
from rbmlab.learners.base import Learner
from rbmlab.learners.cd import CD, CDConfig
from rbmlab.learners.sdcp import SDCP, SDCPConfig
from rbmlab.models.rbm import RBM
from rbmlab.registry import Registry


@pytest.fixture(scope="module")
def backend():
    return get_backend("numpy", "float32")


def toy_part(rounds: int, examples: int) -> list[Row]:
    """A bench part as a module holds one: (rounds, examples) -> rows."""
    return [
        row(
            f"toy ({rounds} rounds, {examples} examples), ms",
            {"min": 1.0, "median": 2.0, "max": 3.0},
            "ms",
            1,
        )
    ]


def other_toy_part(rounds: int, examples: int) -> list[Row]:
    return [row("other toy, ms", {"min": 4.0, "median": 5.0, "max": 6.0}, "ms", 2)]


def test_a_bench_part_is_its_function_and_one_registry_line(monkeypatch):
    """Registering a toy part is all measure needs: it returns exactly that part's rows, parts run
    in the registry's order (each once, whatever the order asked), and an unknown name is a
    one-line error that names --parts, raised before any part runs."""
    ran = []
    monkeypatch.setattr(
        bench,
        "BENCH_PARTS",
        bench.BENCH_PARTS.with_entries(toy=f"{__name__}:toy_part", other=f"{__name__}:other_toy_part"),
    )
    assert bench.measure(("toy",), 1, 10) == toy_part(1, 10)
    assert bench.measure(("other", "toy", "other"), 2, 5) == toy_part(2, 5) + other_toy_part(2, 5)
    monkeypatch.setattr(sys.modules[__name__], "toy_part", lambda rounds, examples: ran.append(1) or [])
    with pytest.raises(RbmlabError) as error:
        bench.measure(("toy", "nope"), 1, 10)
    message = str(error.value)
    assert "\n" not in message and not ran
    assert message.startswith("--parts: unknown bench part 'nope'; choose one of gibbs, ais, ")
    assert message.endswith(", tap, packed, toy, other")


def test_every_bench_part_is_a_function_of_rounds_and_examples():
    """Every registered part (make bench's and the experiments') resolves to a function, without
    running it; make bench's take (rounds, examples); the parts measured again with a faster
    kernel are registered; --parts lists the registry."""
    import inspect

    for registry in (bench.BENCH_PARTS, bench.EXPERIMENT_PARTS):
        for name, part in registry.items():
            assert callable(part), name
    for name, part in bench.BENCH_PARTS.items():
        assert list(inspect.signature(part).parameters) == ["rounds", "examples"], name
    assert set(bench.KERNEL_PARTS) <= set(bench.BENCH_PARTS.names())
    assert bench.PARTS == tuple(bench.BENCH_PARTS.names())


def test_the_bench_command_refuses_an_unknown_part_in_one_line():
    proc = subprocess.run(
        [sys.executable, "-m", "rbmlab.bench", "--parts", "gibbs,nope", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.splitlines() == [
        f"rbmlab: error: --parts: unknown bench part 'nope'; choose one of {', '.join(bench.PARTS)}"
    ]


def test_a_registry_with_entries_is_a_new_registry_and_leaves_this_one():
    base = Registry("thing", {"a": "rbmlab.errors:RbmlabError"})
    more = base.with_entries(b="rbmlab.errors:fail", a="rbmlab.registry:Registry")
    assert base.names() == ["a"] and base.get("a") is RbmlabError
    assert more.kind == "thing" and more.names() == ["a", "b"]
    assert more.get("a") is Registry and more.get("b").__name__ == "fail"


def test_interleaving_alternates_the_functions_and_ratios_are_per_round():
    calls = []
    times = interleaved({"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}, rounds=3)
    assert calls == ["a", "b"] * 4 and all(len(t) == 3 for t in times.values())  # warm-up + 3 rounds
    assert ratio([2.0, 4.0, 9.0], [1.0, 1.0, 3.0]) == {"min": 2.0, "median": 3.0, "max": 4.0}
    assert spread([3.0, 1.0, 2.0]) == {"min": 1.0, "median": 2.0, "max": 3.0}


def test_dcp_cost_model_measures_positive_times(backend):
    c = bench_dcp_costs(backend, rounds=2, m=30, n=20, batch=8)
    assert min(c["T_gibbs_ms"]["min"], c["L_statistics_ms"]["min"], c["U_update_ms"]["min"]) > 0


def _operation_counts(learner, backend, monkeypatch) -> tuple[int, int, int]:
    """(Gibbs transitions, batch statistics, parameter updates) of one real step of ``learner``."""
    counts = {"T": 0, "L": 0, "U": 0}
    sample, statistics, update = Learner.sample, RBM.statistics, Learner.update
    contrastive = Learner.contrastive_gradient

    def counted_contrastive(self, model, x, start, rng, steps):
        """Both phases' statistics and ``steps`` transitions (the fused path, one product fewer
        for CD, is priced as the paper prices CD)."""
        counts["T"] += steps
        counts["L"] += 2
        return contrastive(self, model, x, start, rng, steps)

    def counted_sample(self, model, x, rng, steps, first_product=None):
        counts["T"] += steps
        return sample(self, model, x, rng, steps, first_product)

    positive = Learner.positive_phase

    def counted_positive(self, model, x):
        counts["L"] += 1
        return positive(self, model, x)

    def counted_statistics(self, v):
        counts["L"] += 1
        return statistics(self, v)

    def counted_update(self, model, grad, state):
        counts["U"] += 1
        return update(self, model, grad, state)

    with monkeypatch.context() as m:
        m.setattr(Learner, "sample", counted_sample)
        m.setattr(RBM, "statistics", counted_statistics)
        m.setattr(Learner, "update", counted_update)
        m.setattr(Learner, "contrastive_gradient", counted_contrastive)
        m.setattr(Learner, "positive_phase", counted_positive)
        rbm = random_rbm(backend, 30, 20)
        v = (backend.rng(0).random((8, 30), dtype=backend.dtype) < 0.3).astype(backend.dtype)
        learner.step(rbm, learner.init_state(rbm, Batch(v), backend.rng(1)), Batch(v), backend.rng(2))
    assert counts["U"] == learner.updates_per_step
    return counts["T"], counts["L"], counts["U"]


@pytest.mark.parametrize("d, k_inner, k_cd", [(6, 4, 24), (5, 4, 24), (3, 2, 5)])
def test_dcp_cost_model_counts_what_the_learners_do(backend, monkeypatch, d, k_inner, k_cd):
    """With the measured parts fixed (T = 3, L = 5, U = 7 ms), the predicted S-DCP / CD-K cost is
    the ratio of the operations that one real S-DCP(d, K') step and one real CD-K step perform,
    counted by instrumenting the sampler, the statistics and the optimizer update."""
    T, L, U = 3e-3, 5e-3, 7e-3
    monkeypatch.setattr(bench_dcp, "interleaved", lambda fns, rounds: {"T": [10 * T], "L": [L], "U": [U]})
    c = bench_dcp_costs(backend, rounds=1, m=30, n=20, batch=8, d=d, k_inner=k_inner, k_cd=k_cd)
    c = {k: v["median"] if isinstance(v, dict) else v for k, v in c.items()}
    assert (c["T_gibbs_ms"], c["L_statistics_ms"], c["U_update_ms"]) == pytest.approx((3, 5, 7))
    assert c["L_over_T"] == pytest.approx(5 / 3)

    n_sdcp = _operation_counts(SDCP(SDCPConfig(d=d, k=k_inner)), backend, monkeypatch)
    n_cd = _operation_counts(CD(CDConfig(k=k_cd)), backend, monkeypatch)
    cost = lambda n: n[0] * T + n[1] * L + n[2] * U  # noqa: E731
    assert c["predicted_sdcp_over_cd"] == pytest.approx(cost(n_sdcp) / cost(n_cd))
    # the paper's version drops S-DCP's statistics beyond CD's two
    extra_L = n_sdcp[1] - n_cd[1]
    assert extra_L == d - 1
    assert c["predicted_sdcp_over_cd_without_extra_L"] == pytest.approx(
        (cost(n_sdcp) - extra_L * L) / cost(n_cd)
    )


@pytest.mark.parametrize("d, L, U", [(6, 0.0, 0.0), (5, 1e-3, 0.0)])
def test_dcp_cost_model_gives_the_papers_equal_compute_pairs(backend, monkeypatch, d, L, U):
    """dcp §3.1: S-DCP(6, 4) costs CD-24 when L and U are neglected; the rule
    K·T = d·K'·T + (d − 1)·L picks S-DCP(5, 4) for CD-24 when L = T (U neglected)."""
    T = 1e-3
    monkeypatch.setattr(bench_dcp, "interleaved", lambda fns, rounds: {"T": [10 * T], "L": [L], "U": [U]})
    c = bench_dcp_costs(backend, rounds=1, m=30, n=20, batch=8, d=d, k_inner=4, k_cd=24)
    assert c["predicted_sdcp_over_cd"]["median"] == pytest.approx(1.0)


def test_render_lists_every_measurement_with_threads_and_spread(backend):
    from rbmlab.backend.machine import facts

    rows = [
        *bench_gibbs(backend, rounds=2, threads=1, m=30, n=20, batch=8, sweeps=2),
        *bench_ais(backend, rounds=2, threads=2, m=30, n=20, chains=4, temps=5),
        *dcp_cost_rows(bench_dcp_costs(backend, rounds=2, m=30, n=20, batch=8), 2),
    ]
    text = render({"rounds": 2, "source": "abc1234", "machine": facts(), "rows": rows})
    assert "Source: `abc1234`." in text and "Source" not in render(
        {"rounds": 2, "machine": facts(), "rows": rows}
    )
    assert "bare matmuls / Gibbs sweep | 1 |" in text and "bare matmuls / AIS temperature | 2 |" in text
    assert "L / T" in text and "BLAS:" in text and "min – max" in text
    assert "(6(4T + L + U) + L) / (24T + 2L + U)" in text  # the labels follow d, K', K
    assert "S-DCP(6, 4) / CD-24 epoch time" not in text  # the epoch rows only when they were run


def test_an_epoch_of_the_bench_trains(backend):
    """epoch_seconds runs a real shuffled epoch through the learner (a positive time, and the
    learner sees every mini-batch of the epoch)."""
    x = (np.random.default_rng(0).random((50, 30)) < 0.3).astype(np.float32)
    seen = []

    class Counted(CD):
        def step(self, model, state, batch, rng):
            seen.append(len(batch))
            return super().step(model, state, batch, rng)

    learner = Counted(CDConfig(lr=0.1, batch_size=20, k=1))
    t = epoch_seconds(learner, random_rbm(backend, 30, 5), backend.asarray(x), 20, 0, backend)
    assert t > 0 and seen == [20, 20, 10]


def test_sampler_rows_compare_the_fused_draw_with_the_fallback(backend):
    from rbmlab.backend import random_bits

    rows = bench_sampler(backend, rounds=2, m=30, n=20, batch=8, chains=4, temps=5)
    if not random_bits.numba_available():
        assert rows == []  # nothing to compare without numba
        return
    names = [r["name"] for r in rows]
    assert len(rows) == 9 and sum("(the gain)" in n for n in names) == 3
    assert all(r["min"] > 0 for r in rows)


def test_device_rows_wait_for_the_device_and_name_no_thread_count(backend):
    """For numpy ``synchronized`` is the function itself; rows measured with threads=None (the
    GPU path) carry no BLAS thread count."""
    from rbmlab.bench.method import synchronized

    fn = lambda: None  # noqa: E731
    assert synchronized(fn, np) is fn
    rows = bench_gibbs(backend, rounds=2, threads=None, m=30, n=20, batch=8, sweeps=2, target="≥ 0.8 (GPU)")
    assert rows[1]["threads"] is None and rows[1]["target"] == "≥ 0.8 (GPU)"
    assert "| bare matmuls / Gibbs sweep |  |" in render(
        {"rounds": 2, "machine": {**_machine(), "gpu": "X"}, "rows": rows}
    )


def _machine():
    from rbmlab.backend.machine import facts

    return facts()


def test_frank_wolfe_rows_time_the_oracle_and_the_phases_of_a_step(backend, monkeypatch):
    """At toy shapes: the oracle rows (at 2 threads also with scipy's own BLAS left at 2, where
    scipy has one), and an iteration's three phases sweep the chains as often as FrankWolfe.step does,
    with shares that sum to 1 in every round."""
    from rbmlab.learners.frank_wolfe import FrankWolfe, FrankWolfeConfig

    x = binary(backend, 60, 30, 0.3, 0)
    rows = bench_fw_oracle(backend, x, "toy", rounds=2, threads=2, n_states=20)
    from rbmlab.learners.frank_wolfe_oracle import scipy_blas

    assert len(rows) == (5 if scipy_blas() is not None else 3) and all(r["min"] > 0 for r in rows)
    assert "f/∇f evaluations" in rows[0]["note"]

    sweeps = []
    sample = Learner.sample
    monkeypatch.setattr(
        Learner,
        "sample",
        lambda self, model, v, rng, steps, first_product=None: (
            sweeps.append(steps) or sample(self, model, v, rng, steps, first_product)
        ),
    )
    cfg = FrankWolfeConfig(
        n_samples=20, sample_steps=2, restarts=1, bias_fit="fixed", bias_steps=3, bias_chains=5, bias_sweeps=2
    )
    rows = bench_fw_iteration(backend, x, "toy", rounds=2, threads=1, n_hidden=4, config=cfg)
    per_iteration = sum(sweeps) / 3  # warm-up + 2 rounds
    sweeps.clear()
    learner, rbm = FrankWolfe(cfg), random_rbm(backend, 30, 4)
    learner.step(rbm, learner.init_state(rbm, Batch(x), backend.rng(0)), Batch(x), backend.rng(1))
    assert per_iteration == sum(sweeps) == 2 + 3 * 2
    shares = [r for r in rows if "share" in r["name"]]
    assert len(shares) == 3 and rows[0]["min"] > 0
    assert sum(r["min"] for r in shares) <= 1 + 1e-9 and sum(r["max"] for r in shares) >= 1 - 1e-9
    # the default loop fits the bias to convergence: the row names it and counts its steps
    cfg = FrankWolfeConfig(
        n_samples=20, sample_steps=2, restarts=1, bias_chains=5, bias_window=5, bias_max_steps=7
    )
    (first, *_) = bench_fw_iteration(backend, x, "toy", rounds=2, threads=1, n_hidden=4, config=cfg)
    assert "bias fitted to convergence" in first["name"]
    steps = re.search(r"bias steps: (\d+)", first["note"])
    assert steps and int(steps.group(1)) == 7  # capped: R̂ needs 100 averaged steps at least


@pytest.mark.slow
def test_crbm_bp_rows_time_the_three_bp_modes_beside_their_floor(backend):
    """At toy shapes: a time per mode, the floor ratio and the batched throughput, all positive;
    a fixed iteration count (tol=None) runs exactly that many iterations."""
    from rbmlab.inference.matrix_bp import loopy_bp

    rows = bench_crbm_bp(backend, rounds=2, threads=1, n_v=20, n_h=10, iterations=3)
    assert [r["name"].split(" (")[0] for r in rows[:3]] == [
        "BP sum-product",
        "BP max-product",
        "BP mixed-product",
    ]
    assert len(rows) == 5 and all(r["min"] > 0 for r in rows) and rows[4]["unit"] == "1/s"
    W = np.zeros((4, 3), dtype=np.float32)
    assert (
        loopy_bp(
            W, np.zeros((1, 4), np.float32), np.zeros((1, 3), np.float32), max_iter=3, tol=None
        ).iterations
        == 3
    )


def test_ssd_rows_time_cd25_with_the_spectral_step_against_cd25_and_sdcp(monkeypatch):
    """dcp Sec. 4.2.2's "SSD is computationally expensive": the SSD epoch is CD-25 with the
    spectral optimizer (one update per mini-batch), the CD-25 epoch plain SGD; ratios per round."""
    from rbmlab.optimizers.spectral import Spectral

    calls = []
    update = Spectral.update
    monkeypatch.setattr(Spectral, "update", lambda self, *a, **k: calls.append(1) or update(self, *a, **k))
    rows = bench_dcp.bench_ssd_epochs(rounds=1, threads=1, examples=100, batch=50, n_hidden=8)
    assert [r["name"].split(" epoch")[0] for r in rows[:3]] == [
        "CD-25",
        "SSD (CD-25, spectral step)",
        "S-DCP(6, 4)",
    ]
    assert len(calls) == 2  # 100 images at batch 50: two spectral updates, SSD's only
    assert rows[3]["median"] == pytest.approx(rows[1]["median"] / rows[0]["median"])
    assert rows[4]["median"] == pytest.approx(rows[1]["median"] / rows[2]["median"])


def test_the_dcp_speed_experiment_part_gives_the_cost_model_the_epochs_and_ssd(monkeypatch):
    """dcp_speed: the cost model's six rows at its batch and hidden size, the CD-24 / S-DCP epochs
    at ``batch`` and the SSD rows at ``ssd_batch``, ``rounds`` rounds each (the cost model at least 5)."""
    rounds = []
    interleaved = bench_dcp.interleaved
    monkeypatch.setattr(
        bench_dcp, "interleaved", lambda fns, r, **k: rounds.append(r) or interleaved(fns, r, **k)
    )
    rows = bench_dcp.dcp_speed(1, examples=100, batch=50, n_hidden=8, ssd_batch=25)
    names = [r["name"] for r in rows]
    assert len(rows) == 16 and names[0].startswith("dcp §3.1 cost model, batch 50")
    assert "CD-24 epoch (100 MNIST images, 8 hidden, batch 50), s" in names
    assert "SSD / CD-25 epoch time (batch 25)" in names and rounds == [5, 1, 1]


def test_bp_to_convergence_solves_one_random_rbm_per_draw(backend):
    """draws = 3: the RBMs of seeds 1, 2, 3, each solved to tol; the note lists each draw's
    iterations (they differ here: σ = 1.5 on 40 × 20) and the count that converged, and the
    seconds spread over every draw and round."""
    from rbmlab.inference.matrix_bp import loopy_bp

    expected = []
    for seed in (1, 2, 3):
        rng = backend.rng(seed)
        W = (1.5 * rng.standard_normal((40, 20))).astype(backend.dtype)
        b_v, b_h = (rng.standard_normal((1, n)).astype(backend.dtype) for n in (40, 20))
        expected.append(loopy_bp(W, b_v, b_h, max_iter=60, tol=1e-3).iterations)
    assert len(set(expected)) > 1
    [r] = bp_to_convergence(backend, 2, 1, 40, 20, 1.5, max_iter=60, scan=True, draws=3)
    assert "3 random draws" in r["name"] and r["min"] > 0
    assert r["note"] == f"iterations {' / '.join(map(str, expected))}, converged 3 of 3"
    [one] = bp_to_convergence(backend, 1, 1, 40, 20, 1.5, max_iter=60)
    assert one["note"].startswith(f"{expected[0]} iterations, converged: True") and "draws" not in one["name"]


@pytest.mark.slow
def test_pmp_rows_time_both_models_against_gibbs_matmuls_and_the_message_floor(backend, monkeypatch):
    """At toy shapes: the eight rows, positive; the sweep count reaches max_product; the rows name
    the path that ran (numba kernel or numpy)."""
    from rbmlab.inference import max_product as mp

    sweeps = []
    real = mp.max_product
    monkeypatch.setattr(mp, "max_product", lambda g, u, s, **k: sweeps.append(s) or real(g, u, s, **k))
    rows = bench_pmp(backend, rounds=2, threads=1, m=12, n=7, chains=3, d=9, sweeps=4)
    assert len(rows) == 8 and all(r["min"] > 0 for r in rows)
    assert [r["unit"] for r in rows] == ["ms", "ms", "ratio", "ratio", "ratio", "ms", "ratio", "ratio"]
    assert set(sweeps) == {4} and ("numba kernel" in rows[0]["name"] or "numpy path" in rows[0]["name"])


def test_the_operation_counter_counts_passes_reductions_matmuls_functions_and_draws():
    from rbmlab.bench.ops import CountedDraws, OpCounted, counting, operations

    a, b = counting(np.ones((3, 4))), np.ones((4, 2))
    draws = CountedDraws(np.random.default_rng(0))

    def work():
        c = a @ b  # 1
        c += 1.0  # 2 (in place)
        np.exp(c, out=c)  # 3
        d = c.sum(axis=0)  # 4 (add.reduce)
        e = np.where(d > 0, d, 0.0)  # 5, 6
        buffer = np.zeros((3, 2))  # a creator: the buffer counts from here on, its allocation does not
        buffer -= 1.0  # 7
        draws.random((2,))  # 8
        c.copy(), c.astype(np.float32), c[[0, 2]]  # 9, 10, 11 (a copy, a conversion, a gather)
        c[0] = 0.0  # 12 (a fill)
        c[1], c[:, :1], np.empty_like(c), np.broadcast_to(d, (3, 2)), c.astype(c.dtype, copy=False)  # views
        return e

    assert operations(work) == 12
    assert OpCounted.macs == 3 * 4 * 2  # the one matmul's multiply-adds
    stacked, vector = counting(np.ones((5, 3, 4))), counting(np.ones(4))
    assert operations(lambda: (stacked @ np.ones((5, 4, 6)), stacked @ vector)) == 2
    assert OpCounted.macs == 5 * 3 * 4 * 6 + 5 * 3 * 4
    assert type(np.zeros(2)) is np.ndarray  # the creators are numpy's again
    assert OpCounted.simulates_device  # the paths a device runs


def test_operations_per_update_count_each_crbm_learner_and_bp_per_iteration():
    from rbmlab.bench.crbm_bp import UPDATE_LEARNERS, operations_per_update

    rows = operations_per_update(n_v=12, n_h=5, batch=4)
    assert len(rows) == len(UPDATE_LEARNERS) and all(r["median"] > 10 for r in rows)
    by_name = {r["name"].split(", ")[1].split(" (")[0]: r for r in rows}
    assert by_name["conditional_cd k=10"]["median"] > by_name["conditional_cd k=1"]["median"]
    for name in ("mle_mf", "mle_bp", "mssvm", "lssvm"):  # T = 7 + epoch: more with each epoch
        assert re.match(r"\+\d+ per inference iteration", by_name[name]["note"]), name
    assert by_name["logistic"]["note"] == ""


def test_the_bare_mle_bp_update_is_the_learners_update():
    """The bound MLE-BP's update is measured against computes what the learner's step computes
    (tol 0: both run T iterations), so the ratio compares the same work."""
    from rbmlab.bench.crbm_bp import at_epoch, bare_mle_bp_update, random_crbm
    from rbmlab.learners import LEARNERS

    model, x, v = random_crbm(12, 5, 4, seed=3)
    learner = LEARNERS.build(LEARNERS.parse({"name": "mle_bp", "batch_size": 4, "lr": 0.5, "tol": 0.0}))
    state = at_epoch(learner.init_state(model, Batch(x, targets=v), None), 2)
    new, _ = learner.step(model, state, Batch(x, targets=v), None)
    bare = bare_mle_bp_update(model, x, v, learner.iterations(state), 0.5)()
    for name, got in zip(("W", "W_xv", "W_xh", "b_v", "b_h"), bare):
        np.testing.assert_allclose(got, getattr(new, name), rtol=1e-5, atol=1e-6, err_msg=name)
        assert not np.allclose(got, getattr(model, name), atol=1e-4), name  # it moved


def test_the_mle_bp_update_row_is_a_ratio_to_its_bare():
    from rbmlab.bench.crbm_bp import bench_mle_bp_update

    (r,) = bench_mle_bp_update(1, 1, batch=3, n_v=10, n_h=4)
    assert r["unit"] == "ratio" and r["median"] > 0 and "T = 8" in r["name"] and r["target"] == "≥ 0.8"


def test_a_subset_of_parts_is_named_in_the_header_not_make_bench():
    from rbmlab.bench.cli import invocation

    assert invocation(bench.PARTS) == {}
    result = {"rounds": 5, "rows": [], "machine": {}, **invocation(("crbm_bp",))}
    assert "Command: `python -m rbmlab.bench` (python -m rbmlab.bench --parts crbm_bp --rounds 5)" in render(
        result
    )


def test_the_packed_rows_of_make_bench_gpu_run_on_any_backend():
    """bench-gpu's packed PCD-1 rows (rbmlab.bench.packed.bench_packed_scaling), at a toy size on
    numpy: a GPU session runs them as prepared; per run seconds and bare / packed for each count."""
    from rbmlab.backend import get_backend
    from rbmlab.bench.packed import bench_packed_scaling

    rows = bench_packed_scaling(get_backend(), 1, (1, 2), examples=40, n_hidden=8, batch=20)
    assert [r["unit"] for r in rows] == ["s", "ratio"] * 2
    assert "2 packed run(s)" in rows[2]["name"] and all(r["median"] > 0 for r in rows)


def test_the_crbm_packed_rows_of_make_bench_gpu_run_on_any_backend():
    """bench-gpu's packed crbm_bp rows at a toy size on numpy: seconds per run and bound / measured
    for CD-10, MLE-MF and MLE-BP at each run count; the bound's multiply-adds are one update's
    matmuls (CD-10 at 20 × 8, batch 5: 10 sweeps of two B·n_v·n_h products and more)."""
    from rbmlab.backend import get_backend
    from rbmlab.bench.packed import bench_crbm_packed_scaling

    rows = bench_crbm_packed_scaling(get_backend(), 1, (1, 2), n_v=20, n_h=8, batch=5, steps=2)
    assert len(rows) == 12 and [r["unit"] for r in rows[:2]] == ["s", "ratio"]
    assert all(r["median"] > 0 for r in rows)
    macs = float(rows[1]["name"].rsplit("(", 1)[1].split(" M ")[0]) * 1e6
    assert macs > 10 * 2 * 5 * 20 * 8
