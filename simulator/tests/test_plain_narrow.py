"""Barrier-free kernels whose column index narrows, run as one loop of their own in a fast build
(simulator/block_loops_plain.py, with block_loops_simd.py's narrowing and prefix bound).

The program (kernels/program_plain_narrow.cu) computes ``i = blockIdx.x * blockDim.x + base +
threadIdx.x`` (an unsigned sum converted to int) with ``base`` near INT_MAX (blocks on both sides
of the per-block check, a row that passes INT_MAX) and near UINT_MAX (a row that wraps past it),
stores a value of each thread's ``i`` where ``i < n`` for an ``n`` that cuts a row, checks every
result against the host's and prints a hash of its bytes: the same with fibers
(SIMULATOR_FIBERS=1), and under memcheck and racecheck, which run the plain loop. A check that
let the signed sum run in a block whose row passes INT_MAX makes the first lines WRONG (a wrapped
index then compares as unwrapped, and the bound on x leaves the wrapped threads out).
"""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, launch_ways, once_per_arguments, run_cli

PROGRAM = KERNELS / "program_plain_narrow.cu"
KERNEL_NAMES = ("plain_columns", "plain_below", "plain_rows")
BASES = ("2147482247", "4294966175", "7")


@once_per_arguments
def _run(mode: str, fibers: str):
    """(stdout, {kernel: how it ran}) of the program in ``mode``."""
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers}
    proc = run_cli("run", str(PROGRAM), "--mode", mode, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, launch_ways(proc.stderr)


def _results(out: str) -> dict[tuple[str, str], str]:
    found = re.findall(r"^(plain_\w+) base (\d+) n -?\d+ (ok|WRONG) ", out, re.M)
    return {(name, base): verdict for name, base, verdict in found}


WANT = {(name, base): "ok" for name in KERNEL_NAMES for base in BASES}


def test_narrowed_loops_give_every_bit_the_fibers_give():
    loops_out, ways = _run("fast", "0")
    fibers_out, fiber_ways = _run("fast", "1")
    assert _results(loops_out) == WANT, loops_out
    assert loops_out == fibers_out
    assert "status cudaSuccess" in loops_out
    assert {ways.get(k) for k in KERNEL_NAMES} == {"as block loops"}
    assert {fiber_ways.get(k) for k in KERNEL_NAMES} == {"with fibers"}


@pytest.mark.parametrize("mode", ["memcheck", "racecheck"])
def test_checkers_run_the_plain_loop_and_the_kernels_own_sums(mode):
    out, ways = _run(mode, "0")
    assert _results(out) == WANT, out
    assert {ways.get(k) for k in KERNEL_NAMES} == {"as a plain loop"}
    fibers_out, _ = _run("fast", "1")
    assert out == fibers_out


def _body(text: str, kernel: str) -> str:
    start = text.index(f"void {kernel}(")
    return re.sub(r"\n# \d+ \"[^\"]*\"\n", "", text[start : text.index("::__sim::on_device()", start)])


def test_translation_checks_the_block_and_bounds_the_row():
    from simulator.build import translate_source

    text = translate_source(PROGRAM)
    limit = "<= 2147483647 - 1023"
    u = "blockIdx.x * blockDim.x + base"
    below = _body(text, "plain_below")
    # One check of both indices for the block, the bound x < n - (int)U, the condition taken as
    # true where the loop runs only the threads below it, each index a signed sum there (a fast
    # build's alone: the checkers' loops, which take a prefix bound too, run every thread here).
    check = f"::__sim::kRecompute && (int)(blockIdx.x * blockDim.x) {limit} && (int)({u}) {limit}"
    bound = f"::__sim::kRecompute ? ::__sim::index_below((long long)(n), (int)({u})) : 2147483647"
    assert f"for_each_plain_thread(*__sim_blk, {check}, {bound}, [&]" in below, below
    assert "if (__sim_fast || (i < n))" in below
    assert f"const int i = (__sim_fast ? static_cast<int>((int)({u}) + (int)(threadIdx.x))" in below
    # No condition to bound: the loop runs every thread.
    columns = _body(text, "plain_columns")
    assert f"for_each_plain_thread(*__sim_blk, {check}, 2147483647, [&]" in columns, columns
    # The kernel's own code stays for the plain loop (the checkers) and fibers, and the launch
    # gets the kind whose fast build runs the loop.
    assert "const int i = blockIdx.x * blockDim.x + base + threadIdx.x;\n    if (i < n) out[t]" in text
    assert '"plain_below", ::__sim::kInterchangedFast' in text
