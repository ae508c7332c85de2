"""Barrier-free launches run as a plain loop (LaunchSpec::barrier_free in a fast build): the same
results and reports as with fibers, and a loud failure when such a kernel waits after all.

The launches go through ``::__sim::launch`` with the flag set by the test's host code
(kernels/plain_loop.cu), so the runtime is tested whatever the build sets for ``<<<...>>>``.
Each entry takes ``plain``: 1 sets the flag, 0 leaves it unset (fibers); SIMULATOR_FIBERS=1
forces fibers even with the flag.
"""

from __future__ import annotations

import ctypes
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from .conftest import KERNELS, mode_args, nvcc_compile, ptr, run_cli

CUDA_SUCCESS = 0
CUDA_ERROR_ILLEGAL_ADDRESS = 700
CUDA_ERROR_LAUNCH_TIMEOUT = 702
CUDA_ERROR_ASSERT = 710
CUDA_ERROR_LAUNCH_FAILURE = 719


@pytest.fixture(scope="module")
def plain_lib(tmp_path_factory) -> ctypes.CDLL:
    """kernels/plain_loop.cu, fast build."""
    from simulator import build_shared

    out = tmp_path_factory.mktemp("plain-loop")
    return ctypes.CDLL(str(build_shared(KERNELS / "plain_loop.cu", out, "fast")))


@pytest.fixture(params=["plain", "fibers", "forced fibers"])
def way(request, monkeypatch) -> int:
    """How a launch runs: the ``plain`` argument of the entries (SIMULATOR_FIBERS set to match)."""
    monkeypatch.setenv("SIMULATOR_FIBERS", "1" if request.param == "forced fibers" else "0")
    return 0 if request.param == "fibers" else 1


@pytest.mark.parametrize(
    "grid,block,n",
    [((3, 1, 1), (64, 1, 1), 3 * 64), ((2, 3, 2), (4, 3, 5), 700), ((5, 1, 1), (96, 1, 1), 450)],
)
def test_elementwise_and_every_builtin(plain_lib, way, grid, block, n):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    c = np.zeros(n, dtype=np.float32)
    ids = np.full((n, 8), -1, dtype=np.int32)
    assert plain_lib.plain_add(way, ptr(a), ptr(b), ptr(c), ptr(ids), n, *grid, *block) == CUDA_SUCCESS
    np.testing.assert_array_equal(c, a + b)
    # What each thread read: its index, its block's, the block size and the grid size.
    nt = int(np.prod(block))
    want = np.zeros((n, 8), dtype=np.int32)
    for i in range(n):
        bid, t = divmod(i, nt)
        want[i] = [
            t % block[0],
            t // block[0] % block[1],
            t // (block[0] * block[1]),
            bid % grid[0],
            bid // grid[0] % grid[1],
            bid // (grid[0] * grid[1]),
            nt,
            int(np.prod(grid)),
        ]
    np.testing.assert_array_equal(ids, want)


@pytest.mark.parametrize("threads", [40, 64])
def test_shared_memory_without_barriers(plain_lib, way, threads):
    blocks = 3
    out = np.zeros((blocks, threads, 4), dtype=np.int32)
    assert plain_lib.plain_shared(way, ptr(out), blocks, threads) == CUDA_SUCCESS
    unwritten = -1  # 0xffffffff: shared memory starts filled with 0xff bytes in every block
    for blk in range(blocks):
        for t in range(threads):
            row = out[blk, t]
            if t % 5 == 4:  # exited at once
                np.testing.assert_array_equal(row, 0)
                continue
            prev = t - 1 if t > 0 else threads - 1
            # Threads of a block run in order: the predecessor wrote its slot, unless it exited.
            before = unwritten if t == 0 or prev % 5 == 4 else 1000 * blk + prev
            lane = t % 32
            warp_lanes = min(32, threads - 32 * (t // 32))
            active = sum(1 << k for k in range(lane, warp_lanes))
            assert row.tolist() == [
                before,
                unwritten if before == unwritten else -before,
                np.int32(np.uint32(active)),
                t // 32,
            ], (blk, t)


def test_atomics_across_blocks(plain_lib, way):
    counter = np.zeros(1, dtype=np.uint32)
    total = np.zeros(1, dtype=np.float32)
    assert plain_lib.plain_atomics(way, ptr(counter), ptr(total), 16, 128) == CUDA_SUCCESS
    assert counter[0] == 16 * 128
    assert total[0] == np.float32(0.5 * 16 * 128)  # exact: multiples of 0.5 below 2**24


def test_launcher_and_deduced_launch_forms_take_the_flag(plain_lib, way):
    scaled = np.zeros(64, dtype=np.int32)
    filled = np.zeros(64, dtype=np.float32)
    assert plain_lib.plain_launch_forms(way, ptr(scaled), ptr(filled)) == CUDA_SUCCESS
    np.testing.assert_array_equal(scaled, 3 * (np.arange(64) % 32))  # the default factor applied
    np.testing.assert_array_equal(filled, 1.5 + (np.arange(64) // 32))


_CHILD = r"""
import ctypes, json, sys
import numpy as np
lib = ctypes.CDLL(sys.argv[1])
out = np.full(128, -1, dtype=np.int32)
rc = lib.plain_failure(int(sys.argv[2]), int(sys.argv[3]), ctypes.c_void_p(out.ctypes.data))
print(json.dumps({"rc": rc, "out": out.tolist()}))
"""

_KERNELS = {
    "assert": 0,
    "wild write": 1,
    "spin": 2,
    "tree sum": 3,
    "warp sum": 4,
    "tree sum by launcher": 5,
    "tree sum by launch_deduced": 6,
}


def run_child(lib: ctypes.CDLL, plain: int, kernel: str, **env: str) -> tuple[dict, str]:
    """Runs one failure-case entry in a child process: (its JSON result, its stderr)."""
    environ = dict(os.environ, **env)
    environ.pop("SIMULATOR_QUIET", None)
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, lib._name, str(plain), str(_KERNELS[kernel])],
        capture_output=True,
        text=True,
        timeout=120,
        env=environ,
    )
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.strip().splitlines()
    return {"printed": lines[:-1], **json.loads(lines[-1])}, proc.stderr


@pytest.mark.parametrize("plain", [1, 0])
def test_printf_and_device_assert_name_block_and_thread(plain_lib, plain):
    # One worker: blocks run in order and none starts after the failed one.
    result, err = run_child(plain_lib, plain, "assert", SIMULATOR_THREADS="1")
    assert result["rc"] == CUDA_ERROR_ASSERT
    assert "block: [2,0,0], thread: [3,0,0] Assertion `!(blockIdx.x == 2 && threadIdx.x == 3)` failed" in err
    assert "kernel 'print_and_assert'" in err
    # Blocks 0 and 1 ran whole, block 2 up to the assert: thread 1 of each printed.
    assert result["printed"] == [f"hello from block {b} thread 1" for b in range(3)]


@pytest.mark.parametrize("plain", [1, 0])
def test_wild_pointer_is_an_illegal_address(plain_lib, plain):
    result, err = run_child(plain_lib, plain, "wild write")
    assert result["rc"] == CUDA_ERROR_ILLEGAL_ADDRESS
    assert "illegal address: kernel 'wild_write' block (1,0,0) thread (5,0,0) accessed 0x10" in err


@pytest.mark.parametrize("plain", [1, 0])
def test_spinning_kernel_times_out(plain_lib, plain):
    result, err = run_child(plain_lib, plain, "spin", SIMULATOR_TIMEOUT="0.5")
    assert result["rc"] == CUDA_ERROR_LAUNCH_TIMEOUT
    assert "launch timeout: kernel 'spin_forever'" in err


@pytest.mark.parametrize(
    "kernel,what,line_marker",
    [
        ("tree sum", "__syncthreads", "__syncthreads();\n    for"),
        ("warp sum", "__shfl_xor_sync", "__shfl_xor_sync("),
        ("tree sum by launcher", "__syncthreads", "__syncthreads();\n    for"),
        ("tree sum by launch_deduced", "__syncthreads", "__syncthreads();\n    for"),
    ],
)
def test_a_wait_in_a_kernel_marked_barrier_free_fails_loudly(plain_lib, kernel, what, line_marker):
    source = (KERNELS / "plain_loop.cu").read_text()
    line = source[: source.index(line_marker)].count("\n") + 1
    result, err = run_child(plain_lib, 1, kernel)
    assert result["rc"] == CUDA_ERROR_LAUNCH_FAILURE
    assert result["out"] == [-1] * 128  # nothing copied back: the launch failed
    name = "_".join(kernel.split()[:2])
    assert f"kernel '{name}' block (0,0,0) thread (0,0,0) reached {what} at " in err
    assert f"plain_loop.cu:{line}, but the launch" in err and "marked barrier-free" in err
    # The same launch with fibers computes the sums; so does SIMULATOR_FIBERS=1 with the flag.
    sums = [sum(i * 3 - 50 for i in range(32 * b, 32 * b + 32)) for b in range(4)]
    for plain, env in ((0, {}), (1, {"SIMULATOR_FIBERS": "1"})):
        result, err = run_child(plain_lib, plain, kernel, **env)
        assert result["rc"] == CUDA_SUCCESS, err
        assert result["out"][:4] == sums


def test_bad_simulator_fibers_value_is_named_and_fibers_are_used(plain_lib):
    result, err = run_child(plain_lib, 1, "tree sum", SIMULATOR_FIBERS="yes")
    assert "SIMULATOR_FIBERS='yes' is not 0 or 1" in err
    assert err.count("SIMULATOR_FIBERS=") == 1, err  # one line
    assert result["rc"] == CUDA_SUCCESS  # fibers: the barrier works


def test_simulator_fibers_is_validated_by_the_front_end():
    from simulator.limits import fibers_forced

    assert fibers_forced({}) is False
    assert fibers_forced({"SIMULATOR_FIBERS": "0"}) is False
    assert fibers_forced({"SIMULATOR_FIBERS": "1"}) is True
    with pytest.raises(ValueError, match="SIMULATOR_FIBERS='on' is not 0 or 1"):
        fibers_forced({"SIMULATOR_FIBERS": "on"})


def test_run_stops_with_one_line_for_a_bad_simulator_fibers(monkeypatch):
    from .conftest import run_cli

    monkeypatch.setenv("SIMULATOR_FIBERS", "2")
    proc = run_cli("run", str(KERNELS / "plain_loop.cu"), timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "SIMULATOR_FIBERS='2' is not 0 or 1" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


BY_ADDRESS = KERNELS / "program_by_address_plain.cu"


@pytest.mark.parametrize("mode", ["fast", "memcheck", "synccheck", "racecheck", "racecheck-all"])
def test_launches_through_a_pointer_or_by_address_run_as_launches_by_name(mode, monkeypatch):
    """A barrier-free kernel's threads share one stack frame (a plain loop) however it is
    launched: by name, through a pointer, with cudaLaunchKernel or as a graph's kernel node; a
    kernel with a barrier gets a stack per thread (fibers) in every form. So do instances of
    kernel templates that host code only names by address (in main, and in a host template where
    the name is dependent): they are registered where they are named. Racecheck over all memory
    (ThreadSanitizer) keeps fibers for all, as SIMULATOR_FIBERS=1 does in the other modes."""
    monkeypatch.delenv("SIMULATOR_FIBERS", raising=False)
    proc = run_cli("run", str(BY_ADDRESS), *mode_args(mode))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    plain = "0" if mode == "racecheck-all" else "1"
    forms = ("name", "pointer", "address", "node")
    assert proc.stdout.splitlines() == [
        "free " + " ".join(f"{form}={plain}" for form in forms),
        "barrier " + " ".join(f"{form}=0" for form in forms),
        f"template free={plain} barrier=0 in_template={plain}",
    ]
    if mode == "fast":
        monkeypatch.setenv("SIMULATOR_FIBERS", "1")
        proc = run_cli("run", str(BY_ADDRESS))
        assert proc.stdout.splitlines()[0] == "free " + " ".join(f"{form}=0" for form in forms)


def test_the_by_address_program_builds_with_nvcc(tmp_path):
    proc = nvcc_compile(BY_ADDRESS, tmp_path)
    assert proc.returncode == 0, proc.stderr
