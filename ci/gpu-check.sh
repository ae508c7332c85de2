#!/usr/bin/env bash
# The whole device check of a GPU day, in one command, on a bare GPU machine without Docker or
# network (NVIDIA driver, nvcc, numba-cuda, pytest preinstalled; PyTorch and compute-sanitizer
# used when present). Run from a copy of the working tree; nothing is pip-installed: the package
# is imported from the tree. Within 8 minutes (--budget) it does, in order:
#   precheck    nvidia-smi lists a GPU and its compute capability (else it stops, status 2)
#   build       python -m torchlight build-kernels --arch <that compute capability>
#   tests       the gpu tier of the suite (folders and environment from ci/tiers.py)
#   gpu-launch  the -m gpu_launch pass on the device
#   sanitize    compute-sanitizer memcheck and racecheck on the shipped kernels' launchers
#   bench       benchmarks/bench_gpu.py: GB/s and ratio to PyTorch CUDA, transfers apart
# and writes one report, gpu-check.md, under --out DIR (default: $OUT when set, else
# reports/gpu-check). The steps themselves are ci/gpu_check.py.
#
# Usage: bash ci/gpu-check.sh [--out DIR] [--logs DIR] [--only STEPS] [--skip STEPS] [--dry-run]
#                             [--budget SECONDS] [--jobs N]
#   PYTHON   the interpreter (default: python3)
# Exit status: 0 every step that ran passed, 1 a step failed, 2 no GPU or a bad argument.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"
python="${PYTHON:-python3}"
if ! command -v "$python" > /dev/null 2>&1; then
    echo "gpu-check: $python not found; install Python 3 or set PYTHON" >&2
    exit 2
fi
export PYTHONPATH="$repo_root${PYTHONPATH:+:$PYTHONPATH}"

# The gpu tier's test folders and environment, from the one tier table.
if ! tier_args="$("$python" -m ci.tiers pytest-args gpu)" || ! tier_env="$("$python" -m ci.tiers env gpu)"; then
    echo "gpu-check: python3 -m ci.tiers could not describe the gpu tier (see above)" >&2
    exit 2
fi
exec "$python" -m ci.gpu_check --tier-args "$tier_args" --tier-env "$tier_env" "$@"
