"""``benchmarks/real_programs.py``: the runner behind the closing notes' counts of real programs.

A passing program is stopped at its check line (its benchmark loop never runs), a program without
the line fails with its status, one judged by its exit status passes on 0 unless it printed its
failure line, a refused build names the construct, and a bad manifest is an
argument error naming the entry."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import REPO

RUNNER = REPO / "benchmarks" / "real_programs.py"

# Checks one kernel's result, prints its check line and then "benchmarks" far past the
# runner's limit.
CHECKS_THEN_LOOPS = r"""
#include <cstdio>
#include <unistd.h>
__global__ void one(int* out) { *out = 42; }
int main() {
    int* d; int h = 0;
    cudaMalloc(&d, sizeof(int));
    one<<<1, 1>>>(d);
    cudaMemcpy(&h, d, sizeof(int), cudaMemcpyDeviceToHost);
    printf("value %d\n", h);
    if (h == 42) printf("All results match.\n");
    for (;;) sleep(1);
}
"""
WRONG = r"""
#include <cstdio>
int main() { printf("mismatch\n"); return 3; }
"""
# Checks by its exit status: prints a line only when its check fails, and exits 0 either way.
QUIET = r"""
#include <cstdio>
__global__ void twice(int* v) { v[threadIdx.x] *= 2; }
int main(int argc, char** argv) {
    int h[4] = {1, 2, 3, 4}; int* d;
    cudaMalloc(&d, sizeof h);
    cudaMemcpy(d, h, sizeof h, cudaMemcpyHostToDevice);
    twice<<<1, 4>>>(d);
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    int expect = argc > 1 ? 3 : 2;  // an argument makes the check fail
    for (int i = 0; i < 4; ++i)
        if (h[i] != expect * (i + 1)) { printf("Arrays do not match at %d\n", i); break; }
    return 0;
}
"""
# Its check line, then a failure at its end (as racecheck's report comes when a program ends).
LATE_FAILURE = r"""
#include <cstdio>
int main() { printf("All results match.\n"); fflush(stdout); return 5; }
"""
PTX = r"""
__global__ void lane(unsigned* out) { unsigned l; asm("mov.u32 %0, %%laneid;" : "=r"(l)); *out = l; }
int main() { return 0; }
"""


def _runner():
    spec = importlib.util.spec_from_file_location("real_programs", RUNNER)
    module = importlib.util.module_from_spec(spec)
    sys.modules["real_programs"] = module
    spec.loader.exec_module(module)
    return module


def _running(marker: str) -> list[str]:
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            text = cmdline.read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if marker in text:
            found.append(text)
    return found


@pytest.fixture
def root(tmp_path):
    programs = {
        "checks.cu": CHECKS_THEN_LOOPS,
        "wrong.cu": WRONG,
        "ptx.cu": PTX,
        "quiet.cu": QUIET,
        "late.cu": LATE_FAILURE,
    }
    for name, text in programs.items():
        (tmp_path / "src").mkdir(exist_ok=True)
        (tmp_path / "src" / name).write_text(text)
    return tmp_path


def _manifest(root, programs) -> str:
    path = root / "manifest.json"
    path.write_text(json.dumps({"defaults": {"cwd": "src", "passes": "results match"}, "programs": programs}))
    return str(path)


def test_runner_counts_passes_stops_at_the_check_and_names_refusals(root, tmp_path):
    manifest = _manifest(
        root,
        [
            {"name": "checks", "sources": ["src/checks.cu"]},
            {"name": "wrong", "sources": ["src/wrong.cu"]},
            {"name": "ptx", "sources": ["src/ptx.cu"]},
            {"name": "quiet", "sources": ["src/quiet.cu"], "exit_status": True, "fails": "do not match"},
            {
                "name": "quiet-fails",
                "sources": ["src/quiet.cu"],
                "args": ["wrong"],
                "exit_status": True,
                "fails": "do not match",
            },
            {"name": "wrong-status", "sources": ["src/wrong.cu"], "exit_status": True},
        ],
    )
    out = tmp_path / "out.json"
    limit = 240
    proc = subprocess.run(
        [
            sys.executable,
            str(RUNNER),
            manifest,
            "--root",
            str(root),
            "--limit",
            str(limit),
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=3 * limit,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = {o["name"]: o for o in json.loads(out.read_text())}
    # The program would loop forever after its check: it passed at the line, well before the limit.
    assert got["checks"]["verdict"] == "pass"
    assert got["checks"]["seconds"] < limit
    # ...and was stopped there, not left looping.
    assert not _running("program-checks-fast"), "the program still runs after its check line"
    assert got["wrong"]["verdict"] == "exit 3, no check line"
    assert got["ptx"]["verdict"] == "build refused"
    assert "asm" in got["ptx"]["detail"]
    # Judged by exit status: 0 and no failure line passes; the failure line or another status fails.
    assert got["quiet"]["verdict"] == "pass"
    assert got["quiet-fails"]["verdict"] == "check failed"
    assert got["quiet-fails"]["detail"] == "Arrays do not match at 0"
    assert got["wrong-status"]["verdict"] == "exit 3"
    assert "2/6 pass" in proc.stdout


def test_to_the_end_waits_past_the_check_line_for_a_clean_exit(root, tmp_path):
    manifest = _manifest(root, [{"name": "late", "sources": ["src/late.cu"]}])
    verdicts = []
    for extra in ([], ["--to-the-end"]):
        out = tmp_path / "out.json"
        cmd = [sys.executable, str(RUNNER), manifest, "--root", str(root), "--json", str(out), *extra]
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        verdicts.append(json.loads(out.read_text())[0]["verdict"])
    assert verdicts == ["pass", "exit 5 after the check line"]


@pytest.mark.parametrize("mode", ["memcheck", "racecheck", "synccheck"])
def test_runner_runs_programs_under_each_checker(root, tmp_path, mode):
    # Each checker's program is line-buffered too: one that would loop forever after its check
    # line passes at the line (memcheck once failed every program: its AddressSanitizer refused
    # the library a line-buffering wrapper preloaded).
    out = tmp_path / "out.json"
    manifest = _manifest(root, [{"name": "checks", "sources": ["src/checks.cu"]}])
    cmd = [sys.executable, str(RUNNER), manifest, "--root", str(root), "--mode", mode, "--json", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (got,) = json.loads(out.read_text())
    assert got["verdict"] == "pass", got
    assert not _running(f"program-checks-{mode}"), "the program still runs after its check line"


@pytest.mark.parametrize(
    "entry,message",
    [
        ({"name": "x", "sources": ["src/missing.cu"]}, "does not exist"),
        ({"name": "x"}, "needs 'name' and 'sources'"),
        ({"name": "x", "sources": ["src/checks.cu"], "colour": 1}, "unknown: colour"),
        ({"name": "x", "sources": "src/checks.cu"}, "lists of strings"),
        ({"name": "x", "sources": ["src/checks.cu"], "passes": "(["}, "not a regular expression"),
        ({"name": "x", "sources": ["src/checks.cu"], "fails": "no"}, "'fails' goes only with exit_status"),
        ({"name": "x", "sources": ["src/checks.cu"], "exit_status": "yes"}, "exit_status is true or false"),
        (
            {"name": "x", "sources": ["src/checks.cu"], "exit_status": True, "fails": "(["},
            "'fails' is not a regular expression",
        ),
    ],
)
def test_a_bad_manifest_entry_is_named(root, entry, message):
    with pytest.raises(ValueError, match=message):
        _runner().load_manifest(Path(_manifest(root, [entry])), root)


def test_defines_reach_run_and_an_entry_with_only_a_build_is_left_to_the_builder(root):
    runner = _runner()
    entries = [
        {"name": "x", "sources": ["src/checks.cu"], "defines": ["N=4", "FAST"], "note": "why", "build": {}},
        {"name": "built", "cwd": "src", "build": {"system": "make", "dir": "src", "program": "p"}},
    ]
    by_hand, built = runner.load_manifest(Path(_manifest(root, entries)), root)
    command = runner._command(by_hand, root, "fast", 10)
    assert command[command.index("-D") : command.index("-D") + 4] == ["-D", "N=4", "-D", "FAST"]
    assert built.sources == [] and built.build["system"] == "make"
    with pytest.raises(ValueError, match="lists of strings"):
        runner.load_manifest(Path(_manifest(root, [{**entries[0], "defines": "N=4"}])), root)


def test_a_checkout_without_a_simulator_is_named(root, tmp_path):
    manifest = _manifest(root, [{"name": "checks", "sources": ["src/checks.cu"]}])
    cmd = [sys.executable, str(RUNNER), manifest, "--root", str(root), "--checkout", str(tmp_path / "none")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "holds no simulator/" in proc.stderr
