"""A spin-wait on the device clock ends after a few reads, not after the host time it names.

On a GPU the threads of a launch spin at once; here they run one after another, so the modelled
SM clock runs ahead while one thread rereads it (simulator/docs/supported.md, "Time")."""

from __future__ import annotations

import math
import statistics

import pytest

from .conftest import EVERY_MODE, KERNELS, int_values, mode_args, nvcc_compile, run_cli

PROGRAM = KERNELS / "clock_spin_many.cu"
FIRST_STEP = 32  # cycles: the first step a reread adds (runtime/device_api.cpp, kFirstSpinStep)


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_every_thread_of_a_launch_spins_its_cycles_in_a_few_reads(mode):
    proc = run_cli("run", str(PROGRAM), *mode_args(mode), timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    got = int_values(proc.stdout)
    assert got["err"] == 0
    cycles = got["cycles"]
    # Steps of 32, 64, 128, ... cycles: r rereads add 32 * (2**r - 1).
    model_reads = math.ceil(math.log2(cycles / FIRST_STEP + 1))
    for clock in ("clock", "clock64"):
        threads = [
            {k: int(v) for k, v in (f.split("=") for f in line.split()[1:])}
            for line in proc.stdout.splitlines()
            if line.startswith(clock + " ")
        ]
        assert len(threads) == 256
        least_seen = min(t["seen"] for t in threads)
        # Each thread waited until the clock had advanced by the target, as the loop demands...
        assert least_seen >= cycles
        # ...and, by the doubling steps, by less than twice it (plus a little host time) in at
        # least one thread; a thread the OS paused sees that pause too, so only the least counts.
        assert least_seen <= 2 * cycles + 100_000
        # About log2(cycles / 32) reads, not the ~80,000 a 2 ms spin at ~25 ns a read would take.
        assert statistics.median(t["reads"] for t in threads) <= model_reads + 4


def test_clock_spin_program_compiles_with_nvcc(tmp_path):
    proc = nvcc_compile(PROGRAM, tmp_path)
    assert proc.returncode == 0, proc.stderr
