"""The package's shape: no import cycles (module- and function-level imports alike), a short
training loop, and a second model family that trains end to end without any RBM code."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rbmlab

PACKAGE = Path(rbmlab.__file__).parent


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [
                    f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in modules else node.module
                    for a in node.names
                ]
            graph[name] |= {t for t in targets if t in modules and t != name}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of ``graph`` (a node's successors; a node without an entry has none) as its
    nodes, the first repeated at the end, or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        stack.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == 1:
                return stack[stack.index(n) :] + [n]
            if n not in state and (cycle := visit(n)):
                return cycle
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state and (cycle := visit(m)):
            return cycle
    return None


def test_no_import_cycles():
    graph = import_graph()
    assert "rbmlab.run.runner" in graph and graph["rbmlab.cli"]  # the walk sees the package
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph))


def test_the_cycle_finder_finds_cycles():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"b"}, "b": set()}) is None


def test_no_runner_function_is_over_60_lines():
    tree = ast.parse((PACKAGE / "run" / "runner.py").read_text())
    lengths = {
        f.name: f.end_lineno - f.lineno + 1
        for f in ast.walk(tree)
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    assert lengths and max(lengths.values()) <= 60, lengths


@pytest.mark.slow  # about 10 s: a real training run in a subprocess
def test_ising_trains_and_reports_without_rbm_code(tmp_path):
    """`rbmlab run model=ising dataset=ising_samples learner=pcd` (moment matching with the
    colour-class Gibbs sampler) approaches the ground truth's test log-likelihood, and no RBM
    module is ever imported."""
    code = (
        "import sys, json; from rbmlab.cli import main; "
        "main(['run', 'model=ising', 'dataset=ising_samples', 'learner=pcd', "
        "'learner.k=2', 'learner.lr=0.2', 'learner.batch_size=full', 'dataset.side=3', "
        "'evaluator=exact', 'train.epochs=1000', 'train.eval_every=500', 'train.progress=false', "
        "f'hydra.run.dir={sys.argv[1]}']); "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('rbmlab'))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "run")],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    modules = json.loads(out.stdout.strip().splitlines()[-1])
    assert "rbmlab.models.ising" in modules
    rbm_code = {
        "rbmlab.models.rbm",
        "rbmlab.models.centered",
        "rbmlab.inference.block_gibbs",
        "rbmlab.evaluators.ais",
        "rbmlab.evaluators.pseudo_likelihood",
    }
    assert not rbm_code & set(modules), rbm_code & set(modules)
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["status"] == "completed" and summary["model"] == "ising" and summary["n"] == 9
    lines = (tmp_path / "run" / "metrics.csv").read_text().splitlines()
    first = float(lines[1].split(",")[-1])  # epoch 0: the independent (fields-only) model
    final = summary["final"]["test_log_likelihood"]
    ml = exact_maximum_likelihood_test_ll(side=3)
    assert ml > first + 0.02  # the couplings matter for this data ...
    assert abs(final - ml) < 0.25 * (ml - first)  # ... and PCD lands near the exact ML fit


def exact_maximum_likelihood_test_ll(side: int) -> float:
    """Test log-likelihood of the maximum-likelihood Ising fit to the training samples, by
    gradient ascent with exact moments over all 2^n states (an independent transcription)."""
    from rbmlab.data import load_dataset

    data = load_dataset("ising_samples", side=side)
    x, t, n = data.train.astype(np.float64), data.test.astype(np.float64), side * side
    states = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.float64)
    J, h = np.zeros((n, n)), np.zeros(n)
    target_J, target_h = x.T @ x / len(x), x.mean(0)

    def log_p(s, log_z):
        return 0.5 * ((s @ J) * s).sum(1) + s @ h - log_z

    for _ in range(2000):
        e = 0.5 * ((states @ J) * states).sum(1) + states @ h
        p = np.exp(e - e.max())
        p /= p.sum()
        grad_J = target_J - (states * p[:, None]).T @ states
        np.fill_diagonal(grad_J, 0.0)
        J += 0.2 * grad_J
        h += 0.2 * (target_h - p @ states)
    e = 0.5 * ((states @ J) * states).sum(1) + states @ h
    log_z = e.max() + np.log(np.exp(e - e.max()).sum())
    assert np.abs(grad_J).max() < 1e-4  # converged
    return float(log_p(t, log_z).mean())


def test_evaluate_an_ising_checkpoint_gives_exact_log_z(tmp_path):
    """A hand-written Ising checkpoint (J, h, spins): `rbmlab evaluate ... evaluator=exact` writes
    log Z equal to a brute-force sum over all 2^16 states to 1e-6 relative, and the test
    log-likelihood of the dataset's own samples under it."""
    rng = np.random.default_rng(3)
    n = 16
    upper = np.triu(rng.normal(0, 0.4, (n, n)), 1)
    J, h = upper + upper.T, rng.normal(0, 0.5, n)
    np.savez(tmp_path / "ising.npz", J=J, h=h, spins=np.array("pm1"))
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "rbmlab",
            "evaluate",
            "checkpoint=ising.npz",
            "dataset=ising_samples",
            "dataset.spins=pm1",
            "evaluator=exact",
            "out=result.json",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    result = json.loads((tmp_path / "result.json").read_text())
    s = 2.0 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1) - 1.0
    e = 0.5 * ((s @ J) * s).sum(1) + s @ h
    brute = e.max() + np.log(np.exp(e - e.max()).sum())
    assert result["model"] == "ising" and result["n"] == n and result["dtype"] == "float64"
    assert abs(result["log_z"] - brute) <= 1e-6 * abs(brute)
    from rbmlab.data import load_dataset

    test = load_dataset("ising_samples", spins="pm1").test.astype(np.float64)
    expected = (0.5 * ((test @ J) * test).sum(1) + test @ h).mean() - brute
    assert result["mean_log_likelihood"] == np.float64(result["mean_log_likelihood"])
    assert abs(result["mean_log_likelihood"] - expected) < 1e-6 * abs(expected)
