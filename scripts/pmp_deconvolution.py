"""pmp Sec 5.6 / Figure 4 (bottom): PMP posterior samples of Bayesian binary blind deconvolution
(sampler=gibbs, gwg: single-site Gibbs or informed single-flip chains instead, its baselines).

    python scripts/pmp_deconvolution.py OUT_DIR [key=value ...] [dataset.key=value ...]

keys: rbmlab.inference.deconvolution.DeconvolutionConfig (n_features, feature_side, p_s, p_w,
p_e, n_samples, sweeps, damping, seed, sampler (pmp, gibbs, gwg), seconds); dataset.*: rbmlab.data.deconvolution.DeconvolutionOptions.
Writes OUT_DIR/samples.npz, metrics.json, figure-4.png and figure-5-data.png (the 100 images of
Figure 5, right) (rbmlab.inference.deconvolution.run).
Defaults are the paper's: 100 images, K = 5 features of 6 x 6, 5 samples of 1000 sweeps.
"""
from __future__ import annotations

import sys
from pathlib import Path

import yaml

from rbmlab.errors import RbmlabError, fail
from rbmlab.inference.deconvolution import DeconvolutionConfig, run
from rbmlab.validation import parse_options


def main(argv: list[str]) -> None:
    if not argv or "=" in argv[0]:
        fail("usage: python scripts/pmp_deconvolution.py OUT_DIR [key=value ...] [dataset.key=value ...]")
    given: dict[str, dict] = {"": {}, "dataset.": {}}
    for item in argv[1:]:
        key, eq, value = item.partition("=")
        if not eq:
            fail(f"{item}: expected key=value")
        prefix = "dataset." if key.startswith("dataset.") else ""
        given[prefix][key.removeprefix(prefix)] = yaml.safe_load(value)
    try:
        config = parse_options(DeconvolutionConfig, given[""], "deconvolution")
        run(Path(argv[0]), given["dataset."], config)
    except RbmlabError as e:
        fail(str(e))


if __name__ == "__main__":
    main(sys.argv[1:])
