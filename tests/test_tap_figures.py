"""tap Figures 4-9 and 12 as ``figure`` experiments (rbmlab.experiment.figure, drawings in
rbmlab.experiment.figures): Fig. 12 end to end on a tiny TAP-trained run (TAP log-likelihoods from
both combinations of the solutions, the gap between them the gap between the two ln Z; AIS and PL
on the same checkpoints; a summary that names the images and AIS settings used); Figs. 5, 8 and 12
over seeds as mean ± std; every tap figure file checked at every tier; the command line split
between the figure's options and the source experiment; bad options as one line."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
import yaml

import rbmlab.experiment.figures as figures
from rbmlab.cli import main
from rbmlab.errors import RbmlabError
from rbmlab.experiment import available, kind_of, load_spec, run_experiment
from rbmlab.experiment.figure import check_figure, figure_plan
from rbmlab.experiment.figures import Canvas, Drawing, FigureOptions
from rbmlab.experiment.figures.tap_runs import SizedFigureConfig, runs
from rbmlab.experiment.figures.tap_solutions import solutions
from rbmlab.models.rbm import log_partition
from rbmlab.run.checkpoint import load_checkpoint, save_checkpoint

TAP_FIGURES = [
    "tap/figure-4",
    "tap/figure-4-localisation-seeds",
    "tap/figure-4-features",
    "tap/figure-4-features-seeds",
    "tap/figure-5",
    "tap/figure-5-seeds",
    "tap/figure-5-counting-seeds",
    "tap/figure-6",
    "tap/figure-7",
    "tap/figure-7-attractors-seeds",
    "tap/figure-8",
    "tap/figure-8-seeds",
    "tap/figure-9",
    "tap/figure-9-structure-seeds",
    "tap/figure-12",
    "tap/figure-12-seeds",
]


def _train(run_dir, seed=0, lr=None):
    main(
        [
            "run",
            "dataset=bars_stripes",
            "model=rbm",
            "model.n_hidden=6",
            "learner=tap",
            "learner.batch_size=full",
            *([f"learner.lr={lr}"] if lr else []),
            "evaluator=tap",
            "evaluator.splits=[train]",
            "evaluator.n_init=0",
            "train.epochs=2",
            "train.snapshot_every=1",
            "train.eval_every=1",
            "train.progress=false",
            "evaluator.progress=false",
            f"seed={seed}",
            f"hydra.run.dir={run_dir}",
        ]
    )


def test_figure_12_scores_every_snapshot_both_ways(tmp_path):
    run = tmp_path / "outputs" / "tap" / "figure-3" / "smoke" / "binary" / "0"
    _train(run)
    for snapshot in sorted((run / "snapshots").glob("epoch_*.npz")):
        # a ferromagnet of {0, 1} units (W = 2, biases at the all-on / all-off symmetry point): two
        # TAP solutions of equal F, all-on and all-off, both reached from bars and stripes
        model, meta, _ = load_checkpoint(snapshot)
        W = np.full_like(model.W, 2.0)
        save_checkpoint(snapshot, model.replace(W=W, b_v=-W.sum(1) / 2, b_h=-W.sum(0) / 2), meta=meta)
    results = tmp_path / "results"
    written = run_experiment("tap/figure-12", ["scale=smoke"], results, tmp_path / "outputs")["files"]
    out = results / "tap"
    assert sorted(p.name for p in written) == [
        "figure-12_smoke.csv",
        "figure-12_smoke.md",
        "figure-12_smoke.png",
    ]
    table = pd.read_csv(out / "figure-12_smoke.csv")
    assert table["epoch"].tolist() == [1, 2]
    assert table["tap_solutions"].tolist() == [2, 2]
    gap = table["tap_logsumexp_log_z"] - table["tap_log_z"]
    np.testing.assert_allclose(gap, np.log(2), atol=1e-9)  # two equal F: ln 2 apart
    np.testing.assert_allclose(table["tap"] - table["tap_logsumexp"], gap, atol=1e-9)
    assert np.isfinite(table[["ais", "ais_log_z", "pseudo"]].to_numpy()).all()
    text = (out / "figure-12_smoke.md").read_text()
    assert "the first 14 training images" in text and "PL: 9 of 9 pixels" in text
    assert "`rbmlab experiment tap/figure-3 scale=smoke`" in text
    exact = float(log_partition(load_checkpoint(run / "snapshots" / "epoch_1.npz")[0]))
    assert abs(table["tap_logsumexp_log_z"][0] - exact) < abs(table["tap_log_z"][0] - exact)
    assert "16 chains, 500 linear temperatures" in text
    assert (out / "figure-12_smoke.png").stat().st_size > 0


def test_figures_5_and_12_over_seeds_give_mean_and_spread_of_the_per_seed_values(
    tmp_path, monkeypatch, capsys
):
    outputs, results = tmp_path / "outputs", tmp_path / "results"
    sweep = outputs / "tap" / "figure-3-seeds" / "smoke"
    for seed in (0, 1):
        _train(sweep / "binary" / str(seed), seed=seed, lr=0.5)
    found = runs(sweep)
    assert [run.name for run in found["binary"][6]] == ["0", "1"]
    run_experiment("tap/figure-12-seeds", ["scale=smoke"], results, outputs)
    out = results / "tap"
    table = pd.read_csv(out / "figure-12-seeds_smoke.csv")
    assert sorted(table["seed"]) == [0, 0, 1, 1]
    assert table.groupby("seed")["tap"].apply(lambda v: v.nunique()).tolist() == [2, 2]
    rows = [
        line.split(" | ")
        for line in (out / "figure-12-seeds_smoke.md").read_text().splitlines()
        if line.startswith("| 1 |")
    ]
    tap = table[table["epoch"] == 1]["tap"]
    assert rows[0][1] == f"{tap.mean():.2f} ± {tap.std(ddof=1):.2f}" and tap.std() > 0
    assert "2 seeds" in (out / "figure-12-seeds_smoke.md").read_text()
    run_experiment("tap/figure-5-seeds", ["scale=smoke", "n_init=14"], results, outputs)
    text = (out / "figure-5-binary-seeds_smoke.md").read_text()
    assert "Mean ± std (ddof=1) over the 2 seeds' runs" in text and "tap/figure-3-seeds" in text
    canvas = Canvas("tap/figure-3-seeds", "-seeds", sweep, "smoke", out, outputs / "tap")
    per_seed = [solutions("binary", run, SizedFigureConfig(n_init=14), canvas) for run in found["binary"][6]]
    row = next(line for line in text.splitlines() if line.startswith("| 2 |")).split(" | ")
    counts = [s["n_unique"][list(s["epochs"]).index(2)] for s in per_seed]
    assert row[1] == f"{np.mean(counts):.1f} ± {np.std(counts, ddof=1):.1f}"
    per_run = pd.read_csv(out / "figure-5-binary-seeds_smoke.csv")  # the table's inputs, per seed
    at_2 = per_run[per_run["epoch"] == 2].sort_values("seed")
    assert at_2["seed"].tolist() == [0, 1] and at_2["unique"].tolist() == [int(c) for c in counts]
    f_min = [s["free_energy"][s["epoch"] == 2].min() for s in per_seed]
    np.testing.assert_allclose(at_2["f_min"], f_min, rtol=1e-12)
    assert row[4] == f"{np.mean(at_2['f_min']):.2f} ± {np.std(at_2['f_min'], ddof=1):.2f}"
    assert (out / "figure-5-binary-seeds_smoke.png").stat().st_size > 0
    # a size asked for by n_hidden: exactly that size, its own files and its own solution cache
    run_experiment("tap/figure-5-seeds", ["scale=smoke", "n_init=14", "n_hidden=6"], results, outputs)
    assert (out / "figure-5-binary-seeds-h6_smoke.md").read_text().splitlines()[2:] == text.splitlines()[2:]
    assert len(list(outputs.rglob("binary-seeds-h6-*.npz"))) == 2
    # source=figure-3 on the command line: the same drawing from tap/figure-3's runs (none here)
    with pytest.raises(RbmlabError, match=r"sweep: no completed runs under .*figure-3/smoke"):
        run_experiment(
            "tap/figure-5-seeds",
            [
                "scale=smoke",
                "source=figure-3",
                "report_only=true",
                f"sweep={outputs / 'tap' / 'figure-3' / 'smoke'}",
            ],
            results,
            outputs,
        )
    for figure in ("tap/figure-5-seeds", "tap/figure-12-seeds"):
        with pytest.raises(RbmlabError, match=r"n_hidden: no completed .*N_h = 7 .*binary 6\)"):
            run_experiment(figure, ["scale=smoke", "n_hidden=7"], results, outputs)
    with pytest.raises(
        RbmlabError, match=r"^variants: none of \['cbcl'\] ran in tap/figure-3-seeds \(ran: binary\)$"
    ):
        run_experiment("tap/figure-5-seeds", ["scale=smoke", "variants=cbcl"], results, outputs)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stop:  # the other figures take no size: one line, exit 2
        main(["experiment", "tap/figure-6", "scale=smoke", "n_hidden=6"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert (
        err.startswith(
            "rbmlab: error: figure.n_hidden: unknown option for figure tap-figure-6; valid "
            "options: sweep, n_init,"
        )
        and err.count("\n") == 1
    )


def test_figure_8_over_seeds_tabulates_each_method_as_mean_and_spread(tmp_path):
    """Fig. 8's table from tap/figure-8-denoising-seeds: TAP's MCC per size and p as mean ± std
    over the seeds' runs, the model-free OPE, 1-NN and constant from one size's runs."""
    outputs = tmp_path / "outputs"
    sweep = outputs / "tap" / "figure-8-denoising-seeds" / "smoke"
    rng = np.random.default_rng(0)
    values = {}
    for k, (n, p, seed) in enumerate((n, p, s) for n in (8, 12) for p in (0.0, 0.5) for s in (0, 1, 2)):
        run = sweep / str(k)
        run.mkdir(parents=True)
        final = {
            "test_mcc_tap": rng.random(),
            "test_mcc_ope": 0.1 * seed + p,
            "test_mcc_nn": 0.2 + seed,
            "test_mcc_const": 0.3,
            "test_tap_distinct": 1.0,
        }
        values[n, p, seed] = final
        (run / "summary.json").write_text(json.dumps({"status": "completed", "final": final}))
        (run / "config.yaml").write_text(
            yaml.safe_dump({"model": {"n_hidden": n}, "evaluator": {"flip": p}, "seed": seed})
        )
    run_experiment("tap/figure-8-seeds", ["scale=smoke"], tmp_path / "results", outputs)
    out = tmp_path / "results" / "tap"
    row = next(
        line
        for line in (out / "figure-8-mcc-seeds_smoke.md").read_text().splitlines()
        if line.startswith("| 0.5 |")
    ).split(" | ")
    tap12 = [values[12, 0.5, s]["test_mcc_tap"] for s in range(3)]
    assert row[2] == f"{np.mean(tap12):.3f} ± {np.std(tap12, ddof=1):.3f} (1)"
    assert row[3] == "0.600 ± 0.100" and row[4] == "1.200 ± 1.000" and row[5].startswith("0.300 ± 0.000")
    assert (out / "figure-8-mcc-seeds_smoke.png").stat().st_size > 0


def test_the_counting_rules_figure_counts_the_same_chains_under_every_rule(tmp_path):
    """figure-5-counting-seeds on two tiny TAP-trained runs: per epoch, each rule's count is what
    tap.fixed_points gives on the chains solved at the rule's tol; the table gives mean ± std over
    the seeds; too few solutions for a band test reads '—'."""
    from rbmlab.evaluators.tap import TapEvalConfig, solved_chunks
    from rbmlab.experiment.figures.tap_counting import RULES
    from rbmlab.experiment.figures.tap_runs import run_data, snapshot
    from rbmlab.inference import tap

    outputs, results = tmp_path / "outputs", tmp_path / "results"
    sweep = outputs / "tap" / "figure-3-seeds" / "smoke"
    for seed in (0, 1):
        _train(sweep / "binary" / str(seed), seed=seed, lr=0.5)
    run_experiment("tap/figure-5-counting-seeds", ["scale=smoke", "n_init=14"], results, outputs)
    text = (results / "tap" / "figure-5-counting-seeds_smoke.md").read_text()
    rows = [line.split(" | ") for line in text.splitlines() if line.startswith("| 2 |")]
    assert [r[1] for r in rows] == [r.label for r in RULES] and "seeds 0, 1" in text
    counts = []
    for run in sorted((sweep / "binary").iterdir()):
        model, x = snapshot(run, 2), run_data(run)[0][:14]
        counts.append([])
        for rule in RULES:
            a, _, done, _ = zip(*solved_chunks(model, x, TapEvalConfig(tol=rule.tol)))
            counts[-1].append(
                len(tap.fixed_points(np.concatenate(a), np.concatenate(done), rule.unique_tol, rule.count))
            )
    for i, row in enumerate(rows):
        per_seed = [c[i] for c in counts]
        assert row[2] == f"{np.mean(per_seed):.1f} ± {np.std(per_seed, ddof=1):.1f}"
        assert row[4] == "—" and row[7] == "0 of 0 |"
    assert (results / "tap" / "figure-5-counting-seeds_smoke.png").stat().st_size > 0


def test_participation_ratio_of_fields_worked_by_hand():
    """(Σ w²)² / (n Σ w⁴): a uniform field 1, a one-pixel field 1/n, two equal pixels 2/n, and
    (1 + 4)² / (4 (1 + 16)) for weights (1, 2, 0, 0); a zero field is 0, not NaN."""
    from rbmlab.report.receptive_fields import participation_ratio

    W = np.array(
        [
            [1.0, 3.0, 1.0, 1.0, 0.0],
            [1.0, 0.0, -1.0, 2.0, 0.0],
            [1.0, 0.0, 0.0, 0.0, 0.0],
            [1.0, 0.0, 0.0, 0.0, 0.0],
        ]
    )
    np.testing.assert_allclose(participation_ratio(W), [1.0, 0.25, 0.5, 25 / 68, 0.0], rtol=1e-15)


def test_the_localisation_figure_gives_each_sizes_field_ratios_over_the_seeds(tmp_path):
    """figure-4-localisation-seeds on two tiny runs: the median over a model's fields of the
    participation ratio, mean ± std over the seeds, as computed from the checkpoints here."""
    from rbmlab.report.receptive_fields import participation_ratio

    outputs, results = tmp_path / "outputs", tmp_path / "results"
    sweep = outputs / "tap" / "figure-3-seeds" / "smoke"
    for seed in (0, 1):
        _train(sweep / "binary" / str(seed), seed=seed, lr=0.5)
    run_experiment("tap/figure-4-localisation-seeds", ["scale=smoke"], results, outputs)
    text = (results / "tap" / "figure-4-localisation-seeds_smoke.md").read_text()
    row = next(line for line in text.splitlines() if line.startswith("| 6 |")).split(" | ")
    medians = [
        np.median(participation_ratio(load_checkpoint(sweep / "binary" / s / "checkpoint.npz")[0].W))
        for s in ("0", "1")
    ]
    assert row[1] == "0, 1" and row[2] == "2"
    assert row[4] == f"{np.mean(medians):.4f} ± {np.std(medians, ddof=1):.4f}"
    assert (results / "tap" / "figure-4-localisation-seeds_smoke.png").stat().st_size > 0


def test_stroke_cores_worked_by_hand():
    """The core of a field's strongest pixel (4-connected, its sign, >= half its weight): its length
    over its width from the coordinate covariance with each pixel a unit square (+1/12)."""
    from rbmlab.report.receptive_fields import stroke_cores

    f = np.zeros((6, 7, 7))
    f[2, 0:5, 0] = 1.0  # a 1 x 5 line: 5
    f[1:4, 1:4, 1] = -2.0  # a 3 x 3 square of the peak's sign: 1; the +1.5 is not
    f[0, 0, 1] = 1.5
    f[1:3, 1:5, 2] = 1.0  # 2 x 4: sqrt((16/12) / (4/12)) = 2
    f[0:3, 0, 3] = 0.9  # the peak's core is the 2 x 2 square (1), not the
    f[4:6, 3:5, 3] = 0.9  # longer line beside it
    f[4, 3, 3] = 1.0
    f[0:4, 6, 4] = 1.0  # 0.4 < half the peak: cut; the line is 4 pixels
    f[4, 6, 4] = 0.4
    f[[0, 1, 2, 2, 2], [0, 0, 0, 1, 2], 5] = 1.0  # an L: variances 0.64 + 1/12 each, covariance 0.36
    elongation, size = stroke_cores(f.reshape(42, 7), (6, 7))  # field 6: all zero
    lam = 0.64 + 1 / 12
    np.testing.assert_allclose(
        elongation[:6], [5.0, 1.0, 2.0, 1.0, 4.0, np.sqrt((lam + 0.36) / (lam - 0.36))], rtol=1e-12
    )
    assert np.isnan(elongation[6])
    assert size.tolist() == [5, 9, 8, 4, 4, 5, 0]


def test_the_features_figure_counts_localised_and_stroke_fields_per_seed(tmp_path):
    """figure-4-features-seeds on two tiny runs: per seed the fields at or below the localisation
    threshold and the stroke cores, as computed from the checkpoints here; thresholds moved to the
    models' own values change the counts."""
    from rbmlab.experiment.figures import tap_features
    from rbmlab.report.receptive_fields import participation_ratio, stroke_cores

    outputs, results = tmp_path / "outputs", tmp_path / "results"
    sweep = outputs / "tap" / "figure-3-seeds" / "smoke"
    for seed in (0, 1):
        _train(sweep / "binary" / str(seed), seed=seed, lr=0.5)
    Ws = [
        np.asarray(load_checkpoint(sweep / "binary" / s / "checkpoint.npz")[0].W, dtype=np.float64)
        for s in ("0", "1")
    ]
    ratios = [participation_ratio(W) for W in Ws]
    cores = [stroke_cores(W, (3, 3)) for W in Ws]

    def table(localised, elongation, pixels, monkeypatch):
        monkeypatch.setattr(tap_features, "LOCALISED", localised)
        monkeypatch.setattr(tap_features, "STROKE_ELONGATION", elongation)
        monkeypatch.setattr(tap_features, "STROKE_PIXELS", pixels)
        run_experiment("tap/figure-4-features-seeds", ["scale=smoke"], results, outputs)
        text = (results / "tap" / "figure-4-features-seeds_smoke.md").read_text()
        return next(line for line in text.splitlines() if line.startswith("| binary MNIST | 6 |")).split(
            " | "
        )

    with pytest.MonkeyPatch.context() as mp:
        local = float(np.median(np.concatenate(ratios)))
        long = float(np.median(np.concatenate([e for e, _ in cores])))
        row = table(local, long, 2, mp)
        want_local = [int((r <= local).sum()) for r in ratios]
        want_stroke = [int(((e >= long) & (n >= 2)).sum()) for e, n in cores]
        assert row[2] == "0, 1" and row[3] == "2"
        assert row[4] == f"{np.mean(want_local):.1f} ± {np.std(want_local, ddof=1):.1f}"
        assert row[5] == f"{np.mean(want_stroke):.1f} ± {np.std(want_stroke, ddof=1):.1f}"
        both = sum(1 for a, b in zip(want_local, want_stroke) if a and b)
        assert row[6] == f"{both} of 2"
        lowest = [r.min() for r in ratios]
        assert row[7] == f"{np.mean(lowest):.4f} ± {np.std(lowest, ddof=1):.4f} |"
        assert 0 < sum(want_local) < 12 and 0 < sum(want_stroke) < 12  # the thresholds cut
        row = table(0.0, 1e9, 2, mp)
        assert row[4:7] == ["0.0 ± 0.0", "0.0 ± 0.0", "0 of 2"]
        per_run = pd.read_csv(results / "tap" / "figure-4-features-seeds_smoke.csv")
        assert per_run["seed"].tolist() == [0, 1] and per_run["localised"].tolist() == [0, 0]
        np.testing.assert_allclose(per_run["lowest_ratio"], lowest, rtol=1e-12)
    assert (results / "tap" / "figure-4-features-seeds_smoke.png").stat().st_size > 0


@pytest.mark.parametrize(
    "name, argv, message",
    [
        (
            "tap/figure-5-counting-seeds",
            ["tol=1.0e-8"],
            "figure.tol: figure tap-figure-5-counting does not read it "
            "(it reads epochs, max_iter, n_hidden, n_init, variants and sweep)",
        ),
        (
            "tap/figure-4-localisation-seeds",
            ["n_init=5"],
            "figure.n_init: figure tap-figure-4-localisation does not read it",
        ),
    ],
)
def test_an_option_a_drawing_does_not_read_is_refused_before_any_work(name, argv, message):
    with pytest.raises(RbmlabError, match=f"^{re.escape(message)}"):
        figure_plan(name, load_spec(name), ["scale=smoke", *argv])
    figure_plan(name, load_spec(name), ["scale=smoke", "variants=binary"])  # variants: read


@pytest.mark.parametrize("name", TAP_FIGURES)
def test_every_tap_figure_file_loads_and_validates_at_every_tier(name):
    spec = load_spec(name)
    assert kind_of(spec, name).name == "figure"
    plans = check_figure(name, spec)
    assert [p.scale for p in plans] == ["smoke", "reduced", "paper"]
    for plan in plans:
        assert plan.source in available() and plan.source in plan.drawing.sources
        assert plan.draw in figures.FIGURES
    seeds = name.endswith("-seeds")
    assert all(plan.drawing.sources[plan.source] == ("-seeds" if seeds else "") for plan in plans)


def test_the_tap_figure_files_are_every_figure_kind_file_of_tap():
    assert sorted(n for n in available() if n.startswith("tap/") and "figure" in load_spec(n)) == sorted(
        TAP_FIGURES
    )


def test_the_command_line_sets_the_options_and_passes_the_rest_to_the_source():
    spec = load_spec("tap/figure-5")
    plan = figure_plan(
        "tap/figure-5",
        spec,
        [
            "scale=smoke",
            "n_hidden=50",
            "epochs=[1,3]",
            "train.epochs=3",
            "backend=cupy",
            "resume=true",
            "variants=binary,real",
            "source=figure-3-seeds",
        ],
    )
    assert (plan.options.n_hidden, plan.options.epochs, plan.options.variants) == (
        50,
        [1, 3],
        ["binary", "real"],
    )
    assert plan.source == "tap/figure-3-seeds" and plan.drawing.sources[plan.source] == "-seeds"
    assert plan.source_argv == [
        "scale=smoke",
        "variants=binary,real",
        "train.epochs=3",
        "backend=cupy",
        "resume=true",
    ]
    tiered = figure_plan(
        "tap/figure-12-seeds", load_spec("tap/figure-12-seeds"), ["scale=reduced", "epochs=[4]"]
    )
    assert tiered.options.epochs == [4]  # the command line over the tier's options
    assert figure_plan(
        "tap/figure-12-seeds", load_spec("tap/figure-12-seeds"), ["scale=reduced"]
    ).options.epochs[:3] == [2, 4, 6]


@pytest.mark.parametrize(
    "argv, message",
    [
        (["n_init=0"], "figure.n_init: must be >= 1, got 0"),
        (["inits=3"], "figure.inits: unknown option for figure tap-figure-5; valid options: sweep, n_init,"),
        (["epochs=many"], "figure.epochs: expected a list"),
        (["n_init"], "n_init: expected key=value"),
        (["variants=faces"], "figure.variants: expected one of binary, real, cbcl; got 'faces'"),
        (
            ["source=figure-4"],
            "source: tap-figure-5 is drawn from the runs of tap/figure-3, tap/figure-3-seeds; got 'figure-4'",
        ),
        (["sweep=nowhere"], "sweep: no completed runs under nowhere"),
    ],
)
def test_a_bad_option_is_one_line_before_anything_runs(argv, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # no runs here: an option checked late would start tap/figure-3
    with pytest.raises(SystemExit) as stop:
        main(["experiment", "tap/figure-5", "scale=smoke", *argv])
    err = capsys.readouterr().err
    assert stop.value.code == 2 and err.startswith(f"rbmlab: error: {message}") and err.count("\n") == 1, err
    assert not (tmp_path / "outputs").exists() and not (tmp_path / "results" / "tap").exists()


def _toy(canvas, cfg):
    canvas.save_text(canvas.name("toy"), "md", f"{canvas.source} {cfg.sweep}\n")


TOY = Drawing(_toy, FigureOptions, {"tap/figure-3": "", "tap/figure-3-seeds": "-seeds"})


def test_a_figure_registered_with_one_line_draws_and_runs_its_source_first_when_absent(tmp_path, monkeypatch):
    import rbmlab.experiment as experiment
    import rbmlab.experiment.spec as spec_file

    monkeypatch.setattr(figures, "FIGURES", figures.FIGURES.with_entries(toy="tests.test_tap_figures:TOY"))
    (tmp_path / "experiments" / "tap").mkdir(parents=True)
    for source in ("figure-3", "figure-3-seeds"):  # the real sources, beside the toy figure
        (tmp_path / "experiments" / "tap" / f"{source}.yaml").write_text(
            (spec_file.EXPERIMENTS_DIR / "tap" / f"{source}.yaml").read_text()
        )
    monkeypatch.setattr(spec_file, "EXPERIMENTS_DIR", tmp_path / "experiments")
    (tmp_path / "experiments" / "tap" / "toy.yaml").write_text(
        "figure: {draw: toy, source: tap/figure-3}\nscales: {smoke: {}}\n"
    )
    ran = []
    monkeypatch.setattr(experiment, "run_experiment", lambda name, argv, *roots: ran.append((name, argv)))
    outputs, results = tmp_path / "outputs", tmp_path / "results"
    written = run_experiment("tap/toy", ["scale=smoke", "train.epochs=1"], results, outputs)["files"]
    assert ran == [("tap/figure-3", ["scale=smoke", "train.epochs=1"])]  # absent: run first
    # a note begins with its runs' header line (none here: the source run is a stand-in)
    assert [p.read_text() for p in written] == [
        "_SMOKE TIER: a pipeline check, not comparable with the paper "
        "(smoke tier · 0 runs · commit unknown)_\n\n"
        "tap/figure-3 None\n"
    ]
    (outputs / "tap" / "figure-3-seeds" / "smoke").mkdir(parents=True)
    written = run_experiment("tap/toy", ["scale=smoke", "source=figure-3-seeds"], results, outputs)["files"]
    assert ran == [("tap/figure-3", ["scale=smoke", "train.epochs=1"])]  # present: not run again
    assert written == [results / "tap" / "toy-seeds_smoke.md"]
    with pytest.raises(RbmlabError, match=r"toy.yaml: no settings for scale 'reduced'; defined: smoke$"):
        run_experiment("tap/toy", ["scale=reduced"], results, outputs)
