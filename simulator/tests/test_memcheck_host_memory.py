"""memcheck judges device code: it leaves what host code sees as it is in fast mode. A program
that accumulates into host malloc memory it never cleared (kernels/program_host_uninit.cu) reads
the same zeros under memcheck as in fast mode; only with --check-host does AddressSanitizer's
fill of new host allocations show."""

from __future__ import annotations

from .conftest import KERNELS, int_values, run_cli

PROGRAM = KERNELS / "program_host_uninit.cu"
N = 1 << 18


def test_uninitialised_host_memory_reads_as_in_fast_mode_under_memcheck():
    proc = run_cli("run", str(PROGRAM), "--mode", "memcheck")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert int_values(proc.stdout)["matching"] == N


def test_host_checks_keep_the_sanitizers_fill():
    proc = run_cli("run", str(PROGRAM), "--mode", "memcheck", "--check-host")
    assert int_values(proc.stdout)["matching"] < N, proc.stdout + proc.stderr
