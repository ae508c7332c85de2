"""Barrier-free kernels whose loop walks memory across threads run in lockstep order in a fast
build (simulator/block_loops_interchange.py): each step of the loop for all of a block's threads,
then the next. The same output, bit for bit, as with fibers (SIMULATOR_FIBERS=1); that order taken
for the kernels meant to take it (the launch log says "as block loops") and the plain loop kept
for the others; memcheck keeps the plain loop for all.

The program (kernels/program_interchange.cu) checks each result against the host's and prints a
hash of its bits; ``SIMULATOR_LAUNCH_LOG=1`` makes the runtime say how each launch ran. The
kernels kept in the plain order all declare a column index that narrows, so a fast build runs each
as one loop over the block's threads whose one region is the whole body (block_loops_plain.py):
each thread's body in turn, as the plain loop does.
"""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, run_logged

PROGRAM = KERNELS / "program_interchange.cu"
LOCKSTEP = [
    "lockstep_matmul_guarded",  # olcf hw1's naive matmul: `if (idx < n && idy < n)`, partial blocks
    "lockstep_matmul",  # bench_simulator.py's: no guard, `sum` across the loop
    "lockstep_column_sum",  # pcuda's sumMatrixOnGPU1D: a column per thread, a partial last block
    "lockstep_nested_guards",  # two guards, per-thread state before and after, a uniform local bound
]
PLAIN = [
    "plain_thread_trip_count",  # the trip count depends on the thread
    "plain_row_walk",  # each thread walks its own row: the plain order is the better one
    "plain_break",  # a thread may leave the loop early
    "plain_memory_guard",  # the guard reads memory
    "plain_uniform_under_guard",  # a block-uniform local (a division) under a thread's condition
]


def _run(mode: str, fibers: str, *args: str):
    """(stdout, {kernel: how it ran}) of the program in ``mode``."""
    return run_logged(PROGRAM, mode, fibers, *args)


@pytest.fixture(scope="module")
def fast_runs():
    """The program in a fast build: lockstep order allowed, then fibers forced."""
    return _run("fast", "0"), _run("fast", "1")


def test_every_result_is_right_and_bit_identical_to_fibers(fast_runs):
    (loops_out, _), (fibers_out, _) = fast_runs
    results = re.findall(r"^(\w+) (ok|WRONG) [0-9a-f]{16}$", loops_out, re.M)
    assert sorted(name for name, _ in results) == sorted(LOCKSTEP + PLAIN)
    assert all(status == "ok" for _, status in results), loops_out
    assert loops_out == fibers_out
    assert "status cudaSuccess" in loops_out


def test_column_walks_run_in_lockstep_and_the_rest_in_the_plain_order(fast_runs):
    from simulator.build import translate_source

    (_, ways), _ = fast_runs
    assert {k: ways.get(k) for k in LOCKSTEP} == dict.fromkeys(LOCKSTEP, "as block loops")
    assert {k: ways.get(k) for k in PLAIN} == dict.fromkeys(PLAIN, "as block loops")
    text = translate_source(PROGRAM)
    for name in PLAIN:
        start = text.index(f"void {name}(")
        body = text[start : text.index("::__sim::on_device()", start)]
        # One loop over the block's threads, the whole body its region: no lockstep step.
        assert body.count("::__sim::for_each_plain_thread(") == 1, name
        assert "__sim_passing" not in body and "for_each_flagged_thread" not in body, name


def test_simulator_fibers_forces_fibers(fast_runs):
    _, (_, ways) = fast_runs
    assert set(ways) == set(LOCKSTEP + PLAIN)
    assert set(ways.values()) == {"with fibers"}


def test_memcheck_keeps_the_plain_loop_and_the_results(fast_runs):
    (fast_out, _), _ = fast_runs
    out, ways = _run("memcheck", "0", "lockstep_matmul_guarded")
    assert ways == {"lockstep_matmul_guarded": "as a plain loop"}
    line = re.search(r"^lockstep_matmul_guarded .*$", fast_out, re.M)
    assert line is not None and line.group(0) in out.splitlines(), out
