"""rbmlab's layers, and a test that keeps them (issue 32, item 4).

Lowest first; a module imports only from its own layer or below. Every module of a subpackage is
one node (``rbmlab.models``); a module directly in rbmlab/ is its own node (``rbmlab.cli``). An
import counts wherever it is written: at a module's top or inside a function alike.

    errors, limits, validation, registry → storage → backend → units → models → inference → optimizers
    → learners, data → evaluators (with the metric declarations) → config → run
    → hydra_app, evaluate → experiment, report, bench → cli

The imports that still run against this order are listed in ``KNOWN_INVERSIONS``, each with its
reason; the list can only shrink (an entry whose import is gone fails the test until it is
removed). Without them the package graph has no cycle. ``report`` renders: it reads run records
and the metric declarations and never runs a model; the imports that still do are in
``KNOWN_REPORT_MODEL_CODE``, kept the same way.
"""

from __future__ import annotations

import ast
import itertools
import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import rbmlab
from tests.test_architecture import find_cycle, module_name

PACKAGE = Path(rbmlab.__file__).parent
MAX_TOP_LEVEL_MODULES = 12

LAYERS: tuple[tuple[str, ...], ...] = (
    (
        "rbmlab",
        "rbmlab.errors",
        "rbmlab.limits",
        "rbmlab.validation",
        "rbmlab.registry",  # rbmlab: __version__
        "rbmlab.resources",
    ),
    ("rbmlab.storage",),
    ("rbmlab.backend",),
    ("rbmlab.units",),
    ("rbmlab.models",),
    ("rbmlab.inference",),
    ("rbmlab.optimizers",),
    ("rbmlab.learners", "rbmlab.data"),
    ("rbmlab.evaluators",),
    ("rbmlab.config",),
    ("rbmlab.run",),
    ("rbmlab.help",),  # rbmlab run --help reads conf/ and the declarations
    ("rbmlab.hydra_app", "rbmlab.evaluate"),  # experiment runs its sweeps through hydra_app
    ("rbmlab.experiment", "rbmlab.report", "rbmlab.bench"),
    ("rbmlab.api",),  # the scikit-learn estimators: configs composed as `run` does
    ("rbmlab.cli",),
    ("rbmlab.__main__",),
)

# (importing module, imported module) -> why it is still there and what removes it.
KNOWN_INVERSIONS: dict[tuple[str, str], str] = {}  # none left (issue 32); a new one needs its reason here

# What report may import besides itself and the bottom layer: run records and the file primitives
# they are written with, configs, host arrays and the metric declarations.
# rbmlab.help: the components' declarations as people read them (option docs and labels), which
# the report's names in words come from (rbmlab.report.names)
REPORT_READS = (
    "rbmlab.run",
    "rbmlab.storage",
    "rbmlab.config",
    "rbmlab.backend",
    "rbmlab.evaluators.metrics",
    "rbmlab.help",
)

# (report module, imported module) -> why report still runs model code there.
KNOWN_REPORT_MODEL_CODE: dict[tuple[str, str], str] = {
    # report/gallery.py (in run_images, generative_images, check_rows): rebuilds a run's data, task,
    # learner and evaluator and predicts with its checkpoint, or draws samples from its model, to
    # draw the image galleries. Goes with experiment kinds (issue 32: a figure kind runs the model
    # and report renders what it wrote).
    ("rbmlab.report.gallery", "rbmlab.data"): "gallery rebuilds a run's data",
    ("rbmlab.report.gallery", "rbmlab.data.tasks"): "gallery rebuilds a run's task",
    ("rbmlab.report.gallery", "rbmlab.evaluators"): "gallery predicts with a run's evaluator",
    ("rbmlab.report.gallery", "rbmlab.evaluators.pixel_error"): "gallery predicts with a run's evaluator",
    ("rbmlab.report.gallery", "rbmlab.evaluators.sampling"): "gallery draws samples from a run's model",
    ("rbmlab.report.gallery", "rbmlab.learners"): "gallery rebuilds a run's learner",
}


def node(module: str) -> str:
    """A module's node: its subpackage (rbmlab.models), or itself when it lies in rbmlab/."""
    parts = module.split(".")
    if len(parts) > 2 or (len(parts) == 2 and (PACKAGE / parts[1]).is_dir()):
        return ".".join(parts[:2])
    return module


def _imported(name: str, is_package: bool, stmt: ast.Import | ast.ImportFrom, modules) -> list[str]:
    if isinstance(stmt, ast.Import):
        targets = [a.name for a in stmt.names]
    else:
        base = stmt.module or ""
        if stmt.level:  # relative: from the importing package
            package = name.split(".") if is_package else name.split(".")[:-1]
            base = ".".join(package[: len(package) - (stmt.level - 1)] + ([base] if base else []))
        targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in stmt.names]
    resolved = []
    for target in targets:
        while target not in modules and "." in target:  # a name inside a module: the module
            target = target.rsplit(".", 1)[0]
        if target in modules:
            resolved.append(target)
    return resolved


def import_sites() -> dict[tuple[str, str], list[tuple[int, bool]]]:
    """(importing module, imported module) -> [(line, inside a function)], rbmlab's own imports."""
    paths = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    sites: dict[tuple[str, str], list[tuple[int, bool]]] = defaultdict(list)

    def visit(name, is_package, tree, in_function):
        for child in ast.iter_child_nodes(tree):
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                for target in set(_imported(name, is_package, child, paths)) - {name}:
                    sites[(name, target)].append((child.lineno, in_function))
            inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(name, is_package, child, inner)

    for name, path in paths.items():
        visit(name, path.name == "__init__.py", ast.parse(path.read_text()), False)
    return dict(sites)


def rank() -> dict[str, int]:
    return {n: i for i, layer in enumerate(LAYERS) for n in layer}


def against_the_order(pairs, ranks: dict[str, int]) -> set[tuple[str, str]]:
    """The (importer, imported) module pairs whose importer's node lies below the imported one's."""
    return {(a, b) for a, b in pairs if ranks[node(a)] < ranks[node(b)]}


def package_graph(pairs) -> dict[str, set[str]]:
    graph: dict[str, set[str]] = defaultdict(set)
    for a, b in pairs:
        if node(a) != node(b):
            graph[node(a)].add(node(b))
            graph.setdefault(node(b), set())
    return dict(graph)


def describe(sites, pairs) -> str:
    """One line per import: importer -> imported (the lines, and which lie inside a function)."""

    def where(ln: int, in_function: bool) -> str:
        return f"{ln} in a function" if in_function else f"{ln}"

    return "\n".join(
        f"  {a} -> {b} (line {', '.join(where(*s) for s in sites[(a, b)])})" for a, b in sorted(pairs)
    )


def test_at_most_twelve_modules_lie_directly_in_rbmlab():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_LEVEL_MODULES, top


def test_every_node_has_a_layer():
    sites = import_sites()
    nodes = {node(module_name(p)) for p in PACKAGE.rglob("*.py")} | {node(m) for pair in sites for m in pair}
    assert "rbmlab.models" in nodes and "rbmlab.cli" in nodes  # the walk sees the package
    assert not nodes - set(rank()), f"place in LAYERS: {sorted(nodes - set(rank()))}"
    assert sum(len(layer) for layer in LAYERS) == len(rank())  # no node in two layers


def test_imports_follow_the_layer_order():
    sites = import_sites()
    inverted = against_the_order(sites, rank())
    new = inverted - set(KNOWN_INVERSIONS)
    assert not new, "imports against the layer order (import from your own layer or below):\n" + describe(
        sites, new
    )
    gone = set(KNOWN_INVERSIONS) - inverted
    assert not gone, (
        f"no longer imported, or no longer against the order: remove from KNOWN_INVERSIONS: {sorted(gone)}"
    )


def test_no_package_cycle_but_the_known_inversions():
    sites = import_sites()
    graph = package_graph(set(sites) - set(KNOWN_INVERSIONS))
    assert graph["rbmlab.cli"] and graph["rbmlab.run"]
    cycle = find_cycle(graph)
    if cycle is not None:
        on_cycle = set(itertools.pairwise(cycle))
        causes = {p for p in sites if p not in KNOWN_INVERSIONS and (node(p[0]), node(p[1])) in on_cycle}
        raise AssertionError(f"package-level import cycle: {' -> '.join(cycle)}\n{describe(sites, causes)}")


def test_report_reads_records_and_runs_no_model():
    sites = import_sites()
    bottom = set(LAYERS[0])
    model_code = {
        (a, b)
        for a, b in sites
        if node(a) == "rbmlab.report"
        and node(b) not in bottom | {"rbmlab.report"}
        and not any(b == r or b.startswith(r + ".") for r in REPORT_READS)
    }
    new = model_code - set(KNOWN_REPORT_MODEL_CODE)
    assert not new, "report/ renders run records; it imports no model code:\n" + describe(sites, new)
    gone = set(KNOWN_REPORT_MODEL_CODE) - model_code
    assert not gone, f"no longer imported: remove from KNOWN_REPORT_MODEL_CODE: {sorted(gone)}"


def test_the_checks_find_what_they_look_for():
    """The cycle finder and the order check on small graphs, so a passing test means something."""
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None
    pairs = {
        ("rbmlab.models.rbm", "rbmlab.backend.ops"),
        ("rbmlab.backend.ops", "rbmlab.models.rbm"),
        ("rbmlab.cli", "rbmlab.run.runner"),
    }
    assert against_the_order(pairs, rank()) == {("rbmlab.backend.ops", "rbmlab.models.rbm")}
    assert find_cycle(package_graph(pairs)) == ["rbmlab.backend", "rbmlab.models", "rbmlab.backend"]
    assert node("rbmlab.run.runner") == "rbmlab.run" and node("rbmlab.cli") == "rbmlab.cli"
    assert node("rbmlab.backend") == "rbmlab.backend" and node("rbmlab") == "rbmlab"


def test_relative_and_function_level_imports_count():
    modules = {"rbmlab", "rbmlab.run", "rbmlab.run.records", "rbmlab.run.fileio", "rbmlab.backend"}
    tree = ast.parse(
        "from .fileio import atomic_write\nfrom .. import backend\n"
        "def f():\n    from rbmlab.run import records\n"
    )
    stmts = [n for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert [_imported("rbmlab.run.records", False, s, modules) for s in stmts] == [
        ["rbmlab.run.fileio"],
        ["rbmlab.backend"],
        ["rbmlab.run.records"],
    ]
    in_function = [fn for lines in import_sites().values() for _, fn in lines]
    assert any(in_function) and not all(in_function)


def test_a_report_loads_no_model_code_at_run_time(tmp_path):
    """What the import graph above cannot see: imports made by name at run time (registries). A
    report over runs that recorded their metric declarations (summary.json) ranks by those and
    imports no evaluator, model or inference code."""
    from rbmlab.hydra_app import validated_run_config
    from rbmlab.run.runner import train

    cfg = validated_run_config(
        [
            "dataset=bars_stripes",
            "model.n_hidden=3",
            "evaluator=exact",
            "train.epochs=2",
            "train.progress=false",
        ]
    )
    train(cfg, tmp_path / "runs" / "a", echo=lambda s: None)
    code = (
        "import sys; from rbmlab.report import make_report; "
        f"make_report({str(tmp_path / 'runs')!r}, {str(tmp_path / 'report')!r}, "
        "metric='test_log_likelihood'); "
        "print(sorted(m for m in sys.modules if m.startswith(('rbmlab.models', 'rbmlab.inference', "
        "'rbmlab.evaluators.')) and m != 'rbmlab.evaluators.metrics'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
    (table,) = (tmp_path / "report").glob("*.md")
    assert "test log-likelihood" in table.read_text() and "max" in table.read_text()


def test_metric_columns_rank_by_the_declarations_in_force():
    """Within ``declared``, a column is declared by the recorded declarations alone (as a run wrote
    them, read back); outside it, by the registered evaluators."""
    from rbmlab.evaluators.metrics import (
        MetricSpec,
        declarations_from_record,
        declarations_record,
        declared,
        metric_spec,
    )

    mine = MetricSpec("score", "points", higher_is_better=False, label="score", best_at=None)
    record = json.loads(json.dumps(declarations_record([mine, part_of_combined()])))
    assert declarations_from_record(record) == (mine, part_of_combined())
    assert metric_spec("test_score") is None and metric_spec("test_log_likelihood").higher_is_better
    with declared(declarations_from_record(record)):
        assert metric_spec("test_score") == mine and metric_spec("early_stopping.valid_score") == mine
        assert metric_spec("test_log_likelihood") is None  # not recorded: undeclared
        assert metric_spec("test_tap.log_likelihood").unit == "nats"
        assert metric_spec("wall_time").unit == "seconds"  # the runner's own
    assert metric_spec("test_score") is None


def part_of_combined():
    from rbmlab.evaluators.metrics import MetricSpec, part_metric

    return part_metric(MetricSpec("log_likelihood", "nats", higher_is_better=True), "tap")
