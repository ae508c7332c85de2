#!/usr/bin/env bash
# One-shot check on a bare GPU machine without Docker or network (numba, numba-cuda, nvcc and
# pytest preinstalled; hypothesis may come as a wheel in .whl/): builds the kernel libraries,
# runs the gpu tier of the suite, then the benchmarks, and keeps every log in LOG_DIR.
#   LOG_DIR   where logs go (default: $OUT when set, else reports/gpu-check)
#   JOBS      pytest-xdist workers (default 8)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

logs="${LOG_DIR:-${OUT:-reports/gpu-check}}"
mkdir -p "$logs"
status=0

if ! nvidia-smi > "$logs/nvidia-smi.txt" 2>&1; then
    echo "gpu-check: nvidia-smi failed: no usable NVIDIA driver here" >&2
    exit 1
fi
if compgen -G ".whl/*.whl" > /dev/null; then
    python3 -m pip install -q --no-index --no-deps --target /tmp/tl-site .whl/*.whl || exit 1
    export PYTHONPATH="/tmp/tl-site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONPATH=".${PYTHONPATH:+:$PYTHONPATH}"

bash ci/build-kernels.sh --out build/kernels > "$logs/build.log" 2>&1 || { echo "gpu-check: kernel build failed" >&2; exit 1; }

TORCHLIGHT_TEST_TIER=gpu TORCHLIGHT_TEST_BACKENDS=cuda,cuda-c TORCHLIGHT_CUDA_KERNEL_DIR=build/kernels \
    timeout 420 python3 -m pytest -q -n "${JOBS:-8}" tests > "$logs/tests-gpu.log" 2>&1 || status=1
tail -n 5 "$logs/tests-gpu.log"

python3 -m torchlight info > "$logs/info.txt" 2>&1 || status=1
timeout 120 python3 benchmarks/bench.py --backends cpu,cuda > "$logs/bench.log" 2>&1 || status=1
tail -n 40 "$logs/bench.log"
exit "$status"
