"""evaluator=pmap_log_z (perturb-and-MAP log Z, pmp Sec 5.2) against exact answers: on a tree both
solvers find every perturbed problem's exact maximum, so the estimate is the brute-force mean of
the perturbed maxima (in either spin convention); exact log Z of a cyclic lattice by transfer
matrices equals enumeration through the same dispatch; ``model.init=truth`` evaluates the dataset's
own ground truth."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rbmlab.backend import host_rng
from rbmlab.cli import main
from rbmlab.errors import RbmlabError
from rbmlab.evaluators import EVALUATORS
from rbmlab.evaluators.base import Context
from rbmlab.evaluators.pmap_log_z import perturbed_objectives
from rbmlab.inference.max_product import logistic_noise
from rbmlab.inference.solvers import SOLVERS
from rbmlab.models import ising
from rbmlab.models.ising import Ising, exact_log_z, lattice_2d, lattice_parameters, to_spins
from tests.conftest import all_binary


def chain(n: int, spins: str, seed: int = 0) -> Ising:
    """A random Ising chain (a tree), float64."""
    rng = np.random.default_rng(seed)
    J = np.zeros((n, n))
    i = np.arange(n - 1)
    J[i, i + 1] = J[i + 1, i] = rng.normal(0, 1.5, n - 1)
    return Ising(J, rng.normal(0, 1.0, n), spins)


def brute_force_perturbed_max(model: Ising, noise: np.ndarray) -> np.ndarray:
    """max over all x ∈ {0,1}ⁿ of log p̃₀₁(x) + noise·x, per row of noise (the {0, 1} form)."""
    binary, _ = to_spins(model, "01")
    X = all_binary(model.n)
    base = 0.5 * ((X @ binary.J) * X).sum(1) + X @ binary.h
    return (base[None, :] + noise @ X.T).max(axis=1)


@pytest.mark.parametrize("spins", ["01", "pm1"])
@pytest.mark.parametrize("solver", ["pmp", "mplp"])
def test_on_a_tree_the_estimate_is_the_mean_of_the_exact_perturbed_maxima(solver, spins):
    model = chain(8, spins)
    evaluator = EVALUATORS.build(EVALUATORS.parse({"name": "pmap_log_z", "solver": solver, "n_samples": 50}))
    metrics = evaluator.evaluate(model, {}, Context(rng=host_rng(7), final=True))
    noise = logistic_noise(host_rng(7), (50, 8), np.float64)  # the draws it made
    _, shift = to_spins(model, "01")
    expected = brute_force_perturbed_max(model, noise).mean() - shift
    assert metrics["pmap_log_z"] == pytest.approx(expected, abs=1e-9)
    assert metrics["exact_log_z"] == pytest.approx(model.exact_log_partition(), abs=1e-12)
    assert metrics["pmap_log_z_error"] == pytest.approx(expected - model.exact_log_partition(), abs=1e-9)
    assert metrics["pmap_log_z_error"] > 0  # exact MAP: an upper bound in expectation (50 draws)
    assert metrics["pmap_solved"] == 100.0
    errors = brute_force_perturbed_max(model, noise) - shift - model.exact_log_partition()
    spread = math.sqrt(((errors - errors.mean()) ** 2).sum() / 49)  # the sample standard deviation
    assert metrics["pmap_log_z_error_std"] == pytest.approx(spread, rel=1e-9)
    assert metrics["pmap_log_z_error_se"] == pytest.approx(spread / math.sqrt(50), rel=1e-9)


@pytest.mark.parametrize("spins", ["01", "pm1"])
def test_a_lattice_beyond_enumeration_gets_its_log_z_from_transfer_matrices(spins, monkeypatch):
    model = lattice_2d(4, coupling=-0.2, field=0.05, spins="pm1", dtype="float64")
    model = to_spins(model, spins)[0]
    assert lattice_parameters(model) == (4, pytest.approx(-0.2), pytest.approx(0.05))
    enumerated = model.exact_log_partition()
    monkeypatch.setattr(ising, "MAX_ENUMERATION", 0)  # force the lattice path
    assert exact_log_z(model) == pytest.approx(enumerated, abs=1e-10)
    J = model.J.copy()
    J[0, 1] = J[1, 0] = J[0, 1] * 1.01  # no longer homogeneous
    assert lattice_parameters(model.replace(J=J)) is None and exact_log_z(model.replace(J=J)) is None


def test_a_dense_model_beyond_enumeration_is_a_one_line_error():
    """A 30-variable model cannot be a lattice: refused by the check, before any training; a
    36-variable one might be, and is refused at its first evaluation when it is not."""
    evaluator = EVALUATORS.build(EVALUATORS.parse({"name": "pmap_log_z"}))
    with pytest.raises(RbmlabError, match=r"^evaluator=pmap_log_z: no exact log Z for a 30-variable model"):
        evaluator.check(Ising, {"n": 30})
    evaluator.check(Ising, {"n": 36})
    model = ising.fully_connected(36, rng=np.random.default_rng(0), coupling_std=0.1)
    with pytest.raises(
        RbmlabError, match=r"^evaluator=pmap_log_z: no exact log Z for this 36-variable model"
    ):
        evaluator.evaluate(model, {}, Context(rng=host_rng(0), final=True))


def test_pmp_objectives_are_summed_in_float64():
    """On a 200-variable chain (a tree: undamped max-product finds every exact MAP), the float32
    graph's objectives equal those of its float64 copy on the same float32 noise to 1e-9; a float32
    sum of terms this size (|log p̃| ~ 10²) would be off by ~10⁻⁵."""
    model32 = chain(200, "01").astype(np.float32)
    model64 = model32.astype(np.float64)
    noise = logistic_noise(host_rng(3), (8, 200), np.float32)
    pmp = SOLVERS.build(SOLVERS.parse({"name": "max_product", "max_iter": 250, "damping": 1.0}))
    low, _ = perturbed_objectives(model32, pmp, noise)
    high, _ = perturbed_objectives(model64, pmp, noise.astype(np.float64))
    assert low.dtype == np.float64 and np.abs(high).min() > 50
    np.testing.assert_allclose(low, high, rtol=0, atol=1e-9)


def test_model_init_truth_evaluates_the_datasets_ground_truth(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    argv = [
        "run",
        "dataset=ising_samples",
        "dataset.structure=lattice",
        "dataset.side=3",
        "dataset.spins=pm1",
        "dataset.coupling=-0.2",
        "dataset.n_train=4",
        "dataset.n_test=4",
        "model=ising",
        "model.spins=pm1",
        "model.init=truth",
        "learner=reset",
        "train.epochs=0",
        "train.eval_every=0",
        "train.progress=false",
        "evaluator=pmap_log_z",
        "evaluator.n_samples=20",
        "hydra.run.dir=run",
    ]
    main(argv)
    final = json.loads((tmp_path / "run" / "summary.json").read_text())["final"]
    truth = lattice_2d(3, coupling=-0.2, spins="pm1", dtype="float64")
    assert final["exact_log_z"] == pytest.approx(truth.exact_log_partition(), rel=1e-6)
    assert np.isfinite(final["pmap_log_z_error"]) and final["pmap_solved"] == 100.0
