#!/usr/bin/env bash
# Helpers the ci/<tier>.sh job scripts source: a nox that works on a bare runner or container,
# and the pytest arguments for this runner's shard and its matrix-report file.

# Puts nox and uv on PATH, in a private virtualenv when the system Python lacks them.
ensure_nox() {
    if command -v nox > /dev/null 2>&1 && command -v uv > /dev/null 2>&1; then
        return 0
    fi
    if ! command -v python3 > /dev/null 2>&1 || ! python3 -c 'import venv, ensurepip' > /dev/null 2>&1; then
        if command -v apt-get > /dev/null 2>&1; then
            echo "ci: installing python3 and python3-venv with apt-get"
            apt-get update -qq
            apt-get install -y -qq --no-install-recommends python3 python3-venv > /dev/null
        else
            echo "ci: python3 with venv is required and apt-get is not available to install it" >&2
            return 1
        fi
    fi
    local venv="${RUNNER_TEMP:-/tmp}/torchlight-nox"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet "nox>=2024.10.9" "uv>=0.5"
    export PATH="$venv/bin:$PATH"
}

# Prints the pytest arguments for this job: `--shard I/N` from $SHARD (e.g. "2/4", empty for
# one runner) and `--matrix-json` into reports/raw/ so the report job can merge every tier.
pytest_job_args() {
    local tier="$1"
    local label="$tier"
    if [[ -n "${SHARD:-}" ]]; then
        printf '%s\n' "--shard=$SHARD"
        label="$tier-${SHARD/\//of}"
    fi
    printf '%s\n' "--matrix-json=reports/raw/$label.json" "--matrix-tier=$tier"
}
