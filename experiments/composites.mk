# Paper artefacts split over several experiment files, or named by the paper differently:
# PARTS.<target> lists the targets a combined target runs. The Makefile includes this file; it
# ships with the experiment files, so that `rbmlab experiment list` reads the same parts in an
# install (rbmlab.experiment.catalog.make_composites).
PARTS.dcp-figure-6 := dcp-figure-6a dcp-figure-6b
PARTS.dcp-figure-7 := dcp-figure-7a dcp-figure-7b
PARTS.frank_wolfe-figure-1 := frank_wolfe-figure-1a frank_wolfe-figure-1b
PARTS.frank_wolfe-figure-2 := frank_wolfe-figure-2a frank_wolfe-figure-2b
PARTS.crbm_bp-table-3 := crbm_bp-table-3a crbm_bp-table-3b
# the log Z panels and the zeros panel
PARTS.pmp-figure-1 := pmp-figure-1a pmp-figure-1b pmp-figure-1c
PARTS.pmp-sec-5-1 := pmp-sec-5-1-theta pmp-sec-5-1-kl-model pmp-sec-5-1-kl-samples pmp-sec-5-1-bethe
# Erdos-Renyi, non-persistent; the right panel (the deconvolution data) is pmp-figure-4-deconvolution's figure-5-data.png
PARTS.pmp-figure-5 := pmp-figure-5-mmd pmp-figure-5-rmse
# left, centre, right
PARTS.pmp-figure-2 := pmp-figure-2-mmd pmp-figure-2-rmse pmp-figure-2-lattice-persistent-mmd \
	pmp-figure-2-lattice-persistent-rmse pmp-figure-2-er-persistent-mmd pmp-figure-2-er-persistent-rmse
# pmp Figure 4 (bottom): the zeros samples, and the blind deconvolution (an inference experiment,
# one posterior and nothing trained; its Gibbs and GWG baselines are pmp-figure-4-deconvolution-gibbs, -gwg)
PARTS.pmp-figure-4 := pmp-figure-4-zeros pmp-figure-4-deconvolution
# the cross-paper leaderboard (results/leaderboard/): its datasets and the exact-log-Z check
PARTS.leaderboard := leaderboard-binarized_mnist leaderboard-caltech101 leaderboard-exact leaderboard-potts
