"""The matrix plugin (records, shards, xdist) and the report that merges the tiers."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

DEMO = textwrap.dedent(
    """
    import pytest

    @pytest.fixture(params=["cpu", "numba"])
    def backend(request):
        return request.param

    @pytest.mark.op("add")
    def test_add(backend):
        assert backend in ("cpu", "numba")

    @pytest.mark.op("add")
    def test_add_skipped(backend):
        pytest.skip(f"{backend} has no such kernel")

    @pytest.mark.op("mul")
    def test_mul_fails_on_numba(backend):
        assert backend == "cpu"

    def test_no_marker():
        pass

    @pytest.fixture
    def broken():
        raise RuntimeError("setup broke")

    def test_setup_error(broken):
        pass
    """
)


SKIPPED_MODULE = 'import pytest\n\npytest.skip("needs a GPU", allow_module_level=True)\n'


def run_demo(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    (tmp_path / "test_demo.py").write_text(DEMO)
    (tmp_path / "test_skipped_module.py").write_text(SKIPPED_MODULE)
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers =\n    op(name): matrix row\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests"), "TORCHLIGHT_TEST_TIER": "cpu"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "matrix_plugin", "-p", "no:cacheprovider", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def records(path: Path) -> dict[str, dict]:
    return {r["nodeid"]: r for r in json.loads(path.read_text())["results"]}


EXPECTED = {
    "test_demo.py::test_add[cpu]": ("add", "cpu", "passed"),
    "test_demo.py::test_add[numba]": ("add", "numba", "passed"),
    "test_demo.py::test_add_skipped[cpu]": ("add", "cpu", "skipped"),
    "test_demo.py::test_add_skipped[numba]": ("add", "numba", "skipped"),
    "test_demo.py::test_mul_fails_on_numba[cpu]": ("mul", "cpu", "passed"),
    "test_demo.py::test_mul_fails_on_numba[numba]": ("mul", "numba", "failed"),
    "test_demo.py::test_no_marker": ("test_demo", "-", "passed"),
    "test_demo.py::test_setup_error": ("test_demo", "-", "error"),
    "test_skipped_module.py": ("test_skipped_module", "-", "skipped"),
}


@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["plain", "xdist"])
def test_plugin_records_op_backend_outcome_and_skip_reason(tmp_path, workers):
    if workers and importlib.util.find_spec("xdist") is None:
        pytest.skip("pytest-xdist not installed")
    out = tmp_path / "raw" / "cpu.json"
    proc = run_demo(tmp_path, *workers, f"--matrix-json={out}", "--matrix-tier=cudasim")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # one failure and one error are planted
    got = records(out)
    assert {k: (r["op"], r["backend"], r["outcome"]) for k, r in got.items()} == EXPECTED
    assert {r["tier"] for r in got.values()} == {"cudasim"}
    assert got["test_demo.py::test_add_skipped[numba]"]["reason"] == "numba has no such kernel"
    assert "setup broke" in got["test_demo.py::test_setup_error"]["reason"]
    assert got["test_skipped_module.py"]["reason"] == "needs a GPU"
    assert json.loads(out.read_text())["exitstatus"] == 1


def test_shards_partition_the_tests(tmp_path):
    seen: list[str] = []
    for index in (1, 2, 3):
        out = tmp_path / f"shard{index}.json"
        run_demo(tmp_path, f"--shard={index}/3", f"--matrix-json={out}")
        shard = list(records(out))
        assert shard, f"shard {index}/3 ran nothing"
        seen += shard
    tests = [nodeid for nodeid in seen if "::" in nodeid]  # a skipped module shows in every shard
    assert sorted(tests) == sorted(k for k in EXPECTED if "::" in k), "shards must run every test once"
    assert set(seen) == set(EXPECTED)


@pytest.mark.parametrize("bad", ["0/2", "3/2", "x/2", "1-2"])
def test_bad_shard_is_a_usage_error_naming_the_value(tmp_path, bad):
    proc = run_demo(tmp_path, f"--shard={bad}")
    assert proc.returncode == 4  # pytest's usage-error exit code
    assert bad in proc.stderr


def load_report_module():
    from ci import matrix_report

    return matrix_report


def test_report_merges_tiers_into_rows_and_columns(tmp_path):
    report = load_report_module()
    raw = tmp_path / "raw"
    raw.mkdir()

    def rec(op, backend, tier, outcome, reason=""):
        nodeid = f"t.py::{op}-{backend}-{tier}-{outcome}-{reason}"
        return {
            "nodeid": nodeid,
            "op": op,
            "backend": backend,
            "tier": tier,
            "outcome": outcome,
            "reason": reason,
        }

    cpu = [rec("add", "cpu", "cpu", "passed"), rec("add", "numba", "cpu", "skipped", "no numba-cuda")]
    sim = [rec("add", "cuda-c", "cudasim", "failed"), rec("add", "cuda", "cudasim", "passed")]
    (raw / "cpu.json").write_text(json.dumps({"results": cpu}))
    (raw / "cudasim.json").write_text(json.dumps({"results": sim}))
    tiers = [
        {"tier": "cpu", "session": "tests-cpu", "status": "passed", "seconds": 1.0},
        {"tier": "cudasim", "session": "tests-cudasim", "status": "failed", "seconds": 2.0},
        {"tier": "gpu", "session": "tests-gpu", "status": "unavailable", "reason": "nvidia-smi not found"},
    ]
    (raw / "tiers.json").write_text(json.dumps(tiers))
    assert report.main(["--tiers", str(raw / "tiers.json"), "--out", str(tmp_path / "out")]) == 0
    data = json.loads((tmp_path / "out" / "matrix.json").read_text())
    assert data["columns"] == ["cpu", "numba", "cuda (cudasim)", "cuda-c (simulated)"]
    assert data["ops"]["add"]["numba"]["skip_reasons"] == {"no numba-cuda": 1}
    assert data["ops"]["add"]["cuda-c (simulated)"]["failed"] == 1
    assert data["totals"] == {"passed": 2, "failed": 1, "error": 0, "skipped": 1}
    md = (tmp_path / "out" / "matrix.md").read_text()
    assert "no numba-cuda" in md
    assert "**gpu** (`nox -s tests-gpu`): cannot run here: nvidia-smi not found" in md


def test_report_rejects_a_file_that_is_not_plugin_output(tmp_path, capsys):
    report = load_report_module()
    bogus = tmp_path / "bogus.json"
    bogus.write_text("[1, 2]")
    assert report.main([str(bogus), "--out", str(tmp_path / "out")]) == 2
    assert "bogus.json" in capsys.readouterr().err


def test_report_has_a_docker_section_from_the_docker_sessions(tmp_path):
    report = load_report_module()
    raw = tmp_path / "raw"
    raw.mkdir()
    rec = {
        "nodeid": "t.py::a",
        "op": "add",
        "backend": "cpu",
        "tier": "cpu",
        "outcome": "passed",
        "reason": "",
    }
    (raw / "cpu.json").write_text(json.dumps({"results": [rec]}))
    docker = tmp_path / "docker"
    docker.mkdir()
    counts = {"passed": 5, "failed": 0, "error": 0, "skipped": 2}
    image = {
        "tag": "torchlight-cpu:dev",
        "build_seconds": 61.2,
        "size_bytes": 1_230_000_000,
        "bases": ["base torchlight-standin/debian:bookworm (stand-in for python:3.11-slim-bookworm)"],
        "checks": [],
        "problems": [],
        "tests": {
            "tests-cpu": {"exit": 0, "seconds": 300.4, "inside": counts, "outside": counts, "match": True}
        },
    }
    bad = {
        **image,
        "tag": "torchlight-cuda:dev",
        "problems": ["softmax_kernel.so does not export x"],
        "tests": {},
    }
    (docker / "cpu.json").write_text(
        json.dumps({"session": "docker-cpu", "status": "passed", "images": [image]})
    )
    (docker / "cuda.json").write_text(
        json.dumps({"session": "docker-cuda", "status": "failed", "images": [bad]})
    )
    out = tmp_path / "out"
    assert report.main([str(raw / "cpu.json"), "--docker", str(docker), "--out", str(out)]) == 0
    md = (out / "matrix.md").read_text()
    section = md[md.index("## Docker") :]
    assert (
        "`torchlight-cpu:dev` | passed | 61 s | 1.23 GB | base torchlight-standin/debian:bookworm" in section
    )
    assert "failed: softmax_kernel.so does not export x" in section
    assert (
        "| `torchlight-cpu:dev` | `nox -s tests-cpu` | 5 / 0 / 0 / 2 | 5 / 0 / 0 / 2 | match | 0 | 300 s |"
        in section
    )
    assert [r["session"] for r in json.loads((out / "matrix.json").read_text())["docker"]] == [
        "docker-cpu",
        "docker-cuda",
    ]


def test_report_rejects_a_docker_record_that_is_not_one(tmp_path, capsys):
    report = load_report_module()
    docker = tmp_path / "docker"
    docker.mkdir()
    (docker / "cpu.json").write_text(json.dumps({"results": []}))
    assert report.main(["--docker", str(docker), "--out", str(tmp_path / "out")]) == 2
    assert "cpu.json is not a docker session record" in capsys.readouterr().err


def test_report_links_the_last_mutation_session_or_says_how_to_run_one(tmp_path):
    report = load_report_module()
    raw = tmp_path / "raw"
    raw.mkdir()
    rec = {
        "nodeid": "t.py::test_a",
        "op": "add",
        "backend": "cpu",
        "tier": "cpu",
        "outcome": "passed",
        "reason": "",
    }
    (raw / "cpu.json").write_text(json.dumps({"results": [rec]}))
    out = tmp_path / "out"
    assert report.main([str(raw / "cpu.json"), "--out", str(out)]) == 0
    assert "Not run here: `nox -s mutants`" in (out / "matrix.md").read_text()
    summary = {"killed": 9, "survived": 1, "equivalent": 2, "score": 0.9}
    session = {"summary": summary, "date": "today", "commit": "abc", "wall_seconds": 120.0, "mutants": []}
    (out / "mutants.json").write_text(json.dumps(session))
    assert report.main([str(raw / "cpu.json"), "--out", str(out)]) == 0
    section = (out / "matrix.md").read_text().split("## Mutation testing")[1]
    assert "9 of 10 non-equivalent mutants killed (90.0%), 1 survived, 2 equivalent" in section
    assert "[mutants.md](mutants.md)" in section
    assert json.loads((out / "matrix.json").read_text())["mutants"]["summary"] == summary
