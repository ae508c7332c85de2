"""Barrier-free grid-stride loops run in lockstep rounds in a fast build
(simulator/block_loops_interchange.py): round k runs the body for each of a block's threads whose
counter still passes the loop's condition, a round in which every thread does without the
per-thread condition. The same output, bit for bit, as with fibers (SIMULATOR_FIBERS=1) and as
the plain loop's order (synccheck and memcheck keep it); that order taken for the kernels meant
to take it (the launch log says "as block loops") and the plain loop kept for the others.

The program (kernels/program_gridstride.cu) fills each output past the loop's bound with a
sentinel, checks each result against the host's and prints a hash of its bits; its launches
leave some threads of a block without a last round, and some without any.
"""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, run_logged

PROGRAM = KERNELS / "program_gridstride.cu"
ROUNDS = [
    "stride_add",  # `i += blockDim.x * gridDim.x`; launched again with fewer elements than threads
    "stride_locals",  # `i += stride`, the stride and the start computed before the loop
    "stride_size_t",  # a size_t counter
    "stride_unsigned",  # an unsigned counter, `i = i + step`, `n > i`
    "stride_rows",  # a block-uniform loop over rows around the grid-stride one
    "stride_2d",  # grid-stride in y (run in rounds) around grid-stride in x
    "stride_guarded",  # under `if (threadIdx.x < limit)`
    "stride_scattered",  # a guard leaving scattered threads out, 2-D blocks, counter read after
    "stride_unrolled",  # globalCopy's shape: a template, `#pragma unroll`ed inner loops
    "stride_counter_after",  # globalCopy's counter declared before the loop and read after it
]
PLAIN = [
    "plain_counter_written",  # the body writes the counter
    "plain_break",  # a thread may leave its loop early
]


def _results(out: str) -> list[tuple[str, str]]:
    return re.findall(r"^(\w+) (ok|WRONG) [0-9a-f]{16}$", out, re.M)


@pytest.fixture(scope="module")
def fast_runs():
    """The program in a fast build: lockstep rounds allowed, then fibers forced."""
    return run_logged(PROGRAM, "fast", "0"), run_logged(PROGRAM, "fast", "1")


def test_every_result_is_right_and_bit_identical_to_fibers(fast_runs):
    (rounds_out, _), (fibers_out, _) = fast_runs
    results = _results(rounds_out)
    names = sorted({name for name, _ in results})
    assert names == sorted(ROUNDS + PLAIN)
    assert all(status == "ok" for _, status in results), rounds_out
    assert rounds_out == fibers_out
    assert "status cudaSuccess" in rounds_out


def test_grid_stride_loops_run_in_rounds_and_the_rest_as_plain_loops(fast_runs):
    (_, ways), _ = fast_runs
    assert {k: ways.get(k) for k in ROUNDS} == dict.fromkeys(ROUNDS, "as block loops")
    assert {k: ways.get(k) for k in PLAIN} == dict.fromkeys(PLAIN, "as a plain loop")


def test_simulator_fibers_forces_fibers(fast_runs):
    _, (_, ways) = fast_runs
    assert set(ways) == set(ROUNDS + PLAIN)
    assert set(ways.values()) == {"with fibers"}


def test_synccheck_keeps_the_plain_loop_and_the_same_bits(fast_runs):
    (fast_out, _), _ = fast_runs
    out, ways = run_logged(PROGRAM, "synccheck", "0")
    assert set(ways) == set(ROUNDS + PLAIN)
    assert set(ways.values()) == {"as a plain loop"}
    assert out == fast_out


@pytest.mark.parametrize("n", ["1", "97", "384", "385"])
def test_other_sizes_against_the_plain_order(n):
    """Fewer elements than a block, a prime, exactly one round of the 3x128 grid, one past it."""
    out, ways = run_logged(PROGRAM, "fast", "0", "all", n)
    assert all(status == "ok" for _, status in _results(out)), out
    assert ways.get("stride_add") == "as block loops"
    plain, _ = run_logged(PROGRAM, "synccheck", "0", "all", n)
    assert out == plain


def test_memcheck_keeps_the_plain_loop_and_the_results(fast_runs):
    (fast_out, _), _ = fast_runs
    out, ways = run_logged(PROGRAM, "memcheck", "0", "stride_guarded")
    assert ways == {"stride_guarded": "as a plain loop"}
    line = re.search(r"^stride_guarded .*$", fast_out, re.M)
    assert line is not None and line.group(0) in out.splitlines(), out
