#!/usr/bin/env bash
# Install nvcc of the pinned CUDA release (CUDA_WHEELS in ci/versions.env) from NVIDIA's wheels and
# lay it out as a CUDA home: DIR/bin/nvcc, DIR/include, DIR/lib (and lib64). For machines and
# images without the CUDA toolkit: the CI kernels job and the stand-in CUDA devel image.
#
# Usage: ci/nvcc-wheel.sh DIR
#   PYTHON   the interpreter whose pip installs the wheels (default python3)
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [[ $# -ne 1 ]]; then
    echo "usage: $0 DIR" >&2
    exit 2
fi
dest="$1"
if [[ -e "$dest" ]]; then
    echo "nvcc-wheel: $dest exists; remove it or choose another DIR" >&2
    exit 2
fi
# shellcheck source=ci/versions.env
source "$here/versions.env"

staging="$(mktemp -d)"
trap 'rm -rf "$staging"' EXIT
"${PYTHON:-python3}" -m pip install --quiet --disable-pip-version-check --target "$staging" "$CUDA_WHEELS"
homes=("$staging"/nvidia/cu[0-9]*)
if [[ ! -x "${homes[0]}/bin/nvcc" ]]; then
    echo "nvcc-wheel: $CUDA_WHEELS installed no nvidia/cuNN/bin/nvcc" >&2
    exit 1
fi
mkdir -p "$(dirname "$dest")"
mv "${homes[0]}" "$dest"
ln -s lib "$dest/lib64"
echo "nvcc-wheel: CUDA home $dest ($("$dest/bin/nvcc" --version | tail -n 1))"
