"""memcheck keeps a block's shared memory and per-thread slots for the launch's next block on the same
worker (runtime/device_api.cpp: keep_shared, kept_slots; mode_hooks.h: dynamic_shared): each
``__shared__`` variable and the dynamic shared memory stay heap blocks of their exact size, filled
with 0xff for every block, and are freed when the worker's part of the launch ends.
kernels/program_memcheck_kept_shared.cu reads shared memory before writing it in every block (each
must see 0xff, not what the block before it wrote), reads one element past a ``__shared__`` array
in the second or the last block and past the dynamic shared memory in the last block (each must be
found as fibers find it: AddressSanitizer's redzone is still there), and keeps locals of three
types across barriers (the output must be the fibers').
"""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, launch_ways, memcheck_faults_as_fibers, run_cli, run_findings

PROGRAM = KERNELS / "program_memcheck_kept_shared.cu"
# argument -> (marker of the planted line, kernel, block named)
PLANTED = {
    "second": ("PLANT-STATIC", "fresh", "(1,0,0)"),
    "last": ("PLANT-STATIC", "fresh", "(5,0,0)"),
    "dynamic": ("PLANT-DYNAMIC", "dynamic", "(5,0,0)"),
}


def _run(arg: str, fibers: str):
    """(process, how each kernel ran) of the program under memcheck, on one worker."""
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers, "SIMULATOR_THREADS": "1"}
    proc = run_cli("run", "--mode", "memcheck", str(PROGRAM), "--", arg, env=env)
    return proc, launch_ways(proc.stderr)


def _findings(stderr: str) -> list[str]:
    return [re.sub(r"0x[0-9a-f]+", "0x?", f) for f in run_findings(stderr)]


def test_every_block_sees_fresh_shared_memory_and_its_own_slots():
    loops, ways = _run("none", "0")
    fibers, fiber_ways = _run("none", "1")
    want = {"fresh": "as block loops", "dynamic": "as block loops", "slots": "as block loops"}
    assert ways == want, loops.stderr[-3000:]
    assert set(fiber_ways.values()) == {"with fibers"}
    assert loops.returncode == 0 and run_findings(loops.stderr) == [], loops.stderr[-3000:]
    assert loops.stdout == fibers.stdout
    # Every element each block read before writing it was 0xff's, in both launches of each kernel.
    assert loops.stdout.count("cudaSuccess unset 384 ") == 4, loops.stdout
    assert loops.stdout.count("slots: cudaSuccess") == 2, loops.stdout


@pytest.mark.parametrize("arg", sorted(PLANTED))
def test_a_read_past_kept_shared_memory_is_found_as_with_fibers(arg):
    marker, kernel, block = PLANTED[arg]
    loops, ways = _run(arg, "0")
    fibers, _ = _run(arg, "1")
    assert ways.get(kernel) == "as block loops", loops.stderr[-3000:]
    what = "Invalid __shared__ read of size 4 bytes (heap-buffer-overflow)"
    memcheck_faults_as_fibers(loops, fibers, _findings, PROGRAM, marker, "(63,0,0)", what)
    assert f"by thread (63,0,0) in block {block} of kernel '{kernel}'" in loops.stderr, loops.stderr[-3000:]
