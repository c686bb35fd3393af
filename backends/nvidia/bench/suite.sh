#!/usr/bin/env bash
# The standard H200 benchmark set, each line tritium beside Triton 3.6 in one process (CUDA-event medians):
# examples 01 vector add, 02 softmax (persistent, 4 warps), 03 matmul fp16/bf16 (grouped ordering),
# 04 layer norm fp16 (4 warps), 06 launch overhead; then bench/bench.py's softmax (16 and 8 warps) and layer
# norm (8 warps) rows, the issue-14 table's "at 4 and 8 warps".
#   bash backends/nvidia/bench/suite.sh [TREE] [hopper]
# With "hopper" (issue 14's rows): also examples 07 (attention fwd/bwd), 08 (persistent descriptor matmul,
# fp16/bf16/fp8/tf32, warp_specialize) and bench/typed_matmul.py (fp8, tf32 on pointers); about 3 more minutes.
# TREE: a checkout (or `git archive` of one) whose examples/ and bench/ to run, default this checkout. The
# tritium that runs is whichever Python imports (install TREE's core and backends first, or put them on
# PYTHONPATH); on the device machine, after .device/install.sh: export PYTHONPATH=/tmp/site.
set -u
here=$(cd "$(dirname "$0")" && pwd)
hopper=0
if [ "${1:-}" = hopper ]; then hopper=1; shift; fi
if [ "${2:-}" = hopper ]; then hopper=1; fi
tree=$(cd "${1:-$here/../../..}" && pwd)
export PYTHONUNBUFFERED=1
python3 -c 'import tritium, sys; print("tritium from", tritium.__file__, "| python", sys.version.split()[0])'
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv,noheader 2>/dev/null
cd "$tree/examples" || exit 1
for f in 01-vector-add.py 02-fused-softmax.py 03-matrix-multiplication.py 04-layer-norm.py 06-launch-overhead.py; do
  echo "== $f"
  timeout 240 python3 "$f" 2>&1 | grep -v '^\s*$' | tail -8
done
echo "== bench/bench.py softmax softmax_8w layernorm"
timeout 240 python3 "$tree/backends/nvidia/bench/bench.py" softmax softmax_8w layernorm 2>&1 | tail -8
if [ "$hopper" = 1 ]; then
  cd "$tree/examples" || exit 1
  for f in 07-fused-attention.py 08-persistent-matmul-descriptors.py; do
    echo "== $f"
    timeout 300 python3 "$f" 2>&1 | grep -E "ratio|rel err|Error" | tail -12
  done
  echo "== bench/typed_matmul.py"
  timeout 400 python3 "$tree/backends/nvidia/bench/typed_matmul.py" 2>&1 | tail -6
fi
