"""No compiler outlives the simulator: a build killed by SIGKILL (a test's timeout, a stopped CI
job) takes the compiler it started, and every process that compiler started, with it.

``CXX`` is a wrapper that is g++ except for the source named ``slow_compile_marker``: for that it
starts a long ``sleep`` (a compiler's child, as ``cc1plus`` is the driver's), writes both process
ids to a file and waits, so the build is certainly inside the compile when the test kills it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from simulator.tests.conftest import REPO

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc (Linux)")

WRAPPER = """#!/bin/sh
case "$*" in
  *slow_compile_marker*)
    sleep 300 &
    echo "$$ $!" > "$SLOW_COMPILE_PIDS.tmp"
    mv "$SLOW_COMPILE_PIDS.tmp" "$SLOW_COMPILE_PIDS"
    wait
    ;;
esac
exec g++ "$@"
"""

PROGRAM = r"""
#include <cstdio>
__global__ void k(int* x) { *x = 1; }
int main() { printf("built\n"); return 0; }
"""


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a process that is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def _wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def _kill_during_compile(tmp_path: Path, args: list[str]) -> list[int]:
    """Start ``python -m simulator ARGS`` with the wrapper as CXX, SIGKILL it inside the slow
    compile; the compiler's process ids."""
    wrapper = tmp_path / "slow-g++"
    wrapper.write_text(WRAPPER)
    wrapper.chmod(0o755)
    pids = tmp_path / "pids"
    env = {**os.environ, "CXX": str(wrapper), "SLOW_COMPILE_PIDS": str(pids)}
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen(
        [sys.executable, "-m", "simulator", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        # The build may first make the runtime or the supervisor in a fresh cache: minutes at most.
        started = _wait_for(lambda: pids.is_file() or proc.poll() is not None, 600)
        assert started and proc.poll() is None, f"the build ended first: {proc.stderr.read().decode()}"
        compilers = [int(p) for p in pids.read_text().split()]
        assert all(_alive(p) for p in compilers)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
    return compilers


def _assert_gone(compilers: list[int]) -> None:
    """Every process of ``compilers`` ends within 10 s (a failure kills those left, by their id)."""
    gone = _wait_for(lambda: not any(_alive(p) for p in compilers), 10)
    left = [p for p in compilers if _alive(p)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    assert gone, f"compiler processes {left} outlived the killed build"


def test_run_killed_leaves_no_compiler(tmp_path):
    """``run`` killed during its compile: the compiler and its child are gone within seconds."""
    (tmp_path / "slow_compile_marker.cu").write_text(PROGRAM)
    _assert_gone(_kill_during_compile(tmp_path, ["run", "slow_compile_marker.cu"]))


def test_nvcc_killed_leaves_no_preprocessor(tmp_path):
    """``nvcc -M`` (a g++ that nvcc's driver starts itself) killed: no process of it is left."""
    (tmp_path / "slow_compile_marker.cu").write_text(PROGRAM)
    _assert_gone(_kill_during_compile(tmp_path, ["nvcc", "-M", "slow_compile_marker.cu"]))
