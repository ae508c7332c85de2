"""memcheck's region copies without checks run as loops g++ may vectorise (runtime/block_loops_hoist.h,
simulator/block_loops_hoist.py): each run of a row's threads is one loop in thread order, the
thread-index locals computed again where the block's test shows their initializers fit their types,
the per-thread slots read and written plainly, the column index and a prefix region's bound taken
as a fast build takes them, the runs still in the fibers' order. kernels/program_memcheck_unchecked_simd.cu
runs a chain whose result depends on that order (thread t adds what thread t - 1 wrote in the same
region), a 12 x 6 tile and a tree reduction; the output must be the fibers' bit for bit (a loop in
plain thread order gives the chain another value), and a recomputed local whose initializer
overflows in one block must be reported once, by the region that declares it, as with fibers.
Only a translation that holds such a copy is compiled with the vectorising flags in memcheck.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from simulator import source_compile
from simulator.source_compile import kernel_object, translate_source
from simulator.toolchain import compiler, vectorizing_flags

from .conftest import KERNELS, launch_ways, line_of, run_cli, run_findings

PROGRAM = KERNELS / "program_memcheck_unchecked_simd.cu"


def _run(arg: str, fibers: str):
    """(process, how each kernel ran) of the program under memcheck."""
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers}
    proc = run_cli("run", "--mode", "memcheck", str(PROGRAM), "--", arg, env=env)
    return proc, launch_ways(proc.stderr)


def test_the_copies_compute_the_thread_index_locals_again_behind_their_range_test():
    text = translate_source(str(PROGRAM), "memcheck")
    again = re.findall(r"__sim_slot\d+_t (\w+) = ::__sim::kRecomputeUnchecked \? ", text)
    # t and r in the chain's second region, tx, ty, row and col where the tile's regions read them.
    assert {"t", "r", "tx", "ty", "row", "col"} <= set(again), again
    # r's initializer must fit an int for the block's threads before a copy computes it again.
    assert "::__sim::span_fits(::__sim::span_in(::__sim::span_in(::__sim::span_add(" in text
    # The slots plainly in the copies, through the runtime's loads in the instrumented loops.
    assert ".load(__sim_t)" in text and ".store(__sim_t, " in text and ".get(__sim_t)" in text
    # The fast form's check and the prefix bound in the copies only.
    assert "for_each_unchecked_thread(*__sim_blk, ::__sim::kRecomputeUnchecked && (int)(" in text
    assert "::__sim::kRecomputeUnchecked ? (int)(" in text
    assert "for_each_unchecked_thread(*__sim_blk" not in translate_source(str(PROGRAM), "fast")


def test_the_vectorised_copies_give_the_fibers_output_bit_for_bit():
    loops, ways = _run("none", "0")
    fibers, fiber_ways = _run("none", "1")
    want = {"chain": "as block loops", "tile": "as block loops", "tree": "as block loops"}
    assert ways == want, loops.stderr[-3000:]
    assert set(fiber_ways.values()) == {"with fibers"}
    assert loops.returncode == 0 and run_findings(loops.stderr) == [], loops.stderr[-3000:]
    assert loops.stdout == fibers.stdout
    assert loops.stdout.count("cudaSuccess") == 3, loops.stdout
    # The same program in fast mode (thread order) gives the chain another value: the test can fail.
    fast = run_cli("run", str(PROGRAM), "--", "none")
    assert fast.returncode == 0, fast.stderr[-3000:]
    chain = [ln for ln in loops.stdout.splitlines() if ln.startswith("chain:")]
    assert chain and chain[0] not in fast.stdout, (loops.stdout, fast.stdout)


def test_an_overflowing_recomputed_local_is_found_once_as_with_fibers():
    loops, _ = _run("overflow", "0")
    fibers, _ = _run("overflow", "1")
    found = run_findings(loops.stderr)
    assert found == run_findings(fibers.stderr), (found, fibers.stderr[-3000:])
    assert len(found) == 1 and "signed integer overflow" in found[0], found
    assert f"{PROGRAM}:{line_of(PROGRAM, 'PLANT-RECOMPUTED')}" in found[0], found
    assert (loops.returncode, loops.stdout) == (fibers.returncode, fibers.stdout)


def test_memcheck_vectorises_only_the_translations_with_a_copy_without_checks(tmp_path, monkeypatch):
    vector = vectorizing_flags(compiler())
    if not vector:
        pytest.skip("the compiler takes none of the vectorising flags, so no build gets them")
    monkeypatch.setenv("SIMULATOR_CACHE", str(tmp_path / "cache"))
    compiled: list[list[str]] = []

    def record(cxx: str, flags: list[str], text: str, out: Path, what: str) -> None:
        compiled.append(flags)
        out.write_bytes(b"")

    monkeypatch.setattr(source_compile, "compile_translated", record)
    plain = KERNELS / "program_memcheck_threads.cu"  # no region whose checks the front end can bound
    took = {}
    for mode in ("memcheck", "fast"):
        for program in (PROGRAM, plain):
            kernel_object(program, mode)
            took[(program.name, mode)] = all(f in compiled[-1] for f in vector)
    assert len(compiled) == 4, compiled
    assert took == {
        (PROGRAM.name, "memcheck"): True,
        (plain.name, "memcheck"): False,
        (PROGRAM.name, "fast"): True,
        (plain.name, "fast"): True,
    }, compiled
