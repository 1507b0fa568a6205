#!/usr/bin/env bash
# One-off (issue 38): the commands that made this folder's numbers, as run on 2026-11-27.
# rbmlab from a clean clone of main at ae8e1f8; rbms in its own virtualenv (never rbmlab's).
# The folders are this machine's as variables (SRC, PY, RBMS_PY; W a scratch folder), set before running:
#   python3 -m venv "$RBMS_VENV"
#   "$RBMS_VENV"/bin/pip install torch-2.13.0+cpu-...whl rbms==0.5.0   (torch's CPU wheel)
set -euo pipefail
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
SRC=${SRC:?a clean clone of rbmlab at ae8e1f8}
PY=${PY:?the python of the rbmlab environment}
RBMS_PY=${RBMS_PY:?the python of the rbms 0.5.0 + torch 2.13.0+cpu virtualenv}
HERE=$(cd "$(dirname "$0")" && pwd)
W=${W:-$(mktemp -d)}; mkdir -p "$W"    # scratch: the checkpoints and the raw outputs

# the checkpoint: CD-1, 784 x 500, the first 10,000 MNIST training images, 5 epochs, seed 0
(cd "$SRC" && PYTHONPATH=$SRC $PY -m rbmlab run learner=cd dataset=mnist dataset.n_train=10000 \
  model.n_hidden=500 train.epochs=5 evaluator=free_energy 'evaluator.splits=[train,test]' \
  train.eval_every=0 train.progress=false seed=0 hydra.run.dir=outputs/rbms38_cd5)
cp "$SRC/outputs/rbms38_cd5/checkpoint.npz" "$W/ck_cd5.npz"

# (a) rbmlab's AIS: 500 chains seed 0 (the primary interval), 100 chains seeds 1 and 2
for spec in "500 0" "100 1" "100 2"; do set -- $spec
  (cd "$SRC" && PYTHONPATH=$SRC /usr/bin/time -f "wall %e s user %U s" $PY -m rbmlab evaluate \
    checkpoint="$W/ck_cd5.npz" dataset=mnist dataset.n_train=10000 evaluator=ais evaluator.n_chains=$1 \
    'evaluator.splits=[test]' evaluator.progress=false seed=$2 out="$W/rbmlab_cd5_c$1_s$2.json")
done

# (b) rbms's AIS (run concurrently with (a) on the day): 100 chains, 14,501 linear betas, seeds 0 1 2
/usr/bin/time -f "wall %e s user %U s" $RBMS_PY "$HERE/rbms_log_z.py" "$W/ck_cd5.npz" \
  --chains 100 --betas 14501 --seeds 0 1 2 --dtype float32 --out "$W/rbms_cd5.json"

# the harder checkpoint of the first attempt: PCD-1, all 60,000 images, 20 epochs, seed 0
(cd "$SRC" && PYTHONPATH=$SRC $PY -m rbmlab run learner=pcd dataset=mnist model.n_hidden=500 \
  train.epochs=20 evaluator=free_energy 'evaluator.splits=[train,test]' train.eval_every=0 \
  train.progress=false seed=0 hydra.run.dir=outputs/rbms38_pcd20)
cp "$SRC/outputs/rbms38_pcd20/checkpoint.npz" "$W/ck.npz"
(cd "$SRC" && PYTHONPATH=$SRC $PY -m rbmlab evaluate checkpoint="$W/ck.npz" dataset=mnist \
  evaluator=ais evaluator.n_chains=500 'evaluator.splits=[test]' evaluator.progress=false seed=0 \
  out="$W/rbmlab_500_s0.json")
$RBMS_PY "$HERE/rbms_log_z.py" "$W/ck.npz" --chains 100 --betas 14501 --seeds 0 1 2 --dtype float32 \
  --out "$W/rbms_f32.json"    # stopped after seed 0 (time); its line is in rbms_pcd20.log
