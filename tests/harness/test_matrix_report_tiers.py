"""The matrix report is exact for every selection: which tiers ran, which were not selected or
cannot run here (each with its reason), the compile check's counts, and a header with the commit,
date, CPU count and each tier's Python and package versions. Names agree across nox, report, README."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from noxfile_sessions import nox_sessions

from ci import matrix_report as report
from ci import tiers
from simulator.host import cpu_count

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()


def _result_file(path: Path, tier: str, outcomes: list[str], numpy_version: str = "2.0.0") -> None:
    results = [
        {"nodeid": f"t.py::t{i}", "op": "add", "backend": "cpu", "tier": tier, "outcome": o, "reason": ""}
        for i, o in enumerate(outcomes)
    ]
    packages = {"numpy": numpy_version, "numba": "0.62.0", "numba-cuda": "not installed"}
    path.write_text(json.dumps({"tier": tier, "python": "3.11.7", "packages": packages, "results": results}))


def _run_report(tmp_path: Path, tiers: list[dict] | None, files: dict[str, list[str]], compile_counts=None):
    raw = tmp_path / "raw"
    raw.mkdir(exist_ok=True)
    for tier, outcomes in files.items():
        _result_file(raw / f"{tier}.json", tier, outcomes)
    if compile_counts is not None:
        (raw / "compile_ptx.json").write_text(json.dumps({"compile_ptx": compile_counts}))
    out = tmp_path / "out"
    if tiers is None:
        args = [str(p) for p in sorted(raw.glob("*.json"))]
    else:
        (raw / "tiers.json").write_text(json.dumps(tiers))
        args = ["--tiers", str(raw / "tiers.json")]
    assert report.main([*args, "--out", str(out)]) == 0
    return (out / "matrix.md").read_text(), json.loads((out / "matrix.json").read_text())


def _tier(tier: str, status: str, reason: str = "", seconds: float | None = None) -> dict:
    entry = {"tier": tier, "session": report.TIER_SESSIONS[tier], "status": status}
    if reason:
        entry["reason"] = reason
    if seconds is not None:
        entry["seconds"] = seconds
    return entry


def _rows(md: str) -> dict[str, list[str]]:
    rows = {}
    for line in md.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 6 and cells[1].startswith("`nox -s"):
            rows[cells[0]] = cells
    return rows


def test_a_selection_reports_each_tier_as_ran_not_selected_or_cannot_run(tmp_path):
    selection = "not in TORCHLIGHT_MATRIX_TIERS=sanitize"
    tiers = [
        _tier("cpu", "not selected", selection),
        _tier("cudasim", "not selected", selection),
        _tier("kernels", "not selected", selection),
        _tier("sanitize", "passed", seconds=12.0),
        _tier("gpu", "cannot run here", "nvidia-smi not found on PATH"),
    ]
    md, data = _run_report(tmp_path, tiers, {"sanitize": ["passed", "passed", "skipped"]})
    assert "None: every tier ran here" not in md
    rows = _rows(md)
    assert rows["sanitize"][2:5] == ["yes", "passed", "12 s"] and rows["sanitize"][5] == "2 passed, 1 skipped"
    assert rows["cpu"][2:4] == ["no", "not selected"] and rows["cpu"][5] == selection
    assert rows["gpu"][2:4] == ["no", "cannot run here"] and rows["gpu"][5] == "nvidia-smi not found on PATH"
    assert "Ran: sanitize. Not selected: cpu, cudasim, kernels. Cannot run here: gpu." in md
    assert "- **cpu** (`nox -s tests-cpu`): not selected: " + selection in md
    assert "compile_ptx: not run (kernels tier not selected: " + selection + ")" in md
    assert [t["tier"] for t in data["not_run"]] == ["cpu", "cudasim", "kernels", "gpu"]


def test_every_tier_ran_is_said_only_when_all_ran(tmp_path):
    tiers = [_tier(t, "passed") for t in report.TIER_ORDER]
    files = {t: ["passed"] for t in report.TIER_ORDER}
    counts = {"passed": 4, "total": 4, "kernels": 2, "archs": ["sm_80", "sm_90"], "ptxas": "/x/ptxas"}
    md, _ = _run_report(tmp_path, tiers, files, compile_counts=counts)
    assert "None: every tier ran here." in md
    assert f"Ran: {', '.join(report.TIER_ORDER)}." in md


def test_a_failed_tier_keeps_its_reason_and_counts(tmp_path):
    tiers = [_tier("cpu", "failed", "nox session exited 1", 3.0)]
    md, _ = _run_report(tmp_path, tiers, {"cpu": ["passed", "failed"]})
    assert _rows(md)["cpu"][2:] == ["yes", "failed", "3 s", "nox session exited 1; 1 passed, 1 failed"]
    others = [name for name in report.TIER_ORDER if name != "cpu"]
    assert f"The tier summary does not mention {', '.join(others)}." in md


def test_without_a_tier_summary_missing_tiers_are_unknown_not_ran(tmp_path):
    md, data = _run_report(tmp_path, None, {"cpu": ["passed"], "cudasim": ["passed", "error"]})
    rows = _rows(md)
    assert rows["cpu"][2:4] == ["yes", "passed"] and rows["cudasim"][2:4] == ["yes", "failed"]
    for tier in ("kernels", "sanitize", "gpu"):
        assert rows[tier][2:4] == ["no", "unknown"], rows[tier]
        assert "no tier summary" in rows[tier][5]
    assert "None: every tier ran here" not in md


def test_compile_counts_and_failures_are_shown(tmp_path):
    counts = {
        "passed": 123,
        "total": 124,
        "kernels": 62,
        "archs": ["sm_80", "sm_90"],
        "ptxas": None,
        "failures": ["matmul_kernel sm_90: ptxas: too many registers"],
    }
    tiers = [_tier("kernels", "failed", "nox session exited 1")]
    md, data = _run_report(tmp_path, tiers, {"kernels": ["passed"]}, compile_counts=counts)
    assert "compile_ptx: 123/124 kernel builds passed (62 kernels x sm_80, sm_90; PTX only, no ptxas)" in md
    assert "  - matmul_kernel sm_90: ptxas: too many registers" in md
    assert data["compile"]["total"] == 124


def test_kernels_tier_that_ran_without_counts_says_so(tmp_path):
    md, _ = _run_report(tmp_path, [_tier("kernels", "passed")], {"kernels": ["passed"]})
    assert "compile_ptx: no result recorded although the kernels tier ran (compile_ptx.json missing)" in md


def test_header_names_commit_date_cpus_and_each_tiers_versions(tmp_path):
    md, data = _run_report(tmp_path, None, {"cpu": ["passed"]})
    header = data["header"]
    assert header["cpus"] == cpu_count()
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", header["date"])
    if shutil.which("git") and (ROOT / ".git").exists():
        head = subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True, cwd=ROOT, check=True
        ).stdout.strip()
        # The report reads the repository it runs in (its working directory).
        cwd = os.getcwd()
        os.chdir(ROOT)
        try:
            assert report.machine_header()["commit"] == head
        finally:
            os.chdir(cwd)
    assert f"{cpu_count()} CPUs" in md
    assert "| tier | Python | numpy | numba | numba-cuda |" in md
    assert "| cpu | 3.11.7 | 2.0.0 | 0.62.0 | not installed |" in md


def test_the_plugin_records_package_versions(tmp_path):
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    out = tmp_path / "r.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests")}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "matrix_plugin",
            "-p",
            "no:cacheprovider",
            f"--matrix-json={out}",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    payload = json.loads(out.read_text())
    import numpy

    assert payload["packages"]["numpy"] == numpy.__version__
    assert set(payload["packages"]) == {"numpy", "numba", "numba-cuda"}


# --- names agree: nox -l, the report, the README ----------------------------------------------


def test_tier_names_agree_in_nox_report_and_readme():
    sessions = nox_sessions()
    assert report.TIER_ORDER == list(tiers.TIERS)
    assert report.TIER_SESSIONS == {name: tier.session for name, tier in tiers.TIERS.items()}
    for tier, session in report.TIER_SESSIONS.items():
        assert sessions[session].startswith(f"{tier} tier:"), (
            f"nox -l describes {session} as {sessions[session][:40]!r}; it is the {tier} tier"
        )
        assert f"| {tier} | `nox -s {session}` |" in README, f"README's test matrix lacks the {tier} tier row"
    noxfile = (ROOT / "noxfile.py").read_text()
    assert "compile tier" not in noxfile and "compile tier" not in README


def test_the_kernels_row_names_the_nvcc_it_was_built_with(tmp_path):
    # What `python -m ci.tiers nvcc --json` writes in the kernels session (reports/raw/nvcc-kernels.json).
    raw = tmp_path / "raw"
    raw.mkdir()
    wheel_nvcc = {
        "path": "/venv/nvidia/cu13/bin/nvcc",
        "origin": "the pip cuda-toolkit wheel",
        "release": "13.0",
    }
    (raw / "nvcc-kernels.json").write_text(json.dumps({"nvcc": wheel_nvcc}))
    md, data = _run_report(
        tmp_path, [_tier("kernels", "passed"), _tier("cpu", "passed")], {"kernels": ["passed"]}
    )
    row = _rows(md)["kernels"]
    assert row[2:4] == ["yes", "passed"]
    assert "/venv/nvidia/cu13/bin/nvcc" in row[5] and "the pip cuda-toolkit wheel" in row[5], row
    assert "nvcc" not in _rows(md)["cpu"][5]
    assert next(t for t in data["tiers"] if t["tier"] == "kernels")["nvcc"] == wheel_nvcc
    # The CI report job passes every file of reports/raw/ explicitly: the nvcc record is one of them.
    out = tmp_path / "explicit"
    assert report.main([str(raw / "kernels.json"), str(raw / "nvcc-kernels.json"), "--out", str(out)]) == 0
    assert "/venv/nvidia/cu13/bin/nvcc" in _rows((out / "matrix.md").read_text())["kernels"][5]
