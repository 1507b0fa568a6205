"""Every checkpoint format the project wrote before the layered family still loads.

tests/fixtures/checkpoints/<commit>/ holds small models of every family of three commits, saved
by those commits' own code (tests/fixtures/checkpoints/make.py): 9dabc20 (before the families
declared their arrays), 416fd88 (issue 58 filed: a DBM of fixed depth, W3/b3 of width 0 for two
hidden layers) and fc2c2f7 (the last before the layered family: unit-type settings on the DBM,
Potts RBMs). Each must load with today's code as the model it was: every array it holds with a
layer, bit for bit, under its name; its settings; its trial axis; and it saves and loads again
unchanged.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rbmlab.models.dbm import DBM
from rbmlab.run.checkpoint import load_checkpoint, save_checkpoint

ROOT = Path(__file__).resolve().parent / "fixtures" / "checkpoints"
FILES = sorted(ROOT.glob("*/*.npz"))
COMMITS = ("9dabc20", "416fd88", "fc2c2f7")


def test_the_fixtures_cover_every_commit_and_family():
    found = {(p.parent.name, p.stem.split("-")[0]) for p in FILES}
    families = {"rbm", "ising", "crbm", "grbm", "dbm"}
    assert {(c, f) for c in COMMITS for f in families} <= found
    assert ("fc2c2f7", "fractional_rbm") in found  # registered after 416fd88


@pytest.mark.parametrize("path", FILES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_committed_format_loads_as_the_model_it_was(path, tmp_path):
    with np.load(path) as f:
        saved = dict(f)
    model, meta, _ = load_checkpoint(path)
    assert model.family == str(saved["family"]) and meta["epoch"] == 3
    arrays = model.arrays()
    for name, a in saved.items():
        if a.dtype.kind == "f":  # a parameter array
            if a.size == 0 and isinstance(model, DBM):  # the fixed-depth format's absent layer
                assert name in ("W3", "b3") and name not in arrays
                continue
            np.testing.assert_array_equal(arrays[name], a, err_msg=name)
            assert arrays[name].dtype == a.dtype
        elif name not in ("family", "meta"):  # a setting
            assert str(model.settings()[name]) == str(a), name
    assert model.n_trials == (2 if path.stem.endswith("trials2") else 0)
    if isinstance(model, DBM):
        depth = 3 if "three-layers" in path.stem else 2
        assert model.depth == depth and set(arrays) == {f"W{l}" for l in range(1, depth + 1)} | {
            f"b{l}" for l in range(depth + 1)
        }
    back, _, _ = load_checkpoint(save_checkpoint(tmp_path / "again.npz", model))
    assert type(back) is type(model) and back.settings() == model.settings()
    for name, a in arrays.items():
        np.testing.assert_array_equal(back.arrays()[name], a)


def test_a_two_layer_dbm_of_the_fixed_depth_format_is_the_same_distribution():
    """Its empty third layer dropped, the machine is unchanged: log Z by enumeration equals that
    of the machine made from its non-empty arrays alone."""
    with np.load(ROOT / "416fd88" / "dbm-two-layers.npz") as f:
        saved = dict(f)
    model, _, _ = load_checkpoint(ROOT / "416fd88" / "dbm-two-layers.npz")
    direct = DBM.of([saved["W1"], saved["W2"]], [saved["b0"], saved["b1"], saved["b2"]])
    assert model.exact_log_partition() == direct.exact_log_partition()
