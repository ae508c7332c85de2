"""Cooperative groups' barrier of the whole block (``cta.sync()``, ``cg::sync(cta)``,
``cg::this_thread_block().sync()``) is ``__syncthreads()`` to the block-loop analysis: such kernels
run as block loops in a fast build with the fibers' results, and memcheck and synccheck find the
same either way. A kernel that also syncs a tile through ``cg::sync`` keeps fibers, and the launch
log names that call.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from .conftest import (
    KERNELS,
    launch_ways,
    line_of,
    mode_args,
    once_per_arguments,
    run_cli,
    run_findings,
    translated_reasons,
)

PROGRAM = KERNELS / "program_cg_block_sync.cu"
KERNELS_RUN = {"member": "by_member", "function": "by_function", "temporary": "by_temporary"}
THREADS, BLOCKS = 128, 3


@once_per_arguments
def _run(mode: str, fibers: str, *args: str):
    """(process, {kernel: how it ran}) of the program in ``mode`` (one worker: a fault's order)."""
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers, "SIMULATOR_THREADS": "1"}
    proc = run_cli("run", str(PROGRAM), *mode_args(mode), "--", *args, env=env)
    return proc, launch_ways(proc.stderr, mode)


def _expected() -> list[int]:
    """Each thread's mirrored value times 1000 plus its block's sum mod 1000 (C's remainder)."""
    values = ((np.arange(BLOCKS * THREADS) * 37) % 101 - 50).reshape(BLOCKS, THREADS)
    out = []
    for row in values:
        total = int(row.sum())
        rest = abs(total) % 1000 * (1 if total >= 0 else -1)
        out += [int(v) * 1000 + rest for v in row[::-1]]
    return out


def test_fast_runs_each_block_sync_as_block_loops_with_the_fibers_results():
    loops, ways = _run("fast", "0")
    fibers, fiber_ways = _run("fast", "1")
    assert loops.returncode == fibers.returncode == 0, loops.stderr[-3000:]
    assert ways == dict.fromkeys(KERNELS_RUN.values(), "as block loops"), loops.stderr[-3000:]
    assert fiber_ways == dict.fromkeys(KERNELS_RUN.values(), "with fibers")
    assert loops.stdout == fibers.stdout
    lines = {ln.split()[0]: ln.split()[1:] for ln in loops.stdout.splitlines()}
    assert set(lines) == set(KERNELS_RUN)
    for name in KERNELS_RUN:
        assert lines[name][0] == "cudaSuccess"
        assert [int(v) for v in lines[name][1:]] == _expected(), name


@pytest.mark.parametrize("name", sorted(KERNELS_RUN))
def test_memcheck_finds_the_read_past_the_tile_the_same_both_ways(name):
    loops, ways = _run("memcheck", "0", "oob", name)
    fibers, _ = _run("memcheck", "1", "oob", name)
    found = [re.sub(r"0x[0-9a-f]+", "0x?", f) for f in run_findings(loops.stderr)]
    assert found, loops.stderr[-3000:]
    assert found == [re.sub(r"0x[0-9a-f]+", "0x?", f) for f in run_findings(fibers.stderr)]
    assert (loops.returncode, loops.stdout) == (fibers.returncode, fibers.stdout)
    assert f"{name} cudaErrorLaunchFailure" in loops.stdout
    where = f"{PROGRAM}:{line_of(PROGRAM, 'PLANT-OOB-' + name.upper())}"
    assert all(where in f for f in found), found
    assert set(ways) == {KERNELS_RUN[name]}, ways


def test_synccheck_runs_them_clean_with_the_fast_results():
    fast, _ = _run("fast", "0")
    for fibers in ("0", "1"):
        proc, _ = _run("synccheck", fibers)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert proc.stdout == fast.stdout
        assert run_findings(proc.stderr) == []


_TILE = """\
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__global__ void tiled(float* x) {
    cg::thread_block cta = cg::this_thread_block();
    cg::thread_block_tile<32> t = cg::tiled_partition<32>(cta);
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    cg::sync(cta);
    cg::sync(t);  // why: tile
    x[threadIdx.x] = s[63 - threadIdx.x];
}
__global__ void shuffles(float* x) {
    cg::thread_block cta = cg::this_thread_block();
    cg::thread_block_tile<32> t = cg::tiled_partition<32>(cta);
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    cg::sync(cta);
    float v = s[63 - threadIdx.x];
    v += t.shfl_down(v, 1);  // why: shuffle
    x[threadIdx.x] = v;
}
void host(float* x) {
    tiled<<<1, 64>>>(x);
    shuffles<<<1, 64>>>(x);
}
"""


def test_a_tile_sync_or_shuffle_beside_the_block_sync_keeps_fibers_and_is_named(tmp_path):
    why, lines = translated_reasons(tmp_path / "tiles.cu", _TILE)
    assert why == {
        "tiled": f"a cooperative groups' sync of a group other than the block (tiles.cu:{lines['tile']})",
        "shuffles": f"a call of 'shfl_down' that reaches a warp operation (tiles.cu:{lines['shuffle']})",
    }
