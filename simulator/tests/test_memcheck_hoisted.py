"""memcheck's block-loop regions whose checks are made once per block (simulator/block_loops_hoist.py):
a region that reads and writes only ``__shared__`` arrays of constant extents at subscripts the
front end can bound runs as a copy without ASan's and UBSan's checks where the block's values keep
every subscript within its extent and every partial sum an int, and as the instrumented loop
otherwise. The program (kernels/program_memcheck_hoisted.cu) plants a fault that the ranges must
see: a shared read past either end at the first, a middle and the last thread the loop runs, an
overflow in a subscript's partial sum, and a tile loop that reads one past a row. Each finding,
the output and the status must be those of fibers; a range test loosened by one (``hi <= extent``,
``lo >= -1``) or one that ignores an overflow would run the unchecked copy and find nothing.
"""

from __future__ import annotations

import re

import pytest

from simulator.source_compile import translate_source

from .conftest import KERNELS, launch_ways, memcheck_faults_as_fibers, run_cli, run_findings

PROGRAM = KERNELS / "program_memcheck_hoisted.cu"
# kind -> (marker of the planted line, thread named, what the report says)
PLANTED = {
    "low": ("PLANT-PREFIX", "(0,0,0)", "index -1 out of bounds for type 'float [256]'"),
    "middle": ("PLANT-PREFIX", "(127,0,0)", "index 256 out of bounds for type 'float [256]'"),
    "last": ("PLANT-PREFIX", "(255,0,0)", "index 256 out of bounds for type 'float [256]'"),
    "overflow": ("PLANT-PREFIX", "(255,0,0)", "signed integer overflow"),
    "tile": ("PLANT-TILE", "(15,15,0)", "index 16 out of bounds for type 'float [16]'"),
}


def _run(kind: str, fibers: str):
    """(process, how each kernel ran) of the program under memcheck."""
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers, "SIMULATOR_THREADS": "1"}
    proc = run_cli("run", "--mode", "memcheck", str(PROGRAM), "--", kind, env=env)
    return proc, launch_ways(proc.stderr)


def _findings(stderr: str) -> list[str]:
    """The findings, addresses left out, and the operands of a signed overflow in one order: g++
    writes ``a + b`` of the kernel's body and of a region's lambda with its operands in either
    order (so on main too); the values, the line and the thread are what the test compares."""
    found = [re.sub(r"0x[0-9a-f]+", "0x?", f) for f in run_findings(stderr)]

    def ordered(m: re.Match) -> str:
        return " + ".join(sorted((m.group(1), m.group(2)))) + " cannot"

    return [re.sub(r"(-?\d+) \+ (-?\d+) cannot", ordered, f) for f in found]


def test_every_region_gets_an_unchecked_copy_behind_the_blocks_range_test():
    text = translate_source(str(PROGRAM), "memcheck")
    # Three regions of each kernel, global loads and stores included.
    assert text.count("::__sim::for_each_unchecked_thread(") == 6
    assert text.count("if (::__sim::kHoistChecks && (") == 6
    # The prefix region's t over the threads below lo, and its lo and off as the block has them.
    assert "::__sim::thread_span(__sim_blk->dim.x, ::__sim::kPrefixBelow ? (int)(" in text
    assert "::__sim::span_of((long long)(off))" in text
    # The tile loop's counter, and the global reads' ranges.
    assert "::__sim::index_span{0, 15, true}" in text
    assert "::__sim::global_within(x, " in text and "::__sim::global_within(out, " in text
    # Only memcheck's build has the copies.
    assert "::__sim::for_each_unchecked_thread(" not in translate_source(str(PROGRAM), "fast")


@pytest.mark.parametrize("kind", sorted(PLANTED))
def test_a_planted_fault_runs_the_checked_loop_and_names_what_fibers_name(kind):
    marker, thread, what = PLANTED[kind]
    loops, ways = _run(kind, "0")
    fibers, fiber_ways = _run(kind, "1")
    # A fault in prefix_sum fails the launch, and the sticky error keeps tile_sum from launching.
    assert ways and set(ways.values()) == {"as block loops"}, loops.stderr[-3000:]
    assert ways.keys() == fiber_ways.keys() and set(fiber_ways.values()) == {"with fibers"}
    memcheck_faults_as_fibers(loops, fibers, _findings, PROGRAM, marker, thread, what)


def test_in_range_the_unchecked_copies_give_the_fibers_output():
    loops, ways = _run("none", "0")
    fibers, _ = _run("none", "1")
    assert ways == {"prefix_sum": "as block loops", "tile_sum": "as block loops"}, loops.stderr[-3000:]
    assert loops.returncode == 0 and run_findings(loops.stderr) == [], loops.stderr[-3000:]
    assert (loops.returncode, loops.stdout) == (fibers.returncode, fibers.stdout)
    assert "prefix_sum: cudaSuccess" in loops.stdout and "tile_sum: cudaSuccess" in loops.stdout
