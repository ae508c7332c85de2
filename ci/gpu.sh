#!/usr/bin/env bash
# CI job for the gpu tier on a self-hosted GPU runner: asserts a GPU first, builds Dockerfile.cuda,
# and runs the image's default `nox --no-venv -s tests-gpu` with `docker run --rm --gpus all`.
#   CUDA_ARCHS   SM list for the kernel libraries (default "80;90")
#   IMAGE        tag to build (default torchlight-cuda:ci)
#   SHARD        this runner's shard, e.g. "1/2" (empty: all tests)
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=ci/lib.sh
source ci/lib.sh

image="${IMAGE:-torchlight-cuda:ci}"

count_gpus() {
    "$@" nvidia-smi -L | grep -c '^GPU ' || true
}

if ! command -v nvidia-smi > /dev/null 2>&1; then
    echo "gpu: nvidia-smi not found on this runner: no NVIDIA driver, cannot run the gpu tier" >&2
    exit 1
fi
host_gpus="$(count_gpus)"
if [[ "$host_gpus" -eq 0 ]]; then
    echo "gpu: nvidia-smi lists no GPU on this runner" >&2
    exit 1
fi
echo "gpu: $host_gpus GPU(s) on the host"

docker build -f Dockerfile.cuda --build-arg "CUDA_ARCHS=${CUDA_ARCHS:-80;90}" -t "$image" .

# The container must see the devices too (NVIDIA container toolkit), or the tier is meaningless.
container_gpus="$(count_gpus docker run --rm --gpus all "$image")"
if [[ "$container_gpus" -eq 0 ]]; then
    echo "gpu: the container sees no GPU: is the NVIDIA container toolkit installed?" >&2
    exit 1
fi
echo "gpu: $container_gpus GPU(s) visible inside the container"

mkdir -p reports/raw
chmod 0777 reports/raw
mapfile -t args < <(pytest_job_args gpu)
docker run --rm --gpus all \
    -v "$PWD/reports:/home/tl/torchlight/reports" \
    "$image" nox --no-venv -s tests-gpu -- "${args[@]}"
