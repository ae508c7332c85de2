"""``__trap()`` stops the kernel; the launch fails with cudaErrorLaunchFailure, sticky, reported once."""

from __future__ import annotations

import pytest

from .conftest import KERNELS, int_values, nvcc_compile, run_cli

PROGRAM = KERNELS / "device_trap.cu"


@pytest.mark.parametrize("fibers", ["0", "1"], ids=["plain-loop", "fibers"])
def test_trap_fails_the_launch_and_names_the_thread(monkeypatch, fibers):
    monkeypatch.setenv("SIMULATOR_FIBERS", fibers)
    proc = run_cli("run", str(PROGRAM), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = int_values(proc.stdout)
    assert got["clean"] == 0
    assert got["launch_failure"] != 0
    assert got["sync"] == got["launch_failure"]
    assert got["after"] == got["launch_failure"]  # sticky
    trap_line = next(i for i, s in enumerate(PROGRAM.read_text().splitlines(), 1) if "__trap();" in s)
    # global thread 37 of 2 blocks of 32: block 1, thread 5
    want = f"device_trap.cu:{trap_line}: block: [1,0,0], thread: [5,0,0] called __trap() (kernel 'trap_if')"
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("simulator: device trap:")]
    assert len(lines) == 1, proc.stderr
    assert want in lines[0]


def test_trap_program_compiles_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path)
    assert proc.returncode == 0, proc.stderr
