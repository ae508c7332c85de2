#!/usr/bin/env bash
# CI job for the kernels tier: `nox -s kernels`, on this runner's shard ($SHARD, e.g. "1/2").
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=ci/lib.sh
source ci/lib.sh

ensure_nox
mapfile -t args < <(pytest_job_args kernels)
nox -s kernels -- "${args[@]}"
