#!/usr/bin/env bash
# Run on the GPU machine from the checkout's root, after .device/install.sh: installs core, the CPU and
# NVIDIA backends (editable, no dependencies), runs the GPU tier and the benchmarks; logs go to $OUT.
#   bash backends/nvidia/bench/on_device.sh [tests|conf|examples|bench|all] [pytest args...]
set -u
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
what=${1:-all}; shift || true
python3 -m pip install -q --no-index --no-deps --no-build-isolation -e core -e backends/cpu -e backends/nvidia \
  >"$OUT/install.log" 2>&1 || { tail -20 "$OUT/install.log"; exit 1; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader
if [ "$what" = tests ] || [ "$what" = all ]; then
  timeout 200 python3 -m pytest -q -p no:cacheprovider -rs tests/gpu -k "cuda" "$@" 2>&1 | tee "$OUT/gpu_tests.log" | tail -60
fi
if [ "$what" = conf ] || [ "$what" = all ]; then
  # the conformance suite is written with numpy arrays: numpy_on_cuda copies them to the GPU around launches
  PYTHONPATH=/tmp/site:tests/gpu timeout 220 python3 -m pytest -q -p no:cacheprovider -p numpy_on_cuda -rf \
    --pyargs tritium.testing.conformance --backend=nvidia -n 8 2>&1 | tee "$OUT/conformance.log" | tail -40
fi
if [ "$what" = examples ] || [ "$what" = all ]; then
  # the lead's examples pick the GPU when it is active and compare with Triton 3.6 in the same process
  (cd examples && for f in 0*.py; do echo "== $f"; PYTHONPATH=/tmp/site timeout 90 python3 "$f" 2>&1 | tail -8; done) \
    | tee "$OUT/examples.log"
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  timeout 400 python3 backends/nvidia/bench/bench.py 2>&1 | tee "$OUT/bench.log" | tail -40
fi
