"""tap Table 1 as configured: every job of ``experiments/tap/figure-3.yaml`` at the paper tier has
the paper's settings (N_v from the data, N_h, M = K, priors, γ, ε, η), checked on the validated run
configs the experiment would launch."""

from __future__ import annotations

import pytest

from rbmlab.experiment import _variants, load_spec
from rbmlab.hydra_app import expand_overrides, validated_run_config

# dataset, N_h values, M (= K), visible prior, lr (real MNIST: from 1e-2, decayed), ε, η
TABLE_1 = {
    "binary": ("mnist", {25, 50, 100, 500}, 100, "bernoulli", 0.005, 0.001, 0.5),
    "real": ("mnist", {100, 500}, 100, "gauss_bernoulli", 0.01, 0.001, 0.5),
    "cbcl": ("cbcl_faces", {256}, 20, "truncated_gaussian", 0.005, 0.01, 0.5),
}


@pytest.mark.parametrize("variant", list(TABLE_1))
def test_figure_3_paper_tier_is_table_1(variant):
    dataset, hidden, batch, prior, lr, decay, momentum = TABLE_1[variant]
    overrides = _variants("tap/figure-3", load_spec("tap/figure-3"), "paper", [])[variant]
    configs = [validated_run_config(job) for job in expand_overrides(overrides)]
    assert {c.model.n_hidden for c in configs} == hidden
    for c in configs:
        assert c.dataset["name"] == dataset
        assert c.dataset.get("binarize", "threshold") == ("threshold" if variant == "binary" else "none")
        assert getattr(c.model, "visible_prior", c.model.name == "rbm" and "bernoulli") == prior
        assert c.learner.name == "tap" and c.learner.batch_size == batch  # K = M: the batch itself
        assert (c.learner.lr, c.learner.optimizer.weight_decay) == (lr, decay)
        assert (c.learner.optimizer.momentum, c.learner.optimizer.momentum_on) == (momentum, "interactions")
        assert c.train.epochs == (500 if variant == "cbcl" else 100)
    if variant == "real":  # γ from 1e-2 to 1e-5 over the 100 epochs
        assert configs[0].learner.lr * configs[0].learner.lr_decay ** 100 == pytest.approx(1e-5, rel=0.01)
