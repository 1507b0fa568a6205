"""Acceptance: AIS agrees with the exact log Z of a 784×20 RBM trained on MNIST.

The model is trained with CD-1 for one epoch on 20,000 MNIST images (seconds); exact log Z
enumerates the 2^20 hidden states. Both forward AIS (base-rate start, 14,500 temperatures) and
reverse AIS (exact samples of the trained model, schedule run backwards) must land within
0.5 nats of the exact value with the exact value inside their ±3σ intervals.
"""

from __future__ import annotations

import numpy as np
import pytest

from rbmlab.backend import get_backend
from rbmlab.data import load_dataset
from rbmlab.data.batch import Batch
from rbmlab.evaluators import ais, exact
from rbmlab.learners.cd import CD, CDConfig
from rbmlab.models.rbm import init_rbm
from rbmlab.run.training import batches

pytestmark = pytest.mark.slow  # about 2 minutes on 2 cores: make test-slow


@pytest.fixture(scope="module")
def trained():
    backend = get_backend("numpy", "float32")
    x = backend.asarray(load_dataset("mnist", n_train=20000).train)
    rbm = init_rbm(backend.xp, backend.rng(0), 784, 20, data_mean=x.mean(axis=0), dtype="float32")
    learner = CD(CDConfig(lr=0.05, k=1, batch_size=100))
    rng = backend.rng(1)
    for idx in batches(x.shape[0], 100, np.random.default_rng(2)):
        rbm, _ = learner.step(rbm, {}, Batch(x[idx]), rng)
    base = ais.base_rate_bias(x.mean(axis=0))
    return backend, rbm, base, exact.log_partition(rbm)


def test_the_model_is_far_from_its_initialisation(trained):
    _, rbm, _, log_z = trained
    assert float(np.abs(rbm.W).max()) > 0.3  # a trained, non-trivial model


def test_forward_ais_matches_exact_log_z(trained):
    backend, rbm, base, log_z = trained
    res = ais.ais_log_partition(
        rbm, backend.rng(3), base_bias=base, n_chains=100, betas=ais.temperature_schedule("salakhutdinov")
    )
    assert abs(res.log_z - log_z) < 0.5, (res.log_z, log_z)
    assert res.log_z_lower <= log_z <= res.log_z_upper, (res, log_z)


def test_reverse_ais_matches_exact_log_z(trained):
    backend, rbm, base, log_z = trained
    init = ais.target_samples(rbm, backend.rng(4), 100)
    res = ais.reverse_ais_log_partition(
        rbm, backend.rng(5), base_bias=base, init_v=init, betas=ais.temperature_schedule("salakhutdinov")
    )
    assert abs(res.log_z - log_z) < 0.5, (res.log_z, log_z)
    assert res.log_z_lower <= log_z <= res.log_z_upper, (res, log_z)
