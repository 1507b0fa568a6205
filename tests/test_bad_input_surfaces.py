"""Bad input to the surfaces added since the first hardening (issue 57): report commands over a
results tree that is missing, a file, or damaged; own data outside float32; launchers that cannot
launch here; compute budgets never reached. Each case ends in one ``rbmlab: error:`` line and exit
2 before any work (tests.test_bad_input's conventions)."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np
import pytest
from numpy.lib import format as npy_format

from rbmlab import limits
from rbmlab.cli import main
from tests.test_bad_input import Case, assert_one_error_line, file_at, rbm_npz


def results_tree(**files: bytes):
    """A results tree under ``results/``: {"<paper>/<file>": bytes} (keys spelled with "__" for "/")."""

    def setup(root: Path) -> None:
        for name, content in files.items():
            path = root / "results" / name.replace("__", "/")
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(content)

    return setup


RERENDER = ["report", "rerender", "--results-root"]
INDEX = ["report", "index", "--results-root"]
REPORT_CASES = [
    Case("rerender-root-missing", [*RERENDER, "nope"], "--results-root: nope is missing"),
    Case("rerender-root-a-file", [*RERENDER, "f"], "--results-root: f is a file", setup=file_at("f")),
    Case(
        "rerender-nothing-to-draw",
        [*RERENDER, "results"],
        "no sweep report under results",
        setup=results_tree(**{"dcp__README.md": b"# dcp\n"}),
    ),
    Case(
        "rerender-report-without-its-runs",
        [*RERENDER, "results"],
        "figure-3_reduced.md is a sweep's report whose runs CSV (figure-3_reduced_runs.csv) is gone",
        setup=results_tree(**{"dcp__figure-3_reduced.md": b"# a table\n"}),
    ),
    Case(
        "rerender-one-paper-nothing-to-draw",
        [*RERENDER, "results", "tap"],
        "no sweep report under results/tap",
        setup=results_tree(**{"dcp__README.md": b"# dcp\n"}),
    ),
    Case("index-root-missing", [*INDEX, "nope"], "--results-root: nope is missing"),
    Case(
        "index-readme-not-utf8",
        [*INDEX, "results"],
        "report index: cannot read results/dcp/README.md: not UTF-8 text",
        setup=results_tree(**{"dcp__README.md": b"# dcp \xff\xfe\n"}),
    ),
    Case(
        "index-check-readme-not-utf8",
        [*INDEX, "results", "--check"],
        "not UTF-8 text",
        setup=results_tree(**{"dcp__README.md": b"# dcp \xff\xfe\n"}),
    ),
]


# ---------------------------------------------------------------- own data (dataset=file)
def npy_declaring(name: str, shape: tuple[int, ...], dtype: str = "<f4", data: bytes = b""):
    """A .npy whose header declares ``shape`` of ``dtype``, followed by ``data`` only."""

    def setup(root: Path) -> None:
        buf = io.BytesIO()
        npy_format.write_array_header_1_0(buf, {"descr": dtype, "fortran_order": False, "shape": shape})
        (root / name).write_bytes(buf.getvalue() + data)

    return setup


def npz_with(name: str, **members: bytes):
    def setup(root: Path) -> None:
        with zipfile.ZipFile(root / name, "w") as z:
            for member, content in members.items():
                z.writestr(member, content)

    return setup


def sparse_file(name: str, size: int):
    """A file of ``size`` bytes that takes no disk (a hole)."""

    def setup(root: Path) -> None:
        with open(root / name, "wb") as f:
            f.truncate(size)

    return setup


def saved(name: str, array: np.ndarray, **kw):
    return lambda root: np.save(root / name, array, **kw)


def also_checkpoint(setup):
    return lambda root: (setup(root), rbm_npz(root / "m.npz"))


RUN = ["run", "dataset=file", "train.epochs=1", "train.progress=false"]
BIG = np.array([[1e300, 0.0], [0.0, 1.0]])
DATA_CASES = [
    Case(
        "file-csv-beyond-float32",
        [*RUN, "dataset.path=x.csv"],
        "beyond float32's range",
        setup=file_at("x.csv", b"1e300,0\n0,1\n"),
    ),
    Case(
        "file-npy-1e39",
        [*RUN, "dataset.path=x.npy"],
        "the first 1e+39 at row 0, column 1",
        setup=saved("x.npy", np.array([[0, 1e39], [1, 0]])),
    ),
    Case(
        "file-npy-minus-1e300",
        [*RUN, "dataset.path=x.npy"],
        "1 value(s) beyond float32's range",
        setup=saved("x.npy", -BIG),
    ),
    Case(
        "evaluate-file-beyond-float32",
        ["evaluate", "checkpoint=m.npz", "dataset=file", "dataset.path=x.npy", "evaluator=exact"],
        "beyond float32's range",
        setup=also_checkpoint(saved("x.npy", np.full((3, 9), 1e39))),
    ),
    Case(
        "file-npy-declares-1e11-values",
        [*RUN, "dataset.path=x.npy"],
        f"rows x columns is {10**11}; must be <= {limits.ARRAY_ELEMENTS}",
        setup=npy_declaring("x.npy", (10**6, 10**5)),
    ),
    Case(
        "file-npy-declares-too-many-rows",
        [*RUN, "dataset.path=x.npy"],
        "rows is 100000000",
        setup=npy_declaring("x.npy", (10**8, 1)),
    ),
    Case(
        "file-npy-truncated",
        [*RUN, "dataset.path=x.npy"],
        "is truncated: its header declares float32 of shape (100, 4)",
        setup=npy_declaring("x.npy", (100, 4), data=b"\0" * 1596),
    ),
    Case(
        "file-npy-objects",
        [*RUN, "dataset.path=x.npy"],
        "pickled Python objects",
        setup=saved("x.npy", np.array([[1, "a"]], dtype=object), allow_pickle=True),
    ),
    Case(
        "file-npy-not-npy",
        [*RUN, "dataset.path=x.npy"],
        "no NPY header",
        setup=file_at("x.npy", b"1,0\n0,1\n"),
    ),
    Case(
        "file-npy-3d-declared",
        [*RUN, "dataset.path=x.npy"],
        "is a 3-D array of shape (2, 2, 2)",
        setup=npy_declaring("x.npy", (2, 2, 2)),
    ),
    Case(
        "file-npy-text-dtype",
        [*RUN, "dataset.path=x.npy"],
        "holds <U1 values, not real numbers",
        setup=saved("x.npy", np.array([["a"]])),
    ),
    Case(
        "file-npz-not-zip",
        [*RUN, "dataset.path=x.npz"],
        "not a .npz (zip) archive",
        setup=file_at("x.npz", b"PK not really"),
    ),
    Case(
        "file-npz-member-not-npy",
        [*RUN, "dataset.path=x.npz"],
        "a member 'notes.txt' that is no .npy array",
        setup=npz_with("x.npz", **{"notes.txt": b"hi"}),
    ),
    Case(
        "file-npz-member-garbage",
        [*RUN, "dataset.path=x.npz"],
        "array train: no NPY header",
        setup=npz_with("x.npz", **{"train.npy": b"garbage"}),
    ),
    Case(
        "file-csv-too-large",
        [*RUN, "dataset.path=x.csv"],
        "its size in bytes is",
        setup=sparse_file("x.csv", limits.CSV_BYTES + 1),
    ),
    Case(
        "file-csv-first-line-mixed",
        [*RUN, "dataset.path=x.csv"],
        "dataset.header: ",
        setup=file_at("x.csv", b"1,a,0\n0,1,1\n"),
    ),
]

# ---------------------------------------------------------------- launchers, before any directory
SWEEP = [
    "run",
    "-m",
    "dataset=bars_stripes",
    "model.n_hidden=4",
    "evaluator=exact",
    "train.epochs=1",
    "seed=0,1",
]
NO_SLURM = {"PATH": "/nonexistent"}  # a machine without SLURM's commands, whatever this one has
LAUNCH_CASES = [
    Case(
        "slurm-without-sbatch",
        [*SWEEP, "hydra/launcher=slurm"],
        "SLURM's sbatch and srun not found",
        env=NO_SLURM,
    ),
    Case("slurm-gpu-without-sbatch", [*SWEEP, "hydra/launcher=slurm_gpu"], "sbatch and srun", env=NO_SLURM),
    Case(
        "experiment-slurm-without-sbatch",
        ["experiment", "demo/bars-cd-vs-pcd", "scale=smoke", "hydra/launcher=slurm"],
        "SLURM's sbatch and srun not found",
        env=NO_SLURM,
    ),
    Case(
        "slurm-timeout-negative",
        [*SWEEP, "hydra/launcher=slurm", "hydra.launcher.timeout_min=-1"],
        "hydra.launcher.timeout_min: must be an integer >= 1, got -1",
    ),
    Case(
        "slurm-cpus-zero",
        [*SWEEP, "hydra/launcher=slurm", "hydra.launcher.cpus_per_task=0"],
        "hydra.launcher.cpus_per_task: must be an integer >= 1",
    ),
    Case(
        "slurm-array-parallelism-zero",
        [*SWEEP, "hydra/launcher=slurm", "hydra.launcher.array_parallelism=0"],
        "array_parallelism",
    ),
    Case(
        "slurm-signal-delay-negative",
        [*SWEEP, "hydra/launcher=slurm", "hydra.launcher.signal_delay_s=-5"],
        "signal_delay_s",
    ),
    Case(
        "slurm-requeues-negative",
        [*SWEEP, "hydra/launcher=slurm_gpu", "hydra.launcher.max_num_timeout=-1"],
        "max_num_timeout",
    ),
    Case(
        "slurm-gpus-negative",
        [*SWEEP, "hydra/launcher=slurm_gpu", "hydra.launcher.gpus_per_node=-1"],
        "gpus_per_node: must be an integer >= 0",
    ),
]

# ---------------------------------------------------------------- settings no chosen component reads
FW = ["run", "dataset=bars_stripes", "learner=frank_wolfe", "evaluator=exact", "train.epochs=1"]
FIXED_ONLY = "applies to bias_fit=fixed only (its plain bias steps); bias_fit=converge does not read it"
CONVERGE_ONLY = "applies to bias_fit=converge only (its stopping rule); bias_fit=fixed does not read it"
UNREAD_CASES = [
    Case("fw-converge-lr", [*FW, "learner.lr=0.05"], f"learner.lr: {FIXED_ONLY}"),
    Case("fw-converge-optimizer", [*FW, "learner/optimizer=adam"], f"learner.optimizer: {FIXED_ONLY}"),
    Case("fw-converge-momentum", [*FW, "learner.optimizer.momentum=0.9"], "learner.optimizer: applies to"),
    Case("fw-converge-bias-steps", [*FW, "learner.bias_steps=20"], f"learner.bias_steps: {FIXED_ONLY}"),
    Case(
        "fw-fixed-bias-tol",
        [*FW, "learner.bias_fit=fixed", "learner.bias_tol=0.5"],
        f"learner.bias_tol: {CONVERGE_ONLY}",
    ),
    Case(
        "fw-fixed-bias-rhat", [*FW, "learner.bias_fit=fixed", "learner.bias_rhat=1.5"], "learner.bias_rhat: "
    ),
    Case(
        "fw-fixed-bias-max-steps",
        [*FW, "learner.bias_fit=fixed", "learner.bias_max_steps=30"],
        "learner.bias_max_steps: ",
    ),
    Case(
        "fw-fixed-bias-window",
        [*FW, "learner.bias_fit=fixed", "learner.bias_window=5"],
        "learner.bias_window: ",
    ),
    Case(
        "fw-fixed-bias-average",
        [*FW, "learner.bias_fit=fixed", "learner.bias_average=5"],
        "learner.bias_average: ",
    ),
    Case("fw-fixed-bias-lr", [*FW, "learner.bias_fit=fixed", "learner.bias_lr=0.9"], "learner.bias_lr: "),
    Case(
        "fw-model-n-hidden",
        [*FW, "model.n_hidden=12"],
        "model.n_hidden: frank_wolfe grows its hidden units from none",
    ),
    Case("fw-model-weight-std", [*FW, "model.weight_std=0.1"], "model.weight_std: frank_wolfe grows"),
    Case(  # the size an evaluator must handle is the grown one: one unit an epoch
        "fw-grows-beyond-enumeration",
        ["run", "dataset=binarized_mnist", "learner=frank_wolfe", "evaluator=exact", "train.epochs=30"],
        "evaluator=exact: ",
    ),
    Case("fw-model-coefficient", [*FW, "model=fractional_rbm", "model.coefficient=2"], "model.coefficient: "),
]

COMBINED = ["run", "dataset=bars_stripes", "evaluator=combined"]
PT = ["run", "dataset=bars_stripes", "learner=pcd", "+learner/sampler=parallel_tempering"]
PART_SURFACE_CASES = [  # evaluator=combined's parts, the tempering ladder, the packed launcher
    Case(
        "combined-part-twice",
        [*COMBINED, "evaluator.parts=[exact,exact]"],
        "evaluator.parts[1].name: exact is",
    ),
    Case(
        "combined-part-unknown-key", [*COMBINED, "evaluator.parts=[{name: exact, n_chains: 5}]"], "n_chains"
    ),
    Case("pt-one-temperature", [*PT, "learner.sampler.n_temperatures=1"], "learner.sampler.n_temperatures: "),
    Case(
        "pt-beta-min-one", [*PT, "learner.sampler.beta_min=1"], "learner.sampler.beta_min: must be in (0, 1)"
    ),
    Case("pt-ladder-unknown", [*PT, "learner.sampler.ladder=linear"], "learner.sampler.ladder: "),
    Case("pt-swap-rate-geometric", [*PT, "learner.sampler.target_swap_rate=0.5"], "target_swap_rate"),
    Case(
        "gap-kappa-without-the-gap",
        ["run", "dataset=bars_stripes", "train.gap_kappa=5"],
        "train.gap_kappa: the gap",
    ),
    Case(
        "gap-warmup-without-valid",
        ["run", "dataset=mnist", "evaluator=exact", "model.n_hidden=4", "train.gap_warmup=5"],
        "train.gap_warmup: the gap rule's",
    ),
    Case(
        "packed-max-runs-zero",
        ["run", "-m", "hydra/launcher=packed", "hydra.launcher.max_runs=0", "seed=0,1"],
        "max_runs",
    ),
]

CASES = REPORT_CASES + DATA_CASES + LAUNCH_CASES + UNREAD_CASES + PART_SURFACE_CASES


def test_the_cases_are_counted_and_ids_unique():
    assert len(CASES) == 56
    assert len({c.id for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input_gives_one_error_line(case, tmp_path, monkeypatch, capsys):
    assert_one_error_line(main, case, tmp_path, monkeypatch, capsys)
