#!/usr/bin/env bash
# Build the CUDA C kernel libraries (softmax_kernel.so, layernorm_kernel.so) with nvcc.
#
# Usage: ci/build-kernels.sh [--out DIR] [--arch LIST] [--simulator]
#   --out DIR               where the .so files go (default: torchlight/cuda_kernels/)
#   --arch LIST / TORCHLIGHT_CUDA_ARCHS
#                           semicolon list of SM versions (default "80;90"): SASS for each, plus
#                           PTX for the highest so newer GPUs can JIT-compile it
#   NVCC                    the compiler to run (default: nvcc on PATH, $CUDA_HOME/bin,
#                           /usr/local/cuda/bin, then the nvcc of the pip CUDA wheels)
#   PYTHON                  the interpreter to run the build with (default: python3)
# This is `python -m torchlight build-kernels` run from the checkout: torchlight/build_kernels.py
# needs only the standard library, so a CUDA devel image with python3 builds the libraries
# without installing torchlight. cudart is linked statically (the libraries need only the
# NVIDIA driver at run time) and each library's exported launchers are checked.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
if ! command -v "$python" > /dev/null 2>&1; then
    echo "build-kernels: $python not found; install Python 3 (apt-get install python3) or set PYTHON" >&2
    exit 1
fi
exec "$python" "$repo_root/torchlight/build_kernels.py" "$@"
