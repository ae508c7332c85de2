"""``SIMULATOR_LAUNCH_LOG=1`` says why a launch runs with fibers: the front end's reason for the
kernel (the block-loop analysis's ``Fallback``, or the barrier-free analysis's first wait) with
its source line, or the run's own (``SIMULATOR_FIBERS=1``, a cooperative launch); a launch that
runs as block loops or as a plain loop logs as before, with no reason.

The program (kernels/program_fiber_reasons.cu) marks each line a reason should name with a
``// why: NAME`` comment; the lines are read from it, not written here.
"""

from __future__ import annotations

import re

import pytest

from .conftest import KERNELS, launch_reasons, launch_ways, run_cli, translated_reasons

PROGRAM = KERNELS / "program_fiber_reasons.cu"

# kernel -> (the reason's words, the marker of the line it names)
FRONT_END_REASONS = {
    "branchy": ("a barrier under a condition not shown to be block-uniform", "branch"),
    "shuffled": (
        "a warp shuffle (__shfl_down_sync) whose mask is not a literal full mask (0xffffffff)",
        "shuffle",
    ),
    "calls_barrier": ("a call of 'block_pass' that reaches a barrier (__syncthreads)", "callee"),
    "spins": ("a loop that spins on volatile or atomic memory", "spin"),
    "early_return": ("a return before the last barrier", "return"),
    "jumps": ("a goto", "goto"),
    "voted": ("a warp vote (__ballot_sync) under a condition not shown to be block-uniform", "vote"),
    "own_bound": ("a barrier under a condition not shown to be block-uniform", "own_bound"),
    "counter_written": ("a thread writes a loop's block-uniform variable", "counter"),
    "counter_passed": ("a call passed a loop's block-uniform variable that it may change", "passed"),
}


def _marked_lines() -> dict[str, int]:
    """{marker: line} of the program's ``// why: NAME`` comments."""
    lines = PROGRAM.read_text().splitlines()
    return {m.group(1): i for i, ln in enumerate(lines, 1) if (m := re.search(r"// why: (\w+)$", ln))}


def _run(fibers: str) -> tuple[dict[str, str], dict[str, str | None]]:
    """({kernel: how it ran}, {kernel: why fibers}) of the program in a fast build."""
    proc = run_cli("run", str(PROGRAM), env={"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": fibers})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "status no error" in proc.stdout, proc.stdout
    return launch_ways(proc.stderr, "fast"), launch_reasons(proc.stderr)


@pytest.fixture(scope="module")
def as_built():
    return _run("0")


def test_each_kernel_on_fibers_names_its_reason_and_line(as_built):
    ways, reasons = as_built
    lines = _marked_lines()
    assert set(lines) == {marker for _, marker in FRONT_END_REASONS.values()}
    for kernel, (what, marker) in FRONT_END_REASONS.items():
        assert ways[kernel] == "with fibers", (kernel, ways)
        assert reasons[kernel] == f"{what} ({PROGRAM.name}:{lines[marker]})", kernel


def test_a_cooperative_launch_names_itself(as_built):
    ways, reasons = as_built
    assert ways["coop"] == "with fibers"
    assert reasons["coop"] == "a cooperative launch (every block stays resident)"


def test_loops_log_as_before_with_no_reason(as_built):
    ways, reasons = as_built
    assert ways["tiled"] == "as block loops" and reasons["tiled"] is None
    # Its parameters each thread offsets are the thread's own, in slots (block_loops_analysis.py).
    assert ways["offset_tiled"] == "as block loops" and reasons["offset_tiled"] is None
    # Barrier-free, its column index narrows: a loop of its own in a fast build (block_loops_plain.py).
    assert ways["plain"] == "as block loops" and reasons["plain"] is None


def test_forced_fibers_name_the_variable_and_the_rest_keep_their_reasons():
    ways, reasons = _run("1")
    assert set(ways.values()) == {"with fibers"}
    assert reasons["tiled"] == "SIMULATOR_FIBERS=1"
    assert reasons["plain"] == "SIMULATOR_FIBERS=1"
    assert reasons["shuffled"].startswith("a warp shuffle (__shfl_down_sync)")


def test_synccheck_names_itself_for_a_kernel_with_barriers():
    proc = run_cli(
        "run", str(PROGRAM), "--mode", "synccheck", env={"SIMULATOR_LAUNCH_LOG": "1", "SIMULATOR_FIBERS": "0"}
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    ways, reasons = launch_ways(proc.stderr, "synccheck"), launch_reasons(proc.stderr)
    assert ways["tiled"] == "with fibers"
    assert reasons["tiled"] == "synccheck follows each thread from barrier to barrier"
    assert ways["plain"] == "as a plain loop" and reasons["plain"] is None
    assert reasons["shuffled"].startswith("a warp shuffle (__shfl_down_sync)")


_FRONT_END = """\
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
__device__ float (*hook)(float) = nullptr;
__device__ float elsewhere(float v);
__global__ void through_pointer(float* x) { x[threadIdx.x] = hook(x[threadIdx.x]); }  // why: pointer
__global__ void undefined_callee(float* x) { x[threadIdx.x] = elsewhere(x[threadIdx.x]); }  // why: undefined
__global__ void tile(float* x) {
    cg::thread_block_tile<32> t = cg::tiled_partition<32>(cg::this_thread_block());
    t.sync();  // why: tile
    x[threadIdx.x] = 0.0f;
}
__global__ void lambda(float* x) {
    __shared__ float s[64];
    auto twice = [](float v) { return 2.0f * v; };  // why: lambda
    s[threadIdx.x] = twice(x[threadIdx.x]);
    __syncthreads();
    x[threadIdx.x] = s[63 - threadIdx.x];
}
__device__ unsigned warp_votes(float v) { return __ballot_sync(0xffffffffu, v > 0.0f); }
__global__ void barrier_then_vote(float* x) {
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    x[threadIdx.x] = (float)warp_votes(s[63 - threadIdx.x]);  // why: vote
}
__global__ void warp_synchronous(float* x) {
    __shared__ float s[64];
    s[threadIdx.x] = x[threadIdx.x];
    __syncthreads();
    if (threadIdx.x < 32) s[threadIdx.x] += s[threadIdx.x + 16];  // why: lanes
    x[threadIdx.x] = s[threadIdx.x];
}
struct Twice {
    template <class T>
    static __device__ T apply(T v) { return 2 * v; }
};
template <class P>
__device__ float by_policy(float v) { return P::template apply<float>(v); }
template <class P>
__global__ void policy(float* x) { x[threadIdx.x] = by_policy<P>(x[threadIdx.x]); }  // why: policy
void host(float* x) {
    policy<Twice><<<1, 64>>>(x);
    barrier_then_vote<<<1, 64>>>(x);
    warp_synchronous<<<1, 64>>>(x);
    through_pointer<<<1, 64>>>(x);
    undefined_callee<<<1, 64>>>(x);
    tile<<<1, 64>>>(x);
    lambda<<<1, 64>>>(x);
}
"""


def test_the_build_passes_each_reason_beside_its_launch(tmp_path):
    why, lines = translated_reasons(tmp_path / "reasons.cu", _FRONT_END)
    expected = {
        "through_pointer": ("a call through a function pointer or a virtual method", "pointer"),
        "undefined_callee": ("a call of 'elsewhere', which this file does not define", "undefined"),
        "tile": ("a call of 'sync' that reaches a warp operation", "tile"),
        "lambda": ("a lambda", "lambda"),
        # The kernel's own __syncthreads (which the loops take) is not the reason: what its callee
        # waits for is (a decoupled look-back's warp votes after a top-level barrier).
        "barrier_then_vote": ("a call of 'warp_votes' that reaches a warp vote (__ballot_sync)", "vote"),
        # A policy's call inside a template: the walk follows no name its parameters decide.
        "policy": (
            "a call of 'by_policy' that reaches a call of 'P::template apply<float>', which depends "
            "on a template's parameters (not followed)",
            "policy",
        ),
        "warp_synchronous": (
            "warp-synchronous code (no __syncwarp) that needs a warp's lanes in lockstep",
            "lanes",
        ),
    }
    assert why == {
        kernel: f"{what} (reasons.cu:{lines[marker]})" for kernel, (what, marker) in expected.items()
    }
