"""memcheck and the shared-memory racecheck run a kernel with block-uniform barriers as block loops
where its loops make the same accesses in the same order as its fibers
(simulator/block_loops_order.py): what they find is the same as with fibers (SIMULATOR_FIBERS=1),
races inside one word of shared memory and a warp's same-value stores included; a kernel whose
loops would reorder accesses between two barriers, or (memcheck) keeps an array across a
barrier, keeps its fibers there and still runs as loops in a fast build.

The program (kernels/program_block_loop_checkers.cu) takes one case per run;
``SIMULATOR_LAUNCH_LOG=1`` says how each launch ran.
"""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, launch_ways, line_of, once_per_arguments, run_cli, run_findings

PROGRAM = KERNELS / "program_block_loop_checkers.cu"


@once_per_arguments
def _run(mode: str, case: str, fibers: str):
    """(process, how each kernel ran) of the program in ``mode`` with ``case``."""
    # One worker: with several, which block reports first depends on how the OS schedules them.
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers, "SIMULATOR_THREADS": "1"}
    proc = run_cli("run", str(PROGRAM), "--mode", mode, "--", case, env=env)
    ways = launch_ways(proc.stderr)
    return proc, ways


def _findings(stderr: str) -> list[str]:
    """The findings, addresses left out (a block-loop thread's locals lie elsewhere)."""
    return [re.sub(r"0x[0-9a-f]+", "0x?", f) for f in run_findings(stderr)]


def _both_ways(mode: str, case: str, kernel: str, way: str):
    """(loops run, fibers run) after checking that ``kernel`` ran ``way`` and then with fibers."""
    loops, ways = _run(mode, case, "0")
    fibers, fiber_ways = _run(mode, case, "1")
    assert ways == {kernel: way}, loops.stderr[-3000:]
    assert fiber_ways == {kernel: "with fibers"}
    assert loops.returncode == fibers.returncode, loops.stderr[-3000:]
    assert loops.stdout == fibers.stdout
    assert _findings(loops.stderr) == _findings(fibers.stderr)
    return loops, fibers


def _line(marker: str) -> str:
    return f"{PROGRAM}:{line_of(PROGRAM, marker)}"


@pytest.mark.parametrize(("case", "kernel"), [("bytes_apart", "bytes_apart"), ("across", "across_barrier")])
def test_racecheck_finds_nothing_in_race_free_block_loops(case, kernel):
    loops, _ = _both_ways("racecheck", case, kernel, "as block loops")
    assert loops.returncode == 0, loops.stderr[-3000:]
    assert _findings(loops.stderr) == []
    assert "cudaSuccess" in loops.stdout


def test_racecheck_finds_a_race_between_bytes_of_one_word_in_block_loops():
    loops, _ = _both_ways("racecheck", "bytes_race", "bytes_race", "as block loops")
    found = _findings(loops.stderr)
    assert loops.returncode == 66 and found, loops.stderr[-3000:]
    assert all("data race (shared memory)" in f and _line("PLANT-BYTE-RACE") in f for f in found), found


def test_racecheck_finds_a_byte_store_into_a_word_many_threads_read():
    loops, _ = _both_ways("racecheck", "read_then_byte_store", "read_then_byte_store", "as block loops")
    found = _findings(loops.stderr)
    assert loops.returncode == 66, loops.stderr[-3000:]
    assert len(found) == 1, found
    assert "write by" in found[0] and _line("PLANT-BYTE-STORE") in found[0], found
    assert "read by several threads" in found[0] and _line("PLANT-MANY-READS") in found[0], found


def test_racecheck_warns_of_a_warps_same_value_store_and_reports_different_values():
    same, _ = _both_ways("racecheck", "same_value", "warp_stores", "as block loops")
    assert same.returncode == 0 and _findings(same.stderr) == [], same.stderr[-3000:]
    assert "warning (not a hazard)" in same.stderr and _line("PLANT-WARP-STORE") in same.stderr
    differ, _ = _both_ways("racecheck", "different_values", "warp_stores", "as block loops")
    found = _findings(differ.stderr)
    assert differ.returncode == 66 and len(found) == 1, differ.stderr[-3000:]
    assert found[0].count(_line("PLANT-WARP-STORE")) == 2, found


def test_memcheck_finds_the_same_out_of_bounds_read_in_block_loops():
    loops, _ = _both_ways("memcheck", "shared_oob", "shared_past_end", "as block loops")
    found = _findings(loops.stderr)
    assert loops.returncode != 0 and found, loops.stderr[-3000:]
    assert all(_line("PLANT-SHARED-OOB") in f and f.endswith("thread (9,0,0)") for f in found), found


@pytest.mark.parametrize("mode", ["memcheck", "racecheck"])
def test_the_checkers_keep_fibers_where_loops_would_reorder_accesses(mode):
    fast, ways = _run("fast", "split", "0")
    assert ways == {"split": "as block loops"}, fast.stderr[-3000:]
    checked, ways = _run(mode, "split", "0")
    assert ways == {"split": "with fibers"}, checked.stderr[-3000:]
    if mode == "racecheck":
        found = _findings(checked.stderr)
        assert checked.returncode == 66 and found, checked.stderr[-3000:]
        assert all(_line("PLANT-SPLIT") in f for f in found), found


def test_memcheck_keeps_fibers_for_an_array_living_across_a_barrier():
    _, ways = _run("fast", "array_slot", "0")
    assert ways == {"array_slot": "as block loops"}
    memcheck, ways = _run("memcheck", "array_slot", "0")
    assert ways == {"array_slot": "with fibers"}, memcheck.stderr[-3000:]
    racecheck, ways = _run("racecheck", "array_slot", "0")
    assert ways == {"array_slot": "with fibers"}
    assert memcheck.returncode == racecheck.returncode == 0


def test_memcheck_loops_over_an_offset_int_parameter_and_finds_the_same_read_past_the_end():
    clean, _ = _both_ways("memcheck", "param_in_bounds", "offset_index", "as block loops")
    assert clean.returncode == 0 and _findings(clean.stderr) == [], clean.stderr[-3000:]
    loops, _ = _both_ways("memcheck", "param_oob", "offset_index", "as block loops")
    found = _findings(loops.stderr)
    assert found, loops.stderr[-3000:]
    assert all(_line("PLANT-PARAM-OOB") in f and f.endswith("thread (9,0,0)") for f in found), found
    assert all("heap-buffer-overflow" in f for f in found), found


def test_an_offset_pointer_parameter_loops_in_fast_builds_and_memcheck_finds_its_read_past_the_end():
    fast, ways = _run("fast", "pointer_in_bounds", "0")
    assert ways == {"offset_pointer": "as block loops"}, fast.stderr[-3000:]
    # A pointer kept in a slot: the checkers keep fibers (block_loops_order.py), with the same findings.
    loops, _ = _both_ways("memcheck", "pointer_oob", "offset_pointer", "with fibers")
    found = _findings(loops.stderr)
    assert found, loops.stderr[-3000:]
    assert all(_line("PLANT-POINTER-OOB") in f and f.endswith("thread (9,0,0)") for f in found), found


def test_racecheck_loops_over_an_offset_parameter_and_finds_the_same_races():
    apart, _ = _both_ways("racecheck", "param_apart", "offset_store", "as block loops")
    assert apart.returncode == 0 and _findings(apart.stderr) == [], apart.stderr[-3000:]
    shared, _ = _both_ways("racecheck", "param_shared", "offset_store", "as block loops")
    found = _findings(shared.stderr)
    assert shared.returncode == 66 and found, shared.stderr[-3000:]
    assert all(_line("PLANT-PARAM-STORE") in f for f in found), found
