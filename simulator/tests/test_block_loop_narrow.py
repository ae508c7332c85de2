"""Column indices that a block-loop region computes as signed sums where the block allows it, the
regions that are one ``if (t < S)`` and run only the threads below S, and the unroll hints of a
region's short constant loops (simulator/block_loops_simd.py).

The program (kernels/program_block_loop_narrow.cu) computes ``col = blockIdx.x * W + base + tx``
and ``j = base + blockIdx.x * blockDim.x + threadIdx.x`` (unsigned sums converted to int) again
after a barrier, with ``base`` near INT_MAX (blocks on both sides of the check, a row that passes
INT_MAX) and near UINT_MAX (a row that wraps past it), checks every result against the host's and
prints a hash of its bytes: the same with fibers (SIMULATOR_FIBERS=1), under memcheck and
racecheck, where the region runs the kernel's own expression. A check that let the signed sum run
in a block whose row passes INT_MAX makes the first line WRONG: the kernel widens ``col`` to 64
bits, which a sum taken not to wrap gives as 2^31 rather than INT_MIN. ``prefix_fold`` does the
same for regions ``if (t < k)`` and ``if (t < k - 3)`` with k above the block's width, within it
and at or below zero: a loop that ran threads past k with the condition taken as true would make
its lines WRONG.
"""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, launch_ways, once_per_arguments, run_cli

PROGRAM = KERNELS / "program_block_loop_narrow.cu"
BASES = ["2147482527", "4294966175", "7"]
FIRSTS = ["60", "23", "2"]


@once_per_arguments
def _run(mode: str, fibers: str):
    """(stdout, {kernel: how it ran}) of the program in ``mode``."""
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers}
    proc = run_cli("run", str(PROGRAM), "--mode", mode, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, launch_ways(proc.stderr)


def _results(out: str) -> dict[str, str]:
    return dict(re.findall(r"^(?:narrow_columns base|prefix_fold first) (\d+) (ok|WRONG) ", out, re.M))


def test_signed_columns_give_every_bit_the_fibers_give():
    loops_out, ways = _run("fast", "0")
    fibers_out, fiber_ways = _run("fast", "1")
    assert _results(loops_out) == dict.fromkeys(BASES + FIRSTS, "ok"), loops_out
    assert loops_out == fibers_out
    assert "status cudaSuccess" in loops_out
    assert {ways.get(k) for k in ("narrow_columns", "prefix_fold")} == {"as block loops"}
    assert {fiber_ways.get(k) for k in ("narrow_columns", "prefix_fold")} == {"with fibers"}


@pytest.mark.parametrize("mode", ["memcheck", "racecheck"])
def test_checkers_run_the_kernels_own_sums(mode):
    out, _ = _run(mode, "0")
    assert _results(out) == dict.fromkeys(BASES + FIRSTS, "ok"), out
    fibers_out, _ = _run("fast", "1")
    assert out == fibers_out


@pytest.fixture(scope="module")
def translated() -> str:
    """The program's translation for a fast build, which both translation tests read."""
    from simulator.build import translate_source

    return translate_source(PROGRAM)


def test_translation_checks_the_block_and_computes_the_signed_sums(translated):
    text = translated
    start = text.index("void narrow_columns(")
    body = text[start : text.index("::__sim::on_device()", start)]
    # The region after the barrier names col and j: one check of both for the block, then each
    # computed as a signed sum when it passed, as the kernel's own expression when not.
    call = re.search(
        r"for_each_plain_thread\(\*__sim_blk, (::__sim::kRecompute && .*?), 2147483647, \[&\]\(([^)]*)\)",
        body,
        re.S,
    )
    assert call is not None, body
    check = re.sub(r"\n# \d+ \"[^\"]*\"\n", "", call.group(1))
    limit = "<= 2147483647 - 1023"
    # (Only a fast build evaluates it: kRecompute.)
    assert check == (
        f"::__sim::kRecompute && (int)(blockIdx.x * 40 + base) {limit}"
        f" && (int)(base + blockIdx.x * blockDim.x) {limit}"
    )
    assert "const auto __sim_fast" in call.group(2)
    # Both regions: the first declares col and j (block_loops_simd.narrow_declared), the second
    # computes them again.
    assert body.count("(__sim_fast ? ") == 4


def test_translation_runs_a_prefix_region_below_its_bound(translated):
    text = translated
    start = text.index("void prefix_fold(")
    body = re.sub(r"\n# \d+ \"[^\"]*\"\n", "", text[start : text.index("::__sim::on_device()", start)])
    # Both regions in the loop: every block passes (in a fast build: kRecompute), the threads below
    # the bound run (a fast build and the shared-memory race check's take any bound: kPrefixBound;
    # memcheck's too when it is a name: kPrefixBelow).
    fast = "for_each_plain_thread(*__sim_blk, ::__sim::kRecompute, ::__sim::"
    assert f"{fast}kPrefixBelow ? (int)(k) : 2147483647, [&]" in body
    assert f"{fast}kPrefixBound ? (int)(k - 3) : 2147483647, [&]" in body
    assert "if (__sim_fast || (t < k))" in body
    assert "if (__sim_fast || (t < k - 3))" in body


def test_short_constant_loops_of_a_simd_region_get_an_unroll_hint():
    from simulator.build import translate_source

    text = translate_source(KERNELS / "program_block_loops.cu")
    hints = re.findall(r"\n#pragma GCC unroll (\d+)\n# \d+ \"[^\"]*\"\n(for \([^)]*\))", text)
    # loop_matmul's loop over a 16-wide tile, and matrixMul's `#pragma unroll` loop to its template
    # parameter, which each instantiation fixes; no other loop of the program gets one.
    assert sorted(hints) == [
        ("16", "for (int k = 0; k < 16; ++k)"),
        ("32", "for (int k = 0; k < BS; ++k)"),
    ]
