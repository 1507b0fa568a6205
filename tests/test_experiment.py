"""Experiment files: every one parses at every tier, and every job of every tier and variant is
a valid run configuration (so `make <paper>-<artefact> SCALE=paper` starts); tiers can narrow the
grid and the variants."""

from __future__ import annotations

import re

import pytest

from rbmlab.errors import RbmlabError
from rbmlab.experiment import SCALE_TIERS, available, load_spec, seed_list, sweep_overrides
from rbmlab.hydra_app import expand_overrides, validated_run_config


@pytest.mark.parametrize("name", available())
def test_every_experiment_file_declares_every_tier(name):
    """Every tier is declared (by the experiment whose runs this one reports, for ``runs_of``),
    and its first job composes into a valid run configuration at that scale, with the tier's
    first seed."""
    own = load_spec(name)
    if "bench" in own:  # a timing: its bench part at every tier, no runs
        from rbmlab.bench import EXPERIMENT_PARTS

        assert own["bench"]["part"] in EXPERIMENT_PARTS and set(own["bench"]["scales"]) == set(SCALE_TIERS)
        return
    if "inference" in own:  # a sampler or solver on a fixed model: its options at every tier
        from rbmlab.experiment.inference import tier_options

        assert set(own["scales"]) == set(SCALE_TIERS)
        for tier in SCALE_TIERS:
            tier_options(name, own, tier)
        return
    if "gallery" in own:  # an image grid of other experiments' runs
        from rbmlab.report.gallery import check_gallery

        for row in check_gallery(own["gallery"], name)[2]:
            selector = dict(row["run"])
            source = load_spec(selector.pop("experiment"))
            assert selector.pop("variant", None) in (source.get("variants") or {None: []})
            seed = selector.pop("seed", None)
            assert seed is None or seed in seed_list(source.get("seeds", [0]))
            assert all(value in source["grid"][key] for key, value in selector.items())
        return
    if "figure" in own:  # a figure drawn from another experiment's runs
        from rbmlab.experiment.figure import check_figure

        for plan in check_figure(name, own):  # every tier's options; its source is an
            assert plan.source in available()  # experiment, whose own case checks its tiers
        return
    if "leaderboard" in own:  # every entrant's job composes (the other tiers: slow)
        from rbmlab.experiment.leaderboard import sweep_spec

        board = sweep_spec(name, own, "smoke")
        assert board["variants"] and all(v["grid"]["learner.lr"] for v in board["variants"].values())
        return
    sources = own["runs_of"] if isinstance(own.get("runs_of"), list) else [own.get("runs_of", name)]
    for source in sources:  # runs_of: reports other experiments' runs, whose own case composes them
        assert source in available() and (source == name) == ("runs_of" not in own)
        assert set(load_spec(source).get("scales", {})) >= set(SCALE_TIERS), f"{source}: a tier missing"
    if "runs_of" not in own:
        _check_tiers(name, own, [tier for tier in SCALE_TIERS if tier != "smoke"])
    assert own["report"]["metric"]


def _check_tiers(name, spec, tiers):
    """Each tier is declared; of ``tiers``, the first job composes at its scale and first seed
    (smoke: every variant's first job, in test_every_variant_of_the_smoke_tier_is_a_valid_run_config)."""
    variants = spec.get("variants") or {"": []}
    assert set(spec.get("scales", {})) >= set(SCALE_TIERS), f"{name}: tiers {sorted(spec.get('scales', {}))}"
    for tier in tiers:
        settings = spec["scales"][tier]
        variant = (settings.get("variants") or list(variants))[0]
        first = expand_overrides(sweep_overrides(spec, tier, [], variants[variant]))[0]
        cfg = validated_run_config(first)
        assert cfg.scale == tier
        assert cfg.seed == _first_seed(spec, tier)


def _first_seed(spec: dict, tier: str) -> int:
    return seed_list(spec["scales"][tier].get("seeds", spec.get("seeds", [0])))[0]


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in available() if "leaderboard" in load_spec(n)])
def test_every_entrant_of_a_leaderboard_composes_at_every_tier(name):
    from rbmlab.experiment.leaderboard import sweep_spec

    for tier in SCALE_TIERS:
        board = sweep_spec(name, load_spec(name), tier)
        assert board["variants"] and all(v["grid"]["learner.lr"] for v in board["variants"].values())


SWEEPS = [
    n
    for n in available()
    if not {"runs_of", "bench", "gallery", "inference", "figure", "leaderboard"} & set(load_spec(n))
]


def _jobs(name: str, tier: str, every: bool):
    """The first job of each of the tier's variants, or (``every``) every value of every swept key
    (seeds: the first)."""
    spec = load_spec(name)
    chosen = spec["scales"][tier].get("variants")
    variants = spec.get("variants") or {"": []}
    for variant in chosen or variants:
        args = sweep_overrides(spec, tier, [], variants[variant])
        args = [a.split(",")[0] if a.startswith("seed=") else a for a in args]  # one seed
        combos = expand_overrides(args)
        yield from combos if every else combos[:1]


@pytest.mark.parametrize("name", SWEEPS)
def test_every_variant_of_the_smoke_tier_is_a_valid_run_config(name):
    """The first job of each variant, at the tier's first seed; the other tiers are the slow
    set's (every job of the reduced tier: tests/test_limits.py; of the paper tier: below)."""
    for combo in _jobs(name, "smoke", every=False):
        cfg = validated_run_config(combo)
        assert cfg.scale == "smoke" and cfg.seed == _first_seed(load_spec(name), "smoke")


@pytest.mark.slow
@pytest.mark.parametrize("name", SWEEPS)
def test_every_job_of_the_paper_tier_is_a_valid_run_config(name):
    """The paper tier is never run here: each of its jobs is validated (the other tiers have runs)."""
    for combo in _jobs(name, "paper", every=True):
        assert validated_run_config(combo).scale == "paper"


def test_a_tier_replaces_grid_values_and_keeps_the_rest():
    spec = {
        "overrides": ["a=1"],
        "grid": {"x": [1, 2, 3], "y": ["u", "v"]},
        "seeds": [0, 1],
        "scales": {"reduced": {"overrides": ["b=2"], "grid": {"x": [2]}, "seeds": [5]}},
    }
    assert sweep_overrides(spec, "reduced", ["c=3"]) == [
        "a=1",
        "b=2",
        "c=3",
        "x=2",
        "y=u,v",
        "seed=5",
        "scale=reduced",
    ]
    # a swept key on the command line narrows the sweep instead of being overridden by it
    assert sweep_overrides(spec, "reduced", ["y=v", "seed=7,8", "c=3"]) == [
        "a=1",
        "b=2",
        "c=3",
        "x=2",
        "y=v",
        "seed=7,8",
        "scale=reduced",
    ]


def test_seeds_may_be_a_count():
    spec = {"seeds": 3, "scales": {"smoke": {"overrides": []}, "reduced": {"overrides": [], "seeds": 2}}}
    assert sweep_overrides(spec, "smoke", []) == ["seed=0,1,2", "scale=smoke"]
    assert sweep_overrides(spec, "reduced", []) == ["seed=0,1", "scale=reduced"]


@pytest.mark.parametrize("seeds", [0, -2, 2.0, True, "3", [], [0, 1.5], None])
def test_bad_seeds_are_a_one_line_error(seeds):
    spec = {"seeds": seeds, "scales": {"smoke": {"overrides": []}}}
    with pytest.raises(RbmlabError, match="seeds"):
        sweep_overrides(spec, "smoke", [])


def test_dcp_artefacts_cover_the_paper():
    names = set(available())
    for artefact in (
        "figure-1",
        "figure-2",
        "figure-3",
        "figure-4",
        "figure-5",
        "figure-6a",
        "figure-6b",
        "figure-7a",
        "figure-7b",
        "table-1",
    ):
        assert f"dcp/{artefact}" in names
    assert set(load_spec("dcp/figure-6b")["scales"]["reduced"]["variants"]) <= set(
        load_spec("dcp/figure-6b")["variants"]
    )


def test_sweep_placeholders_name_this_and_another_experiments_sweep_at_the_same_scale(tmp_path):
    from rbmlab.errors import RbmlabError
    from rbmlab.experiment import _variants

    sweep = tmp_path / "frank_wolfe" / "figure-2b" / "reduced"
    jobs = _variants("frank_wolfe/figure-2b", load_spec("frank_wolfe/figure-2b"), "reduced", [], sweep)
    init = next(o for o in jobs["cd_rand"] if o.startswith('"model.init=') or o.startswith("model.init="))
    assert f"{tmp_path.resolve()}/frank_wolfe/figure-1b/reduced/cd_rand?model.n_hidden=" in init
    spec = {"overrides": ["model.init={sweep:nope/figure-9}/x.npz"], "scales": {"reduced": {}}}
    with pytest.raises(RbmlabError, match="unknown experiment 'nope/figure-9'"):
        _variants("frank_wolfe/figure-2b", spec, "reduced", [], sweep)


def test_variants_on_the_command_line_run_only_those(tmp_path):
    from rbmlab.errors import RbmlabError
    from rbmlab.experiment import _only_variants, _parse_argv, _variants

    spec = load_spec("crbm_bp/table-1")
    argv = ["scale=smoke", "variants=[mssvm, mle_bp]", "resume=true"]
    assert _parse_argv(argv) == ("smoke", ["resume=true"], False)
    jobs = _variants("crbm_bp/table-1", spec, "smoke", [], tmp_path, _only_variants(argv))
    assert list(jobs) == ["mle_bp", "mssvm"]  # in the experiment's order
    assert "learner=mle_bp" in jobs["mle_bp"]
    with pytest.raises(RbmlabError, match="variants= names unknown variant.*mle_pb; defined: lr, cd1"):
        _variants("crbm_bp/table-1", spec, "smoke", [], tmp_path, _only_variants(["variants=mle_pb"]))
    with pytest.raises(RbmlabError, match="name at least one variant"):
        _only_variants(["variants="])


def test_an_experiment_already_run_is_not_rerun_for_keys_it_does_not_have(tmp_path):
    """A gallery's command line (task.rate=0.1 for Table 1's runs) reaches Table 2 too, whose
    occlusion task has no rate: with Table 2's sweep present and no resume=true it is left alone."""
    from rbmlab.experiment.sweep import _resume_requested, _run_if_absent

    (tmp_path / "crbm_bp" / "table-2" / "smoke").mkdir(parents=True)
    assert not _run_if_absent(
        "crbm_bp/table-2", ["task.rate=0.1"], "smoke", ["task.rate=0.1"], tmp_path / "results", tmp_path
    )
    assert _resume_requested("crbm_bp/table-2", "smoke", ["task.rate=0.1", "resume=True"])
    assert not _resume_requested("crbm_bp/table-2", "smoke", ["resume=true", "resume=false"])


def test_a_report_key_the_report_does_not_know_is_a_one_line_error(tmp_path, monkeypatch):
    import rbmlab.experiment.sweep  # noqa: F401 - experiment.sweep below
    from rbmlab import experiment
    from rbmlab.errors import RbmlabError

    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "a.yaml").write_text("report: {metric: test_error, tabel_x: [1]}\n")
    (tmp_path / "p" / "b.yaml").write_text("runs_of: [p/c, p/nope]\n")
    (tmp_path / "p" / "c.yaml").write_text("report: {metric: test_error}\n")
    monkeypatch.setattr(experiment.spec, "EXPERIMENTS_DIR", tmp_path)
    with pytest.raises(RbmlabError, match="unknown report key.s. tabel_x; known: "):
        load_spec("p/a")
    with pytest.raises(RbmlabError, match="unknown experiment 'p/nope'"):
        experiment.sweep._runs_of("p/b", load_spec("p/b"))
    (tmp_path / "p" / "d.yaml").write_text("runs_of: [p/c, p/d]\n")
    with pytest.raises(RbmlabError, match="runs_of must be .* other experiments"):
        experiment.sweep._runs_of("p/d", load_spec("p/d"))
    (tmp_path / "p" / "e.yaml").write_text("runs_of: p/d\n")
    with pytest.raises(RbmlabError, match="runs_of names p/d, which has no runs of its own"):
        experiment.sweep._runs_of("p/e", load_spec("p/e"))
    (tmp_path / "p" / "f.yaml").write_text("report: {metric: x, ratios: [{of: [a, a], to: b}]}\n")
    with pytest.raises(RbmlabError, match="f.yaml: report: ratios entries must be .* each line once"):
        load_spec("p/f")
    (tmp_path / "p" / "g.yaml").write_text("report: {metric: x, where: [variant]}\n")
    with pytest.raises(RbmlabError, match="g.yaml: report.where must be"):
        load_spec("p/g")


def test_an_experiment_that_extends_another_merges_its_keys_onto_that_spec(tmp_path, monkeypatch):
    from rbmlab import experiment
    from rbmlab.errors import RbmlabError

    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "base.yaml").write_text(
        "title: base\noverrides: [a=1]\nvariants: {v: {overrides: [b=1], grid: {n: [1, 2]}, "
        "scales: {paper: {seeds: [0, 1]}}}, w: [c=1]}\nscales: {reduced: {overrides: [e=30]}}\n"
        "report: {metric: m}\n"
    )
    (tmp_path / "p" / "long.yaml").write_text(
        "extends: p/base\ntitle: long\nvariants: {v: {scales: {reduced: {grid: {n: [2]}}}}}\n"
        "scales: {reduced: {variants: [v], overrides: [e=100]}}\n"
    )
    (tmp_path / "p" / "loop.yaml").write_text("extends: p/loop2\nreport: {metric: m}\n")
    (tmp_path / "p" / "loop2.yaml").write_text("extends: p/loop\n")
    monkeypatch.setattr(experiment.spec, "EXPERIMENTS_DIR", tmp_path)
    spec = load_spec("p/long")
    assert spec["title"] == "long" and spec["overrides"] == ["a=1"] and "extends" not in spec
    assert spec["variants"]["w"] == ["c=1"]  # untouched
    assert spec["variants"]["v"] == {
        "overrides": ["b=1"],
        "grid": {"n": [1, 2]},
        "scales": {"paper": {"seeds": [0, 1]}, "reduced": {"grid": {"n": [2]}}},
    }  # merged at depth
    assert spec["scales"]["reduced"] == {"overrides": ["e=100"], "variants": ["v"]}  # lists replace
    assert load_spec("p/base")["scales"]["reduced"] == {"overrides": ["e=30"]}  # base unchanged
    with pytest.raises(
        RbmlabError, match=r"loop2.yaml: extends 'p/loop', a cycle \(p/loop -> p/loop2 -> p/loop\)"
    ):
        load_spec("p/loop")
    (tmp_path / "p" / "list.yaml").write_text("extends: [p/base]\n")
    with pytest.raises(RbmlabError, match=r"list.yaml: extends must name one experiment, got \['p/base'\]"):
        load_spec("p/list")
    (tmp_path / "p" / "gone.yaml").write_text("extends: p/nope\n")
    with pytest.raises(
        RbmlabError, match="gone.yaml: extends 'p/nope': experiment: unknown experiment 'p/nope'"
    ):
        load_spec("p/gone")


@pytest.mark.slow
def test_a_timing_experiment_writes_its_bench_rows_beside_the_papers_numbers(tmp_path):
    from rbmlab.experiment import run_experiment

    result = run_experiment("crbm_bp/bp-speed", ["scale=smoke"], results_root=tmp_path)
    text = (tmp_path / "crbm_bp" / "bp-speed_smoke.md").read_text()
    assert result["table"].name == "bp-speed_smoke.md" and text.startswith("# crbm_bp BP speed")
    assert "| paper: a few seconds in Matlab (10,000 × 2,000, to convergence) |" in text
    assert "| paper: 500 ms in Matlab, 297.4 s in libDAI (1000 × 500, 10 iterations) |" in text
    lines = text.splitlines()
    compared = [line for line in lines if line.startswith("| BP sum-product to convergence")]
    assert len(compared) == 1 and "converged: True" in compared[0] and "a few seconds" in compared[0]
    assert "297" not in compared[0]  # libDAI's 297.4 s is the 1000 x 500 case (paper Sec. 5.2)
    scan = [line for line in lines if line.startswith("| BP scan, ")]
    assert len(scan) == 2 and not any("297" in line or "paper" in line for line in scan)
    iterations = [int(re.search(r"\((\d+) iterations", line).group(1)) for line in scan]
    assert "W ~ N(0, 0.3²)" in scan[0] and "converged: True" in scan[0] and 1 <= iterations[0] < 20
    assert "W ~ N(0, 1²)" in scan[1] and "converged: False" in scan[1] and iterations[1] == 20  # its cap


def test_the_pmp_speed_table_times_both_solvers_and_their_ratio(tmp_path):
    from rbmlab.experiment import run_experiment

    rows = run_experiment("pmp/speed-log-z", ["scale=smoke"], results_root=tmp_path)["rows"]
    assert [r["name"].split(" ")[0] for r in rows] == ["PMP,", "MPLP", "MPLP"]
    assert rows[2]["unit"] == "ratio" and rows[2]["median"] > 0
    assert "paper: 500× slower at 15 × 15" in (tmp_path / "pmp" / "speed-log-z_smoke.md").read_text()


def test_the_pmp_legend_table_times_every_sampler_against_pmp(tmp_path):
    from rbmlab.experiment import run_experiment

    rows = run_experiment("pmp/speed", ["scale=smoke"], results_root=tmp_path)["rows"]
    ratios = {
        r["name"].split(" (")[0] + " " + r["name"].split(" (")[1].split(":")[0]: r
        for r in rows
        if r["unit"] == "ratio"
    }
    assert sorted(ratios) == sorted(
        [
            "Gibbs / PMP zeros",
            "GWG / PMP zeros",
            "Gibbs / PMP lattice",
            "GWG / PMP lattice",
            "Gibbs / PMP sweeps alone zeros",
            "GWG / PMP sweeps alone zeros",
            "Gibbs / PMP sweeps alone lattice",
            "GWG / PMP sweeps alone lattice",
            "Gibbs-reset / PMP rbm",
            "PCD-100 / PMP rbm",
            "PCD-1 / PMP rbm",
            "LP / PMP lp",
        ]
    )
    assert all(r["median"] > 0 and r["target"].startswith("paper: ") for r in ratios.values())
    seconds = {
        r["name"].split(" (")[0] + " " + r["name"].split(" (")[1].split(":")[0]: r["median"]
        for r in rows
        if r["unit"] == "s"
    }
    assert seconds["PMP set-up alone, the factor graph zeros"] > 0  # PMP's set-up timed apart
    # one block-Gibbs sweep is cheaper than the five of the same chains
    assert ratios["PCD-1 / PMP rbm"]["median"] < ratios["PCD-100 / PMP rbm"]["median"]


def test_an_unknown_bench_part_is_a_one_line_error(tmp_path, monkeypatch):
    from rbmlab import experiment
    from rbmlab.errors import RbmlabError

    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "t.yaml").write_text("bench: {part: nope, scales: {smoke: {}}}\n")
    monkeypatch.setattr(experiment.spec, "EXPERIMENTS_DIR", tmp_path)
    with pytest.raises(RbmlabError, match="experiment p/t: bench.part: unknown bench part 'nope'"):
        experiment.run_experiment("p/t", ["scale=smoke"], results_root=tmp_path / "r")


def test_an_option_a_bench_part_does_not_take_is_a_one_line_error(tmp_path, monkeypatch):
    from rbmlab import experiment
    from rbmlab.errors import RbmlabError

    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "t.yaml").write_text(
        "bench: {part: bp_speed, scales: {smoke: {small: [10, 5, 1], sizes: [1]}}}\n"
    )
    monkeypatch.setattr(experiment.spec, "EXPERIMENTS_DIR", tmp_path)
    with pytest.raises(
        RbmlabError,
        match=r"p/t: bench.scales.smoke: unknown option\(s\) sizes of part "
        r"bp_speed; known: small, large, scan, scan_max_iter",
    ):
        experiment.run_experiment("p/t", ["scale=smoke"], results_root=tmp_path)


@pytest.mark.slow  # about 6 s
def test_a_sample_gallery_draws_each_models_own_sampler_beside_the_data(tmp_path):
    """pmp Figure 7 (left) at smoke scale: a data row and one row of samples per trained model,
    drawn by the sampler its mmd evaluator names (PMP or block Gibbs), the same on a rerun."""
    import numpy as np

    from rbmlab.experiment import run_experiment
    from rbmlab.inference import INFERENCE
    from rbmlab.report import gallery
    from rbmlab.report.gallery import Row, make_gallery

    outputs = tmp_path / "outputs"
    paths = run_experiment(
        "pmp/figure-7-samples", ["scale=smoke"], results_root=tmp_path, outputs_root=outputs
    )
    assert paths["plot"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    table = paths["table"].read_text()
    assert "| PMP | samples |" in table and "pmp, 2 sweeps" in table and "block_gibbs, 2 sweeps" in table
    assert "draws from fresh states, seed 0" in table
    run = outputs / "pmp" / "figure-7" / "smoke" / "pmp" / "0"
    rows = [Row("data", run, "data"), Row("s", run, "samples", 3), Row("s again", run, "samples", 3)]
    images = {r.key: gallery.generative_images(r.run_dir, "train", 6, r.show, r.sweeps) for r in rows}
    assert len(images) == 2  # the two sample rows are one draw
    data, samples = images[rows[0].key].images, images[rows[1].key].images
    assert data.shape == samples.shape == (6, 784) and set(np.unique(samples)) <= {0.0, 1.0}
    again = gallery.generative_images(run, "train", 6, "samples", 3).images
    np.testing.assert_array_equal(samples, again)  # a fixed seed
    assert make_gallery(rows, "train", 6, "t", tmp_path / "g", "cmd")["plot"].is_file()
    # a row's own sampler overrides the run's (pmp Figure 8 samples each model both ways)
    gibbs_run = outputs / "pmp" / "figure-7" / "smoke" / "gibbs_reset" / "0"
    own = gallery.generative_images(gibbs_run, "train", 6, "samples", 3)
    by_pmp = gallery.generative_images(gibbs_run, "train", 6, "samples", 3, INFERENCE.parse("pmp"))
    assert own.inference == "block_gibbs, 3 sweeps" and by_pmp.inference == "pmp, 3 sweeps"
    assert not np.array_equal(own.images, by_pmp.images)
    assert (
        Row("a", gibbs_run, "samples", 3).key != Row("b", gibbs_run, "samples", 3, INFERENCE.parse("pmp")).key
    )
