"""Kernels with __syncthreads run as loops over the block's threads where every barrier is
block-uniform (simulator/block_loops.py), in a fast build: the same output as with fibers
(SIMULATOR_FIBERS=1), the loop path taken for the kernels meant to take it and fibers kept for
the others, and under the checkers for the kernels whose loops keep the fibers' order of accesses
(memcheck and racecheck; synccheck keeps fibers for all).

The program (kernels/program_block_loops.cu) checks each result against the host's and prints
it; ``SIMULATOR_LAUNCH_LOG=1`` makes the runtime say how each launch ran.
"""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, run_cli, run_logged

PROGRAM = KERNELS / "program_block_loops.cu"
LOOPS = [
    "loop_matmul",
    "loop_tree_sum",
    "loop_scan",
    "loop_stencil",
    "loop_locals",
    "loop_reverse",
    "loop_call_with_address",
    "loop_template_tiles",
    "loop_class_slots",  # slots of a class with no default constructor and a copy of its own
    "loop_param_offsets",  # parameters each thread writes: slots of their own
    "loop_param_pairs",
    "loop_shuffle",  # a warp shuffle reduction (block_loops_warps.py)
]
FIBERS = [
    "fibers_blelloch_scan",
    "fibers_thread_branch",
    "fibers_early_return",
    "fibers_barrier_in_callee",
    "fibers_pointer_to_local",
]


def _run(mode: str, fibers: str, *args: str):
    """(stdout, {kernel: how it ran}) of the program in ``mode``."""
    return run_logged(PROGRAM, mode, fibers, *args)


@pytest.fixture(scope="module")
def fast_runs():
    """The program in a fast build: block loops allowed, then fibers forced."""
    return _run("fast", "0"), _run("fast", "1")


def test_every_result_is_right_and_the_same_as_with_fibers(fast_runs):
    (loops_out, _), (fibers_out, _) = fast_runs
    results = re.findall(r"^(\w+) (ok|WRONG) ", loops_out, re.M)
    assert sorted(name for name, _ in results) == sorted(LOOPS + FIBERS)
    assert all(status == "ok" for _, status in results), loops_out
    assert loops_out == fibers_out
    assert "status cudaSuccess" in loops_out


def test_uniform_barriers_run_as_block_loops_and_the_rest_with_fibers(fast_runs):
    (_, ways), _ = fast_runs
    assert {k: ways.get(k) for k in LOOPS} == dict.fromkeys(LOOPS, "as block loops")
    assert {k: ways.get(k) for k in FIBERS} == dict.fromkeys(FIBERS, "with fibers")


def test_simulator_fibers_forces_fibers(fast_runs):
    _, (_, ways) = fast_runs
    assert set(ways) == set(LOOPS + FIBERS)
    assert set(ways.values()) == {"with fibers"}


# The kernels whose loops make the same accesses in the same order as fibers and keep no array
# across a barrier (simulator/block_loops_order.py): memcheck and racecheck run them as loops too.
CHECKED_LOOPS = ["loop_stencil", "loop_tree_sum"]


def test_synccheck_keeps_fibers_and_the_results():
    out, ways = _run("synccheck", "0", "loop_tree_sum")
    assert ways == {"loop_tree_sum": "with fibers"}
    assert re.search(r"^loop_tree_sum ok ", out, re.M), out


@pytest.mark.parametrize("mode", ["memcheck", "racecheck"])
def test_memcheck_and_racecheck_loop_where_the_order_is_the_fibers_and_keep_the_results(mode):
    out, ways = _run(mode, "0")
    fibers_out, _ = _run(mode, "1")
    assert out == fibers_out
    results = re.findall(r"^(\w+) (ok|WRONG) ", out, re.M)
    assert sorted(name for name, _ in results) == sorted(LOOPS + FIBERS)
    assert all(status == "ok" for _, status in results), out
    assert {k: ways.get(k) for k in CHECKED_LOOPS} == dict.fromkeys(CHECKED_LOOPS, "as block loops")
    others = sorted(set(LOOPS + FIBERS) - set(CHECKED_LOOPS))
    assert {k: ways.get(k) for k in others} == dict.fromkeys(others, "with fibers")


DIVERGENT = r"""
#include <cstdio>
__global__ void divergent(int* out) {
    __shared__ int s[64];
    s[threadIdx.x] = threadIdx.x;
    if (threadIdx.x < 16) {
        s[threadIdx.x] += 1;
        __syncthreads();  // in a branch only some threads take
    }
    __syncthreads();
    out[threadIdx.x] = s[63 - threadIdx.x];
}
int main() {
    int* d;
    cudaMalloc(&d, 64 * sizeof(int));
    divergent<<<1, 64>>>(d);
    printf("status %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
    return 0;
}
"""


def test_a_divergent_barrier_keeps_fibers_and_synccheck_still_reports_it(tmp_path):
    src = tmp_path / "divergent.cu"
    src.write_text(DIVERGENT)
    env = {"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": "0"}
    fast = run_cli("run", str(src), "--mode", "fast", env=env)
    assert "kernel 'divergent'" in fast.stderr and "runs with fibers" in fast.stderr, fast.stderr[-2000:]
    sync = run_cli("run", str(src), "--mode", "synccheck", env=env)
    assert "divergent __syncthreads" in sync.stderr, sync.stderr[-3000:]
    assert "runs with fibers" in sync.stderr
