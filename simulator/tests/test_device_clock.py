"""clock() called from device code builds and runs, as with nvcc (the README lists it as the C
library's clock here); the computed values around it are unchanged."""

from __future__ import annotations

from .conftest import KERNELS, run_cli
from .test_run import _values

PROGRAM = KERNELS / "program_device_clock.cu"


def test_device_clock_builds_and_never_runs_backwards():
    proc = run_cli("run", str(PROGRAM), "--mode", "fast")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "calls the host function 'clock'" not in proc.stderr
    v = _values(proc.stdout)
    assert int(v["sum0"]) == sum(r % 7 for r in range(1000))
    assert v["forward"] == "1"
    assert v["error"] == "cudaSuccess"
