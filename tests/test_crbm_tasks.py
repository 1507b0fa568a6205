"""crbm_bp's tasks and its plain inference beside BP: flip and occlusion corruptions with their
changed-pixel masks, the pooled "All" / "Changed" errors, and mean field against enumeration."""

from __future__ import annotations

import numpy as np
import pytest

from rbmlab.data.corruption import flip, occlude, pixel_errors
from rbmlab.inference.mean_field import mean_field, mean_field_log_z
from tests.conftest import all_binary


def images(n=400, d=784, seed=0):
    return (np.random.default_rng(seed).random((n, d)) < 0.2).astype(np.float32)


def test_flip_changes_an_exact_count_of_uniform_positions_per_image():
    clean = images()
    task = flip(clean, 0.1, np.random.default_rng(1))
    assert (task.mask.sum(axis=1) == 78).all()  # round(0.1 · 784)
    np.testing.assert_array_equal(task.mask, task.inputs != clean)
    assert task.targets is clean and task.inputs.dtype == np.float32
    # every position is as likely: the per-position rate over 400 images stays near 0.1
    rate = task.mask.mean(axis=0)
    assert abs(rate.mean() - 78 / 784) < 1e-12 and rate.std() < 0.03
    again = flip(clean, 0.1, np.random.default_rng(1))
    np.testing.assert_array_equal(again.inputs, task.inputs)  # fixed once per seed
    assert (flip(clean, 0.2, np.random.default_rng(1)).mask.sum(axis=1) == 157).all()


@pytest.mark.parametrize("size, value", [(8, 0.0), (12, 1.0), (28, 0.0)])
def test_occlusion_sets_one_square_patch_that_fits_and_masks_what_changed(size, value):
    clean = images(300)
    task = occlude(clean, (28, 28), size, value, np.random.default_rng(2))
    for x, v, m in zip(
        task.inputs.reshape(-1, 28, 28), clean.reshape(-1, 28, 28), task.mask.reshape(-1, 28, 28)
    ):
        differs = np.argwhere(x != v)
        if len(differs):  # changed pixels lie in one size × size square
            assert (differs.max(0) - differs.min(0) < size).all()
        np.testing.assert_array_equal(m, x != v)
    # a 28 × 28 patch is the whole image: x ≡ value (the CRBM becomes a plain RBM)
    if size == 28:
        assert (task.inputs == value).all()
    else:
        corners = set()
        rng = np.random.default_rng(2)  # the corners occlude drew: top, then left
        top, left = rng.integers(0, 29 - size, 300), rng.integers(0, 29 - size, 300)
        for t, l, x in zip(top, left, task.inputs.reshape(-1, 28, 28)):
            assert (x[t : t + size, l : l + size] == value).all()
            corners.add((t, l))
        assert len({t for t, _ in corners}) == 29 - size  # every row offset drawn


def test_a_patch_larger_than_the_image_is_refused():
    with pytest.raises(ValueError, match="patch size 29 does not fit in a 28×28 image"):
        occlude(images(2), (28, 28), 29, 0.0, np.random.default_rng(0))


def test_pixel_errors_pool_over_the_whole_set():
    target = np.array([[1, 0, 1, 0], [0, 0, 0, 0]])
    changed = np.array([[1, 1, 0, 0], [0, 0, 0, 0]], bool)  # the second image changed nothing
    predicted = np.array([[0, 0, 1, 1], [0, 1, 0, 0]])
    errors = pixel_errors(predicted, target, changed)
    assert errors == {"all": 100 * 3 / 8, "changed": 100 * 1 / 2}
    assert np.isnan(pixel_errors(predicted, target, np.zeros_like(changed))["changed"])


def test_mean_field_is_a_lower_bound_on_log_z_and_near_exact_when_coupling_is_weak():
    rng = np.random.default_rng(3)
    V, H = all_binary(6), all_binary(4)
    for scale, atol in ((0.02, 1e-3), (1.0, None)):
        W = scale * rng.standard_normal((6, 4))
        b_v, b_h = rng.standard_normal((3, 6)), rng.standard_normal((3, 4))
        result = mean_field(W, b_v, b_h, max_iter=500, tol=1e-12)
        assert result.converged.all()
        bound = mean_field_log_z(W, b_v, b_h, result)
        for n in range(3):
            logp = V @ W @ H.T + (V @ b_v[n])[:, None] + (H @ b_h[n])[None, :]
            log_z = np.logaddexp.reduce(logp.ravel())
            assert bound[n] <= log_z + 1e-10
            if atol:
                p = np.exp(logp - log_z)
                np.testing.assert_allclose(result.tau_v[n], V.T @ p.sum(1), atol=atol)
        # the fixed point satisfies both mean-field equations
        np.testing.assert_allclose(result.tau_v, 1 / (1 + np.exp(-(result.tau_h @ W.T + b_v))), atol=1e-10)


def test_a_task_corrupts_every_split_once_and_the_model_starts_from_the_clean_base_rates():
    from rbmlab.hydra_app import validated_run_config
    from rbmlab.run.runner import prepare

    base = ["dataset=bars_stripes", "evaluator=exact", "evaluator.splits=[test]", "model.n_hidden=2"]
    run = prepare(validated_run_config([*base, "task=flip", "task.rate=0.25"]))
    train, test = run.train, run.splits["test"]
    assert (train.mask.sum(axis=1) == 2).all() and (test.mask.sum(axis=1) == 2).all()  # round(0.25 · 9)
    np.testing.assert_array_equal(train.mask, train.inputs != train.targets)
    np.testing.assert_allclose(run.data_mean, train.targets.mean(axis=0))
    again = prepare(validated_run_config([*base, "task=flip", "task.rate=0.25", "seed=7"]))
    np.testing.assert_array_equal(again.splits["test"].inputs, test.inputs)  # the task's seed, not the run's
    plain = validated_run_config(base)
    assert plain.hash() == validated_run_config([*base, "task=none"]).hash()
    assert plain.hash() != validated_run_config([*base, "task=flip"]).hash()
    assert prepare(plain).train.mask is None


def test_early_stopping_on_validation_error_reports_the_test_error_of_the_best_valid_epoch():
    import pandas as pd

    from rbmlab.evaluators.metrics import higher_is_better, metric_spec
    from rbmlab.run.early_stopping import best_on_validation, can_select

    rows = pd.DataFrame(
        {
            "epoch": [0, 1, 2, 3],
            "valid_pixel_error": [9.0, 4.0, 5.0, float("nan")],
            "test_pixel_error": [8.0, 4.5, 3.0, 2.0],
            "inference_converged": [0, 1, 1, 1],
        }
    )
    record = best_on_validation(rows, metric_spec("valid_pixel_error"))
    assert record == {
        "epoch": 1,
        "rule": "the best valid_pixel_error",
        "valid_pixel_error": 4.0,
        "test_pixel_error": 4.5,
    }
    assert (
        best_on_validation(rows.drop(columns="valid_pixel_error"), metric_spec("valid_pixel_error")) is None
    )
    # a run finds out from metrics.csv's header whether there is anything to select
    assert can_select(list(rows.columns), metric_spec("valid_pixel_error"))
    assert not can_select(list(rows.columns), metric_spec("test_error"))
    assert not can_select(["epoch", "test_pixel_error"], metric_spec("valid_pixel_error"))
    # a report over early_stopping.test_pixel_error knows that lower is better
    assert not higher_is_better("early_stopping.test_pixel_error") and higher_is_better(
        "early_stopping.n_hidden"
    )


def test_a_gallery_shows_a_runs_inputs_targets_and_its_own_predictions(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the table names each run relative to the working directory
    from rbmlab.errors import RbmlabError
    from rbmlab.evaluators.pixel_error import predict
    from rbmlab.hydra_app import validated_run_config
    from rbmlab.report.gallery import Row, find_run, make_gallery
    from rbmlab.run.checkpoint import load_checkpoint
    from rbmlab.run.runner import prepare, train

    base = [
        "model=crbm",
        "model.n_hidden=4",
        "dataset=bars_stripes",
        "task=flip",
        "task.rate=0.25",
        "evaluator=pixel_error",
        "evaluator.splits=[test]",
        "learner=mle_bp",
        "train.epochs=1",
    ]
    for n, rate in enumerate((0.25, 0.5)):
        cfg = validated_run_config([*base, f"task.rate={rate}"])
        train(cfg, tmp_path / "mle_bp" / str(n))
    run_dir = find_run(tmp_path, {"variant": "mle_bp", "task.rate": 0.25})
    assert run_dir == tmp_path / "mle_bp" / "0"
    with pytest.raises(RbmlabError, match="2 runs .* match any"):
        find_run(tmp_path, {"variant": "mle_bp"})
    with pytest.raises(RbmlabError, match="0 runs .* match task.rate=0.1"):
        find_run(tmp_path, {"variant": "mle_bp", "task.rate": 0.1})
    with pytest.raises(RbmlabError, match="no run in .* has a config key 'task.rat'"):
        find_run(tmp_path, {"variant": "mle_bp", "task.rat": 0.1})
    (tmp_path / "mle_bp" / "1" / "summary.json").unlink()
    with pytest.raises(RbmlabError, match="mle_bp/1 has no summary.json"):
        make_gallery([Row("x", tmp_path / "mle_bp" / "1", "input")], "test", 2, "t", tmp_path / "g", "cmd")
    rows = [
        Row("truth", run_dir, "target"),
        Row("noisy", run_dir, "input"),
        Row("ours", run_dir, "prediction"),
    ]
    paths = make_gallery(rows, "test", 5, "a gallery", tmp_path / "out" / "figure", "cmd")
    assert paths["plot"].read_bytes().startswith(b"\x89PNG")
    test = prepare(validated_run_config(base)).splits["test"]
    model, _, _ = load_checkpoint(run_dir / "checkpoint.npz")
    expected, _ = predict(model, test.inputs[:5], "sum", 8, 1e-3)  # matched: T = 7 + 1 epoch
    error = 100 * (expected != test.targets[:5]).mean()
    assert f"| ours | prediction | mle_bp/0 | 1 |  | sum | {error:.2f} |" in paths["table"].read_text()
    assert "draws from fresh states" not in paths["table"].read_text()  # no samples row here
    # the note's first line is the shown runs' header (rbmlab.report.header)
    assert (
        paths["table"].read_text().splitlines()[0].startswith("_")
        and " · 1 run · " in paths["table"].read_text()
    )


ROW = {"label": "a", "show": "input", "run": {"experiment": "crbm_bp/table-1"}}


@pytest.mark.parametrize(
    "gallery, message",
    [
        ({"rows": []}, "non-empty list"),
        ({"rows": [{**ROW, "show": "truth"}]}, "show must be one of"),
        ({"rows": [{"label": "a", "show": "input"}]}, r"rows\[0\] must have the keys label, run, show"),
        (
            {"rows": [{**ROW, "sweeps": 5}]},
            r"rows\[0\].sweeps must be a non-negative integer, on a show=samples",
        ),
        ({"rows": [{**ROW, "show": "samples", "sweeps": -1}]}, r"rows\[0\].sweeps must be a non-negative"),
        ({"rows": [{**ROW, "run": "crbm_bp/table-1"}]}, "must be a mapping with an experiment"),
        ({"rows": [{**ROW, "sampler": "pmp"}]}, r"rows\[0\].sampler is for a show=samples row"),
        ({"rows": [{**ROW, "show": "samples", "sampler": "metropolis"}]}, r"rows\[0\].sampler.*metropolis"),
        ({"rows": [ROW], "exmples": 3}, "unknown gallery key.*exmples"),
        ({"rows": [ROW], "examples": -3}, "gallery.examples must be a positive integer"),
        ({"rows": [ROW], "split": "dev"}, "gallery.split must be train, valid or test"),
        ([ROW], "gallery must be a mapping"),
    ],
)
def test_a_bad_gallery_spec_is_a_one_line_error_naming_the_key(gallery, message):
    from rbmlab.errors import RbmlabError
    from rbmlab.report.gallery import check_gallery

    with pytest.raises(RbmlabError, match=message):
        check_gallery(gallery, "experiment: x.yaml")


def test_a_gallery_predicts_with_the_early_stopped_model_when_the_run_has_one(tmp_path):
    """Under train.stop_rule the tables score selected.npz (the best validation epoch, with its
    inference budget); the gallery shows that model's predictions, not the last epoch's."""
    from rbmlab.evaluators.pixel_error import predict
    from rbmlab.hydra_app import validated_run_config
    from rbmlab.report.gallery import Row, make_gallery
    from rbmlab.run.checkpoint import load_checkpoint
    from rbmlab.run.runner import prepare, train

    base = [
        "model=crbm",
        "model.n_hidden=4",
        "dataset=caltech101",
        "dataset.n_train=20",
        "task=flip",
        "task.rate=0.25",
        "evaluator=pixel_error",
        "evaluator.splits=[valid,test]",
        "evaluator.max_examples=20",
        "learner=mle_bp",
        "learner.lr=3.0",
        "train.epochs=6",
        "train.stop_rule=valid",
        "train.stop_metric=valid_pixel_error",
        "train.patience=1",
    ]
    train(validated_run_config(base), tmp_path / "run")
    selected_model, meta, _ = load_checkpoint(tmp_path / "run" / "selected.npz")
    last_model, last, _ = load_checkpoint(tmp_path / "run" / "checkpoint.npz")
    paths = make_gallery([Row("ours", tmp_path / "run", "prediction")], "test", 5, "g", tmp_path / "g", "cmd")
    test = prepare(validated_run_config(base)).splits["test"]
    expected, _ = predict(selected_model, test.inputs[:5], "sum", meta["inference_iterations"], 1e-3)
    error = 100 * (expected != test.targets[:5]).mean()
    table = paths["table"].read_text()
    # a run outside the working directory is named by its folder (rbmlab.storage.portable)
    assert f"| ours | prediction | run | {meta['epoch']} | {meta['epoch']} | sum | {error:.2f} |" in table
    assert meta["epoch"] != last["epoch"]
