"""Dataset ``file``: a user's own matrix from a .npy, .npz or .csv file (``dataset.path``).

Rows are examples, columns are visible units. A .npz holds ``train`` and optionally ``valid``,
``test`` and integer labels ``train_labels``, ``valid_labels``, ``test_labels``; a .npy or .csv
holds one matrix. A split the file does not hold is carved out of train by a seeded permutation
(``test_fraction``, ``valid_fraction``); test_fraction = 0 makes test the whole training matrix
(as bars_stripes: tiny data whose fit is the question), valid_fraction = 0 leaves no valid split.

A run records the file's absolute path and sha256 (:func:`resolve`); its identity is the sha256,
not the path (DatasetSpec.location_options), so a moved or copied file is the same data.
Every problem with the file is one line naming ``dataset.path``: missing, unreadable, not a 2-D
numeric matrix, NaN or inf or beyond float32's range (the precision runs compute in), a .npz
without ``train``, labels that do not fit. A .npy or .npz is first judged by its headers (shape,
dtype, size against rbmlab.limits, truncation) and a .csv by its size, before it is hashed or read.
"""

from __future__ import annotations

import csv
import functools
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from rbmlab import limits
from rbmlab.data.dataset import SPLITS, Dataset
from rbmlab.data.files import settled, sha256_of
from rbmlab.data.npy_header import BadHeader, declared_arrays
from rbmlab.data.transforms import as_float32
from rbmlab.errors import RbmlabError
from rbmlab.limits import exceeds
from rbmlab.storage.fileio import READ_ERRORS
from rbmlab.validation import option, option_error

NAME = "file"
FORMATS = (".npy", ".npz", ".csv")
BINARIZE = ("none", "threshold", "stochastic")
NPZ_ARRAYS = (*SPLITS, *(f"{s}_labels" for s in SPLITS))


@dataclass(frozen=True)
class FileOptions:
    """Options of dataset ``file``."""

    path: str | None = option(
        None,
        "the data: .npy or .csv (one matrix, rows = examples) or .npz "
        "(train, optional valid / test, <split>_labels)",
    )
    sha256: str | None = option(None, "the file's sha256, recorded by a run; given, the file must have it")
    test_fraction: float = option(
        0.1,
        "rows of train held out as test when the file has no test (0: test = the whole training matrix)",
        lo=0.0,
        hi=1.0,
        open_hi=True,
        label="fraction held out as test",
    )
    valid_fraction: float = option(
        0.0,
        "rows of train held out as valid when the file has no valid (0: no valid split)",
        lo=0.0,
        hi=1.0,
        open_hi=True,
    )
    split_seed: int = option(0, "seed of the permutation the held-out rows are drawn by", lo=0)
    header: bool | None = option(
        None,
        "csv: the first line names the columns (null: detected, a first line with no field that "
        "is a number; one that mixes numbers and text is refused)",
    )
    delimiter: str = option(",", "csv: the field separator")
    binarize: str = option(
        "none",
        "none (the values as they are) | threshold (1 where a value > threshold) | stochastic (1 with "
        "probability the value, values in [0, 1]: one fixed draw per split)",
        choices=BINARIZE,
        neutral="none",
        label="binarisation",
    )
    threshold: float = option(0.5, "binarize=threshold: 1 where a value is above it", neutral=0.5)
    binarize_seed: int = option(0, "binarize=stochastic: the seed of the draw", lo=0, neutral=0)

    def __post_init__(self) -> None:
        if self.binarize != "threshold" and self.threshold != 0.5:
            raise option_error("threshold", f"applies to binarize=threshold (binarize is {self.binarize})")
        if self.binarize != "stochastic" and self.binarize_seed != 0:
            raise option_error(
                "binarize_seed", f"applies to binarize=stochastic (binarize is {self.binarize})"
            )
        if not self.path:
            raise option_error(
                "path", f"missing; name your data file, dataset.path=FILE ({', '.join(FORMATS)})"
            )
        if Path(self.path).suffix.lower() not in FORMATS:
            raise option_error("path", f"{self.path}: expected a {', '.join(FORMATS)} file")
        if self.test_fraction + self.valid_fraction >= 1:
            raise option_error(
                "valid_fraction",
                f"test_fraction + valid_fraction = "
                f"{self.test_fraction + self.valid_fraction:g} leaves "
                "no training rows",
            )
        if len(self.delimiter) != 1:
            raise option_error("delimiter", f"must be one character, got {self.delimiter!r}")

    @property
    def dimension(self) -> int:
        """Columns of the matrix (the file is read once, then cached)."""
        return int(read(self)["train"].shape[1])


# ---------------------------------------------------------------- reading, cached per file state
def _bad(path: Any, problem: str) -> RbmlabError:
    return option_error("path", f"{path}: {problem}")


def _identity(path: Path) -> tuple[str, int, int, int, int, int]:
    """The file's path and content identity (as rbmlab.data.files keys its hash memo; what is read
    of it is cached only once it is settled there, by its ctime, the last entry); a one-line error
    for a file that is not there."""
    try:
        st = path.stat()
    except OSError as e:
        raise _bad(path, f"cannot read ({e.strerror or type(e).__name__})") from None
    if not path.is_file():
        raise _bad(path, "is not a file")
    return str(path), st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns


def absolute(path: str) -> Path:
    """``path`` with ``~`` expanded, absolute against the working directory."""
    return Path(os.path.abspath(Path(path).expanduser()))


@functools.lru_cache(maxsize=8)
def _sha256(identity: tuple) -> str:
    return sha256_of(Path(identity[0]))


def file_sha256(path: str) -> str:
    """The sha256 of the file at ``path``, hashed once per content identity."""
    identity = _identity(absolute(path))
    check_declared(Path(identity[0]))  # a file too large or of the wrong kind is not hashed
    return (_sha256 if settled(identity[5]) else _sha256.__wrapped__)(identity)


def _number(field: str) -> float | None:
    try:
        return float(field)
    except ValueError:
        return None


def _read_csv(path: Path, header: bool | None, delimiter: str) -> np.ndarray:
    """A .csv of numbers; a first line with no field that is a number is a header when
    ``header`` is None. Blank lines are skipped; an error names the line and the column."""
    rows: list[list[float]] = []
    try:
        with open(
            path, newline="", encoding="utf-8-sig"
        ) as f:  # -sig: a BOM (spreadsheet exports) is no field
            for line, fields in enumerate(csv.reader(f, delimiter=delimiter), 1):
                values = [_number(x) for x in fields]
                if line == 1 and header is None and None in values and any(v is not None for v in values):
                    column = values.index(None)
                    raise option_error(
                        "header",
                        f"{path}: line 1 mixes numbers and text ({fields[column]!r} in column "
                        f"{column + 1}): a header names every column; dataset.header=true skips it "
                        "as one, dataset.header=false reads it as data",
                    )
                if line == 1 and (header or (header is None and None in values)):
                    continue
                if not fields:
                    continue
                if None in values:
                    column = values.index(None)
                    raise _bad(
                        path,
                        f"line {line}, column {column + 1}: {fields[column]!r} is not a "
                        "number (a .csv of numbers only, with at most one header line)",
                    )
                if rows and len(values) != len(rows[0]):
                    raise _bad(path, f"line {line} has {len(values)} fields, the first row {len(rows[0])}")
                rows.append(values)  # type: ignore[arg-type]
    except UnicodeDecodeError:
        raise _bad(path, "is not a text file (a .csv of numbers)") from None
    except csv.Error as e:
        raise _bad(path, f"not a readable .csv file ({e})") from None
    return np.array(rows, dtype=np.float64).reshape(len(rows), len(rows[0]) if rows else 0)


def _read_npz(path: Path) -> dict[str, np.ndarray]:
    with np.load(path, allow_pickle=False) as z:  # its names checked by check_declared
        return {k: z[k] for k in z.files}


def _npz_names_problem(names: list[str]) -> str | None:
    if "train" not in names:
        return (
            f"has no array 'train' (it holds {', '.join(names) or 'none'}); a .npz "
            f"holds train and optionally {', '.join(a for a in NPZ_ARRAYS if a != 'train')}"
        )
    other = [k for k in names if k not in NPZ_ARRAYS]
    if other:
        return f"holds arrays {', '.join(other)} that rbmlab does not read; expected {', '.join(NPZ_ARRAYS)}"
    return None


@functools.lru_cache(maxsize=2)
def _read(identity: tuple, header: bool | None, delimiter: str) -> dict[str, np.ndarray]:
    path = Path(identity[0])
    suffix = path.suffix.lower()
    try:
        if suffix == ".csv":
            arrays = {"train": _read_csv(path, header, delimiter)}
        elif suffix == ".npz":
            arrays = _read_npz(path)
        else:
            arrays = {"train": np.load(path, allow_pickle=False)}
    except RbmlabError:
        raise
    except READ_ERRORS as e:
        raise _bad(
            path, f"not a readable {suffix} file ({' '.join(str(e).split()) or type(e).__name__})"
        ) from None
    checked = {k: _checked(path, k, a) for k, a in arrays.items() if not k.endswith("_labels")}
    checked.update({k: _labels(path, k, a, checked) for k, a in arrays.items() if k.endswith("_labels")})
    for a in checked.values():
        a.setflags(write=False)  # cached: every load copies
    return checked


def read(opts: FileOptions) -> dict[str, np.ndarray]:
    """The checked arrays of ``opts.path`` (float64 matrices, int64 labels), by name."""
    identity = _identity(absolute(opts.path))  # type: ignore[arg-type]
    check_declared(Path(identity[0]))
    return (_read if settled(identity[5]) else _read.__wrapped__)(identity, opts.header, opts.delimiter)


def _where(path: Path, name: str) -> str:
    return "" if path.suffix.lower() != ".npz" else f"array {name} "


def _matrix_problem(where: str, shape: tuple[int, ...], dtype: np.dtype) -> str | None:
    """What is wrong with a split's matrix of this shape and dtype, or None: real numbers, 2-D,
    at least one row and column, within the size limits."""
    if dtype.kind not in "biuf":  # bool, signed, unsigned, floating (not complex, text, objects)
        return f"{where}holds {dtype} values, not real numbers"
    if len(shape) != 2:
        return (
            f"{where}is a {len(shape)}-D array of shape {shape}; expected a 2-D matrix, "
            "rows = examples, columns = visible units"
        )
    if 0 in shape:
        return f"{where}has shape {shape}: no {'rows' if shape[0] == 0 else 'columns'}"
    return exceeds(limits.EXAMPLES, shape[0], f"{where}rows") or exceeds(
        limits.ARRAY_ELEMENTS, shape[0] * shape[1], f"{where}rows x columns"
    )


def check_declared(path: Path) -> None:
    """Shape, dtype and size as the file declares them (a .npy or .npz's headers, a .csv's byte
    count), before the file is hashed or read: a file too large, truncated or of the wrong kind
    is refused in milliseconds."""
    if path.suffix.lower() == ".csv":
        problem = exceeds(limits.CSV_BYTES, path.stat().st_size, "its size in bytes")
        if problem:
            raise _bad(path, f"{problem}; save larger data as a .npy")
        return
    try:
        arrays = declared_arrays(path)
    except BadHeader as e:
        raise _bad(path, f"not a readable {path.suffix.lower()} file: {e}") from None
    except READ_ERRORS as e:
        raise _bad(path, f"cannot read ({' '.join(str(e).split()) or type(e).__name__})") from None
    problem = _npz_names_problem(list(arrays)) if path.suffix.lower() == ".npz" else None
    if problem:
        raise _bad(path, problem)
    for name, declared in arrays.items():
        where = _where(path, name)
        problem = None if name.endswith("_labels") else _matrix_problem(where, declared.shape, declared.dtype)
        if problem:
            raise _bad(path, problem)
        if declared.truncated:
            raise _bad(
                path,
                f"{where}is truncated: its header declares {declared.dtype} of shape {declared.shape}, "
                "more bytes than the file holds",
            )


F32_MAX = float(np.finfo(np.float32).max)


def _checked(path: Path, name: str, a: np.ndarray) -> np.ndarray:
    """A split's matrix: 2-D, numeric, at least one row and column, finite in float32 (the
    precision a run computes in: a value finite in float64 but beyond float32's range would
    become inf on the cast)."""
    where = _where(path, name)
    problem = _matrix_problem(where, a.shape, a.dtype)
    if problem:
        raise _bad(path, problem)
    a = np.asarray(a, dtype=np.float64)
    bad = ~np.isfinite(a)
    if bad.any():
        row, col = np.argwhere(bad)[0]
        raise _bad(
            path,
            f"{where}holds {int(bad.sum())} NaN or infinite value(s), the first "
            f"{a[row, col]} at row {row}, column {col}",
        )
    huge = np.abs(a) > F32_MAX
    if huge.any():
        row, col = np.argwhere(huge)[0]
        raise _bad(
            path,
            f"{where}holds {int(huge.sum())} value(s) beyond float32's range (|x| > {F32_MAX:.4g}), "
            f"the precision runs compute in; the first {a[row, col]:g} at row {row}, column {col}",
        )
    return a


def _labels(path: Path, name: str, y: np.ndarray, matrices: dict[str, np.ndarray]) -> np.ndarray:
    """A split's labels: one integer per row of its matrix."""
    split = name.removesuffix("_labels")
    if split not in matrices:
        raise _bad(path, f"holds {name} but no {split} matrix")
    rows = matrices[split].shape[0]
    if y.shape != (rows,):
        raise _bad(
            path, f"array {name} has shape {y.shape}; expected ({rows},), one label per row of {split}"
        )
    if not (
        np.issubdtype(y.dtype, np.integer)
        or (np.issubdtype(y.dtype, np.floating) and np.all(np.isfinite(y)) and np.all(y == np.round(y)))
    ):
        raise _bad(path, f"array {name} holds {y.dtype} values; labels are integers")
    return y.astype(np.int64)


# ---------------------------------------------------------------- the run's record, the splits
def resolve(opts: FileOptions) -> dict[str, Any]:
    """The options a run records: the path made absolute and the file's sha256 (checked against
    ``opts.sha256`` when given)."""
    path, digest = _path_and_sha256(opts)
    read(opts)  # every check of the content, before any run starts
    return {**asdict(opts), "path": path, "sha256": digest}


def _path_and_sha256(opts: FileOptions) -> tuple[str, str]:
    """The absolute path and the sha256 of the file; a one-line error where ``opts.sha256``
    (a recorded run's) names other content."""
    path = str(absolute(opts.path))  # type: ignore[arg-type]
    digest = file_sha256(path)
    if opts.sha256 is not None and opts.sha256 != digest:
        raise option_error(
            "sha256",
            f"{path} has sha256 {digest}, not {opts.sha256} (the file changed since it was recorded)",
        )
    return path, digest


def _held_out(n: int, fraction: float, key: str, split: str) -> int:
    k = int(round(fraction * n))
    if fraction > 0 and k == 0:
        raise option_error(
            key,
            f"{fraction:g} of the {n} training rows rounds to none; raise it, or "
            f"0 for {'test = train' if split == 'test' else 'no valid split'}",
        )
    return k


BINARIZE_RULES = {
    "none": "none: the values as the file holds them",
    "threshold": "1 where value > {o.threshold:g}, else 0",
    "stochastic": "1 with probability the value: u < value, u = numpy default_rng([{o.binarize_seed}, "
    "split stream (train 0, test 1, valid 2)]).random(shape)",
}


def binarized(opts: FileOptions, path: str, split: str, a: np.ndarray) -> np.ndarray:
    """The file's ``split`` matrix binarised as ``opts.binarize`` says (before held-out rows are
    taken: a row's draw does not depend on which split it lands in)."""
    if opts.binarize == "threshold":
        return (a > opts.threshold).astype(np.float64)
    if opts.binarize == "stochastic":
        if a.min() < 0 or a.max() > 1:
            raise option_error(
                "binarize",
                f"stochastic draws 1 with probability the value; {path} holds values in "
                f"[{a.min():g}, {a.max():g}], not in [0, 1] (binarize=threshold takes any)",
            )
        u = np.random.default_rng([opts.binarize_seed, SPLITS.index(split)]).random(a.shape)
        return (u < a).astype(np.float64)
    return a


def load(opts: FileOptions) -> Dataset:
    """The user's matrix as a Dataset: the file's splits, the missing ones held out of train."""
    path, digest = _path_and_sha256(opts)
    arrays = read(opts)
    columns = {k: a.shape[1] for k, a in arrays.items() if k in SPLITS}
    if len(set(columns.values())) > 1:
        raise _bad(path, "its splits differ in columns: " + ", ".join(f"{k} {c}" for k, c in columns.items()))
    x = {s: None if arrays.get(s) is None else binarized(opts, path, s, arrays[s]) for s in SPLITS}
    y = {s: arrays.get(f"{s}_labels") for s in SPLITS}
    n = x["train"].shape[0]
    n_test = _held_out(n, opts.test_fraction, "test_fraction", "test") if x["test"] is None else 0
    n_valid = _held_out(n, opts.valid_fraction, "valid_fraction", "valid") if x["valid"] is None else 0
    if n_test + n_valid >= n:
        raise option_error(
            "test_fraction",
            f"holding out {n_test} test and {n_valid} valid rows leaves none of the {n} to train on",
        )
    perm = np.random.default_rng(opts.split_seed).permutation(n)
    parts = {
        "test": perm[:n_test],
        "valid": perm[n_test : n_test + n_valid],
        "train": np.sort(perm[n_test + n_valid :]),
    }
    rule = []
    if x["test"] is None:
        rule.append(f"test = train rows perm[:{n_test}]" if n_test else "test = the whole training matrix")
    if x["valid"] is None and n_valid:
        rule.append(f"valid = train rows perm[{n_test}:{n_test + n_valid}]")
    if n_test + n_valid:
        rule.insert(0, f"perm = numpy default_rng({opts.split_seed}).permutation({n})")
        rule.append(f"train = the other {n - n_test - n_valid} rows, in file order")

    def take(rows) -> tuple[np.ndarray, np.ndarray | None]:
        labels = y["train"]
        return as_float32(x["train"][rows]), None if labels is None else labels[rows]

    out = {s: (as_float32(x[s]), y[s]) if x[s] is not None else None for s in SPLITS}
    out["train"] = take(parts["train"])
    if x["test"] is None:
        out["test"] = take(parts["test"]) if n_test else out["train"]
    if x["valid"] is None:
        out["valid"] = take(parts["valid"]) if n_valid else None
    (train, train_y), (test, test_y) = out["train"], out["test"]
    valid, valid_y = out["valid"] if out["valid"] is not None else (None, None)
    return Dataset(
        name=NAME,
        train=train,
        test=test,
        valid=valid,
        train_labels=train_y,
        test_labels=test_y,
        valid_labels=valid_y,
        info={
            "path": path,
            "sha256": digest,
            "options": asdict(opts),
            "split": "; ".join(rule) or "as the file holds them",
            "binarize": BINARIZE_RULES[opts.binarize].format(o=opts),
            "deviations": [],
        },
    )
