#!/usr/bin/env bash
# CI job that builds both images (needs a Docker engine); the cpu image also runs its tier.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=ci/lib.sh
source ci/lib.sh

ensure_nox
nox -s docker-cpu docker-cuda
