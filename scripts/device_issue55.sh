#!/usr/bin/env bash
# Issue 55 items 4-5 on a lent GPU (the `device` tool's machine: CUDA, cupy, numpy, scipy, pandas,
# scikit-learn, numba, pytest there; hydra-core, omegaconf and antlr4 are not). Prepare here, once:
#   echo /.whl/ >> .git/info/exclude
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
#     --platform manylinux2014_x86_64 --platform any -d .whl \
#     hydra-core==1.3.2 omegaconf==2.3.0 antlr4-python3-runtime==4.9.3 threadpoolctl
# (antlr4 4.9.3 has no wheel: `pip wheel --no-deps antlr4-python3-runtime==4.9.3 -w .whl` builds one)
# then run it through the tool with carry [".whl"] and the MNIST file (`rbmlab data fetch mnist`
# here first; RBMLAB_DATA points at ../shared/datasets, which does not travel: copy what the runs
# read into a carried folder and set RBMLAB_DATA to it), e.g. timeout_s 560:
#   bash scripts/device_issue55.sh
# Steps, cheapest first, each writing under $OUT: the cupy tests (packed draws, packed runs against
# the runs alone, BP, TAP), then make bench-gpu's packed rows, then what time is left.
set -u -o pipefail
export PYTHONUNBUFFERED=1 PYTHONPATH="/tmp/site:${PWD}" RBMLAB_DATA="${RBMLAB_DATA:-$PWD/.data}"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/gpu.txt"
timeout 240 python3 -m pytest -q -m gpu -x -p no:cacheprovider \
  tests/test_cupy_kernels.py tests/test_packed.py tests/test_crbm_bp_cupy.py tests/test_tap_cupy.py \
  2>&1 | tee "$OUT/cupy_tests.log"
timeout 240 python3 - <<'EOF' 2>&1 | tee "$OUT/packed_gpu.log"
import json, os
from rbmlab.backend import get_backend
from rbmlab.bench.packed import bench_crbm_packed_scaling, bench_packed_scaling
backend = get_backend("cupy", "float32")
rows = bench_packed_scaling(backend, 3) + bench_crbm_packed_scaling(backend, 3)
for r in rows:
    print(f"{r['name']}: {r['median']:.4g} ({r['min']:.4g} - {r['max']:.4g}) {r['unit']}")
json.dump(rows, open(os.path.join(os.environ["OUT"], "packed_gpu.json"), "w"), indent=1)
EOF
