"""Cooperative launches (cudaLaunchCooperativeKernel, cudaLaunchKernelEx with the cooperative
attribute) with grid.sync(): results compared with numpy models of the same phases, the largest
grid from the occupancy formula, and the documented failures (too large a grid, grid.sync()
outside a cooperative launch, a deadlock at the grid barrier)."""

from __future__ import annotations

import numpy as np
import pytest

from .conftest import EVERY_MODE, KERNELS, mode_args, nvcc_compile, run_cli
from .test_run import _values

PROGRAM = KERNELS / "program_coop_grid.cu"
# The misuses of grid.sync() are the program's "bad CASE" cases: one build per mode for both.
BAD = PROGRAM
B = 64


def _ints(text: str) -> np.ndarray:
    return np.array([int(t) for t in text.split(",")], dtype=np.int64)


def _blocks_per_sm(threads: int, smem: int = 0) -> int:
    """The occupancy of an sm_80 multiprocessor: 32 blocks, 2048 threads, 228 KiB shared memory."""
    warps = (threads + 31) // 32
    return min(32, 2048 // (warps * 32), (228 * 1024) // (smem + 1024))


@pytest.mark.parametrize("mode", EVERY_MODE)
def test_cooperative_phases_and_stencil_match_numpy(mode):
    proc = run_cli("run", str(PROGRAM), *mode_args(mode))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    assert v["coop_attr"] == "1"
    sms = int(v["sms"])
    per_sm = _blocks_per_sm(B)
    assert int(v["per_sm"]) == per_sm
    grid = sms * per_sm
    n = grid * B
    assert v["launch"] == "cudaSuccess"
    x = (np.arange(n, dtype=np.int64) * 37 + 11) % 101 - 50
    a = (x.reshape(grid, B)[:, ::-1].reshape(n)) * 3 + 1
    b = a[(np.arange(n) + 7 * B + 3) % n] - a
    np.testing.assert_array_equal(_ints(v["b"]), b)
    sums = b.reshape(grid, B).sum(axis=1)
    np.testing.assert_array_equal(_ints(v["sums"]), np.roll(sums, -1))
    assert v["ranks_ok"] == "1"
    assert _ints(v["grid"]).tolist() == [n, grid, 1, n]
    # One block more than the device holds at once fails as on a GPU.
    assert v["too_large"] == "cudaErrorCooperativeLaunchTooLarge"
    assert "cudaErrorCooperativeLaunchTooLarge" in proc.stderr
    assert v["launch_ex"] == "cudaSuccess"
    s = (np.arange(96, dtype=np.int64) ** 2 * 7 + 3) % 1000
    for _ in range(5):
        s = (np.roll(s, 1) + 2 * s + np.roll(s, -1)) % 1000
    np.testing.assert_array_equal(_ints(v["stencil"]), s)
    assert v["handshake"] == "cudaSuccess,1235"  # block 0 waited for block 1's write
    assert v["plain_is_valid"] == "0"
    assert v["error"] == "cudaSuccess"
    assert "finding" not in proc.stderr


@pytest.mark.parametrize("mode", ["fast", "synccheck"])
def test_grid_sync_outside_a_cooperative_launch_fails_loudly(mode):
    proc = run_cli("run", str(BAD), *mode_args(mode), "--", "bad", "plain")
    v = _values(proc.stdout)
    assert v["error"] == "cudaErrorLaunchFailure", proc.stdout + proc.stderr
    assert "not launched cooperatively" in proc.stderr
    assert BAD.name in proc.stderr


@pytest.mark.parametrize("mode", ["fast", "synccheck"])
def test_deadlock_at_the_grid_barrier_is_reported_not_a_hang(mode):
    proc = run_cli("run", str(BAD), *mode_args(mode), "--timeout", "30", "--", "bad", "deadlock")
    v = _values(proc.stdout)
    assert v["error"] == "cudaErrorLaunchFailure", proc.stdout + proc.stderr
    assert "deadlock in the cooperative launch of kernel 'stuck'" in proc.stderr
    assert "grid.sync()" in proc.stderr and "__syncthreads" in proc.stderr


@pytest.mark.parametrize("mode", ["fast", "synccheck"])
def test_a_block_that_ends_before_grid_sync_is_a_synccheck_finding(mode):
    proc = run_cli("run", str(BAD), *mode_args(mode), "--", "bad", "exit")
    v = _values(proc.stdout)
    if mode == "fast":
        # Only live threads are waited for: block 0 passes the barrier.
        assert v["error"] == "cudaSuccess", proc.stdout + proc.stderr
        assert proc.returncode == 0
    else:
        assert v["error"] == "cudaErrorLaunchFailure", proc.stdout + proc.stderr
        assert proc.returncode == 1
        assert "block (1,0,0) of the cooperative launch of kernel 'leaves'" in proc.stderr
        assert "would hang" in proc.stderr


def test_a_tile_barrier_that_never_completes_is_a_deadlock_report():
    proc = run_cli("run", str(BAD), "--mode", "fast", "--timeout", "30", "--", "bad", "tile")
    v = _values(proc.stdout)
    assert v["error"] == "cudaErrorLaunchFailure", proc.stdout + proc.stderr
    assert "deadlock in kernel 'tile_stuck'" in proc.stderr
    assert "thread_block_tile<64>::sync()" in proc.stderr


@pytest.mark.parametrize("mode", ["fast", "synccheck"])
def test_tile_sync_on_two_lines_is_a_synccheck_finding(mode):
    proc = run_cli("run", str(BAD), *mode_args(mode), "--", "bad", "tile_lines")
    v = _values(proc.stdout)
    if mode == "fast":
        assert v["error"] == "cudaSuccess", proc.stdout + proc.stderr
    else:
        assert v["error"] == "cudaErrorLaunchFailure", proc.stdout + proc.stderr
        assert "divergent thread_block_tile<64>::sync()" in proc.stderr
        assert proc.returncode == 1


@pytest.mark.parametrize(
    "program",
    ["program_coop_grid.cu", "program_cg_big_tiles.cu", "program_cg_memcpy_async.cu"],
)
def test_the_programs_build_with_nvcc_unchanged(tmp_path, program):
    proc = nvcc_compile(KERNELS / program, tmp_path)
    assert proc.returncode == 0, proc.stderr


TEMPLATE_BY_ADDRESS = r"""
#include <cstdio>
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

template <typename T>
__global__ void reverse_sum(const T* in, T* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    cg::this_grid().sync();
    if (i < n) out[i] = in[i] + in[n - 1 - i];
}

int main() {
    const int n = 256;
    int h[n], r[n];
    for (int i = 0; i < n; i++) h[i] = i * i % 97;
    int *in, *out;
    cudaMalloc(&in, sizeof h);
    cudaMalloc(&out, sizeof r);
    cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice);
    int per_sm = 0, len = n;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reverse_sum<int>, 64, 0);
    void* args[] = {&in, &out, &len};
    cudaError_t e = cudaLaunchCooperativeKernel((void*)reverse_sum<int>, dim3(n / 64), dim3(64), args, 0, 0);
    cudaMemcpy(r, out, sizeof r, cudaMemcpyDeviceToHost);
    std::printf("launch=%s\nout=", cudaGetErrorString(e));
    for (int i = 0; i < n; i++) std::printf(i ? ",%d" : "%d", r[i]);
    std::printf("\n");
    return 0;
}
"""


def test_a_kernel_template_named_only_by_an_occupancy_call_launches_by_address(tmp_path):
    # As the OLCF training series' hw9 does: the instance is never launched with <<<>>>, only
    # named in cudaOccupancyMaxActiveBlocksPerMultiprocessor and then launched through (void*).
    src = tmp_path / "template_by_address.cu"
    src.write_text(TEMPLATE_BY_ADDRESS)
    proc = run_cli("run", str(src))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    v = _values(proc.stdout)
    assert v["launch"] == "no error"
    h = np.arange(256) ** 2 % 97
    np.testing.assert_array_equal(_ints(v["out"]), h + h[::-1])
