"""Device ``clock()`` reads the modelled SM clock (the counter ``clock64()`` reads), not CPU time."""

from __future__ import annotations

from .conftest import KERNELS, int_values, nvcc_compile, run_cli

PROGRAM = KERNELS / "device_clock.cu"


def test_device_clock_advances_with_clock64():
    proc = run_cli("run", str(PROGRAM), timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = int_values(proc.stdout)
    assert got["err"] == 0
    target = got["rate_khz"] * 2  # cycles in 2 ms at the device's own clock rate
    assert got["target"] == target
    # The spin ended once clock() had advanced by the target...
    assert got["clock_delta"] >= target
    # ...and clock64() over the same stretch saw the same cycles (plus the reads around the spin;
    # the slack allows for the OS pausing the thread). The C library's clock() counts CPU
    # microseconds: clock64 would then read about 1410 times clock()'s advance.
    assert got["clock_delta"] <= got["clock64_delta"] <= got["clock_delta"] + 10 * target
    assert got["host_clock_ok"] == 1


def test_device_clock_program_compiles_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path)
    assert proc.returncode == 0, proc.stderr
