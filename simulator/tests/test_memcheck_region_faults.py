"""memcheck names a fault in a block-loop region as fibers do: one planted fault (a global read
past the end, a shared write past the end, a signed overflow) at the first, a middle and the last
thread of a 256-thread block, in the region after the barrier, where the loop runs the threads in
the fibers' order, sets each thread's index through the runtime's unchecked stores and reads its
``t`` from a per-thread slot (runtime/block_loops.h). Each finding must name the planted thread,
line and kind, and the loops' findings, output and status must be those of fibers.

The program is kernels/program_memcheck_region_faults.cu.
"""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, launch_ways, memcheck_faults_as_fibers, run_cli, run_findings

PROGRAM = KERNELS / "program_memcheck_region_faults.cu"
KINDS = {
    "global": ("PLANT-GLOBAL", "Invalid __global__ read of size 4"),
    "shared": ("PLANT-SHARED", "Invalid __shared__ write of size 4"),
    "overflow": ("PLANT-OVERFLOW", "Undefined behaviour: signed integer overflow"),
}


def _run(kind: str, bad: int, fibers: str):
    """(process, how each kernel ran) of the program under memcheck."""
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers, "SIMULATOR_THREADS": "1"}
    proc = run_cli("run", "--mode", "memcheck", str(PROGRAM), "--", kind, str(bad), env=env)
    return proc, launch_ways(proc.stderr)


def _findings(stderr: str) -> list[str]:
    """The findings, addresses left out."""
    return [re.sub(r"0x[0-9a-f]+", "0x?", f) for f in run_findings(stderr)]


@pytest.mark.parametrize("bad", [0, 128, 255])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_planted_fault_names_its_thread_line_and_kind_as_fibers_do(kind, bad):
    marker, what = KINDS[kind]
    loops, ways = _run(kind, bad, "0")
    fibers, fiber_ways = _run(kind, bad, "1")
    assert ways == {"planted": "as block loops"}, loops.stderr[-3000:]
    assert fiber_ways == {"planted": "with fibers"}, fibers.stderr[-3000:]
    memcheck_faults_as_fibers(loops, fibers, _findings, PROGRAM, marker, f"({bad},0,0)", what)
