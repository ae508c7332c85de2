"""`nox -s matrix`: run every tier of ci/tiers.py this machine supports, then the report.

Each tier runs as its own nested ``nox -s <session>`` with ``--matrix-json`` into reports/raw/;
a tier that cannot run here (``Tier.problem``) or is not in ``TORCHLIGHT_MATRIX_TIERS`` gets a
record saying why. ``ci/matrix_report.py`` merges the records into reports/matrix.md, .json and .html.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from ci import tiers
from ci.tiers import ROOT

if TYPE_CHECKING:
    import nox

# Relative to the repository root, where nox runs its sessions.
RAW = tiers.RAW_RESULTS
REPORTS = RAW.parent


def run(session: nox.Session, noxfile: Path, no_venv: bool) -> None:
    """Run the selected tiers through ``noxfile``, write the report, fail on a failed or refused tier.

    ``no_venv``: the matrix runs under ``nox --no-venv``, so its tiers install nothing.
    """
    if RAW.exists():
        shutil.rmtree(RAW)
    RAW.mkdir(parents=True)
    nested = [sys.executable, "-m", "nox", "--noxfile", str(noxfile)]
    if no_venv:
        nested.append("--no-venv")
    chosen = [t.strip() for t in os.environ.get("TORCHLIGHT_MATRIX_TIERS", "").split(",") if t.strip()]
    unknown = sorted(set(chosen) - set(tiers.TIERS))
    if unknown:
        session.error(
            f"TORCHLIGHT_MATRIX_TIERS names unknown tiers {unknown}; known: {', '.join(tiers.TIERS)}"
        )
    records = []
    for name, tier in tiers.TIERS.items():
        problem = tier.problem(can_install=not no_venv)
        record = {"tier": name, "session": tier.session}
        if chosen and name not in chosen:
            reason = f"not in TORCHLIGHT_MATRIX_TIERS={','.join(chosen)}"
            reason += f" (nor could it run here: {problem})" if problem else ""
            records.append({**record, "status": "not selected", "reason": reason})
            continue
        if problem:
            session.log(f"tier {name}: cannot run here: {problem}")
            records.append({**record, "status": "cannot run here", "reason": problem})
            continue
        out = RAW / f"{name}.json"
        cmd = [*nested, "-s", tier.session, "--", f"--matrix-json={out}", f"--matrix-tier={name}"]
        cmd += session.posargs
        session.log(f"tier {name}: {' '.join(cmd)}")
        start = time.monotonic()
        code = subprocess.call(cmd, cwd=ROOT)
        record.update(seconds=round(time.monotonic() - start, 1), **_tier_outcome(code, out))
        session.log(f"tier {name}: {record['status']} {record.get('reason', '')}")
        records.append(record)
    (RAW / "tiers.json").write_text(json.dumps(records, indent=2) + "\n")
    report = [
        sys.executable,
        "-m",
        "ci.matrix_report",
        "--tiers",
        str(RAW / "tiers.json"),
        "--out",
        str(REPORTS),
    ]
    session.run(*report, external=True)
    failed = [t["tier"] for t in records if t["status"] == "failed"]
    # A tier named in TORCHLIGHT_MATRIX_TIERS was asked for: if it cannot run, the run fails.
    refused = [t["tier"] for t in records if t["status"] == "cannot run here" and t["tier"] in chosen]
    problems = [f"tiers failed: {', '.join(failed)}"] if failed else []
    problems += [f"asked for but cannot run here: {', '.join(refused)}"] if refused else []
    if problems:
        session.error(f"{'; '.join(problems)} (see reports/matrix.md)")


def _tier_outcome(code: int, out: Path) -> dict[str, str]:
    """A tier run's status from its nox exit code and its result file."""
    if code != 0:
        return {"status": "failed", "reason": f"nox session exited {code}"}
    if not out.is_file():
        return {"status": "failed", "reason": f"no results in {out}: the matrix plugin did not run"}
    results = json.loads(out.read_text()).get("results", [])
    if not any(r["outcome"] == "passed" for r in results):
        return {"status": "failed", "reason": f"no test passed ({len(results)} recorded)"}
    return {"status": "passed"}
