"""Block-loop regions in the forms that let their thread loops vectorise (simulator/block_loops.py):
a region that calls nothing reading the running thread is a loop body taking ``(threadIdx, linear)``
(threadIdx is the loop's own index, nothing stored per thread), and an integer or pointer local
computed from threadIdx and values no thread writes is computed again in each later region that
uses it instead of being read from a per-thread slot. The program
(kernels/program_block_loop_simd.cu) checks each result against the host's and prints a hash of
its bytes: the same with fibers (SIMULATOR_FIBERS=1), under memcheck too, where the slots are read.
"""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, launch_ways, run_cli

PROGRAM = KERNELS / "program_block_loop_simd.cu"
KERNELS_RUN = [
    "simd_array_locals",
    "simd_continue",
    "simd_2d",
    "simd_3d",
    "simd_wrap_and_written",
    "simd_call",
]
SIMD = "for_each_plain_thread(*__sim_blk, [&](const ::uint3 threadIdx, const int __sim_t)"
# The same loop where the region narrows a column index (block_loops_simd.py): its fast form too.
SIMD_FAST = "[&](const ::uint3 threadIdx, [[maybe_unused]] const auto __sim_fast, const int __sim_t)"


def _run(mode: str, fibers: str):
    """(stdout, {kernel: how it ran}) of the program in ``mode``."""
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers}
    proc = run_cli("run", str(PROGRAM), "--mode", mode, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    ways = launch_ways(proc.stderr)
    return proc.stdout, ways


def _results(out: str) -> dict[str, str]:
    return dict(re.findall(r"^(\w+) (ok|WRONG) ", out, re.M))


def test_simd_forms_give_every_bit_the_fibers_give():
    loops_out, ways = _run("fast", "0")
    fibers_out, fiber_ways = _run("fast", "1")
    assert _results(loops_out) == dict.fromkeys(KERNELS_RUN, "ok"), loops_out
    assert loops_out == fibers_out
    assert "status cudaSuccess" in loops_out
    assert {k: ways.get(k) for k in KERNELS_RUN} == dict.fromkeys(KERNELS_RUN, "as block loops")
    assert set(fiber_ways.values()) == {"with fibers"}


def test_memcheck_reads_the_slots_and_gives_the_same_results():
    out, _ = _run("memcheck", "0")
    fibers_out, _ = _run("memcheck", "1")
    assert _results(out) == dict.fromkeys(KERNELS_RUN, "ok"), out
    assert out == fibers_out


@pytest.fixture(scope="module")
def kernels() -> dict[str, str]:
    """Each kernel's block-loop body in the translated program (the fibers' body left out)."""
    from simulator.build import translate_source

    text = translate_source(PROGRAM)
    bodies = {}
    for name in KERNELS_RUN:
        start = text.index(f"void {name}(")
        bodies[name] = text[start : text.index("::__sim::on_device()", start)]
    return bodies


def test_regions_that_call_nothing_store_no_thread_index(kernels):
    for name in KERNELS_RUN[:-1]:
        assert SIMD in kernels[name] or SIMD_FAST in kernels[name], name
        assert "[&]()" not in kernels[name], name


def test_a_region_calling_a_function_that_reads_threadidx_stores_it_per_thread(kernels):
    assert SIMD not in kernels["simd_call"]
    assert kernels["simd_call"].count("for_each_plain_thread(*__sim_blk, [&]()") == 2


def test_locals_from_threadidx_are_computed_again_and_written_ones_kept(kernels):
    body = kernels["simd_3d"]
    # `lin` is named after the barrier and computed from `zy`, which is computed again first.
    assert body.index("zy = ::__sim::kRecomputeIndexed ?") < body.index("lin = ::__sim::kRecomputeIndexed ?")
    wrap = kernels["simd_wrap_and_written"]
    assert "u = ::__sim::kRecomputeIndexed ?" in wrap
    assert "v = ::__sim::kRecompute" not in wrap
    assert "v = __sim_slot" in wrap
    # An array is kept per thread.
    assert "acc = ::__sim::kRecompute" not in kernels["simd_array_locals"]
    assert re.search(r"__sim_slot\d+_t& acc = __sim_slot\d+\[__sim_t\]", kernels["simd_array_locals"])
