#!/usr/bin/env bash
# Reads ci/matrix.yml and prints `tiers=<json>` for $GITHUB_OUTPUT: per tier its runner, container,
# script and the list of shard labels ("1/2", "2/2"; "" for a single runner).
set -euo pipefail
cd "$(dirname "$0")/.."

python3 -m pip install --quiet "pyyaml>=6"
python3 - <<'PY'
import json

import yaml

with open("ci/matrix.yml") as f:
    tiers = yaml.safe_load(f)["tiers"]
plan = {}
for name, spec in tiers.items():
    shards = int(spec.get("shards", 1))
    if shards < 1:
        raise SystemExit(f"ci/matrix.yml: tier {name} has shards={shards}; need >= 1")
    plan[name] = {
        "script": spec["script"],
        "runs-on": spec["runs-on"],
        "container": spec.get("container", ""),
        "shards": [f"{i}/{shards}" for i in range(1, shards + 1)] if shards > 1 else [""],
    }
print("tiers=" + json.dumps(plan, separators=(",", ":")))
PY
