#!/usr/bin/env bash
# CI job for lint: ruff, hadolint on both Dockerfiles, shellcheck on the CI scripts.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=ci/lib.sh
source ci/lib.sh

ensure_nox
nox -s lint
